"""Load a local model from what a user points at: a folder, a GGUF file, or a known model's name.

Nothing is downloaded (``local_files_only=True``). :func:`load_pretrained` accepts

- a folder saved with ``save_pretrained`` (it holds ``config.json``);
- a ``.gguf`` file, or a folder holding exactly one: loaded with ``transformers``' ``gguf_file=``,
  every weight unpacked to a dense tensor (``GgufConfig(dequantize=True)`` where the installed
  ``transformers`` has it), and the GGUF quantiser cleared, so the model can be saved with
  ``save_pretrained`` (checkpoints, ``best/``) and trained like any other;
- a name of :data:`~mage_agents.pretrained.PRETRAINED` fetched into the model cache
  (``smollm2-135m``: see :func:`~mage_agents.pretrained.fetch_model`).

Both the evaluation backend (``local:SPEC``) and the trainer (``model: SPEC``) load through here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mage_agents.gguf import load_gguf
from mage_agents.pretrained import MARKER, cached_model_dir

__all__ = ["ModelSource", "resolve_model", "load_pretrained", "load_gguf"]


@dataclass(frozen=True)
class ModelSource:
    """Where a model's files are.

    Attributes:
        folder: The folder ``from_pretrained`` reads.
        gguf_file: The GGUF file's name inside ``folder``, or ``None`` for a saved folder.
        name: A short name for results (the folder's or the file's stem).
    """

    folder: Path
    gguf_file: str | None
    name: str


def resolve_model(spec: str | Path) -> ModelSource:
    """Say where the model ``spec`` names lies, without loading it.

    Raises:
        ValueError: If ``spec`` is no model folder, GGUF file or fetched known model; the
            message says what was found and what to give instead.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "m.gguf").write_bytes(b"GGUF")
        >>> resolve_model(folder / "m.gguf").gguf_file
        'm.gguf'
    """
    path = Path(spec).expanduser()
    known = None if path.exists() else cached_model_dir(str(spec))  # a path wins over a name
    path = known or path
    if path.is_file() and path.suffix.lower() == ".gguf":
        return ModelSource(path.parent, path.name, path.stem)
    if path.is_dir():
        if (path / "config.json").is_file():
            return ModelSource(path, None, str(spec) if known else path.name)
        ggufs = sorted(p.name for p in path.glob("*.gguf"))
        if len(ggufs) == 1:
            return ModelSource(path, ggufs[0], Path(ggufs[0]).stem)
        if ggufs:
            raise ValueError(
                f"{path} holds {len(ggufs)} GGUF files ({', '.join(ggufs)}); give the one to "
                "load, e.g. local:" + str(path / ggufs[0]) + "."
            )
    raise ValueError(
        f"{spec} is not a local model: give a folder saved with save_pretrained() (it holds "
        "config.json), a .gguf file, or a known model fetched with `python -m baselines.models "
        "get NAME` (python -m baselines.models list). Nothing is downloaded."
    )


def load_pretrained(spec: str | Path, dtype: Any = None) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` from a folder, a GGUF file or a known model's name.

    Args:
        spec: What :func:`resolve_model` accepts.
        dtype: The weights' dtype (``None``: as saved, ``"auto"`` for a saved folder).
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = resolve_model(spec)
    try:
        if source.gguf_file is not None:
            return load_gguf(source.folder / source.gguf_file, dtype=dtype)
        tokenizer = AutoTokenizer.from_pretrained(source.folder, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            source.folder, local_files_only=True, dtype=dtype or "auto"
        )
    except ImportError:  # a missing package: its own message says which
        raise
    except Exception as error:  # truncated or damaged files fail in many libraries' own ways
        raise _damaged(source, error) from error
    return model, tokenizer


def _damaged(source: ModelSource, error: Exception) -> ValueError:
    """The error of model files that exist but do not load, with what to do about it."""
    where = source.folder if source.gguf_file is None else source.folder / source.gguf_file
    if (source.folder / MARKER).is_file():  # a known model in the cache
        fix = f"fetch it again: python -m baselines.models get {source.folder.name} --force"
    else:
        fix = "save or copy the model again"
    return ValueError(
        f"{where} could not be loaded ({type(error).__name__}: {str(error)[:300]}); its files "
        f"look damaged or incomplete: {fix}."
    )

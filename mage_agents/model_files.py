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

Hub kernels stay off unless asked for (``hub_kernels=True``): ``transformers`` >= 5 turns them
on by default, and then swaps layers for kernels it fetches from the Hub when the model first
runs on a GPU (or is put in train mode there), which fails on a machine without network. A load
that fails says why: a package that is missing, a file that is missing, a hub kernel that could
not be fetched, or files that could not be read.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mage_agents.gguf import load_gguf
from mage_agents.placement import kernel_options
from mage_agents.pretrained import MARKER, cached_model_dir

__all__ = ["ModelSource", "resolve_model", "load_pretrained", "load_gguf", "kernel_options"]


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


def load_pretrained(
    spec: str | Path, dtype: Any = None, hub_kernels: bool = False
) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` from a folder, a GGUF file or a known model's name.

    Args:
        spec: What :func:`resolve_model` accepts.
        dtype: The weights' dtype (``None``: as saved, ``"auto"`` for a saved folder).
        hub_kernels: Let ``transformers`` swap layers for kernels from the Hub (needs the
            ``kernels`` package, and the network or a cache that holds them).

    Raises:
        ValueError: If the model is not there or does not load; the message names the cause.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = resolve_model(spec)
    kernels = kernel_options(hub_kernels)
    try:
        if source.gguf_file is not None:
            return load_gguf(source.folder / source.gguf_file, dtype=dtype, **kernels)
        tokenizer = AutoTokenizer.from_pretrained(source.folder, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            source.folder, local_files_only=True, dtype=dtype or "auto", **kernels
        )
    except Exception as error:  # each library fails in its own way: say which way it was
        raise load_error(source, error) from error
    return model, tokenizer


def load_error(source: ModelSource, error: Exception) -> ValueError:
    """The error of a model that does not load, naming the cause and what to do about it."""
    where = source.folder if source.gguf_file is None else source.folder / source.gguf_file
    said = f"{type(error).__name__}: {str(error)[:300]}"
    if _from_kernels(error):
        return ValueError(
            f"{where} could not be loaded: a hub kernel could not be had ({said}); hub kernels "
            "need the kernels package and the network (or a cache holding them): leave "
            "hub_kernels off (the default) to load the model as it is."
        )
    if isinstance(error, ImportError):
        return ValueError(f"{where} could not be loaded: a package is missing ({said}).")
    if (source.folder / MARKER).is_file():  # a known model in the cache
        fix = f"fetch it again: python -m baselines.models get {source.folder.name} --force"
    else:
        fix = "save or copy the model again"
    if isinstance(error, FileNotFoundError) or "file named" in str(error):
        return ValueError(f"{where} could not be loaded: a file is missing ({said}); {fix}.")
    return ValueError(
        f"{where} could not be loaded: its files could not be read ({said}); they look damaged "
        f"or incomplete: {fix}."
    )


KERNEL_FRAMES = ("set_use_kernels", "kernelize")
"""Where transformers fetches and applies hub kernels (its ``modeling_utils``)."""


def _from_kernels(error: BaseException) -> bool:
    """Whether ``error`` (or an error it came from) was raised fetching or applying hub kernels."""
    for _ in range(8):  # the error and those it came from
        if error is None:
            return False
        frames = traceback.extract_tb(error.__traceback__)
        if "Kernels are not available" in str(error) or any(
            f.name in KERNEL_FRAMES or "hub_kernels" in f.filename or "/kernels/" in f.filename
            for f in frames
        ):
            return True
        error = error.__cause__ or error.__context__
    return False

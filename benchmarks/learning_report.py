"""Tables (Markdown) and PNG curves of the ``learning`` benchmark's run records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.learning_common import (
    BEST_RESPONSE,
    TARGET_SHARE,
    interval95,
    panel_row,
    plot_pairs,
    save_figure,
    verdict,
)
from benchmarks.learning_records import RECORDS, NoRecords

__all__ = ["interval95", "verdict", "load_records", "plot_pairs", "point_at", "report"]
__all__ += ["panel_row", "save_figure"]


def load_records(out: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Return part -> name -> the run records (sorted by seed) found under ``out``.

    A name is the runs' folder: the variant, or the ``--name`` given to runs of other settings
    (``mage-150``: the variant ``mage`` at 150 steps), which are kept apart from the variant's.
    """
    records: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for path in sorted(out.glob("*/*/seed*.json")):
        record = json.loads(path.read_text())
        records.setdefault(record["part"], {}).setdefault(path.parent.name, []).append(record)
    for variants in records.values():
        for runs in variants.values():
            runs.sort(key=lambda r: r["seed"])
    return records


def _robustness(variants: dict[str, list[dict]], figures: Path) -> list[str]:
    lines = [
        "| variant | seeds reaching 80% | CPU s to 80% (median, max) | runs stopped early |",
        "|---|---|---|---|",
    ]
    for name, runs in sorted(variants.items()):
        times = sorted(r["target_cpu_s"] for r in runs if "target_cpu_s" in r)
        spread = f"{times[len(times) // 2]:.0f}, {times[-1]:.0f}" if times else "-"
        stopped = sum(not r.get("finished", True) for r in runs)
        lines.append(f"| {name} | {len(times)}/{len(runs)} | {spread} | {stopped} |")
    for name, runs in sorted(variants.items()):
        lines += ["", f"`{name}`:", ""]
        lines += [
            "| seed | reached 80% | at step | CPU s | wall s | best value | final value |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in runs:
            hit = "target_cpu_s" in r
            at = (
                f"{r['target_step']} | {r['target_cpu_s']:.0f} | {r['target_wall_s']:.0f}"
                if hit
                else f"- (ran {r['steps']}) | {r['cpu_s']:.0f} | {r['wall_s']:.0f}"
            )
            lines.append(
                f"| {r['seed']} | {'yes' if hit else 'no'} | {at} | {r['best']:+.3f} | "
                f"{r['final']:+.3f} |"
            )
    _plot_robustness(variants, figures / "robustness.png", TARGET_SHARE * BEST_RESPONSE)
    lines.append(f"\n![robustness curves]({figures.name}/robustness.png)")
    return lines


def _plot_robustness(variants: dict[str, list[dict]], path: Path, target: float) -> None:
    names = sorted(variants)
    fig, axes = panel_row(len(names), 3.2)
    for ax, name in zip(axes, names, strict=True):
        for run in variants[name]:
            curve = run["curve"]
            ax.plot([p["cpu_s"] for p in curve], [p["value"] for p in curve], lw=1)
        ax.axhline(target, color="k", ls="--", lw=0.8)
        ax.axhline(BEST_RESPONSE, color="g", ls=":", lw=0.8)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("process CPU s")
    axes[0].set_ylabel("exact value of greedy policy")
    fig.tight_layout()
    save_figure(fig, path)


def point_at(run: dict[str, Any], step: int) -> dict[str, Any]:
    """Return the run's score at optimizer step ``step`` (scores are taken every few steps).

    Raises:
        ValueError: If the run has no score at that step.
    """
    for point in run["curve"]:
        if point["step"] == step:
            return point
    raise ValueError(f"{run['variant']} seed {run['seed']} has no score at step {step}.")


def report(out: Path, figures: Path) -> str:
    """Return the Markdown tables of the records under ``out``; write the PNGs to ``figures``.

    Raises:
        NoRecords: If ``out`` holds no run record (a report of nothing is no report).
    """
    records = load_records(out)
    if not records:
        raise NoRecords(
            f"No run records under {out} (PART/NAME/seedN.json): run `python -m benchmarks "
            "learning run --out FOLDER` first, or report the committed ones (the default, "
            f"{RECORDS})."
        )
    parts = []
    if "robustness" in records:
        parts += ["### Robustness", "", *_robustness(records["robustness"], figures), ""]
    if "signature" in records:
        from benchmarks.learning_report_signature import signature

        parts += ["### MAGE's signature", "", *signature(records["signature"], figures), ""]
    if "probe" in records:
        from benchmarks.learning_probe import probe_table

        parts += ["### Memory probe", "", *probe_table(records["probe"]), ""]
    if "pretrained" in records:
        from benchmarks.learning_report_pretrained import pretrained

        parts += ["### A pretrained model", "", *pretrained(records["pretrained"], figures), ""]
    if "minesweeper" in records:
        from benchmarks.learning_report_pass import minesweeper

        parts += ["### LaMer's signature", "", *minesweeper(records["minesweeper"], figures), ""]
    return "\n".join(parts)

"""Tables (Markdown) and PNG curves of the ``learning`` benchmark's run records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from baselines.bench.learning_common import (
    BEST_RESPONSE,
    TARGET_SHARE,
    interval95,
    panel_row,
    plot_pairs,
    save_figure,
)

__all__ = ["interval95", "load_records", "plot_pairs", "point_at", "report"]


def load_records(out: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Return part -> variant -> the run records (sorted by seed) found under ``out``."""
    records: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for path in sorted(out.glob("*/*/seed*.json")):
        record = json.loads(path.read_text())
        records.setdefault(record["part"], {}).setdefault(record["variant"], []).append(record)
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


def _signature(variants: dict[str, list[dict]], figures: Path) -> list[str]:
    # compared at equal steps: the same number of trials (a sample budget), whatever each
    # run's speed; for each CPU budget run, at the step all its runs reached
    shortest = {name: min(r["steps"] for r in runs) for name, runs in variants.items()}
    by_budget: dict[float, list[int]] = {}
    for runs in variants.values():
        for r in runs:
            by_budget.setdefault(r["budget_cpu_s"], []).append(r["steps"])
    lines: list[str] = []
    for step in sorted({min(steps) for steps in by_budget.values()}):
        chosen = {n: runs for n, runs in sorted(variants.items()) if shortest[n] >= step}
        if not chosen:  # a variant whose runs had different budgets
            continue
        lines += [f"At step {step} ({step * _trials(chosen)} trials per run):", ""]
        lines += [*_signature_table(chosen, step, figures / f"signature-step{step}.png"), ""]
        lines += [*_memory_reading(chosen, step), ""]
    for name, runs in sorted(variants.items()):
        lines += ["", f"`{name}` (returns averaged over the styles, at the run's last step):", ""]
        lines += ["| seed | first episode | final episode | steps | CPU s | wall s |"]
        lines += ["|---|---|---|---|---|---|"]
        for r in runs:
            first, final = _style_mean(r["final_returns"], 0), _style_mean(r["final_returns"], -1)
            lines.append(
                f"| {r['seed']} | {first:+.3f} | {final:+.3f} | {r['steps']} | "
                f"{r['cpu_s']:.0f} | {r['wall_s']:.0f} |"
            )
    plot_pairs(
        variants,
        figures / "signature_curves.png",
        (lambda p: _style_mean(p["returns"], -1), lambda p: _style_mean(p["returns"], 0)),
        ("final", "first"),
        "exact return, mean of styles",
    )
    lines.append(f"\n![curves]({figures.name}/signature_curves.png)")
    return lines


def _trials(variants: dict[str, list[dict]]) -> int:
    """Trials per step of the variants (one figure: they are compared on the same budget)."""
    sizes = {r["settings"]["per_device_train_batch_size"] for v in variants.values() for r in v}
    if len(sizes) != 1:
        raise ValueError(f"Variants compared at equal steps play {sorted(sizes)} trials a step.")
    return sizes.pop()


def _signature_table(variants: dict[str, list[dict]], step: int, png: Path) -> list[str]:
    lines = [
        "| variant | seeds | opponent | first episode | final episode | final - first |",
        "|---|---|---|---|---|---|",
    ]
    bars: dict[str, dict[str, tuple[float, float, float, float]]] = {}
    for name, runs in variants.items():
        points = [point_at(r, step)["returns"] for r in runs]
        for opponent in points[0]:
            first = [p[opponent][0] for p in points]
            final = [p[opponent][-1] for p in points]
            gain = [b - a for a, b in zip(first, final, strict=True)]
            (f, fh), (g, gh), (d, dh) = interval95(first), interval95(final), interval95(gain)
            bars.setdefault(name, {})[opponent] = (f, fh, g, gh)
            lines.append(
                f"| {name} | {len(runs)} | {opponent} | {f:+.3f} ± {fh:.3f} | "
                f"{g:+.3f} ± {gh:.3f} | {d:+.3f} ± {dh:.3f} |"
            )
    _plot_signature(bars, png)
    return [*lines, f"\n![first and final episode]({png.parent.name}/{png.name})"]


def _memory_reading(variants: dict[str, list[dict]], step: int) -> list[str]:
    """The per-deal table (:mod:`baselines.bench.learning_deals`) of the runs that record deals."""
    from baselines.bench.learning_deals import deal_gains

    lines = [
        "| variant | seeds | final - first, information deals | final - first, other deals | "
        "difference | information deals at the known-card best, first -> final |",
        "|---|---|---|---|---|---|",
    ]
    for name, runs in variants.items():
        points = [point_at(r, step) for r in runs]
        gains = [deal_gains(p["deals"]) for p in points if "deals" in p]
        if not gains:
            continue
        (i, ih), (o, oh) = (interval95([g[k] for g in gains]) for k in ("info_gain", "other_gain"))
        d, dh = interval95([g["info_gain"] - g["other_gain"] for g in gains])  # paired by seed
        first = sum(g["info_best_first"] for g in gains) / len(gains)
        final = sum(g["info_best_final"] for g in gains) / len(gains)
        lines.append(
            f"| {name} | {len(gains)} | {i:+.3f} ± {ih:.3f} | {o:+.3f} ± {oh:.3f} | "
            f"{d:+.3f} ± {dh:.3f} | {first:.0%} -> {final:.0%} |"
        )
    return lines if len(lines) > 2 else []


def _style_mean(returns: dict[str, list[float]], episode: int) -> float:
    return sum(r[episode] for r in returns.values()) / len(returns)


def _plot_signature(bars: dict[str, dict[str, tuple]], path: Path) -> None:
    names = sorted(bars)
    opponents = list(next(iter(bars.values())))
    fig, axes = panel_row(len(opponents), 3.6, height=3, sharex=False)
    for ax, opponent in zip(axes, opponents, strict=True):
        for k, name in enumerate(names):
            f, fh, g, gh = bars[name][opponent]
            ax.errorbar([k - 0.12], [f], yerr=[fh], fmt="o", color="tab:blue", ms=4)
            ax.errorbar([k + 0.12], [g], yerr=[gh], fmt="s", color="tab:red", ms=4)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=7)
        ax.set_title(f"vs {opponent} (o first, s final)", fontsize=9)
    axes[0].set_ylabel("exact return (chips)")
    # Scaled to the means: the t intervals of 2-seed ablations would flatten every other point
    # (they run off the plot; the table gives them).
    means = [
        v for by_opponent in bars.values() for f, _, g, _ in by_opponent.values() for v in (f, g)
    ]
    axes[0].set_ylim(min(means) - 0.3, max(means) + 0.3)
    fig.tight_layout()
    save_figure(fig, path)


def report(out: Path, figures: Path) -> str:
    """Return the Markdown tables of the records under ``out``; write the PNGs to ``figures``."""
    records = load_records(out)
    if not records:
        return f"No run records under {out} (run `python -m baselines.bench learning run` first)."
    parts = []
    if "robustness" in records:
        parts += ["### Robustness", "", *_robustness(records["robustness"], figures), ""]
    if "signature" in records:
        parts += ["### MAGE's signature", "", *_signature(records["signature"], figures), ""]
    if "minesweeper" in records:
        from baselines.bench.learning_report_pass import minesweeper

        parts += ["### LaMer's signature", "", *minesweeper(records["minesweeper"], figures), ""]
    return "\n".join(parts)

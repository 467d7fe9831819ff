"""Tables (Markdown) and PNG curves of the ``learning`` benchmark's run records."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from baselines.bench.learning import BEST_RESPONSE, TARGET_SHARE

__all__ = ["interval95", "load_records", "plot_pairs", "point_at", "report"]

# two-sided 95% Student t quantiles by degrees of freedom (scipy is not a dependency)
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def interval95(values: Sequence[float]) -> tuple[float, float]:
    """Return the mean and the half-width of its 95% Student t interval (0 for one value).

    Example:
        >>> mean, half = interval95([1.0, 2.0, 3.0])
        >>> round(mean, 3), round(half, 3)
        (2.0, 2.484)
    """
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, _T95.get(n - 1, 1.96) * sd / math.sqrt(n)


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


def _pyplot() -> Any:
    """Return pyplot on the file-only Agg backend (imported when a report draws)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _panel_row(
    count: int, width: float, height: float = 2.8, sharex: bool = True
) -> tuple[Any, list]:
    """Return a figure of ``count`` panels in a row (``width`` inches each, one y axis)."""
    fig, axes = _pyplot().subplots(
        1, count, figsize=(width * count, height), sharex=sharex, sharey=True
    )
    return fig, [axes] if count == 1 else list(axes)


def _save(fig: Any, path: Path) -> None:
    """Write ``fig`` to ``path`` (its folder made if needed) and free it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    _pyplot().close(fig)


def _plot_robustness(variants: dict[str, list[dict]], path: Path, target: float) -> None:
    names = sorted(variants)
    fig, axes = _panel_row(len(names), 3.2)
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
    _save(fig, path)


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


def plot_pairs(
    variants: dict[str, list[dict]],
    path: Path,
    lines: tuple[Callable[[dict], float], Callable[[dict], float]],
    names: tuple[str, str],
    ylabel: str,
) -> None:
    """Draw one panel per variant: per run, two figures of its scores against the step.

    Args:
        variants: Variant name -> run records.
        path: The PNG written.
        lines: The figure drawn solid and the one drawn dotted, each from a score point.
        names: Their names in the panel titles.
        ylabel: The y axis label.
    """
    order = sorted(variants)
    fig, axes = _panel_row(len(order), 3.6)
    for ax, name in zip(axes, order, strict=True):
        for k, run in enumerate(variants[name]):
            steps = [p["step"] for p in run["curve"]]
            ax.plot(steps, [lines[0](p) for p in run["curve"]], color=f"C{k}")
            ax.plot(steps, [lines[1](p) for p in run["curve"]], color=f"C{k}", ls=":")
        ax.set_title(f"{name}: {names[0]} (solid), {names[1]} (dotted)", fontsize=8)
        ax.set_xlabel("optimizer step")
    axes[0].set_ylabel(ylabel)
    fig.tight_layout()
    _save(fig, path)


def _plot_signature(bars: dict[str, dict[str, tuple]], path: Path) -> None:
    names = sorted(bars)
    opponents = list(next(iter(bars.values())))
    fig, axes = _panel_row(len(opponents), 3.6, height=3, sharex=False)
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
    _save(fig, path)


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

"""Tables and curves of the learning benchmark's part 4: a pretrained model learns (LoRA, CPU).

Before and after are the same held-out trials (the same tasks and opponents, sampled from the
same stream), so each figure's change is paired by trial; intervals are 95% Student t over the
trials (one run), or over seeds when there are several.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.learning_common import interval95, panel_row, save_figure, verdict

__all__ = ["INVALID_TARGET", "trial_figures", "pretrained"]

INVALID_TARGET = 0.10
"""Part 4's target: under 10% invalid answers on held-out tasks."""


def trial_figures(trial: dict[str, Any]) -> dict[str, float]:
    """Return one evaluated trial's figures: invalid share, first and final return, pass@k.

    Example:
        >>> figures = trial_figures({"returns": [-5.0, 10.0], "pass_at_k": [0.0, 1.0, 1.0],
        ...                          "invalid": 1, "plays": 4})
        >>> figures["invalid"], figures["return"], figures["final_return"], figures["pass@3"]
        (0.25, -5.0, 10.0, 1.0)
    """
    figures = {
        "invalid": trial["invalid"] / max(trial["plays"], 1),
        "return": trial["returns"][0],
        "final_return": trial["returns"][-1],
    }
    figures |= {f"pass@{k + 1}": p for k, p in enumerate(trial["pass_at_k"])}
    return figures


FIGURES = ("invalid", "return", "final_return", "pass@1", "pass@3")


def _paired(before: Sequence[dict], after: Sequence[dict], name: str) -> list[str]:
    """Before, after and the change paired by trial (the return also per opponent)."""
    rows = []
    opponents = ["all"]
    if name == "return":  # the headline figure, also per opponent
        opponents += dict.fromkeys(t["opponent"] for t in before)
    for opponent in opponents:
        pairs = [
            (trial_figures(a)[name], trial_figures(b)[name])
            for a, b in zip(before, after, strict=True)
            if opponent in ("all", a["opponent"])
        ]
        (m0, h0), (m1, h1) = (interval95([p[k] for p in pairs]) for k in (0, 1))
        d, dh = interval95([b - a for a, b in pairs])
        better = verdict(-d, dh) if name == "invalid" else verdict(d, dh)
        rows.append(
            f"| {name} | {opponent} | {len(pairs)} | {m0:+.3f} ± {h0:.3f} | {m1:+.3f} ± {h1:.3f} "
            f"| {d:+.3f} ± {dh:.3f} | {better} |"
        )
    return rows


def _held_out(run: dict[str, Any]) -> list[str]:
    first, last = run["evaluations"][0], run["evaluations"][-1]
    before, after = first["trials"], last["trials"]
    keys = [(t["opponent"], t["seed"]) for t in before]
    if keys != [(t["opponent"], t["seed"]) for t in after]:
        raise ValueError("The evaluations before and after played different tasks.")
    lines = [
        f"Held-out trials, step {first['step']} -> step {last['step']} (seed {run['seed']}):",
        "",
        "| figure (mean per trial) | opponent | trials | before | after | change (paired) | "
        "better |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in FIGURES:
        lines += _paired(before, after, name)
    plays = sum(t["plays"] for t in after)
    share = sum(t["invalid"] for t in after) / max(plays, 1)
    target = "met" if share < INVALID_TARGET else "not met"
    lines += ["", f"Invalid answers after training: {share:.1%} of {plays} play turns ({target})."]
    return lines


def _exact(run: dict[str, Any]) -> list[str]:
    first, last = run["curve"][0], run["curve"][-1]
    lines = [
        "| exact policy (seat second) | step 0 | step " + f"{last['step']} |",
        "|---|---|---|",
    ]
    for key in sorted(k for k in first if k.endswith("/value") or k.endswith("/policy_value")):
        lines.append(f"| {key.removeprefix('exact/')} | {first[key]:+.3f} | {last[key]:+.3f} |")
    for key in ("exact/mean_value", "exact/legal_mass"):
        lines.append(f"| {key.removeprefix('exact/')} | {first[key]:.3f} | {last[key]:.3f} |")
    return lines


def pretrained(variants: dict[str, list[dict[str, Any]]], figures: Path) -> list[str]:
    """Return part 4's Markdown (held-out before/after, exact policy, clocks); draw its curves."""
    lines = [
        "| variant | seed | steps | training CPU s | scoring CPU s | wall s |",
        "|---|---|---|---|---|---|",
    ]
    for name, runs in sorted(variants.items()):
        for r in runs:
            lines.append(
                f"| {name} | {r['seed']} | {r['steps']} | {r['train_cpu_s']:.0f} | "
                f"{r['scoring_cpu_s']:.0f} | {r['wall_s']:.0f} |"
            )
    for name, runs in sorted(variants.items()):
        for r in runs:
            lines += ["", f"`{name}`:", ""]
            if len(r["evaluations"]) > 1:
                lines += [*_held_out(r), ""]
            lines += _exact(r)
    lines += _over_seeds(variants)
    lines += _versus(variants)
    _plot(variants, figures / "pretrained.png")
    lines.append(f"\n![pretrained curves]({figures.name}/pretrained.png)")
    return lines


def _trials_at(run: dict[str, Any], evaluation: int) -> dict[tuple, dict[str, float]]:
    """The figures of one held-out evaluation of a run, by (opponent, task seed)."""
    trials = run["evaluations"][evaluation]["trials"]
    return {(t["opponent"], t["seed"]): trial_figures(t) for t in trials}


def _figure(figures: dict[str, float], name: str) -> float:
    """A trial's figure; ``gain`` is its final hand's return minus its first's."""
    return figures["final_return"] - figures["return"] if name == "gain" else figures[name]


def _over_seeds(variants: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Each variant's held-out change, one figure per seed, its interval over the seeds."""
    lines = [
        "",
        "Over seeds (each seed's mean change on its held-out trials):",
        "",
        "| variant | figure | seeds | change per seed | mean change | better |",
        "|---|---|---|---|---|---|",
    ]
    for name, runs in sorted(variants.items()):
        runs = [r for r in runs if len(r["evaluations"]) > 1]
        if len(runs) < 2:
            continue
        for figure in FIGURES:
            changes = []
            for r in runs:
                before, after = _trials_at(r, 0), _trials_at(r, -1)
                diffs = [after[k][figure] - before[k][figure] for k in after]
                changes.append(sum(diffs) / len(diffs))
            d, dh = interval95(changes)
            better = verdict(-d, dh) if figure == "invalid" else verdict(d, dh)
            shown = ", ".join(f"{c:+.3f}" for c in changes)
            lines.append(
                f"| {name} | {figure} | {len(runs)} | {shown} | {d:+.3f} ± {dh:.3f} | {better} |"
            )
    return lines if len(lines) > 5 else []


def _versus(variants: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Every variant after training minus ``grpo`` after training, same seed, paired by trial.

    The held-out trials are the same tasks for every variant (3 hands against one opponent), so
    ``gain`` (final hand minus first) is MAGE's signature on the pretrained model.
    """
    base = {r["seed"]: r for r in variants.get("grpo", []) if len(r["evaluations"]) > 1}
    lines = [
        "",
        "Against `grpo` after training (same seed, the same held-out trials, paired by trial):",
        "",
        "| variant | seed | figure | trials | grpo | variant | difference | above grpo |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, runs in sorted(variants.items()):
        for r in runs:
            if name == "grpo" or r["seed"] not in base or len(r["evaluations"]) < 2:
                continue
            mine, theirs = _trials_at(r, -1), _trials_at(base[r["seed"]], -1)
            keys = sorted(mine.keys() & theirs.keys())
            for figure in (*FIGURES, "gain"):
                (g, gh), (m, mh), (d, dh) = (
                    interval95([_figure(theirs[k], figure) for k in keys]),
                    interval95([_figure(mine[k], figure) for k in keys]),
                    interval95(
                        [_figure(mine[k], figure) - _figure(theirs[k], figure) for k in keys]
                    ),
                )
                better = verdict(-d, dh) if figure == "invalid" else verdict(d, dh)
                lines.append(
                    f"| {name} | {r['seed']} | {figure} | {len(keys)} | {g:+.3f} ± {gh:.3f} | "
                    f"{m:+.3f} ± {mh:.3f} | {d:+.3f} ± {dh:.3f} | {better} |"
                )
    if len(lines) == 5:
        return []
    return [*lines, "", "`gain`: the final hand's return minus the first's, within the trial."]


def _plot(variants: dict[str, list[dict[str, Any]]], path: Path) -> None:
    fig, axes = panel_row(3, 3.6, sharex=True, sharey=False)
    runs = [(name, r) for name, group in sorted(variants.items()) for r in group]
    for k, (name, r) in enumerate(runs):  # one colour a run, in every panel
        label, color = f"{name} seed {r['seed']}", f"C{k}"
        steps = [p["step"] for p in r["training"] if "trial/invalid_rate" in p]
        invalid = [p["trial/invalid_rate"] for p in r["training"] if "trial/invalid_rate" in p]
        axes[0].plot(steps, invalid, color=color, lw=0.8, label=label)
        curve, at = r["curve"], [p["step"] for p in r["curve"]]
        axes[1].plot(at, [p["exact/legal_mass"] for p in curve], "o-", color=color)
        axes[2].plot(at, [p["exact/mean_value"] for p in curve], "o-", color=color)
    axes[0].axhline(INVALID_TARGET, color="k", ls="--", lw=0.8)
    titles = ("training invalid share", "legal answers' probability", "exact value (chips)")
    for ax, title in zip(axes, titles, strict=True):
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("optimizer step")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)

"""Tables and curves of the learning benchmark's part 2: MAGE's signature on Kuhn poker.

Variants are compared at equal optimizer steps, so on the same number of trials (a sample
budget), whatever each run's speed. A run's figure at step ``S`` is the mean of its last
:data:`LATE` scores up to ``S`` (the greedy policy's argmax flips from one score to the next, so
one score is a noisy reading). Intervals are 95% Student t over seeds; a comparison of two
variants pairs them by seed (the same seed builds the same initial model and draws the same
tasks). A signature is *shown* when its interval lies above 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.learning_common import (
    HELD_OUT,
    SAMPLED_HELD_OUT,
    STYLES,
    interval95,
    panel_row,
    plot_pairs,
    save_figure,
    verdict,
)

__all__ = ["LATE", "BASELINE", "comparison_steps", "late_returns", "late_deal_gains", "signature"]
__all__ += ["baseline_of", "blind_best", "held_out_twin", "start_confound"]

LATE = 3
"""Scores averaged into a run's figure at a step (that step's and the two before it)."""

BASELINE = "grpo"
"""The variant every other one is compared with, seed by seed."""


def _late_points(run: dict[str, Any], step: int) -> list[dict[str, Any]]:
    points = [p for p in run["curve"] if p["step"] <= step][-LATE:]
    if not points or points[-1]["step"] != step:
        raise ValueError(f"{run['variant']} seed {run['seed']} has no score at step {step}.")
    return points


def late_returns(run: dict[str, Any], step: int) -> dict[str, list[float]]:
    """Return, per opponent, each episode's exact return averaged over the late scores."""
    points = _late_points(run, step)
    first = points[0]["returns"]
    return {
        opponent: [
            sum(p["returns"][opponent][k] for p in points) / len(points)
            for k in range(len(first[opponent]))
        ]
        for opponent in first
    }


def late_deal_gains(run: dict[str, Any], step: int) -> dict[str, float] | None:
    """Return the per-deal gains against the training styles (:func:`deal_gains`), averaged."""
    from benchmarks.learning_deals import deal_gains

    points = _late_points(run, step)
    if any("deals" not in p for p in points):
        return None
    gains = [deal_gains({s: p["deals"][s] for s in STYLES if s in p["deals"]}) for p in points]
    return {key: sum(g[key] for g in gains) / len(gains) for key in gains[0]}


def comparison_steps(variants: dict[str, list[dict[str, Any]]]) -> list[int]:
    """Return the steps compared: each group of runs' last common step, and its half.

    Runs are grouped by their budget (CPU seconds and step limit); half of a group's last common
    step is rounded down to a scored step of every run.
    """
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for runs in variants.values():
        for r in runs:
            groups.setdefault((r["budget_cpu_s"], r.get("max_steps")), []).append(r)
    steps: set[int] = set()
    for runs in groups.values():
        last = min(r["steps"] for r in runs)
        scored = set.intersection(*({p["step"] for p in r["curve"]} for r in runs))
        halves = [s for s in scored if 0 < s <= last // 2]
        steps |= {last, *([max(halves)] if halves else [])}
    return sorted(steps)


def _population_mean(returns: dict[str, list[float]], episode: int) -> float:
    """The mean over the training styles of one episode's return."""
    return sum(returns[s][episode] for s in STYLES) / len(STYLES)


def _opponents(*returns: dict[str, Any]) -> list[str]:
    """The scored opponents: the styles, their mean, and the held-out ones all ``returns`` score.

    Records from before the sampled held-out opponent was scored lack it.
    """
    held = [o for o in (HELD_OUT, SAMPLED_HELD_OUT) if all(o in r for r in returns)]
    return [*STYLES, "population", *held]


def _episode(returns: dict[str, list[float]], opponent: str, episode: int) -> float:
    if opponent == "population":
        return _population_mean(returns, episode)
    return returns[opponent][episode]


def _label(opponent: str) -> str:
    if opponent == SAMPLED_HELD_OUT:
        return f"{opponent} (held out, sampled)"
    return f"{opponent} (held out)" if opponent == HELD_OUT else opponent


def _gain_table(variants: dict[str, list[dict]], step: int) -> tuple[list[str], dict]:
    lines = [
        "| variant | seeds | opponent | first episode | final episode | final - first | "
        "final > first |",
        "|---|---|---|---|---|---|---|",
    ]
    bars: dict[str, dict[str, tuple[float, float, float, float]]] = {}
    for name, runs in variants.items():
        late = [late_returns(r, step) for r in runs]
        for opponent in _opponents(*late):
            first = [_episode(x, opponent, 0) for x in late]
            final = [_episode(x, opponent, -1) for x in late]
            gain = [b - a for a, b in zip(first, final, strict=True)]
            (f, fh), (g, gh), (d, dh) = interval95(first), interval95(final), interval95(gain)
            bars.setdefault(name, {})[opponent] = (f, fh, g, gh)
            lines.append(
                f"| {name} | {len(runs)} | {_label(opponent)} | {f:+.3f} ± {fh:.3f} | "
                f"{g:+.3f} ± {gh:.3f} | {d:+.3f} ± {dh:.3f} | {verdict(d, dh)} |"
            )
    return lines, bars


def start_confound(first_diffs: list[float], final_diff: float) -> str | None:
    """Return why a final-episode comparison is confounded by the first episode, or ``None``.

    MAGE's signature is a final episode above GRPO's won *within the trial*. When a variant's
    first episode, played before any memory, is already above GRPO's (95% interval above 0), a
    final episode above GRPO's may only be a better policy; when it is below, a final episode
    not above GRPO's may only be the lower start.

    Args:
        first_diffs: The variant's first-episode return minus the baseline's, one per seed.
        final_diff: The mean of its final-episode return minus the baseline's.

    Example:
        >>> print(start_confound([0.3, 0.35, 0.4], 0.3))
        its first episode is above grpo's too, by 0.350
        >>> start_confound([-0.1, 0.0, 0.1], 0.3) is None
        True
    """
    m, h = interval95(first_diffs)
    if m - h > 0 and final_diff > 0:
        return f"its first episode is above {BASELINE}'s too, by {m:.3f}"
    if m + h < 0 and final_diff <= 0:
        return f"its first episode is below {BASELINE}'s, by {-m:.3f}"
    return None


def held_out_twin(variants: dict[str, list[dict[str, Any]]]) -> str | None:
    """The training style whose returns :data:`HELD_OUT`'s equal at every score, or ``None``.

    The argmax of CFR's policy for the second player to act bets and calls only with a King,
    the conservative style's moves: against a learner that acts first it is that style.
    """
    points = [p for runs in variants.values() for r in runs for p in r["curve"]]
    if not points or any(HELD_OUT not in p["returns"] for p in points):
        return None
    for style in STYLES:
        if all(p["returns"][HELD_OUT] == p["returns"][style] for p in points):
            return style
    return None


def _versus_baseline(variants: dict[str, list[dict]], step: int) -> list[str]:
    """Each variant's final episode and its within-trial gain minus the baseline's, by seed."""
    lines = [
        f"| variant | seeds | opponent | final episode - {BASELINE}'s (paired by seed) | "
        f"above {BASELINE} | final - first, minus {BASELINE}'s (paired) | gains more |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, runs in variants.items():
        baseline = baseline_of(name, variants)
        if baseline in (None, name):
            continue
        base = {r["seed"]: late_returns(r, step) for r in variants[baseline]}
        pairs = [(late_returns(r, step), base[r["seed"]]) for r in runs if r["seed"] in base]
        if not pairs:
            continue
        shown = name if baseline == BASELINE else f"{name} (against {baseline})"
        for opponent in _opponents(*(x for pair in pairs for x in pair)):
            final = [_episode(a, opponent, -1) - _episode(b, opponent, -1) for a, b in pairs]
            first = [_episode(a, opponent, 0) - _episode(b, opponent, 0) for a, b in pairs]
            (m, h), (g, gh) = (
                interval95(final),
                interval95([b - a for a, b in zip(first, final, strict=True)]),
            )
            why = start_confound(first, m) if len(pairs) > 1 else None
            lines.append(
                f"| {shown} | {len(pairs)} | {_label(opponent)} | {m:+.3f} ± {h:.3f} | "
                f"{verdict(m, h, why)} | {g:+.3f} ± {gh:.3f} | {verdict(g, gh)} |"
            )
    return lines if len(lines) > 2 else []


def _budget(runs: list[dict[str, Any]]) -> set[tuple]:
    return {(r["budget_cpu_s"], r.get("max_steps")) for r in runs}


def baseline_of(name: str, variants: dict[str, list[dict[str, Any]]]) -> str | None:
    """The runs ``name`` is compared with: its twin under :data:`BASELINE`, at the same budget.

    A twin shares the ``--name`` suffix, so the same overrides: ``grpo-150-cosine`` for
    ``mage-150-cosine``, then ``grpo`` itself; the longest suffix first, a twin with ``name``'s
    budget (CPU seconds and step limit) before one without. ``None`` when there is none.
    """
    cuts = [k for k, c in enumerate(name) if c == "-"] + [len(name)]
    twins = [BASELINE + name[k:] for k in cuts]
    twins = [t for t in dict.fromkeys(twins) if t in variants and t != name]
    same = [t for t in twins if _budget(variants[t]) == _budget(variants[name])]
    return (same or twins or [None])[0]


def blind_best(opponent: str = SAMPLED_HELD_OUT) -> float:
    """The best expected return of one hand against ``opponent`` in the first seat.

    A trial replays its deal, so a later hand that knows something of the opponent's card from
    the earlier hands (a showdown, the opponent's moves) can do better; against CFR's equilibrium
    no hand without that knowledge can (its best response's value, about the game value -1/18).
    """
    from mage_envs.bounds import kuhn_bounds

    return float(kuhn_bounds(opponent, seat=0).best_response_value)


def _above_blind_best(variants: dict[str, list[dict]], step: int) -> list[str]:
    """Each variant's final episode against the sampled CFR minus :func:`blind_best`."""
    best = blind_best()
    lines = [
        f"| variant | seeds | final episode vs {SAMPLED_HELD_OUT}, minus the best memory-blind "
        f"hand's {best:+.3f} | above it (memory read) |",
        "|---|---|---|---|",
    ]
    for name, runs in variants.items():
        late = [late_returns(r, step) for r in runs]
        if not all(SAMPLED_HELD_OUT in x for x in late):
            continue
        m, h = interval95([x[SAMPLED_HELD_OUT][-1] - best for x in late])
        lines.append(f"| {name} | {len(runs)} | {m:+.3f} ± {h:.3f} | {verdict(m, h)} |")
    return lines if len(lines) > 2 else []


def _memory_reading(variants: dict[str, list[dict]], step: int) -> list[str]:
    """The per-deal table (:mod:`benchmarks.learning_deals`), against the training styles."""
    lines = [
        "| variant | seeds | final - first, information deals | final - first, other deals | "
        "difference (paired) | difference > 0 | information deals at the known-card best, "
        "first -> final |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, runs in variants.items():
        gains = [g for g in (late_deal_gains(r, step) for r in runs) if g is not None]
        if not gains:
            continue
        (i, ih), (o, oh) = (interval95([g[k] for g in gains]) for k in ("info_gain", "other_gain"))
        d, dh = interval95([g["info_gain"] - g["other_gain"] for g in gains])  # paired by seed
        first = sum(g["info_best_first"] for g in gains) / len(gains)
        final = sum(g["info_best_final"] for g in gains) / len(gains)
        lines.append(
            f"| {name} | {len(gains)} | {i:+.3f} ± {ih:.3f} | {o:+.3f} ± {oh:.3f} | "
            f"{d:+.3f} ± {dh:.3f} | {verdict(d, dh)} | {first:.0%} -> {final:.0%} |"
        )
    return lines if len(lines) > 2 else []


def _trials(variants: dict[str, list[dict]]) -> int:
    """Trials per step of the variants (one figure: they are compared on the same budget)."""
    sizes = {r["settings"]["per_device_train_batch_size"] for v in variants.values() for r in v}
    if len(sizes) != 1:
        raise ValueError(f"Variants compared at equal steps play {sorted(sizes)} trials a step.")
    return sizes.pop()


def signature(variants: dict[str, list[dict]], figures: Path) -> list[str]:
    """Return part 2's Markdown at each :func:`comparison_steps` step; draw its PNGs."""
    lines: list[str] = []
    for step in comparison_steps(variants):
        chosen = {
            n: runs for n, runs in sorted(variants.items()) if min(r["steps"] for r in runs) >= step
        }
        if not chosen:
            continue
        lines += [f"At step {step} ({step * _trials(chosen)} trials per run):", ""]
        gains, bars = _gain_table(chosen, step)
        png = figures / f"signature-step{step}.png"
        _plot_signature(bars, png)
        lines += [*gains, f"\n![first and final episode]({png.parent.name}/{png.name})", ""]
        twin = held_out_twin(chosen)
        if twin:
            lines += [
                f"{HELD_OUT} scored the same as {twin} in every episode of every score of every "
                f"run: at this seat it plays as {twin}, so it is not a held-out opponent here.",
                "",
            ]
        tables = (_versus_baseline, _memory_reading, _above_blind_best)
        for table in (t(chosen, step) for t in tables):
            lines += [*table, ""] if table else []
    for name, runs in sorted(variants.items()):
        lines += ["", f"`{name}` (returns averaged over the styles, at the run's last step):", ""]
        lines += [
            f"| seed | first episode | final episode | {HELD_OUT}: first, final | "
            f"{SAMPLED_HELD_OUT}: first, final | steps | CPU s | wall s |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in runs:
            last = r["curve"][-1]["returns"]
            first, final = _population_mean(last, 0), _population_mean(last, -1)
            held = [
                f"{last[o][0]:+.3f}, {last[o][-1]:+.3f}" if o in last else "-"
                for o in (HELD_OUT, SAMPLED_HELD_OUT)
            ]
            lines.append(
                f"| {r['seed']} | {first:+.3f} | {final:+.3f} | {held[0]} | {held[1]} | "
                f"{r['steps']} | {r['cpu_s']:.0f} | {r['wall_s']:.0f} |"
            )
    plot_pairs(
        variants,
        figures / "signature_curves.png",
        (lambda p: _population_mean(p["returns"], -1), lambda p: _population_mean(p["returns"], 0)),
        ("final", "first"),
        "exact return, mean of styles",
    )
    lines.append(f"\n![curves]({figures.name}/signature_curves.png)")
    return lines


def _plot_signature(bars: dict[str, dict[str, tuple]], path: Path) -> None:
    names = sorted(bars)
    opponents = list(dict.fromkeys(o for by_opponent in bars.values() for o in by_opponent))
    fig, axes = panel_row(len(opponents), 3.2, height=3, sharex=False)
    for ax, opponent in zip(axes, opponents, strict=True):
        for k, name in enumerate(names):
            if opponent not in bars[name]:  # a run scored before the held-out opponent was
                continue
            f, fh, g, gh = bars[name][opponent]
            ax.errorbar([k - 0.12], [f], yerr=[fh], fmt="o", color="tab:blue", ms=4)
            ax.errorbar([k + 0.12], [g], yerr=[gh], fmt="s", color="tab:red", ms=4)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=7)
        ax.set_title(f"vs {_label(opponent)} (o first, s final)", fontsize=8)
    axes[0].set_ylabel("exact return (chips)")
    # Scaled to the means: the t intervals of few-seed ablations would flatten every other
    # point (they run off the plot; the table gives them).
    means = [
        v for by_opponent in bars.values() for f, _, g, _ in by_opponent.values() for v in (f, g)
    ]
    axes[0].set_ylim(min(means) - 0.3, max(means) + 0.3)
    fig.tight_layout()
    save_figure(fig, path)

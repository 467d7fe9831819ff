"""What the learning benchmark's parts share: its target, its scoring trials and its figures.

The target of the Kuhn parts is a share of the best response's value against the aggressive
style in the first seat, computed from :mod:`mage_envs.bounds` (1/3 of a chip a hand); the Kuhn
deals and their seeds, the held-out Minesweeper boards, the scoring trials of the greedy policy
(:func:`play_scored`), the process clock and the report's interval and panel helpers live here,
so the benchmark's modules import one another in one direction only.
"""

from __future__ import annotations

import math
import resource
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from mage_envs.bounds import kuhn_bounds

__all__ = [
    "TARGET_SHARE",
    "BEST_RESPONSE",
    "STYLES",
    "HELD_OUT",
    "SAMPLED_HELD_OUT",
    "DEALS",
    "EVAL_SEEDS",
    "ATTEMPTS",
    "cpu_seconds",
    "deal_seeds",
    "play_scored",
    "interval95",
    "plot_pairs",
    "panel_row",
    "pyplot",
    "save_figure",
    "verdict",
]

TARGET_SHARE = 0.8
"""A Kuhn run has learned once its greedy policy's exact value reaches this share of the best."""

BEST_RESPONSE = float(kuhn_bounds("aggressive", seat=0).best_response_value)
"""The best response's value against the aggressive style, learner first (1/3)."""

STYLES = ("conservative", "aggressive", "balanced")
"""MAGE's training population's styles (``mage-kuhn-train``)."""
HELD_OUT = "cfr-argmax"
"""MAGE's evaluation opponent (``mage-kuhn-eval``), never trained against; scored at the
learner's training seat (first), where its moves are known exactly."""
SAMPLED_HELD_OUT = "cfr"
"""The held-out opponent that differs from the training styles at the learner's seat: CFR's
equilibrium, sampled (``cfr-argmax`` plays there as the conservative style), scored exactly
over the branches of its moves (:mod:`benchmarks.learning_sampled`)."""
DEALS = ("JQ", "JK", "QJ", "QK", "KJ", "KQ")
"""The six deals, learner's card first, in :func:`deal_seeds` order."""


@cache
def deal_seeds(env_id: str = "mage/KuhnPoker-v0") -> tuple[int, ...]:
    """Return one task seed per Kuhn deal (six), the first seed that deals it.

    Example:
        >>> len(deal_seeds())
        6
    """
    import mage_envs

    env = mage_envs.make_trial(env_id, num_episodes=1, opponent="aggressive")
    found: dict[tuple[int, ...], int] = {}
    try:
        for seed in range(1000):
            env.reset(seed=seed)
            found.setdefault(tuple(env.unwrapped.state.history()[:2]), seed)
            if len(found) == 6:
                break
    finally:
        env.close()
    return tuple(found[deal] for deal in sorted(found))


EVAL_SEEDS = tuple(range(100_000, 100_064))
"""The 64 held-out board seeds (training draws seeds from 0)."""

ATTEMPTS = 3
"""Attempts per scored trial (LaMer's N)."""


def cpu_seconds() -> float:
    """Process CPU time (user + system) of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def play_scored(
    trainer: Any, cases: list[tuple[str | None, int]], num_episodes: int, stop_on_success: bool
) -> list:
    """Play one scoring trial per ``(opponent, task seed)`` with the greedy policy, in order.

    The trials have the trainer's own trial settings (memory, templates, ...) but
    ``num_episodes`` and ``stop_on_success`` of the score; the model is in eval mode meanwhile.
    Free turns (reflections) sample from the run's own scoring stream, so scoring never changes
    what training draws.
    """
    from dataclasses import replace

    from mage_agents.rollout import collect
    from mage_agents.training.streams import random_stream, stream_seed
    from mage_agents.training.trials import trial_planner

    args = trainer.args
    trial = replace(args.trial, num_episodes=num_episodes, stop_on_success=stop_on_success)
    plans = []
    for opponent, seed in cases:
        planner = replace(trial_planner(args), opponent=opponent, trial=trial)
        trial_id = f"score|{opponent}|{seed}"
        plans.append(planner.plan(seed, 0, trial_id=trial_id, scope=trial_id))
    was_training = trainer.model.training
    trainer.model.eval()
    try:
        # one move a page, however the page is batched: a sampling opponent's branches
        # (benchmarks.learning_sampled) must see the same move on the same page
        with trainer.backend.scoring(), random_stream(stream_seed(args.seed, "scoring")):
            return collect(plans, trainer.new_agent, batch_size=len(plans))
    finally:
        trainer.model.train(was_training)


# two-sided 95% Student t quantiles by degrees of freedom (scipy is not a dependency)
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def interval95(values: Sequence[float]) -> tuple[float, float]:
    """Return the mean and the half-width of its 95% Student t interval.

    One value has no spread to measure, so its interval is unbounded (``inf``): one seed never
    shows a signature.

    Example:
        >>> mean, half = interval95([1.0, 2.0, 3.0])
        >>> round(mean, 3), round(half, 3)
        (2.0, 2.484)
        >>> interval95([0.5])
        (0.5, inf)
    """
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.inf
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, _T95.get(n - 1, 1.96) * sd / math.sqrt(n)


def pyplot() -> Any:
    """Return pyplot on the file-only Agg backend (imported when a report draws)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def panel_row(
    count: int, width: float, height: float = 2.8, sharex: bool = True, sharey: bool = True
) -> tuple[Any, list]:
    """Return a figure of ``count`` panels in a row (``width`` inches each, one y axis)."""
    fig, axes = pyplot().subplots(
        1, count, figsize=(width * count, height), sharex=sharex, sharey=sharey
    )
    return fig, [axes] if count == 1 else list(axes)


def save_figure(fig: Any, path: Path) -> None:
    """Write ``fig`` to ``path`` (its folder made if needed) and free it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    pyplot().close(fig)


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
    fig, axes = panel_row(len(order), 3.6)
    for ax, name in zip(axes, order, strict=True):
        for k, run in enumerate(variants[name]):
            steps = [p["step"] for p in run["curve"]]
            ax.plot(steps, [lines[0](p) for p in run["curve"]], color=f"C{k}")
            ax.plot(steps, [lines[1](p) for p in run["curve"]], color=f"C{k}", ls=":")
        ax.set_title(f"{name}: {names[0]} (solid), {names[1]} (dotted)", fontsize=8)
        ax.set_xlabel("optimizer step")
    axes[0].set_ylabel(ylabel)
    fig.tight_layout()
    save_figure(fig, path)


def verdict(mean: float, half: float, confound: str | None = None) -> str:
    """Return a comparison's verdict from the 95% interval ``mean ± half`` of its difference.

    Args:
        mean: The difference's mean over seeds.
        half: Its interval's half-width.
        confound: Why a difference other than the one tested could explain the figure (``None``
            when nothing is known to): such a comparison shows nothing either way.

    Returns:
        ``"shown"`` when the interval lies above 0, ``"not shown"`` when it does not, and
        ``"confounded: <why>"`` whatever the interval when ``confound`` is given.

    Example:
        >>> verdict(0.3, 0.2), verdict(0.3, 0.3)
        ('shown', 'not shown')
        >>> verdict(0.3, 0.2, "lower pass@1")
        'confounded: lower pass@1'
    """
    if confound:
        return f"confounded: {confound}"
    return "shown" if mean - half > 0 else "not shown"

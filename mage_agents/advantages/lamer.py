"""LaMer: cross-episode returns with GiGPO-style normalisation (Jiang et al., ICLR 2026).

A trial is episodes ``n = 0..N-1`` with reflections between them. Returns:

- within episode ``n``: ``g_t^(n) = sum_{k >= t} step_gamma**(k - t) r_k`` over its play turns;
- across episodes: ``G_t^(n) = g_t^(n) + sum_{m > n} traj_gamma**(m - n) g_0^(m)``, so an early
  episode is credited with what the later ones achieved (exploration pays);
- a reflection turn gets ``G_0`` of the episode that follows it.

``across="code"`` uses the recursion of LaMer's published code instead (a later episode also
carries ``step_gamma**(T_n - 1 - t)``; see
:func:`~mage_agents.advantages.common.cross_episode_returns`).

Advantage, as LaMer (verl-agent's GiGPO with these returns): ``A_t = A^E_t + omega * A^S_t``

- ``A^E_t``: the return ``R_n`` of the turn's own episode, normalised over the rows of the trial
  group. A reflection turn scores ``R`` of the episode it precedes (``reflection_score="next"``);
  LaMer's code scores it 0 (``reflection_score="zero"``), which ranks every reflection below the
  play turns whenever returns are positive, even in a group of identical trials.
- ``A^S_t``: ``G_t`` normalised within anchor-state groups (identical raw observations in the
  trial group, any time step, any episode).

Published setting: ``step_gamma=0.95``, ``traj_gamma=0.6`` (0.9 Sokoban), ``omega=1``,
``mode="mean_norm"``, ``stats="turn"``, group size 8, invalid-action penalty 0.5 (pass it to
:func:`~mage_agents.advantages.estimate`); ``reflection_score="zero"`` and ``across="code"`` for
the code's returns and episode scores. Two differences from the code remain: its reflection turns
all share one anchor (``"reflection"``), so their step term compares every reflection of the
group, where here a reflection's anchor is its own observation; and it subtracts the invalid
penalty from a row's score before normalising, where here it comes after (once).

Example (worked by hand, ``step_gamma=traj_gamma=0.5``): two trials of two one-step episodes,
rewards ``a = [0], [4]`` and ``b = [0], [0]``, all from the same anchor state ``s0``. Returns:
``a`` 2 (=0 + 0.5*4), reflection 4, 4; ``b`` 0, 0, 0. Episode term: rows ``R = 0, 4, 4`` and
``0, 0, 0`` (mean 4/3). Step term: the four play turns form one anchor group (returns 2, 4, 0, 0,
mean 1.5); each reflection is alone (its observation differs), so 0.

    >>> from mage_agents.rollout import Trajectory
    >>> a = Trajectory.from_rewards([[0.0], [4.0]], trial_id="a")
    >>> b = Trajectory.from_rewards([[0.0], [0.0]], trial_id="b")
    >>> b.turns[1].observation = "reflect on b"
    >>> [x.round(4).tolist() for x in lamer([a, b], step_gamma=0.5, traj_gamma=0.5)]
    [[-0.8333, 2.6667, 5.1667], [-2.8333, -1.3333, -2.8333]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mage_agents.advantages.common import Rows, centring_mode, check_choice
from mage_agents.advantages.gigpo import OMEGA, two_term_advantages
from mage_agents.advantages.returns import (
    STEP_GAMMA,
    TRAJ_GAMMA,
    discounted_returns,
    episode_table,
)

__all__ = ["lamer", "lamer_settings", "row_scores", "REFLECTION_SCORES"]

REFLECTION_SCORES = ("next", "zero")
"""What a reflection turn scores in the episode term: the next episode's value, or 0."""


def row_scores(rows: Rows, table: np.ndarray, reflection_score: str = "next") -> np.ndarray:
    """Per row: ``table[trajectory, n]`` on the play turns of episode ``n``.

    A reflection turn scores the value of the episode it precedes (``"next"``) or 0 (``"zero"``).
    """
    check_choice("reflection_score", reflection_score, REFLECTION_SCORES)
    if len(rows) == 0:
        return np.zeros(0)
    scores = table[rows.owner, rows.episode]
    reflect = ~rows.play
    scores[reflect] = (
        table[rows.owner, rows.episode + 1][reflect] if reflection_score == "next" else 0.0
    )
    return scores


def lamer(
    trajectories: Sequence[Any],
    *,
    step_gamma: float = STEP_GAMMA,
    traj_gamma: float = TRAJ_GAMMA,
    omega: float = OMEGA,
    mode: str = "mean_norm",
    stats: str = "turn",
    across: str = "paper",
    reflection_score: str = "next",
    eps: float = 1e-6,
) -> list[np.ndarray]:
    """LaMer advantages (see the module docstring for the formula).

    Args:
        trajectories: The batch (any number of groups, read from ``group_id``).
        step_gamma: Discount within an episode.
        traj_gamma: Discount across episodes.
        omega: Weight of the step term.
        mode: ``"mean_norm"`` or ``"mean_std_norm"``.
        stats: ``"turn"`` or ``"trajectory"``.
        across: ``"paper"`` (the formula) or ``"code"`` (the published recursion).
        reflection_score: ``"next"`` or ``"zero"``: a reflection's score in the episode term.
        eps: Added to the std.

    Returns:
        Per trajectory, one advantage per turn (aligned with ``trajectory.turns``).
    """
    rows = Rows(trajectories)
    table, _ = episode_table(rows)
    scores = row_scores(rows, table, reflection_score)
    step_returns = discounted_returns(rows, rows.reward, step_gamma, traj_gamma, across)
    advantages = two_term_advantages(
        rows, scores, step_returns, rows.group, omega=omega, mode=mode, stats=stats, eps=eps
    )
    return rows.split(advantages)


def lamer_settings(config: Any) -> dict[str, Any]:
    """LaMer's settings from a training config.

    Both discounts, omega, scaling, statistics, and the published code's two switches
    (``returns_across`` as ``across``, ``reflection_score``).
    """
    return {
        "step_gamma": config.step_gamma,
        "traj_gamma": config.traj_gamma,
        "omega": config.omega,
        "mode": centring_mode(config),
        "stats": config.statistics,
        "across": config.returns_across,
        "reflection_score": config.reflection_score,
    }

"""MAGE: differential meta-rewards, LaMer's discounting, opponent-specific normalisation.

With ``R_n`` the return of episode ``n`` of a trial:

- differential meta-reward ``d_0 = R_0``, ``d_n = R_n - R_{n-1}`` (``differential=False``:
  ``d_n = R_n``), placed at the last play turn of episode ``n`` (every other turn gets 0), so an
  episode is rewarded for improving on the one before it;
- returns: LaMer's cross-episode discounting of these rewards (``step_gamma`` within an episode,
  ``traj_gamma`` across; a reflection turn gets ``G_0`` of the episode it precedes);
- advantage ``A_t = A^E_t + omega * A^S_t`` as in LaMer, with ``A^E`` normalising ``d_n`` (a
  reflection scores the ``d`` of the episode it precedes; ``reflection_score="zero"``: 0, as
  MAGE's code) and ``A^S`` normalising ``G_t`` within anchor-state groups;
- opponent-specific normalisation (``opponent_norm=True``): the comparison groups are the
  opponents, over the whole batch: a turn is normalised with the statistics of the turns played
  against the same opponent (``Turn.opponent``), and its anchor-state group is formed among them.
  A turn that names no opponent (single-agent envs) is normalised within its trial group.
  ``opponent_norm=False`` normalises within trial groups, as LaMer.

Published setting (Kuhn poker, tic-tac-toe): ``step_gamma=0.95``, ``traj_gamma=0.6`` (0.9
Sokoban), ``omega=1``, ``mode="mean_norm"``, ``stats="turn"``, group size 8, invalid-action
penalty 2 in Kuhn poker; ``reflection_score="zero"`` and ``across="code"`` for the code's returns
and episode scores (the differences left are LaMer's, see :mod:`~mage_agents.advantages.lamer`;
MAGE's code also keeps each trial group, all against one opponent, and splits its anchors by
opponent). The ablations switch ``differential`` and ``opponent_norm`` off.

Example (worked by hand, ``step_gamma=traj_gamma=0.5``): trial ``a`` has one-step episodes with
returns 1 and 3 against opponent ``x``: ``d = 1, 2``; returns: episode 0: 1 + 0.5*2 = 2,
reflection 2, episode 1: 2. Trial ``b`` has returns 0 and 0 against ``x``; trial ``c`` plays
``y`` alone. Against ``x``: episode-term rows ``1, 2, 2`` and ``0, 0, 0`` (mean 5/6); the four
play turns share anchor ``s0`` (returns 2, 2, 0, 0, mean 1); reflections are alone. ``c`` is its
opponent's only trial, so its episode term is 0; its two play turns still form an anchor group
(``d = 5, -5``, returns 2.5 and -5, mean -1.25): 3.75 and -3.75.

    >>> from mage_agents.rollout import Trajectory
    >>> a = Trajectory.from_rewards([[1.0], [3.0]], trial_id="a", opponent="x")
    >>> b = Trajectory.from_rewards([[0.0], [0.0]], trial_id="b", opponent="x")
    >>> c = Trajectory.from_rewards([[5.0], [0.0]], trial_id="c", opponent="y")
    >>> b.turns[1].observation = "reflect on b"
    >>> [x.round(4).tolist() for x in mage([a, b, c], step_gamma=0.5, traj_gamma=0.5)]
    [[1.1667, 1.1667, 2.1667], [-1.8333, -0.8333, -1.8333], [3.75, 0.0, -3.75]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mage_agents.advantages.common import Rows, ids
from mage_agents.advantages.gigpo import OMEGA, two_term_advantages
from mage_agents.advantages.lamer import lamer_settings, row_scores
from mage_agents.advantages.returns import (
    STEP_GAMMA,
    TRAJ_GAMMA,
    discounted_returns,
    episode_table,
)
from mage_envs.meta.trial import differential_returns

__all__ = ["mage", "mage_settings", "meta_rewards", "meta_reward_rows", "opponent_keys"]


def opponent_keys(rows: Rows) -> np.ndarray:
    """Row -> id of its opponent group: its opponent over the batch, else its trial group.

    A turn that names no opponent (a single-agent env) keeps its trial group: one batch-wide
    group of every task would compare trials of easy tasks with those of hard ones.
    """
    keys = [
        ("group", int(g)) if t.opponent is None else ("opponent", t.opponent)
        for t, g in zip(rows.turns, rows.group, strict=True)
    ]
    return ids(keys)


def meta_reward_rows(rows: Rows, differential: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(d, rewards)``: the meta-rewards and the rewards of each row.

    ``d[trajectory, n]`` is episode ``n``'s meta-reward; ``rewards`` puts ``d_n`` on the last
    play turn of episode ``n`` and 0 elsewhere.
    """
    table, played = episode_table(rows)
    meta = np.where(played, table, 0.0)
    if differential:  # the trial wrapper's own R_0, R_1 - R_0, ... (one definition)
        for o in np.flatnonzero(played.any(axis=1)):
            meta[o, played[o]] = differential_returns(table[o, played[o]].tolist())
    rewards = np.zeros(len(rows))
    if len(rows):
        width = table.shape[1]
        cell = (rows.owner * width + rows.episode)[rows.play]
        last = np.full(table.size, -1, dtype=np.int64)
        np.maximum.at(last, cell, np.flatnonzero(rows.play))
        ends = last[last >= 0]
        rewards[ends] = meta.reshape(-1)[last >= 0]
    return meta, rewards


def meta_rewards(trajectory: Any, differential: bool = True) -> tuple[list[float], list[float]]:
    """Per-episode meta-rewards ``d_n`` and the per-turn rewards with ``d_n`` at each episode's end.

    Example:
        >>> from mage_agents.rollout import Trajectory
        >>> meta_rewards(Trajectory.from_rewards([[0.0, -1.0], [2.0]]))
        ([-1.0, 3.0], [0.0, -1.0, 0.0, 3.0])
    """
    rows = Rows([trajectory])
    meta, rewards = meta_reward_rows(rows, differential)
    _, played = episode_table(rows)
    return meta[0][played[0]].tolist(), rewards.tolist()


def mage(
    trajectories: Sequence[Any],
    *,
    step_gamma: float = STEP_GAMMA,
    traj_gamma: float = TRAJ_GAMMA,
    omega: float = OMEGA,
    mode: str = "mean_norm",
    stats: str = "turn",
    differential: bool = True,
    opponent_norm: bool = True,
    across: str = "paper",
    reflection_score: str = "next",
    eps: float = 1e-6,
) -> list[np.ndarray]:
    """MAGE advantages (see the module docstring for the formula).

    Args:
        trajectories: The batch (any number of groups and opponents).
        step_gamma: Discount within an episode.
        traj_gamma: Discount across episodes.
        omega: Weight of the step term.
        mode: ``"mean_norm"`` or ``"mean_std_norm"``.
        stats: ``"turn"`` or ``"trajectory"``.
        differential: Use ``R_n - R_{n-1}`` (True) or ``R_n`` (False) as episode rewards.
        opponent_norm: Normalise per opponent over the batch (True; turns without an opponent
            within their trial group) or per trial group.
        across: ``"paper"`` (LaMer's formula) or ``"code"`` (the published recursion).
        reflection_score: ``"next"`` or ``"zero"``: a reflection's score in the episode term.
        eps: Added to the std.

    Returns:
        Per trajectory, one advantage per turn (aligned with ``trajectory.turns``).
    """
    rows = Rows(trajectories)
    meta, rewards = meta_reward_rows(rows, differential)
    scores = row_scores(rows, meta, reflection_score)
    step_returns = discounted_returns(rows, rewards, step_gamma, traj_gamma, across)
    keys = opponent_keys(rows) if opponent_norm else rows.group
    advantages = two_term_advantages(
        rows, scores, step_returns, keys, omega=omega, mode=mode, stats=stats, eps=eps
    )
    return rows.split(advantages)


def mage_settings(config: Any) -> dict[str, Any]:
    """MAGE's settings from a training config: LaMer's, and its two ablation switches."""
    return {
        **lamer_settings(config),
        "differential": config.differential_reward,
        "opponent_norm": config.opponent_normalization,
    }

"""Returns of trials, computed for a whole batch at once: episode returns and discounted returns.

Per trajectory ``o`` and episode ``n``, ``R[o, n]`` is the sum of the rewards of the episode's
play turns. Discounted returns run backwards over the play turns; a reflection turn, which
precedes episode ``n + 1``, gets that episode's first return. Everything is vectorised across
trajectories (loops run over positions in an episode, not over turns), and the arithmetic is the
scalar recursion's, step for step, so results do not depend on how a batch is composed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mage_agents.advantages.common import Rows, check_choice

__all__ = [
    "episode_table",
    "trial_scores",
    "discounted_returns",
    "episode_returns",
    "cross_episode_returns",
    "ACROSS",
    "STEP_GAMMA",
    "TRAJ_GAMMA",
]

ACROSS = ("paper", "code")
"""How later episodes enter a return: LaMer's formula, or its published code's recursion."""

STEP_GAMMA = 0.95
"""The published discount of step returns within an episode (GiGPO, LaMer, MAGE)."""

TRAJ_GAMMA = 0.6
"""The published discount across episodes (LaMer, MAGE; 0.9 on Sokoban)."""


def _width(rows: Rows) -> int:
    return int(rows.episode.max()) + 2 if len(rows) else 1


def episode_table(rows: Rows, rewards: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(R, played)``: per trajectory and episode, the return and whether it was played."""
    width, count = _width(rows), len(rows.lengths)
    values = rows.reward if rewards is None else np.asarray(rewards, dtype=np.float64)
    cell = (rows.owner * width + rows.episode)[rows.play]
    table = np.bincount(cell, values[rows.play], minlength=count * width)
    played = np.bincount(cell, minlength=count * width) > 0
    return table.reshape(count, width), played.reshape(count, width)


def trial_scores(rows: Rows, target: str = "trial") -> np.ndarray:
    """Per trajectory: the sum of its episode returns, or the last played episode's return."""
    check_choice("target", target, ("trial", "final"))
    table, played = episode_table(rows)
    if target == "trial":
        return table.sum(axis=1)
    last = np.where(played.any(axis=1), played.shape[1] - 1 - np.argmax(played[:, ::-1], axis=1), 0)
    return table[np.arange(len(table)), last]


def _chain(rows: Rows, segment: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """For play rows: the next play row of the same segment and the rows by distance to its end.

    Returns ``(next_row, layers)``: ``next_row`` is -1 for a segment's last play row, and
    ``layers[k]`` holds the play rows that are ``k`` play turns before the end of their segment.
    """
    play = np.flatnonzero(rows.play)
    order = play[np.lexsort((-play, segment[play]))]  # by segment, last turn first
    seg = segment[order]
    starts = np.r_[True, seg[1:] != seg[:-1]] if order.size else np.zeros(0, bool)
    block = np.maximum.accumulate(np.where(starts, np.arange(order.size), 0))
    position = np.arange(order.size) - block
    following = np.full(len(rows), -1, dtype=np.int64)
    following[order[~starts]] = order[np.flatnonzero(~starts) - 1]
    layers = [order[position == k] for k in range(int(position.max()) + 1)] if order.size else []
    return following, layers


def discounted_returns(
    rows: Rows,
    rewards: np.ndarray,
    step_gamma: float,
    traj_gamma: float,
    across: str = "paper",
) -> np.ndarray:
    """Every row's cross-episode discounted return (see :func:`cross_episode_returns`)."""
    check_choice("across", across, ACROSS)
    rewards = np.asarray(rewards, dtype=np.float64)
    width = _width(rows)
    cell = rows.owner * width + rows.episode
    segment = cell if across == "paper" else rows.owner
    following, layers = _chain(rows, segment)
    coefficient = np.full(len(rows), float(step_gamma))
    if across == "code":
        crossing = (following >= 0) & (rows.episode[np.maximum(following, 0)] != rows.episode)
        coefficient[crossing] = float(traj_gamma)
    returns = np.zeros(len(rows))
    for layer in layers:
        after = following[layer]
        carried = np.where(after >= 0, returns[np.maximum(after, 0)], 0.0)
        returns[layer] = rewards[layer] + coefficient[layer] * carried
    first = np.full(len(rows.lengths) * width, len(rows), dtype=np.int64)
    np.minimum.at(first, cell[rows.play], np.flatnonzero(rows.play))
    played = first < len(rows)
    start = np.zeros(len(rows.lengths) * width)  # G_0 of each (trajectory, episode)
    start[played] = returns[first[played]]
    start = start.reshape(len(rows.lengths), width)
    if across == "paper":
        later = np.zeros_like(start)
        for n in range(width - 2, -1, -1):
            later[:, n] = traj_gamma * (start[:, n + 1] + later[:, n + 1])
        returns[rows.play] += later.reshape(-1)[cell[rows.play]]
        start = start + later
    reflect = ~rows.play
    returns[reflect] = start.reshape(-1)[(cell + 1)[reflect]]
    return returns


def episode_returns(trajectory: Any) -> list[float]:
    """The return of each played episode of one trajectory.

    Example:
        >>> from mage_agents.rollout import Trajectory
        >>> episode_returns(Trajectory.from_rewards([[1.0, -1.0], [2.0]]))
        [0.0, 2.0]
    """
    table, played = episode_table(Rows([trajectory]))
    return table[0][played[0]].tolist()


def cross_episode_returns(
    trajectory: Any,
    rewards: Any,
    step_gamma: float,
    traj_gamma: float,
    across: str = "paper",
) -> np.ndarray:
    """LaMer's cross-episode discounted return of every turn of one trial.

    Within episode ``n``, ``g_t = sum_{k >= t} step_gamma**(k - t) * r_k`` over its play turns.

    - ``across="paper"`` (LaMer's formula): ``G_t^(n) = g_t^(n) + sum_{m > n}
      traj_gamma**(m - n) * g_0^(m)``.
    - ``across="code"`` (the recursion in LaMer's and MAGE's published code):
      ``G = r + step_gamma * G_next`` within an episode and ``G = r + traj_gamma * G_next`` at an
      episode's last turn, so a later episode also carries ``step_gamma**(T_n - 1 - t)``.

    A reflection turn gets ``G_0`` of the episode it precedes (0 if none followed).

    Example:
        >>> from mage_agents.rollout import Trajectory
        >>> trial = Trajectory.from_rewards([[0.0, 1.0], [4.0]])
        >>> [t.phase for t in trial.turns]
        ['play', 'play', 'reflect', 'play']
        >>> cross_episode_returns(trial, [0.0, 1.0, 0.0, 4.0], 0.5, 0.5).tolist()
        [2.5, 3.0, 4.0, 4.0]
        >>> cross_episode_returns(trial, [0.0, 1.0, 0.0, 4.0], 0.5, 0.5, across="code").tolist()
        [1.5, 3.0, 4.0, 4.0]
    """
    return discounted_returns(Rows([trajectory]), rewards, step_gamma, traj_gamma, across)

"""What every estimator shares: per-turn returns of a trial and normalisation within groups.

All functions are pure numpy over :class:`~mage_agents.rollout.Trajectory` objects. A *row* is
one turn (one model call, one training sample); estimators return one advantage per row.

Statistics: ``stats="turn"`` counts every row (as verl-agent, LaMer and MAGE do: their
``compute_mean_std_cross_all_data=True``), so trajectories with more turns weigh more in a
group's mean and std; ``stats="trajectory"`` weighs the rows of each trajectory so that the
trajectory counts once. The standard deviation is the unbiased one (``torch.std``'s, as in the
published code), over ``N`` = the group's total weight.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "STATS",
    "Rows",
    "normalise",
    "episode_returns",
    "cross_episode_returns",
    "check_choice",
]

STATS = ("turn", "trajectory")
"""The two ways to weigh rows in a group's statistics."""

_FLAT = 1e-12
"""A group whose scores differ by less than this (relative) has zero variance: advantage 0."""


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> None:
    """Raise a clear error if ``value`` is not one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, not {value!r}.")


class Rows:
    """The turns of a batch of trajectories, flattened into rows.

    Attributes:
        turns: Every turn, trajectory after trajectory.
        owner: Row -> index of its trajectory.
        lengths: Turns per trajectory (to split per-row arrays back).
    """

    def __init__(self, trajectories: Sequence[Any]) -> None:
        self.trajectories = list(trajectories)
        self.turns = [turn for t in self.trajectories for turn in t.turns]
        self.lengths = [len(t.turns) for t in self.trajectories]
        self.owner = np.repeat(np.arange(len(self.lengths)), self.lengths)

    def split(self, values: np.ndarray) -> list[np.ndarray]:
        """Per-row values -> one array per trajectory, aligned with its turns."""
        values = np.asarray(values, dtype=np.float64)
        ends = np.cumsum(self.lengths).tolist()
        return [values[end - n : end].copy() for n, end in zip(self.lengths, ends, strict=True)]

    def per_trajectory(self, values: Sequence[float]) -> np.ndarray:
        """One value per trajectory -> the value on each of its rows."""
        return np.asarray(values, dtype=np.float64)[self.owner] if self.turns else np.zeros(0)

    def group_ids(self) -> list[str]:
        """Each row's trial group id."""
        return [t.group_id for t in self.turns]

    def weights(self, keys: Sequence[Hashable], stats: str) -> np.ndarray:
        """Row weights for ``stats``: 1 per row, or 1 per trajectory within each group."""
        check_choice("stats", stats, STATS)
        if stats == "turn":
            return np.ones(len(self.turns))
        ids = _ids(list(zip(keys, self.owner.tolist(), strict=True)))
        return 1.0 / np.bincount(ids)[ids]


def _ids(keys: Sequence[Hashable]) -> np.ndarray:
    """Hashable keys -> small integer ids (first seen, first numbered)."""
    seen: dict[Hashable, int] = {}
    return np.array([seen.setdefault(k, len(seen)) for k in keys], dtype=np.int64)


def normalise(
    scores: np.ndarray,
    keys: Sequence[Hashable],
    weights: np.ndarray,
    members: np.ndarray,
    *,
    scale_std: bool,
    leave_one_out: bool = False,
    eps: float = 1e-6,
) -> np.ndarray:
    """Centre (and optionally scale) ``scores`` within the groups given by ``keys``.

    With weights ``w`` and ``N = sum(w)`` in a group, ``mean = sum(w * s) / N`` and
    ``std = sqrt(sum(w * (s - mean)**2) / (N - 1))``. The advantage is ``s - mean``, divided by
    ``std + eps`` when ``scale_std``; with ``leave_one_out`` it is ``N / (N - 1) * (s - mean)``,
    the score minus the mean of the others (RLOO). A group with fewer than two distinct
    ``members`` (trajectories, or rows) or with equal scores gets 0, never NaN.

    Example:
        >>> s = np.array([3.0, 1.0, 2.0, 5.0])
        >>> a = normalise(s, ["g", "g", "g", "h"], np.ones(4), np.arange(4), scale_std=True)
        >>> np.round(a, 4).tolist()  # mean 2, std 1; "h" has one member
        [1.0, -1.0, 0.0, 0.0]
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores.copy()
    group = _ids(list(keys))
    total = np.bincount(group, weights)
    mean = np.bincount(group, weights * scores) / total
    centred = scores - mean[group]
    count = len(total)
    members = np.asarray(members, dtype=np.int64)
    width = int(members.max()) + 1
    distinct = np.bincount(np.unique(group * width + members) // width, minlength=count)
    high, low = np.full(count, -np.inf), np.full(count, np.inf)
    np.maximum.at(high, group, scores)
    np.minimum.at(low, group, scores)
    flat = (high - low) <= _FLAT * np.maximum(1.0, np.abs(high))
    dead = (distinct < 2) | flat
    spare = np.maximum(total - 1.0, 1e-12)
    if leave_one_out:
        centred = centred * (total / spare)[group]
    elif scale_std:
        std = np.sqrt(np.bincount(group, weights * centred**2) / spare)
        centred = centred / (std[group] + eps)
    centred[dead[group]] = 0.0
    return centred


def episode_returns(trajectory: Any, rewards: Sequence[float] | None = None) -> list[float]:
    """The return of each played episode: the sum of its play turns' rewards.

    Example:
        >>> from mage_agents.rollout import Turn
        >>> class T:
        ...     turns = [Turn("t", "g", 0, 0, "play", "", "", reward=1.0),
        ...              Turn("t", "g", 0, 1, "reflect", "", ""),
        ...              Turn("t", "g", 1, 0, "play", "", "", reward=2.0)]
        >>> episode_returns(T())
        [1.0, 2.0]
    """
    values = [t.reward for t in trajectory.turns] if rewards is None else list(rewards)
    totals: dict[int, float] = {}
    for turn, value in zip(trajectory.turns, values, strict=True):
        if turn.phase == "play":
            totals[turn.episode] = totals.get(turn.episode, 0.0) + float(value)
    return [totals[k] for k in sorted(totals)]


def cross_episode_returns(
    trajectory: Any,
    rewards: Sequence[float],
    step_gamma: float,
    traj_gamma: float,
    across: str = "paper",
) -> np.ndarray:
    """LaMer's cross-episode discounted return of every turn of a trial.

    Within episode ``n``, ``g_t = sum_{k >= t} step_gamma**(k - t) * r_k`` over its play turns.

    - ``across="paper"`` (LaMer's formula): ``G_t^(n) = g_t^(n) + sum_{m > n}
      traj_gamma**(m - n) * g_0^(m)``.
    - ``across="code"`` (the recursion in LaMer's and MAGE's published code):
      ``G = r + step_gamma * G_next`` within an episode and ``G = r + traj_gamma * G_next`` at an
      episode's last turn, so a later episode also carries ``step_gamma**(T_n - 1 - t)``.

    A reflection turn gets ``G_0`` of the episode it precedes (0 if none followed).

    Example:
        >>> from mage_agents.rollout import Turn
        >>> class T:
        ...     turns = [Turn("t", "g", 0, 0, "play", "", ""), Turn("t", "g", 0, 1, "play", "", ""),
        ...              Turn("t", "g", 0, 2, "reflect", "", ""),
        ...              Turn("t", "g", 1, 0, "play", "", "")]
        >>> cross_episode_returns(T(), [0.0, 1.0, 0.0, 4.0], 0.5, 0.5).tolist()
        [2.5, 3.0, 4.0, 4.0]
        >>> cross_episode_returns(T(), [0.0, 1.0, 0.0, 4.0], 0.5, 0.5, across="code").tolist()
        [1.5, 3.0, 4.0, 4.0]
    """
    check_choice("across", across, ("paper", "code"))
    turns = trajectory.turns
    plays = [i for i, t in enumerate(turns) if t.phase == "play"]
    returns = np.zeros(len(turns))
    running, previous = 0.0, None
    first_return: dict[int, float] = {}  # episode -> G_0 (paper: g_0) of that episode
    first_total: dict[int, float] = {}  # episode -> G_0 with the later episodes
    for i in reversed(plays):
        episode = turns[i].episode
        if previous is None or episode == previous:
            carried = step_gamma * running
        else:  # the paper's g restarts (later episodes are added below); the code's carries on
            carried = 0.0 if across == "paper" else traj_gamma * running
        running = float(rewards[i]) + carried
        returns[i] = running
        first_return[episode] = running
        previous = episode
    if across == "paper":
        later = 0.0
        for episode in sorted(first_return, reverse=True):
            first_total[episode] = first_return[episode] + later
            later = traj_gamma * (first_return[episode] + later)
        for i in plays:
            returns[i] += first_total[turns[i].episode] - first_return[turns[i].episode]
    else:
        first_total = first_return
    for i, turn in enumerate(turns):
        if turn.phase != "play":
            returns[i] = first_total.get(turn.episode + 1, 0.0)
    return returns

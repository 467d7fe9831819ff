"""What every estimator shares: a batch flattened into rows, and normalisation within groups.

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

__all__ = ["STATS", "Rows", "normalise", "ids", "check_choice", "centring_mode"]

STATS = ("turn", "trajectory")
"""The two ways to weigh rows in a group's statistics."""

_FLAT = 1e-12
"""A group whose scores differ by less than this (relative) has zero variance: advantage 0."""


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> None:
    """Raise a clear error if ``value`` is not one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, not {value!r}.")


def centring_mode(config: Any) -> str:
    """The two-term estimators' ``mode`` under a training config's ``scale_advantages``.

    ``"group"`` divides by the group std (``"mean_std_norm"``); the published default, ``"none"``
    and ``"batch"`` (rescaled later, over the whole batch) only centre (``"mean_norm"``).
    """
    return "mean_std_norm" if config.scale_advantages == "group" else "mean_norm"


def ids(keys: Sequence[Hashable]) -> np.ndarray:
    """Hashable keys -> small integer ids, numbered in order of first appearance.

    Example:
        >>> ids(["b", "a", "b"]).tolist()
        [0, 1, 0]
    """
    seen: dict[Hashable, int] = {}
    return np.array([seen.setdefault(k, len(seen)) for k in keys], dtype=np.int64)


def pair_ids(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Ids of the pairs ``(first[i], second[i])`` of two non-negative integer arrays."""
    if first.size == 0:
        return first.copy()
    width = int(second.max()) + 1
    return np.unique(first * width + second, return_inverse=True)[1].reshape(-1)


class Rows:
    """The turns of a batch of trajectories, flattened into rows (read once, then arrays).

    Attributes:
        trajectories: The batch.
        turns: Every turn, trajectory after trajectory.
        lengths: Turns per trajectory.
        owner: Row -> index of its trajectory.
        reward, episode, play, invalid: Per row: the env reward, the episode index, whether it is
            a play turn, whether its answer was invalid.
        group: Row -> id of its trial group (its trajectory's ``group_id``).

    Raises:
        ValueError: If a reward is not finite (NaN or infinite).
    """

    def __init__(self, trajectories: Sequence[Any]) -> None:
        self.trajectories = list(trajectories)
        self.turns = [turn for t in self.trajectories for turn in t.turns]
        self.lengths = [len(t.turns) for t in self.trajectories]
        n = len(self.turns)
        self.owner = np.repeat(np.arange(len(self.lengths), dtype=np.int64), self.lengths)
        self.reward = np.fromiter((t.reward for t in self.turns), np.float64, n)
        if not np.isfinite(self.reward).all():  # a NaN would poison its whole group, inf zero it
            turn = self.turns[int(np.flatnonzero(~np.isfinite(self.reward))[0])]
            raise ValueError(
                f"The reward of trial {turn.trial_id!r}, episode {turn.episode}, step "
                f"{turn.step} is {turn.reward}, not finite: no advantage can be computed."
            )
        self.episode = np.fromiter((t.episode for t in self.turns), np.int64, n)
        self.play = np.fromiter((t.phase == "play" for t in self.turns), bool, n)
        self.invalid = np.fromiter((bool(t.invalid) for t in self.turns), bool, n)
        self.group = ids([t.group_id for t in self.trajectories])[self.owner]

    def __len__(self) -> int:
        return len(self.turns)

    def split(self, values: np.ndarray) -> list[np.ndarray]:
        """Per-row values -> one array per trajectory, aligned with its turns."""
        values = np.asarray(values, dtype=np.float64)
        ends = np.cumsum(self.lengths).tolist()
        return [values[end - n : end].copy() for n, end in zip(self.lengths, ends, strict=True)]

    def anchors(self, keys: np.ndarray) -> np.ndarray:
        """Row -> id of its anchor-state group: the same ``keys`` group and ``anchor_key``."""
        return pair_ids(keys, ids([t.anchor_key for t in self.turns]))

    def weights(self, keys: np.ndarray, stats: str) -> np.ndarray:
        """Row weights for ``stats``: 1 per row, or 1 per trajectory within each group."""
        check_choice("stats", stats, STATS)
        if stats == "turn" or len(self) == 0:
            return np.ones(len(self))
        pairs = pair_ids(keys, self.owner)
        return 1.0 / np.bincount(pairs)[pairs]


def normalise(
    scores: np.ndarray,
    keys: np.ndarray | Sequence[Hashable],
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
    ``members`` (trajectories, or rows) or with equal scores gets 0, never NaN; so does, when
    scaling by the std, a group of total weight ``N <= 1`` (its std is undefined).

    Example:
        >>> s = np.array([3.0, 1.0, 2.0, 5.0])
        >>> a = normalise(s, ["g", "g", "g", "h"], np.ones(4), np.arange(4), scale_std=True)
        >>> np.round(a, 4).tolist()  # mean 2, std 1; "h" has one member
        [1.0, -1.0, 0.0, 0.0]
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores.copy()
    group = keys if isinstance(keys, np.ndarray) else ids(list(keys))
    total = np.bincount(group, weights)
    mean = np.bincount(group, weights * scores) / total
    centred = scores - mean[group]
    count = len(total)
    members = np.asarray(members, dtype=np.int64)
    distinct = np.bincount(
        np.unique(group * (int(members.max()) + 1) + members) // (int(members.max()) + 1),
        minlength=count,
    )
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
        dead |= total <= 1.0  # one trajectory's weight: the std over N - 1 = 0 is undefined
    centred[dead[group]] = 0.0
    return centred

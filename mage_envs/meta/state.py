"""A trial's state: what one trial changes, made at each ``reset``, and the draws that start it.

:class:`TrialState` holds everything a trial changes (the wrapper keeps only its settings);
:func:`draw_episodes` draws each episode's reset seed and seat from the trial's generator.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from mage_envs.meta.config import TrialConfig
from mage_envs.meta.memory import EpisodeRecord
from mage_envs.seeds import draw_seed

__all__ = ["LazyRandom", "TrialState", "draw_episodes"]


@dataclass
class TrialState:
    """Everything one trial changes, created at ``reset`` (the wrapper keeps only its settings).

    Attributes:
        seeds: The reset seed of each episode.
        seats: The seat of each episode (``None``: the env's own).
        user_options: The options given to ``reset``, forwarded to every inner reset.
        records: The finished episodes.
        reflections: The reflection written after each finished non-final episode.
        invalid: Invalid answers so far.
        phase: ``"play"``, ``"reflect"`` or ``"done"``.
        current: The episode being played.
        inner_obs: The inner env's last observation, within the charset.
        inner_info: The inner env's last info.
        first_observation: The first observation of episode 1 (to check that seeds replay).
        layout: How this trial's observations are written (:mod:`mage_envs.meta.layout`): our
            composed page or a published page, with what it keeps of the trial.
        ground_truth: Per finished episode, the inner env's ``ground_truth()`` at its end: what
            the agent was not shown, for analysis only (never in an observation or an info).
    """

    seeds: list[int]
    seats: list[str | None]
    user_options: dict[str, Any]
    records: list[EpisodeRecord] = field(default_factory=list)
    reflections: list[str] = field(default_factory=list)
    invalid: int = 0
    phase: str = "play"
    current: EpisodeRecord = field(default_factory=EpisodeRecord)
    inner_obs: str = ""
    inner_info: dict[str, Any] = field(default_factory=dict)
    first_observation: str | None = None
    layout: Any = None
    ground_truth: list[dict[str, Any]] = field(default_factory=list)


def draw_episodes(
    config: TrialConfig, seed: int | None, rng: LazyRandom
) -> tuple[list[int], list[str | None]]:
    """Return the reset seed and the seat of each episode of a trial, in the trial's draw order.

    Args:
        config: The trial's settings (``num_episodes``, ``same_task``, ``seat_rotation``).
        seed: The trial's seed; with ``same_task`` it is every episode's seed (trial ``s``
            replays what ``env.reset(seed=s)`` deals).
        rng: The wrapper's generator (seeded with ``seed`` when one is given).

    Example:
        >>> draw_episodes(TrialConfig(num_episodes=2), 7, LazyRandom(7))
        ([7, 7], [None, None])
    """
    count = config.num_episodes
    if config.same_task:
        seeds = [seed if seed is not None else draw_seed(rng)] * count
    else:
        seeds = [draw_seed(rng) for _ in range(count)]
    if config.seat_rotation is None:
        return seeds, [None] * count
    first = rng.getrandbits(1)
    if config.seat_rotation == "trial":
        return seeds, [("first", "second")[first]] * count
    return seeds, [("first", "second")[(first + k) % 2] for k in range(count)]


class LazyRandom:
    """``random.Random(seed)``, seeded at its first draw (the same stream, drawn or not).

    Seeding costs as much as a few steps, and a seeded same-task trial with the env's own seat
    draws nothing.
    """

    __slots__ = ("_seed", "_rng")

    def __init__(self, seed: int | None) -> None:
        self._seed, self._rng = seed, None

    def getrandbits(self, k: int) -> int:
        """Return ``k`` random bits, as ``random.Random(seed).getrandbits`` would."""
        if self._rng is None:
            self._rng = random.Random(self._seed)
        return self._rng.getrandbits(k)

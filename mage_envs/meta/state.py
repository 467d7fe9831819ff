"""Everything one trial changes, in one object the wrapper makes at each ``reset``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mage_envs.meta.memory import EpisodeRecord

__all__ = ["TrialState"]


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

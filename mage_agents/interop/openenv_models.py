"""The typed action, observation and state of a mage trial served through OpenEnv."""

from __future__ import annotations

from typing import Any, Literal

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

__all__ = ["MAX_ACTION_CHARS", "MageAction", "MageObservation", "MageState"]

MAX_ACTION_CHARS = 8192
"""The longest answer a client may send; a longer one is rejected before the env sees it."""


class MageAction(Action):
    """The agent's text: one move, or its reflection when the phase is ``reflect``."""

    text: str = Field(max_length=MAX_ACTION_CHARS, description="The agent's answer.")


class MageObservation(Observation):
    """What the agent reads after a reset or a step (``reward`` and ``done`` come with it).

    Attributes:
        page: The text the agent reads (attempt header, memory and the game).
        legal_moves: The legal answers now (empty in the reflect phase and at the end).
        phase: ``play`` or ``reflect`` (the answer is stored as the reflection).
        episode_index: 0-based index of the episode in its trial.
        invalid_action: Whether the last answer was not a legal move.
        trial: The trial's figures (returns, pass@k, ...) once it is done, else ``None``.
    """

    page: str = ""
    legal_moves: list[str] = Field(default_factory=list)
    phase: Literal["play", "reflect"] = "play"
    episode_index: int = 0
    invalid_action: bool = False
    trial: dict[str, Any] | None = None


class MageState(State):
    """A session's public record: what is served and how the trial stands (never the deal).

    Attributes:
        env_id: The env being played.
        settings: Its settings (the server's, with the client's choices).
        seed: The seed of the current trial (``None``: drawn by the env).
        phase: ``play``, ``reflect``, ``done``, or ``idle`` before the first reset.
        episode_index: 0-based index of the current episode.
        total_reward: Sum of the rewards of this trial so far.
        record: The figures of the episodes finished so far (returns, successes, pass@k,
            reflections, ...), ``None`` before the first one ends or for a plain env.
    """

    env_id: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None
    phase: Literal["idle", "play", "reflect", "done"] = "idle"
    episode_index: int = 0
    total_reward: float = 0.0
    record: dict[str, Any] | None = None

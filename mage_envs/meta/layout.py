"""How a trial's observations are written: the layout, one small protocol with two kinds.

A trial is laid out either as our composed page (:class:`~mage_envs.meta.observations.
ComposedLayout`: the attempt line, the memory, recent steps and the env's text, stacked) or as
the published whole page of a paper (:class:`~mage_envs.meta.page.PageLayout`). The wrapper picks
the kind once, from its templates (a published preset sets ``Templates.page``), makes one layout
at every reset, and tells it the trial's moments; it asks it for every observation. Both write
their memory with the one renderer, :func:`~mage_envs.meta.memory.render_memory`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from mage_envs.meta.memory import cut_head

__all__ = ["TrialLayout", "fit", "final_observation"]


class TrialLayout(Protocol):
    """What the wrapper asks of a layout (one per trial, made at ``reset``).

    Attributes:
        space: ``space(max_chars)``: the observation space of its pages (its charset).
    """

    space: Callable[[int], Any]

    def start(self, trial: Any) -> None:
        """An attempt starts: ``trial.inner_obs`` / ``inner_info`` are its first."""

    def record(self, trial: Any, answer: object) -> None:
        """A play step was played with ``answer`` (the trial's state is after it)."""

    def finish(self, trial: Any) -> None:
        """The attempt is over (its record is the last of ``trial.records``)."""

    def stored_reflection(self, answer: object) -> str:
        """The reflection kept from the answer of a reflection step."""

    def play(self, trial: Any) -> str:
        """The observation of a play step."""

    def reflection(self, trial: Any) -> str:
        """The observation that asks for a reflection on the attempt that just ended."""

    def final(self, trial: Any) -> str:
        """The last observation of the trial."""


def final_observation(trial: Any, config: Any) -> str:
    """Return the last observation of a trial: the attempt line and the env's final text."""
    header = config.templates.attempt.format(
        attempt=len(trial.records), num_episodes=config.num_episodes
    )
    return fit(header + "\n\n", "", trial.inner_obs, config.max_observation_chars)


def fit(head: str, middle: str, tail: str, limit: int) -> str:
    """Join the parts; cut ``middle`` (memory) from its oldest end, then ``tail``, to fit.

    Example:
        >>> fit("A: ", "older newer", " end", 14)
        'A: [...]er end'
    """
    if len(head) + len(middle) + len(tail) <= limit:  # the common case
        return head + middle + tail
    tail = tail[: max(limit - len(head), 0)]
    middle = cut_head(middle, max(limit - len(head) - len(tail), 0))
    return (head + middle + tail)[:limit]

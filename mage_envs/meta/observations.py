"""Our composed layout: the attempt line, the memory, recent steps and the env's text, stacked.

:class:`ComposedLayout` is one of the two layouts of a trial (:mod:`mage_envs.meta.layout`); the
other is the published page (:class:`~mage_envs.meta.page.PageLayout`). It writes every
observation from the trial's :class:`~mage_envs.meta.state.TrialState` and the
:class:`~mage_envs.meta.config.TrialConfig`; the wrapper keeps no text logic. Every observation
fits ``max_observation_chars``: memory is cut from its oldest end first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mage_envs.meta.config import TrialConfig
from mage_envs.meta.layout import final_observation, fit
from mage_envs.meta.memory import (
    EarlierAttempt,
    EpisodeRecord,
    extract_reflection,
    outcome,
    render_history,
    render_memory,
    render_steps,
)
from mage_envs.meta.state import TrialState
from mage_envs.text import text_space

__all__ = ["ComposedLayout"]


class ComposedLayout:
    """Our layout: each observation stacked from the attempt line, memory, steps and the env's.

    Args:
        config: The trial's settings (its templates are ours, cleaned to the charset).
        env: The inner env (unused: the composed page reads only the env's text).
    """

    space = staticmethod(text_space)
    unwritten_reflection: str | None = None  # an attempt without one leaves no entry

    def __init__(self, config: TrialConfig, env: Any = None) -> None:
        self.config, self.templates = config, config.templates
        self.header, self.memory = "", ""

    # -- the trial's moments -------------------------------------------------------------------

    def start(self, trial: TrialState) -> None:
        """An attempt starts: its attempt line and the memory of the earlier ones."""
        index, count = len(trial.records), self.config.num_episodes
        self.header = self.templates.attempt.format(attempt=index + 1, num_episodes=count)
        self.memory = render_memory(trial.records, trial.reflections, self.config.memory, self)

    def record(self, trial: TrialState, answer: object) -> None:
        """A play step (its record is already in ``trial.current.steps``)."""

    def finish(self, trial: TrialState) -> None:
        """The attempt is over (its record is in ``trial.records``)."""

    def stored_reflection(self, answer: object) -> str:
        """The reflection kept from an answer: the tag's content, or the answer without it."""
        t = self.templates
        keep = t.reflection_without_tag == "keep"
        return extract_reflection(answer, t.reflection_tag, self.config.max_reflection_chars, keep)

    # -- what the agent reads ------------------------------------------------------------------

    def play(self, trial: TrialState) -> str:
        """A play observation: the attempt line, memory, recent steps, the env's text."""
        config, t = self.config, self.templates
        header, memory, played = self.header, self.memory, trial.current.steps
        limit, history_steps = config.max_observation_chars, config.history_steps
        recent = ""
        steps = played[-history_steps:] if history_steps else []
        if steps:
            first = len(played) - len(steps) + 1
            recent = t.recent_header.format(n=len(steps)) + "\n" + render_steps(steps, t, first)
        if not memory and not recent:
            return fit(header + "\n\n", "", trial.inner_obs, limit)
        before = "\n\n".join(p for p in (memory, recent) if p)
        return fit(header + "\n", before, "\n\n" + t.current + "\n" + trial.inner_obs, limit)

    def reflection(self, trial: TrialState) -> str:
        """The reflection prompt after the last finished episode, with its trajectory."""
        config, t, records = self.config, self.templates, trial.records
        record = records[-1]
        trajectory = "\n".join(
            p
            for p in (
                render_steps(record.steps, t),
                t.final_observation.format(observation=record.final_observation),
            )
            if p
        )
        prompt = t.reflection_prompt.format(
            attempt=len(records),
            num_episodes=config.num_episodes,
            outcome=outcome(record, t),
            trajectory="{trajectory}",
            next_start=t.same_task if config.same_task else t.new_task,
            max_chars=config.max_reflection_chars,
        )
        head, found, tail = prompt.partition("{trajectory}")
        return fit(head, trajectory if found else "", tail, config.max_observation_chars)

    def final(self, trial: TrialState) -> str:
        """The last observation of a trial: the attempt line and the env's final text."""
        return final_observation(trial, self.config)

    # -- the memory's words (mage_envs.meta.memory.MemoryLayout) -------------------------------

    def outcome(self, record: EpisodeRecord) -> str:
        """The outcome words of a finished attempt (with its return)."""
        return outcome(record, self.templates)

    def history(self, index: int, record: EpisodeRecord) -> str:
        """The attempt's answers and rewards, and its last observation, cut to fit."""
        return render_history(record, self.templates, self.config.max_history_chars)

    def entry(self, kind: str, attempt: EarlierAttempt) -> str:
        """One entry; ``history_and_reflection`` is the two entries, one after the other."""
        t = self.templates
        if kind == "reflection":
            return t.reflection_entry.format(
                attempt=attempt.number, outcome=attempt.outcome, reflection=attempt.reflection
            )
        if kind == "history":
            return t.history_entry.format(
                attempt=attempt.number, outcome=attempt.outcome, history=attempt.history
            )
        if kind == "history_and_reflection":
            return self.entry("history", attempt) + "\n" + self.entry("reflection", attempt)
        raise ValueError(f"No memory entry of kind {kind!r} in our templates.")

    def memory_text(self, entries: Sequence[str], attempts: int) -> str:
        """The memory header and one entry a line, or nothing without entries."""
        if not entries:
            return ""
        return self.templates.memory_header + "\n" + "\n".join(entries)

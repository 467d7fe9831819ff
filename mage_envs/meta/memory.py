"""What a trial remembers: records of played episodes, and their rendering as memory text.

Only text the agent itself read or wrote goes into memory: its observations, its answers and the
rewards it received. Nothing from ``info`` is ever rendered, so privileged facts an env keeps there
(a hidden card, the solution) cannot reach a prompt through the wrapper.

One renderer, :func:`render_memory`, writes the memory of every layout: a memory mode says what
each earlier attempt leaves (:class:`EarlierAttempt` -> entries), and the layout (our composed
page, or a published page) writes the words of each entry kind (:class:`MemoryLayout`).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

from mage_envs.text import fit_text, shown_action

__all__ = [
    "MEMORY_MODES",
    "MemoryMode",
    "MemoryLayout",
    "EarlierAttempt",
    "register_memory_mode",
    "Step",
    "EpisodeRecord",
    "shown_action",
    "extract_reflection",
    "render_memory",
    "render_steps",
    "cut_head",
]


@dataclass(frozen=True)
class Step:
    """One play step as the agent lived it.

    Attributes:
        observation: The text the agent read before answering.
        action: The agent's answer, as shown in memory (see :func:`shown_action`).
        reward: The reward it received.
    """

    observation: str
    action: str
    reward: float


@dataclass
class EpisodeRecord:
    """One played episode of a trial."""

    steps: list[Step] = field(default_factory=list)
    final_observation: str = ""
    episode_return: float = 0.0
    success: bool = False
    opponent: str | None = None
    seat: str | None = None
    forfeit: bool = False


def extract_reflection(answer: object, tag: str, max_chars: int, keep_untagged: bool = True) -> str:
    """Return the content of the last ``<tag>...</tag>``, cut short.

    Without the tag, the whole answer is kept (``keep_untagged=True``) or nothing is (``False``,
    as LaMer's and MAGE's code stored an empty reflection).

    Example:
        >>> extract_reflection("ok <reflection> Bet the King. </reflection>", "reflection", 8)
        'Bet the '
        >>> extract_reflection("no tag here", "remark", 100, keep_untagged=False)
        ''
    """
    if not isinstance(answer, str):
        return ""
    # Two linear scans (a lazy "<tag>(.*?)</tag>" search is quadratic in the opening tags).
    opening, closing = _tag_patterns(tag)
    text = answer if keep_untagged else ""
    close = _last(closing.finditer(answer))
    if close is not None:
        start = _last(opening.finditer(answer, 0, close.start()))
        if start is not None:
            text = answer[start.end() : close.start()]
    return fit_text(text.strip()[:max_chars])


def _last(matches: Iterator[re.Match]) -> re.Match | None:
    last = deque(matches, maxlen=1)
    return last[0] if last else None


@cache
def _tag_patterns(tag: str) -> tuple[re.Pattern, re.Pattern]:
    escaped = re.escape(tag)
    return (
        re.compile(rf"<\s*{escaped}\s*>", re.IGNORECASE),
        re.compile(rf"<\s*/\s*{escaped}\s*>", re.IGNORECASE),
    )


def cut_head(text: str, max_chars: int) -> str:
    """Keep the last ``max_chars`` characters, marking the cut with ``[...]``.

    Example:
        >>> cut_head("abcdefgh", 7)
        '[...]gh'
    """
    if len(text) <= max_chars:
        return text
    if max_chars <= 5:
        return text[len(text) - max(max_chars, 0) :]
    return "[...]" + text[len(text) - max_chars + 5 :]


def outcome(record: EpisodeRecord, templates: Any) -> str:
    """Return the outcome words of an episode (solved or not, with its return)."""
    form = templates.outcome_solved if record.success else templates.outcome_unsolved
    return form.format(ret=record.episode_return)


def render_steps(steps: Sequence[Step], templates: Any, first: int = 1) -> str:
    """Render steps with the ``step`` template, numbered from ``first``."""
    return "\n".join(
        templates.step.format(
            step=first + i, observation=s.observation, action=s.action, reward=s.reward
        )
        for i, s in enumerate(steps)
    )


def render_history(record: EpisodeRecord, templates: Any, max_chars: int) -> str:
    """Render what happened in one episode: its steps and its last observation, cut to fit."""
    parts = [
        templates.history_step.format(step=i + 1, action=s.action, reward=s.reward)
        for i, s in enumerate(record.steps)
    ]
    parts.append(templates.final_observation.format(observation=record.final_observation))
    return cut_head("\n".join(parts), max_chars)


class MemoryLayout(Protocol):
    """How a layout writes the memory of earlier attempts (the composed and the published page).

    Attributes:
        unwritten_reflection: What an attempt without a reflection leaves (``None``: no
            reflection entry; the published pages: ``""``, the empty reflection the papers'
            code stored).
    """

    unwritten_reflection: str | None

    def outcome(self, record: EpisodeRecord) -> str:
        """The outcome words of a finished attempt."""

    def history(self, index: int, record: EpisodeRecord) -> str:
        """What happened in attempt ``index`` (0-based), as this layout writes it."""

    def entry(self, kind: str, attempt: EarlierAttempt) -> str:
        """One memory entry of ``kind``: reflection, history or history_and_reflection."""

    def memory_text(self, entries: Sequence[str], attempts: int) -> str:
        """The memory part of a page, from its entries (after ``attempts`` attempts)."""


@dataclass(frozen=True)
class EarlierAttempt:
    """One finished attempt, as the memory of the later ones sees it, in its layout's words.

    Attributes:
        number: The attempt's number, from 1.
        record: What happened in it.
        reflection: The reflection written after it (the layout's ``unwritten_reflection``
            when none was).
        layout: The layout that writes its words.
    """

    number: int
    record: EpisodeRecord
    reflection: str | None
    layout: MemoryLayout

    @property
    def outcome(self) -> str:
        """Its outcome words (solved or not)."""
        return self.layout.outcome(self.record)

    @property
    def history(self) -> str:
        """Its steps and end, as the layout writes a history."""
        return self.layout.history(self.number - 1, self.record)

    def entry(self, kind: str) -> str:
        """Its memory entry of ``kind``, in the layout's template of that kind."""
        return self.layout.entry(kind, self)


MemoryMode = Callable[[EarlierAttempt], list[str]]
"""What one finished attempt leaves in the memory of the later ones: ``mode(attempt) ->
entries``, each entry text (``attempt.entry("reflection")``, or words of the mode's own)."""


def render_memory(
    records: Sequence[EpisodeRecord],
    reflections: Sequence[str],
    mode: str,
    layout: MemoryLayout,
) -> str:
    """Render the memory of earlier attempts in ``mode``: the one renderer of every layout.

    ``reflections[i]`` is the reflection written after attempt ``i`` (there may be fewer).

    Raises:
        ValueError: For a mode that is not registered.
    """
    if mode not in MEMORY_MODES:
        raise ValueError(f"memory must be one of {tuple(MEMORY_MODES)}, not {mode!r}.")
    write = MEMORY_MODES[mode]
    entries = []
    for i, record in enumerate(records):
        reflection = reflections[i] if i < len(reflections) else layout.unwritten_reflection
        entries += write(EarlierAttempt(i + 1, record, reflection, layout))
    return layout.memory_text(entries, len(records))


def reflection_entries(attempt: EarlierAttempt) -> list[str]:
    """The reflection written after the attempt, if any (``reflection_only``, LaMer's format)."""
    return [] if attempt.reflection is None else [attempt.entry("reflection")]


def history_entries(attempt: EarlierAttempt) -> list[str]:
    """The attempt's steps and end (``history_only``)."""
    return [attempt.entry("history")]


def history_and_reflection_entries(attempt: EarlierAttempt) -> list[str]:
    """The history, then the reflection (``history_and_reflection``)."""
    if attempt.reflection is None:
        return history_entries(attempt)
    return [attempt.entry("history_and_reflection")]


MEMORY_MODES: dict[str, MemoryMode] = {
    "reflection_only": reflection_entries,
    "history_only": history_entries,
    "history_and_reflection": history_and_reflection_entries,
}
"""The ``memory=`` values of the wrapper, by name (see :func:`register_memory_mode`). Read at
call time: a name added is a choice of ``TrialConfig``, ``MetaRLConfig`` and ``--memory``."""


def register_memory_mode(name: str, mode: MemoryMode) -> None:
    """Make ``memory=name`` available to the wrapper, the configs and the CLI's ``--memory``.

    Raises:
        TypeError: If ``mode`` is not callable.
    """
    if not callable(mode):
        raise TypeError(f"A memory mode is a function of an EarlierAttempt, not {mode!r}.")
    MEMORY_MODES[name] = mode

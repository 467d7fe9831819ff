"""Whole-page prompts: the layout LaMer and MAGE used, where each observation is one full page.

Our own templates put a header, the memory and the env's current observation one under the other.
The published code instead rebuilds one page per step: the game's rules, "The initial state of the
game is:" and the first board, the memory of earlier attempts, the last steps of the current attempt
(older observations elided), then the instruction. :class:`PageTemplates` holds that layout; the
wrapper uses it when ``Templates.page`` is set (the ``"lamer"`` and ``"mage"`` presets of
:mod:`mage_envs.meta.presets` do). The functions here are pure: they only format text.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PAGE_MEMORY_MODES",
    "PageTemplates",
    "PageStep",
    "render_page_steps",
    "current_text",
    "page_memory",
    "play_page",
    "reflection_page",
    "PageTrial",
]

PAGE_MEMORY_MODES = ("reflection_only", "history_only", "history_and_reflection")
"""The memory modes a page lays out (each has its entry template in :class:`PageTemplates`)."""

PageStep = tuple[str, str]
"""One played step as a page shows it: (the action as the paper's memory wrote it, the
observation after it)."""


def _identity_observation(text: str, info: dict[str, Any], env: Any) -> str:
    return text


def _plain_action(answer: object, info: dict[str, Any], env: Any) -> str:
    return str(answer)


def _no_facts(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class PageTemplates:
    """A whole-page prompt layout and the env-specific pieces it needs.

    Attributes:
        play: The play page. Fields: ``initial_observation``, ``memory``, ``current`` and the
            env facts. The formatted page is stripped, as the published code does.
        reflect: The reflection page after an unsolved attempt. Fields:
            ``initial_observation``, ``trajectory`` and the env facts.
        reflect_solved: The reflection page after a solved attempt ("" to use ``reflect``).
        memory_none: The memory text of the first attempt.
        reflection_entry: One earlier attempt in ``reflection_only`` memory. Fields:
            ``attempt``, ``outcome``, ``reflection``.
        history_entry: One earlier attempt in ``history_only`` memory. Fields: ``attempt``,
            ``outcome``, ``history``.
        history_and_reflection_entry: One earlier attempt in ``history_and_reflection`` memory.
            Fields: ``attempt``, ``outcome``, ``history``, ``reflection``.
        steps_first: The current steps of the first attempt. Field: ``steps``.
        start_later: The current-attempt line of a later attempt before its first step.
            Field: ``attempt``.
        steps_later: The current steps of a later attempt. Fields: ``attempt``, ``steps``.
        step: One step with its observation. Fields: ``step``, ``action``, ``observation``.
        step_elided: One step whose observation is left out. Fields: ``step``, ``action``.
        outcome_solved: Outcome words of a solved attempt.
        outcome_unsolved: Outcome words of an unsolved attempt.
        window: Steps shown (the last ones).
        shown_play: Of those, how many keep their observation on a play page.
        shown_reflect: The same on a reflection page.
        observation: ``f(env_text, info, env) -> text``: the observation in the paper's symbols.
        action: ``f(answer, info, env) -> text``: the answer as the paper's memory shows it.
        facts: ``f(env, info) -> dict``: env facts the pages name (board size, seat, ...).
    """

    play: str
    reflect: str
    reflect_solved: str = ""
    memory_none: str = "\n"
    reflection_entry: str = ""
    history_entry: str = ""
    history_and_reflection_entry: str = ""
    steps_first: str = ""
    start_later: str = ""
    steps_later: str = ""
    step: str = ""
    step_elided: str = ""
    outcome_solved: str = "successfully completed"
    outcome_unsolved: str = "NOT successfully completed"
    window: int = 7
    shown_play: int = 2
    shown_reflect: int = 7
    observation: Callable[[str, dict[str, Any], Any], str] = _identity_observation
    # Module functions, not lambdas, so a trial with its page layout pickles (vector envs).
    action: Callable[[object, dict[str, Any], Any], str] = _plain_action
    facts: Callable[[Any, dict[str, Any]], dict[str, Any]] = _no_facts

    def check(self) -> None:
        """Check that every template is a valid format string.

        Raises:
            ValueError: If one is not; the message names it.
        """
        for name, value in vars(self).items():
            if isinstance(value, str):
                try:
                    list(string.Formatter().parse(value))
                except ValueError as error:
                    raise ValueError(f"Page template {name!r} is malformed ({error}).") from error
        if min(self.window, self.shown_play, self.shown_reflect) < 0:
            raise ValueError("window, shown_play and shown_reflect must be >= 0.")


def render_page_steps(steps: Sequence[PageStep], page: PageTemplates, shown: int) -> str:
    r"""Render the last ``page.window`` steps; only the last ``shown`` keep their observation.

    Example:
        >>> page = PageTemplates("", "", step="A{step}:{action}/{observation}",
        ...                      step_elided="A{step}:{action}/...", window=2)
        >>> render_page_steps([("u", "o1"), ("d", "o2"), ("l", "o3")], page, shown=1)
        'A2:d/...\nA3:l/o3'
    """
    recent = list(steps[-page.window :]) if page.window else []
    start = len(steps) - len(recent)
    lines = []
    for j, (action, observation) in enumerate(recent):
        form = page.step_elided if len(recent) - j > shown else page.step
        lines.append(form.format(step=start + j + 1, action=action, observation=observation))
    return "\n".join(lines)


def current_text(page: PageTemplates, index: int, steps: Sequence[PageStep], shown: int) -> str:
    """The current-attempt part of a page: attempt ``index`` (0-based) with its steps so far."""
    if not steps:
        return "" if index == 0 else page.start_later.format(attempt=index + 1)
    rendered = render_page_steps(steps, page, shown)
    if index == 0:
        return page.steps_first.format(steps=rendered)
    return page.steps_later.format(attempt=index + 1, steps=rendered)


def page_memory(
    page: PageTemplates,
    mode: str,
    histories: Sequence[Sequence[PageStep]],
    successes: Sequence[bool],
    reflections: Sequence[str],
) -> str:
    """The memory part of a page: one entry per earlier attempt, joined with nothing between."""
    if not histories:
        return page.memory_none
    entries = []
    for i, (steps, solved) in enumerate(zip(histories, successes, strict=True)):
        fields = {
            "attempt": i + 1,
            "outcome": page.outcome_solved if solved else page.outcome_unsolved,
            "history": render_page_steps(steps, page, page.shown_play),
            "reflection": reflections[i] if i < len(reflections) else "",
        }
        form = {
            "reflection_only": page.reflection_entry,
            "history_only": page.history_entry,
            "history_and_reflection": page.history_and_reflection_entry,
        }[mode]
        entries.append(form.format(**fields))
    return "".join(entries)


def play_page(
    page: PageTemplates,
    mode: str,
    initial: str,
    histories: Sequence[Sequence[PageStep]],
    successes: Sequence[bool],
    reflections: Sequence[str],
    steps: Sequence[PageStep],
    facts: dict[str, Any],
) -> str:
    """The play page of attempt ``len(histories)`` (0-based) after ``steps``, stripped."""
    memory = page_memory(page, mode, histories, successes, reflections)
    current = current_text(page, len(histories), steps, page.shown_play)
    fields = {**facts, "initial_observation": initial, "memory": memory, "current": current}
    return page.play.format(**fields).strip()


def reflection_page(
    page: PageTemplates,
    index: int,
    initial: str,
    steps: Sequence[PageStep],
    solved: bool,
    facts: dict[str, Any],
) -> str:
    """The reflection page after attempt ``index`` (0-based) and its ``steps``, stripped."""
    trajectory = current_text(page, index, steps, page.shown_reflect)
    form = page.reflect_solved if solved and page.reflect_solved else page.reflect
    return form.format(**facts, initial_observation=initial, trajectory=trajectory).strip()


class PageTrial:
    """What the pages of one trial show: each attempt's first board and the steps played.

    The wrapper makes one per trial (it is part of the trial's
    :class:`~mage_envs.meta.state.TrialState`), feeds it the inner env's text and info at every
    episode start and play step, and asks it for the page to show.

    Args:
        page: The layout.
        mode: The trial's memory mode (one of :data:`PAGE_MEMORY_MODES`).
        env: The unwrapped inner env (the page's renderers read its board and settings).
    """

    def __init__(self, page: PageTemplates, mode: str, env: Any) -> None:
        self.page, self.mode, self.env = page, mode, env
        self.histories: list[list[PageStep]] = []
        self.steps: list[PageStep] = []
        self.initial = ""

    def start(self, text: str, info: dict[str, Any]) -> None:
        """A new attempt starts from ``text`` (the first board shown on its pages)."""
        self.steps = []
        self.initial = self.page.observation(text, info, self.env)

    def record(self, answer: object, text: str, info: dict[str, Any]) -> None:
        """One play step: the agent's answer and the observation after it."""
        page, env = self.page, self.env
        self.steps.append((page.action(answer, info, env), page.observation(text, info, env)))

    def finish(self) -> None:
        """The current attempt is over: its steps go to memory."""
        self.histories.append(self.steps)

    def play(self, successes: Sequence[bool], reflections: Sequence[str], info: dict) -> str:
        """The play page now."""
        facts = self.page.facts(self.env, info)
        return play_page(
            self.page,
            self.mode,
            self.initial,
            self.histories,
            successes,
            reflections,
            self.steps,
            facts,
        )

    def reflection(self, solved: bool, info: dict[str, Any]) -> str:
        """The reflection page after the attempt that just ended."""
        index = len(self.histories) - 1
        facts = self.page.facts(self.env, info)
        return reflection_page(self.page, index, self.initial, self.histories[index], solved, facts)

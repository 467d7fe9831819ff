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

from mage_envs.meta.layout import final_observation
from mage_envs.meta.memory import EarlierAttempt, render_memory
from mage_envs.projections import published_reflection
from mage_envs.text import fit_page_text, page_text_space

__all__ = [
    "PAGE_MEMORY_MODES",
    "PageTemplates",
    "PageStep",
    "render_page_steps",
    "current_text",
    "play_page",
    "reflection_page",
    "PageLayout",
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


def _no_shortening(observation: str, where: str) -> str:
    return observation


@dataclass(frozen=True)
class PageTemplates:
    """A whole-page prompt layout and the env-specific pieces it needs.

    Attributes:
        play: The play page. Fields: ``initial_observation``, ``memory``, ``current`` and the
            env facts.
        reflect: The reflection page after an unsolved attempt. Fields:
            ``initial_observation``, ``trajectory`` and the env facts.
        reflect_solved: The reflection page after a solved attempt ("" to use ``reflect``).
        memory_none: The memory text of the first attempt.
        reflection_entry: One earlier attempt in ``reflection_only`` memory. Fields:
            ``attempt``, ``outcome``, ``reflection``.
        history_entry: One earlier attempt in ``history_only`` memory. Fields: ``attempt``,
            ``outcome``, ``history``.
        history_and_reflection_entry: One earlier attempt in ``history_and_reflection`` memory.
            Fields: ``attempt``, ``outcome``, ``history``, ``reflection``. ``""``: the published
            code has no such memory for this env (the mode is refused).
        steps_first: The current steps of the first attempt. Field: ``steps``.
        start_later: The current-attempt line of a later attempt before its first step.
            Field: ``attempt``.
        steps_later: The current steps of a later attempt. Fields: ``attempt``, ``steps``.
        step: One step with its observation. Fields: ``step``, ``action``, ``observation``.
        step_elided: One step whose observation is left out. Fields: ``step``, ``action``.
        outcome_solved: Outcome words of a solved attempt.
        outcome_unsolved: Outcome words of an unsolved attempt.
        window_play: Steps of the current attempt a play page shows (the last ones).
        window_reflect: Steps of the attempt a reflection page shows.
        window_memory: Steps of an earlier attempt its memory entry shows.
        shown_play: Of the play page's steps, how many keep their observation (the last ones).
        shown_reflect: The same on a reflection page.
        shown_memory: The same in a memory entry.
        reflection_from: Which ``<remark>`` block is stored: ``"first"`` or ``"last"`` (see
            :func:`~mage_envs.projections.published_reflection`).
        strip: Strip the formatted page (the published code does, except WebShop's).
        short_page: If a formatted page is longer than this (0: never), it is made again with
            the current steps cut to their last line and the memory as ``reflection_only``
            (WebShop's ``get_webshop_prompt_short``, used beyond 20000 characters).
        observation: ``f(env_text, info, env) -> text``: the observation in the paper's symbols.
        action: ``f(answer, info, env) -> text``: the answer as the paper's memory shows it.
        facts: ``f(env, info) -> dict``: env facts the pages name (board size, seat, ...).
        shorten: ``f(observation, where) -> text``, applied to every shown step but the last
            of its window, ``where`` being ``"current"`` or ``"memory"`` (WebShop cuts long
            pages); default: unchanged.
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
    window_play: int = 7
    window_reflect: int = 7
    window_memory: int = 7
    shown_play: int = 2
    shown_reflect: int = 7
    shown_memory: int = 2
    reflection_from: str = "last"
    strip: bool = True
    short_page: int = 0
    observation: Callable[[str, dict[str, Any], Any], str] = _identity_observation
    # Module functions, not lambdas, so a trial with its page layout pickles (vector envs).
    action: Callable[[object, dict[str, Any], Any], str] = _plain_action
    facts: Callable[[Any, dict[str, Any]], dict[str, Any]] = _no_facts
    shorten: Callable[[str, str], str] = _no_shortening

    def check(self) -> None:
        """Check that every template is a valid format string and every setting in range.

        Raises:
            ValueError: If one is not; the message names it.
        """
        for name, value in vars(self).items():
            if isinstance(value, str):
                try:
                    list(string.Formatter().parse(value))
                except ValueError as error:
                    raise ValueError(f"Page template {name!r} is malformed ({error}).") from error
        counts = ("window_play", "window_reflect", "window_memory", "shown_play", "shown_reflect")
        if min(getattr(self, name) for name in (*counts, "shown_memory", "short_page")) < 0:
            raise ValueError(f"{', '.join(counts)}, shown_memory and short_page must be >= 0.")
        if self.reflection_from not in ("first", "last"):
            raise ValueError(
                f"reflection_from must be 'first' or 'last', not {self.reflection_from!r}."
            )

    def lays_out(self, mode: str) -> bool:
        """Whether this layout has a memory entry for ``mode`` (a memory mode name)."""
        entry = {
            "reflection_only": self.reflection_entry,
            "history_only": self.history_entry,
            "history_and_reflection": self.history_and_reflection_entry,
        }.get(mode)
        return bool(entry)

    def reflection(self, answer: object, max_chars: int) -> str:
        """The reflection the published code stored from ``answer`` (``""`` without the tag)."""
        if not isinstance(answer, str):
            return ""
        return published_reflection(answer, max_chars, last=self.reflection_from == "last")


def render_page_steps(
    steps: Sequence[PageStep], page: PageTemplates, window: int, shown: int, where: str
) -> str:
    r"""Render the last ``window`` steps; only the last ``shown`` keep their observation.

    Every step but the last one passes through ``page.shorten(observation, where)``.

    Example:
        >>> page = PageTemplates("", "", step="A{step}:{action}/{observation}",
        ...                      step_elided="A{step}:{action}/...")
        >>> render_page_steps([("u", "o1"), ("d", "o2"), ("l", "o3")], page, 2, 1, "current")
        'A2:d/...\nA3:l/o3'
    """
    recent = list(steps[-window:]) if window else []
    start = len(steps) - len(recent)
    lines = []
    for j, (action, observation) in enumerate(recent):
        if j != len(recent) - 1:
            observation = page.shorten(observation, where)
        form = page.step_elided if len(recent) - j > shown else page.step
        lines.append(form.format(step=start + j + 1, action=action, observation=observation))
    return "\n".join(lines)


def current_text(page: PageTemplates, index: int, steps: Sequence[PageStep], rendered: str) -> str:
    """The current-attempt part of a page: attempt ``index`` (0-based), its steps ``rendered``."""
    if not steps:
        return "" if index == 0 else page.start_later.format(attempt=index + 1)
    if index == 0:
        return page.steps_first.format(steps=rendered)
    return page.steps_later.format(attempt=index + 1, steps=rendered)


def play_page(
    page: PageTemplates,
    initial: str,
    memory: str,
    index: int,
    steps: Sequence[PageStep],
    facts: dict[str, Any],
    short_memory: Callable[[], str] | None = None,
) -> str:
    """The play page of attempt ``index`` (0-based) after ``steps``, with its ``memory`` text.

    Beyond ``page.short_page`` characters the page is made again with the current steps cut to
    their last line and ``short_memory()`` (the memory as ``reflection_only``) as its memory.
    """
    rendered = render_page_steps(steps, page, page.window_play, page.shown_play, "current")

    def layout(memory: str, rendered: str) -> str:
        current = current_text(page, index, steps, rendered)
        fields = {**facts, "initial_observation": initial, "memory": memory, "current": current}
        return page.play.format(**fields)

    text = layout(memory, rendered)
    if page.short_page and len(text) > page.short_page and short_memory is not None:
        text = layout(short_memory(), rendered.split("\n")[-1])
    return _finish(page, text)


def _finish(page: PageTemplates, text: str) -> str:
    return text.strip() if page.strip else text


def reflection_page(
    page: PageTemplates,
    index: int,
    initial: str,
    steps: Sequence[PageStep],
    solved: bool,
    facts: dict[str, Any],
) -> str:
    """The reflection page after attempt ``index`` (0-based) and its ``steps``."""
    rendered = render_page_steps(steps, page, page.window_reflect, page.shown_reflect, "current")
    form = page.reflect_solved if solved and page.reflect_solved else page.reflect

    def layout(rendered: str) -> str:
        trajectory = current_text(page, index, steps, rendered)
        return form.format(**facts, initial_observation=initial, trajectory=trajectory)

    text = layout(rendered)
    if page.short_page and len(text) > page.short_page:
        text = layout(rendered.split("\n")[-1])
    return _finish(page, text)


class PageLayout:
    """The published layout: each observation one whole page, as the papers' code built it.

    One of the two layouts of a trial (:mod:`mage_envs.meta.layout`), made at every reset: it
    keeps what the pages of the trial show, each attempt's first board and the steps played, and
    writes its memory with the one renderer (:func:`~mage_envs.meta.memory.render_memory`) in
    the paper's words. Its pages keep the paper's characters (:data:`~mage_envs.text.PAGE_CHARSET`).

    Args:
        config: The trial's settings; ``config.templates.page`` is the layout.
        env: The unwrapped inner env (the page's renderers read its board and settings).
    """

    space = staticmethod(page_text_space)
    unwritten_reflection: str | None = ""  # the papers' code stored an empty reflection

    def __init__(self, config: Any, env: Any) -> None:
        self.config, self.page, self.env = config, config.templates.page, env
        self.histories: list[list[PageStep]] = []
        self.steps: list[PageStep] = []
        self.initial, self.memory = "", ""
        self._short: str | None = None
        self._trial: Any = None

    # -- the trial's moments -------------------------------------------------------------------

    def start(self, trial: Any) -> None:
        """A new attempt starts from the env's first text (the first board on its pages)."""
        self.steps, self._short, self._trial = [], None, trial
        self.initial = self.page.observation(trial.inner_obs, trial.inner_info, self.env)
        self.memory = render_memory(trial.records, trial.reflections, self.config.memory, self)

    def record(self, trial: Any, answer: object) -> None:
        """One play step: the answer as the paper's memory writes it, the observation after."""
        page, env, info = self.page, self.env, trial.inner_info
        shown = page.action(answer, info, env)
        self.steps.append((shown, page.observation(trial.inner_obs, info, env)))

    def finish(self, trial: Any) -> None:
        """The current attempt is over: its steps go to memory."""
        self.histories.append(self.steps)

    def stored_reflection(self, answer: object) -> str:
        """The reflection the published code stored from ``answer`` (``""`` without the tag)."""
        limit = self.config.max_reflection_chars
        return fit_page_text(self.page.reflection(answer, limit), limit)

    # -- what the agent reads ------------------------------------------------------------------

    def play(self, trial: Any) -> str:
        """The play page now, cut to ``max_observation_chars``."""
        facts = self.page.facts(self.env, trial.inner_info)
        index = len(self.histories)
        text = play_page(
            self.page, self.initial, self.memory, index, self.steps, facts, self._short_memory
        )
        return fit_page_text(text, self.config.max_observation_chars)

    def reflection(self, trial: Any) -> str:
        """The reflection page after the attempt that just ended."""
        index = len(self.histories) - 1
        facts = self.page.facts(self.env, trial.inner_info)
        solved = trial.records[-1].success
        text = reflection_page(self.page, index, self.initial, self.histories[index], solved, facts)
        return fit_page_text(text, self.config.max_observation_chars)

    def final(self, trial: Any) -> str:
        """The last observation of a trial: the attempt line and the env's final text."""
        return final_observation(trial, self.config)

    def _short_memory(self) -> str:
        """The memory as ``reflection_only`` (the short page's), made once per attempt."""
        if self._short is None:
            trial = self._trial
            self._short = render_memory(trial.records, trial.reflections, "reflection_only", self)
        return self._short

    # -- the memory's words (mage_envs.meta.memory.MemoryLayout) -------------------------------

    def outcome(self, record: Any) -> str:
        """The paper's outcome words."""
        return self.page.outcome_solved if record.success else self.page.outcome_unsolved

    def history(self, index: int, record: Any) -> str:
        """The steps of attempt ``index`` in the memory's window."""
        page = self.page
        steps = self.histories[index]
        return render_page_steps(steps, page, page.window_memory, page.shown_memory, "memory")

    def entry(self, kind: str, attempt: EarlierAttempt) -> str:
        """One entry in the paper's template of its kind."""
        form = getattr(self.page, f"{kind}_entry", None)
        if not form:
            raise ValueError(f"This published page has no {kind!r} memory entry.")
        history = attempt.history if kind != "reflection" else ""
        return form.format(
            attempt=attempt.number,
            outcome=attempt.outcome,
            history=history,
            reflection=attempt.reflection or "",
        )

    def memory_text(self, entries: Sequence[str], attempts: int) -> str:
        """The entries one after the other (nothing between), or the first attempt's memory."""
        return "".join(entries) if attempts else self.page.memory_none

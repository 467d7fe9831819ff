"""Gymnasium plumbing shared by the single-agent puzzles: text spaces, seeds, turns, rendering."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym

from mage_envs.invalid import InvalidAnswerRule
from mage_envs.seeds import draw_seed
from mage_envs.text import fit_text, render_text, text_space

__all__ = ["TextPuzzleEnv"]


class TextPuzzleEnv(gym.Env[str, str]):
    """Base of the puzzle envs: text observation and action spaces, turn budget, rendering.

    Subclasses implement ``reset`` and ``step``; they call :meth:`_start` in ``reset`` and
    :meth:`_show` for every observation they return.

    Args:
        max_steps: Turns (calls to ``step``, invalid ones included) before the episode is
            truncated.
        invalid_action_penalty: Subtracted from the reward of an invalid answer (the
            :class:`~mage_envs.invalid.InvalidAnswerRule` of the env; no streak limit, since
            invalid turns count against ``max_steps``).
        render_mode: ``None``, ``"ansi"`` (``render()`` returns the text) or ``"human"``
            (prints it).
    """

    metadata = {
        "render_modes": ["ansi", "human"],
        "invalid_answer_settings": ("invalid_action_penalty",),  # no streak: max_steps ends it
    }
    answer_unit: ClassVar[str] = "move"
    """What an answer is in the invalid-answer feedback: ``"move"``, or ``"answer"`` (several)."""

    def __init__(
        self, max_steps: int, invalid_action_penalty: float, render_mode: str | None
    ) -> None:
        if int(max_steps) < 1:
            raise ValueError(f"max_steps must be >= 1, not {max_steps}.")
        modes = self.metadata["render_modes"]
        if render_mode is not None and render_mode not in modes:
            raise ValueError(f"render_mode must be None or one of {modes}, not {render_mode!r}.")
        self.max_steps = int(max_steps)
        self.invalid_rule = InvalidAnswerRule(invalid_action_penalty, None, self.answer_unit)
        self.render_mode = render_mode
        self.observation_space = text_space()
        self.action_space = text_space()
        self._text = ""
        self._turn = 0
        self._over = True

    @property
    def invalid_action_penalty(self) -> float:
        """The penalty of an invalid answer (from :attr:`invalid_rule`)."""
        return self.invalid_rule.penalty

    def render(self) -> str | None:
        """Return (``ansi``) or print (``human``) the current observation text."""
        return render_text(self._text, self.render_mode)

    def _start(self, seed: int | None) -> int:
        """Seed, clear the turn count, and return the level seed (the reset seed when given)."""
        super().reset(seed=seed)
        self._turn = 0
        self._over = False
        if seed is not None:
            return int(seed)
        return draw_seed(self.np_random)

    def _begin_step(self) -> None:
        if self._over:
            raise RuntimeError("The episode is over: call reset() to start a new one.")
        self._turn += 1

    def _out_of_turns(self, terminated: bool) -> bool:
        """Whether this turn ends the episode as truncated (the turn budget is spent)."""
        truncated = not terminated and self._turn >= self.max_steps
        self._over = terminated or truncated
        return truncated

    def _show(self, text: str) -> str:
        self._text = fit_text(text)
        return self._text

    def _turn_info(self) -> dict[str, Any]:
        return {"turn": self._turn, "max_steps": self.max_steps}

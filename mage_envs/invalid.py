"""The invalid-answer rule every text env of the suite applies, in one place.

Agent text is untrusted input, so an answer that names no legal move never raises. It leaves the
state unchanged, the observation starts with feedback, the reward is ``-penalty`` and
``info["invalid_action"]`` is True. ``max_in_a_row`` invalid answers in a row end the episode as
truncated (the puzzles leave it unset: their turn budget counts invalid turns already).

One wording for every env: ``Invalid move: <why>`` where an answer is one move, ``Invalid answer:
<why>`` where an answer holds several moves (Sokoban), and ``N invalid moves in a row: the game is
stopped.`` when the streak ends the episode.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "INVALID_ANSWER_SETTINGS",
    "InvalidAnswerRule",
    "InvalidStreak",
    "did_not_name",
    "feedback_of",
]

INVALID_ANSWER_SETTINGS = ("invalid_action_penalty", "max_invalid_actions")
"""The rule's settings, as envs take them. A text env declares those its constructor takes in
``metadata["invalid_answer_settings"]``: :func:`~mage_envs.meta.make_trial` gives them to
``gym.make`` there, and to the wrapper (which converts the env to text) elsewhere."""


def did_not_name(legal: Sequence[str], answer_format: str = "") -> str:
    """Return the reason for an answer that named no legal move, saying what was expected.

    Args:
        legal: The legal move names (empty where actions are written as numbers).
        answer_format: How to write an action without names (for example ``Answer with 1
            number.``), used when ``legal`` is empty.

    Example:
        >>> did_not_name(["check", "bet"])
        'your answer did not name exactly one legal move (check, bet).'
        >>> did_not_name([], "Answer with 1 number.")
        'your answer did not give a valid action. Answer with 1 number.'
    """
    if legal:
        return f"your answer did not name exactly one legal move ({', '.join(legal)})."
    return f"your answer did not give a valid action. {answer_format}".rstrip()


FEEDBACK_PREFIXES = ("Invalid move: ", "Invalid answer: ")
"""How the rule's feedback starts (:meth:`InvalidAnswerRule.feedback`, units move and answer)."""


def feedback_of(observation: str) -> str | None:
    r"""Return the invalid-answer feedback an observation starts with, or ``None``.

    Every text env of the suite starts the observation after an invalid answer with the rule's
    one wording, so a record of the step can say why without asking the env.

    Example:
        >>> feedback_of("Invalid move: your answer did not name exactly one legal move.\n\nBoard")
        'Invalid move: your answer did not name exactly one legal move.'
        >>> feedback_of("Your card: K.") is None
        True
    """
    if not observation.startswith(FEEDBACK_PREFIXES):
        return None
    return observation.split("\n", 1)[0].strip()


@dataclass(frozen=True)
class InvalidAnswerRule:
    """What an invalid answer costs and when a streak of them ends the episode.

    Attributes:
        penalty: Subtracted from the reward of an invalid answer (finite, >= 0).
        max_in_a_row: Invalid answers in a row that end the episode as truncated (>= 1), or
            ``None`` for envs whose turn budget already ends it.
        unit: ``"move"`` where an answer is one move, ``"answer"`` where it holds several.

    Raises:
        ValueError: If ``penalty`` is negative or not finite, or ``max_in_a_row`` is below 1.

    Example:
        >>> rule = InvalidAnswerRule(penalty=0.5, max_in_a_row=2)
        >>> rule.reward, rule.truncates(2)
        (-0.5, True)
        >>> rule.feedback(did_not_name(["check", "bet"]), stopped=True)
        'Invalid move: your answer did not name exactly one legal move (check, bet). 2 invalid moves in a row: the game is stopped.'
    """  # noqa: E501  (a doctest output is one line)

    penalty: float = 0.0
    max_in_a_row: int | None = 5
    unit: str = "move"

    def __post_init__(self) -> None:
        penalty = float(self.penalty)
        if not (math.isfinite(penalty) and penalty >= 0):
            raise ValueError(
                f"invalid_action_penalty must be a finite number >= 0 (it is subtracted), "
                f"not {self.penalty!r}."
            )
        object.__setattr__(self, "penalty", penalty)
        if self.max_in_a_row is not None:
            if self.max_in_a_row < 1:
                raise ValueError(f"max_invalid_actions must be >= 1, not {self.max_in_a_row}.")
            object.__setattr__(self, "max_in_a_row", int(self.max_in_a_row))

    @property
    def reward(self) -> float:
        """The reward of an invalid answer: ``-penalty``, and never ``-0.0``."""
        return -self.penalty or 0.0

    def truncates(self, streak: int) -> bool:
        """Whether ``streak`` invalid answers in a row end the episode."""
        return self.max_in_a_row is not None and streak >= self.max_in_a_row

    def feedback(self, reason: str, stopped: bool = False) -> str:
        """Return the feedback line: ``Invalid move: <reason>``, plus the stop notice if stopped."""
        text = f"Invalid {self.unit}: {reason}"
        if stopped:
            text += f" {self.max_in_a_row} invalid moves in a row: the game is stopped."
        return text


class InvalidStreak:
    """Counts an env's invalid answers in a row under a rule (one per env, cleared at reset).

    Args:
        rule: The rule it applies.

    Example:
        >>> streak = InvalidStreak(InvalidAnswerRule(max_in_a_row=2))
        >>> streak.invalid(), streak.invalid()
        (False, True)
    """

    def __init__(self, rule: InvalidAnswerRule) -> None:
        self.rule = rule
        self.count = 0

    def clear(self) -> None:
        """A valid answer (or a new episode) ends the streak."""
        self.count = 0

    def invalid(self) -> bool:
        """Count one invalid answer; return whether the streak ends the episode."""
        self.count += 1
        return self.rule.truncates(self.count)

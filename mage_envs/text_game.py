"""The text view of an OpenSpiel game: what one player reads, and the names of its moves.

The rules stay in OpenSpiel. A :class:`TextGame` only renders: the observation text for one player
(their own view, never hidden information), the names of the legal moves with accepted aliases, the
outcome in words, and the facts that the rules reveal at the end (for example cards at a showdown).
Each game of the suite subclasses it; :class:`GenericTextGame` covers any OpenSpiel game with the
game's own observation and action strings.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Hashable
from dataclasses import dataclass, field

import pyspiel
from gymnasium import spaces

__all__ = [
    "Move",
    "TextGame",
    "GenericTextGame",
    "TEXT_CHARSET",
    "MAX_TEXT_CHARS",
    "fit_text",
    "plain_ascii",
    "text_space",
]

TEXT_CHARSET = "".join(sorted(set(string.printable)))
"""Characters an observation may contain (ASCII printable, with space and newline).

A sorted string, not a set: ``spaces.Text`` samples from the charset in its iteration order, and a
set's order changes from one process to the next.
"""

MAX_TEXT_CHARS = 16_384
"""Upper bound on the length of an observation, used for ``spaces.Text``."""

_OUTSIDE_CHARSET = re.compile(f"[^{re.escape(TEXT_CHARSET)}]")
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def _box_drawing_in_ascii(char: str) -> str:
    """Return ``-``, ``|`` or ``+`` for a box-drawing character, by its Unicode name."""
    name = unicodedata.name(char, "")
    horizontal = any(word in name for word in ("HORIZONTAL", "LEFT", "RIGHT"))
    vertical = any(word in name for word in ("VERTICAL", "UP", "DOWN"))
    if horizontal == vertical:
        return "+"
    return "-" if horizontal else "|"


_BOX_DRAWING = str.maketrans({chr(c): _box_drawing_in_ascii(chr(c)) for c in range(0x2500, 0x2580)})


def text_space(max_length: int = MAX_TEXT_CHARS) -> spaces.Text:
    """Return the ``spaces.Text`` of every text observation and action of the suite.

    Example:
        >>> text_space().contains("Legal moves: check, bet.")
        True
    """
    return spaces.Text(max_length=max_length, charset=TEXT_CHARSET)


def render_text(text: str, render_mode: str | None) -> str | None:
    """Render a text env's current text: returned for ``"ansi"``, printed for ``"human"``.

    Example:
        >>> render_text("Legal moves: bet.", "ansi")
        'Legal moves: bet.'
    """
    if render_mode == "human":
        print(text)
        return None
    return text if render_mode == "ansi" else None


def plain_ascii(text: str) -> str:
    r"""Drop terminal colour codes and draw box-drawing lines with ``-``, ``|`` and ``+``.

    Some OpenSpiel games draw their boards for a terminal (``twixt`` in colour, ``dots_and_boxes``
    with box-drawing lines); :func:`fit_text` would turn each of those characters into ``?``.

    Example:
        >>> plain_ascii("\x1b[91ma\x1b[0m \u250c\u2574 \u2576\u2510")
        'a +- -+'
    """
    return _ANSI_ESCAPE.sub("", text).translate(_BOX_DRAWING)


_TYPOGRAPHY = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u00a0\u2002\u2003\u2009\u202f", " "),
        "\u2026": "...",
        "\u2022": "*",
        "\u00d7": "x",
    }
)
"""Typographic punctuation that models write, mapped to its ASCII spelling."""


def fit_text(text: str, max_chars: int = MAX_TEXT_CHARS) -> str:
    r"""Keep ``text`` within :data:`TEXT_CHARSET` and ``max_chars``.

    Curly quotes, dashes, ellipses and special spaces (common in model answers that end up in
    memory) become their ASCII spelling; any other character outside the charset becomes ``?``.

    Example:
        >>> fit_text("It\u2019s \u201cfine\u201d \u2014 caf\u00e9\u2026")
        'It\'s "fine" - caf?...'
    """
    return _OUTSIDE_CHARSET.sub("?", text[:max_chars].translate(_TYPOGRAPHY))[:max_chars]


@dataclass(frozen=True)
class Move:
    """One legal move as shown to a player.

    Attributes:
        action: The OpenSpiel action id.
        name: The text the player writes to choose it.
        aliases: Other accepted spellings.
    """

    action: int
    name: str
    aliases: tuple[str, ...] = field(default=())


class TextGame:
    """Renders an OpenSpiel game as text for one player. Subclasses override the ``*_text`` hooks.

    Args:
        game: The loaded OpenSpiel game (two players, sequential moves).
        title: A short human name of the game.
    """

    def __init__(self, game: pyspiel.Game, title: str) -> None:
        self.game = game
        self.title = title
        self._keyed_by_information_state = game.get_type().provides_information_state_string

    def view_key(self, state: pyspiel.State, player: int) -> Hashable | None:
        """Return what ``player`` knows at ``state``: the key of its cached view, or ``None``.

        The default is the game's information state string: a view without hidden information
        is a function of it (with the seat). A subclass whose :meth:`observation_text` or
        :meth:`moves` shows anything else at a decision point overrides this (``None``: no cache).
        """
        if self._keyed_by_information_state:
            return state.information_state_string(player)
        return None

    def moves(self, state: pyspiel.State, player: int) -> list[Move]:
        """Return the legal moves of ``player`` at ``state``, named with OpenSpiel's strings."""
        return _unique_moves(
            [Move(a, state.action_to_string(player, a)) for a in state.legal_actions(player)]
        )

    def observation_text(self, state: pyspiel.State, player: int) -> str:
        """Return what ``player`` sees at ``state`` (without the list of legal moves)."""
        raise NotImplementedError

    def outcome_text(self, state: pyspiel.State, player: int) -> str:
        """Return the result of a finished game from ``player``'s side."""
        payoff = state.returns()[player]
        result = "You won" if payoff > 0 else "You lost" if payoff < 0 else "It is a draw"
        return f"The game is over. {result} (payoff {payoff:+g})."

    def revealed(self, state: pyspiel.State, player: int) -> dict:
        """Return facts the rules reveal to ``player`` at the end of the game (default: none)."""
        return {}

    def seat_name(self, player: int) -> str:
        """Return the word for a seat: ``first`` or ``second``."""
        return "first" if player == 0 else "second"


class GenericTextGame(TextGame):
    """Any two-player OpenSpiel game, shown with the game's own observation and action strings."""

    def __init__(self, game: pyspiel.Game) -> None:
        super().__init__(game, game.get_type().long_name)
        game_type = game.get_type()
        self._uses_observation = game_type.provides_observation_string

    def observation_text(self, state: pyspiel.State, player: int) -> str:
        """Return the game's observation string (or information state string) for ``player``."""
        if self._uses_observation:
            view = state.observation_string(player)
        else:
            view = state.information_state_string(player)
        return (
            f"{self.title}. You are player {player} (you move {self.seat_name(player)}).\n"
            f"Your view of the game:\n{plain_ascii(view).rstrip()}"
        )


def _unique_moves(moves: list[Move]) -> list[Move]:
    """Append the action id to names that are not unique, so every name picks one move."""
    counts: dict[str, int] = {}
    for move in moves:
        counts[move.name.lower()] = counts.get(move.name.lower(), 0) + 1
    return [
        move if counts[move.name.lower()] == 1 else Move(move.action, f"{move.name} #{move.action}")
        for move in moves
    ]

"""What the learner sees at a decision point, rendered once per information state and reused.

An OpenSpiel text env shows, at each decision, the observation text, the legal move names and
their aliases. All of it is a function of what the acting seat may know, so it is rendered once
per (seat, information state) and kept in a bounded cache: a game revisits the same decision
points again and again (Kuhn poker has 12, a tic-tac-toe seat a few thousand). The key is the
game's own information state string (:meth:`TextGame.view_key`), never the full state, so a
cached view cannot carry what the seat may not see; a text game whose view depends on anything
else returns ``None`` there and is rendered every time. The end of a game is not cached: its text
shows what the rules reveal then (the opponent's card at a showdown), which the learner's
information state does not hold.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

import pyspiel

from mage_envs.games.text_game import Move, TextGame
from mage_envs.text import fit_text

__all__ = ["DecisionView", "ViewCache", "render_decision"]

DEFAULT_CACHE_SIZE = 4096
"""Views kept per env: every Kuhn decision point, the commonest of tic-tac-toe's (a few MB)."""


@dataclass(frozen=True, slots=True)
class DecisionView:
    """The learner's view of one decision point.

    Attributes:
        body: The observation with its legal-move line, before :func:`fit_text`.
        text: ``fit_text(body)``: the observation the learner reads.
        moves: The legal moves.
        names: Their names, as the learner writes them.
        ids: Their OpenSpiel action ids.
        aliases: Alias -> move name, for the parser.
    """

    body: str
    text: str
    moves: tuple[Move, ...]
    names: tuple[str, ...]
    ids: tuple[int, ...]
    aliases: dict[str, str]


def render_decision(text_game: TextGame, state: pyspiel.State, player: int) -> DecisionView:
    """Render ``player``'s view of ``state``, where ``player`` must act (no cache)."""
    moves = tuple(text_game.moves(state, player))
    names = tuple(m.name for m in moves)
    body = text_game.observation_text(state, player) + "\nLegal moves: " + ", ".join(names) + "."
    aliases = {alias: m.name for m in moves for alias in m.aliases}
    return DecisionView(body, fit_text(body), moves, names, tuple(m.action for m in moves), aliases)


class ViewCache:
    """Decision views of one text game, keyed by seat and information state, least recent out.

    Args:
        text_game: The game whose views are rendered.
        maxsize: Views kept at most; 0 renders every view anew (the reference for tests).
    """

    def __init__(self, text_game: TextGame, maxsize: int = DEFAULT_CACHE_SIZE) -> None:
        if maxsize < 0:
            raise ValueError(f"maxsize must be >= 0, not {maxsize}.")
        self.text_game = text_game
        self.maxsize = int(maxsize)
        self._views: OrderedDict[tuple[int, Hashable], DecisionView] = OrderedDict()

    def __len__(self) -> int:
        return len(self._views)

    def decision(self, state: pyspiel.State, player: int) -> DecisionView:
        """Return ``player``'s view of ``state`` (``player`` must act), from the cache if seen."""
        if not self.maxsize:
            return render_decision(self.text_game, state, player)
        key = self.text_game.view_key(state, player)
        if key is None:
            return render_decision(self.text_game, state, player)
        views, seat_key = self._views, (player, key)
        view = views.get(seat_key)
        if view is not None:
            views.move_to_end(seat_key)
            return view
        view = views[seat_key] = render_decision(self.text_game, state, player)
        if len(views) > self.maxsize:
            views.popitem(last=False)
        return view

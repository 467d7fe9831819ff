"""What the learner sees of a game, rendered once per information state and reused.

An OpenSpiel text env shows, at each decision, the observation text, the legal move names and
their aliases; at the end, the outcome, the payoff and the facts the rules reveal. All of it is a
function of what the learner may know, so it is rendered once per (seat, what the seat knows) and
kept in a bounded cache: a game revisits the same points again and again (Kuhn poker has 12
decision points and 30 ends, a tic-tac-toe seat a few thousand of each). The key is the text
game's :meth:`~mage_envs.games.text_game.TextGame.view_key` (decisions) or
:meth:`~mage_envs.games.text_game.TextGame.outcome_key` (ends): by default the game's own
information state string, never the full state, so a cached view cannot carry what the seat may
not see. A key of ``None`` renders the view every time (the end of an imperfect-information game,
unless its text game says what the end reveals).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field

import pyspiel

from mage_envs.games.text_game import TextGame
from mage_envs.text import fit_text

__all__ = ["View", "ViewCache", "render_view", "DEFAULT_CACHE_SIZE"]

DEFAULT_CACHE_SIZE = 8192
"""Views kept per env: all of Kuhn poker, the commonest of tic-tac-toe (about 8 MB at most).

Tic-tac-toe has 19,030 (seat, board, last move) views; random play at 4096 missed 27% of its
lookups, at 8192 5% (`python -m benchmarks envs`, docs/benchmarks.md)."""


@dataclass(frozen=True, slots=True)
class View:
    """The learner's view of one decision point or end of a game.

    Attributes:
        body: The observation (with its legal-move line, or the outcome), before ``fit_text``.
        text: ``fit_text(body)``: the observation the learner reads.
        names: The legal moves' names, as the learner writes them (empty at the end).
        ids: Their OpenSpiel action ids.
        aliases: Alias -> move name, for the parser.
        payoff: The learner's return at the end; ``None`` at a decision point.
        revealed: The facts the rules reveal at the end.

    A view is shared by every visit of its decision point: read it, never change it (the env
    copies what it hands out). Plain dicts, so an env with its cache pickles and deep-copies.
    """

    body: str
    text: str
    names: tuple[str, ...] = ()
    ids: tuple[int, ...] = ()
    aliases: dict[str, str] = field(default_factory=dict)
    payoff: float | None = None
    revealed: dict[str, object] = field(default_factory=dict)


def render_view(text_game: TextGame, state: pyspiel.State, player: int) -> View:
    """Render ``player``'s view of ``state`` (a decision of ``player`` or the end), uncached."""
    body = text_game.observation_text(state, player)
    if state.is_terminal():
        body += "\n" + text_game.outcome_text(state, player)
        payoff = float(state.returns()[player])
        revealed = dict(text_game.revealed(state, player))
        return View(body, fit_text(body), payoff=payoff, revealed=revealed)
    moves = text_game.moves(state, player)
    names = tuple(m.name for m in moves)
    body += "\nLegal moves: " + ", ".join(names) + "."
    aliases = {alias: m.name for m in moves for alias in m.aliases}
    return View(body, fit_text(body), names, tuple(m.action for m in moves), aliases)


class ViewCache:
    """Views of one text game, keyed by seat and what the seat knows; least recent out.

    Args:
        text_game: The game whose views are rendered.
        maxsize: Views kept at most; 0 renders every view anew (the reference for tests).
    """

    def __init__(self, text_game: TextGame, maxsize: int = DEFAULT_CACHE_SIZE) -> None:
        if maxsize < 0:
            raise ValueError(f"maxsize must be >= 0, not {maxsize}.")
        self.text_game = text_game
        self.maxsize = int(maxsize)
        self._views: OrderedDict[tuple[int, bool, Hashable], View] = OrderedDict()

    def __len__(self) -> int:
        return len(self._views)

    def view(self, state: pyspiel.State, player: int, terminal: bool) -> View:
        """Return ``player``'s view of ``state`` (``terminal``: the game is over), cached."""
        if not self.maxsize:
            return render_view(self.text_game, state, player)
        game = self.text_game
        key = game.outcome_key(state, player) if terminal else game.view_key(state, player)
        if key is None:
            return render_view(game, state, player)
        views, seat_key = self._views, (player, terminal, key)
        view = views.get(seat_key)
        if view is not None:
            views.move_to_end(seat_key)
            return view
        view = views[seat_key] = render_view(game, state, player)
        if len(views) > self.maxsize:
            views.popitem(last=False)
        return view

"""The opponent registry: every opponent name and every population preset, in one place.

:func:`register_opponent` makes a name buildable by :func:`make_opponent` (and by
``gym.make(..., opponent=name)``); :func:`register_population` makes a preset name usable
wherever an opponent name is. Everything that lists opponents reads this registry: the error for
an unknown name, :func:`opponent_names`, the bounds table (:mod:`mage_envs.bounds`) and the table
in ``docs/opponents.md`` (:func:`opponents_markdown`), so a new style appears everywhere by being
registered. The registry is one ``dict[str, OpponentEntry]`` (:data:`OPPONENTS`), as Gymnasium's
``registry: dict[str, EnvSpec]``, read at call time. A name that does not fit the game raises a
clear error: there is never a silent fallback to random play. ``mcts-N`` is accepted for any
N >= 1.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyspiel

from mage_envs.opponents.base import Opponent, is_perfect_information
from mage_envs.opponents.cfr import CFROpponent, solvability_problems
from mage_envs.opponents.kuhn import KUHN_STYLES
from mage_envs.opponents.mcts import MCTSOpponent
from mage_envs.opponents.random_legal import RandomLegal
from mage_envs.opponents.tic_tac_toe import TIC_TAC_TOE_STYLES, PerfectPlayOpponent

__all__ = [
    "OPPONENTS",
    "POPULATIONS",
    "OpponentEntry",
    "make_opponent",
    "opponent_entries",
    "opponent_names",
    "opponents_markdown",
    "population_names",
    "registered_population",
    "register_opponent",
    "register_population",
]

Factory = Callable[[pyspiel.Game], Opponent]
_MCTS_NAME = re.compile(r"mcts-([1-9][0-9]*)")


@dataclass(frozen=True)
class OpponentEntry:
    """One registered opponent.

    Attributes:
        name: The name configs and ``gym.make(..., opponent=...)`` use.
        factory: Receives the OpenSpiel game and returns a fresh opponent.
        supports: Predicate on the game (``None``: any game); other games are refused.
        games: The games it plays, in words (for the docs table).
        description: What it does, in one line (for the docs table).
        bounds: Whether the bounds table lists it (False for the reference player itself).
    """

    name: str
    factory: Factory
    supports: Callable[[pyspiel.Game], bool] | None = None
    games: str = "any"
    description: str = ""
    bounds: bool = True

    def fits(self, game: pyspiel.Game) -> bool:
        """Whether this opponent can play ``game``."""
        return self.supports is None or self.supports(game)


OPPONENTS: dict[str, OpponentEntry] = {}
"""Opponent name -> entry, in registration order (the order of every list). Read at call time,
as Gymnasium's ``registry``: what :func:`register_opponent` adds is a name everywhere."""

POPULATIONS: dict[str, Any] = {}
"""Preset name -> :class:`~mage_envs.opponents.Population` (:func:`register_population`)."""


def register_opponent(
    name: str,
    factory: Factory,
    supports: Callable[[pyspiel.Game], bool] | None = None,
    *,
    games: str = "any",
    description: str = "",
    bounds: bool = True,
) -> OpponentEntry:
    """Make ``name`` buildable by :func:`make_opponent` (the fields of :class:`OpponentEntry`)."""
    entry = OpponentEntry(name, factory, supports, games, description, bounds)
    OPPONENTS[name] = entry
    return entry


def register_population(population: Any) -> None:
    """Make a population's ``name`` usable wherever an opponent name is (a preset)."""
    POPULATIONS[population.name] = population


def registered_population(name: str) -> Any | None:
    """Return the preset population called ``name``, or ``None``."""
    return POPULATIONS.get(name)


def population_names() -> list[str]:
    """Return the preset population names, sorted."""
    return sorted(POPULATIONS)


def opponent_entries(game: pyspiel.Game | None = None) -> list[OpponentEntry]:
    """Return the registered opponents (those that fit ``game`` if given), in registration order."""
    return [e for e in OPPONENTS.values() if game is None or e.fits(game)]


def opponent_names(game: pyspiel.Game | None = None) -> list[str]:
    """Return the names :func:`make_opponent` accepts (for ``game`` if given), sorted.

    ``mcts-N`` is accepted for any N; the list shows ``mcts-100`` and ``mcts-1000``.

    Example:
        >>> import pyspiel
        >>> opponent_names(pyspiel.load_game("kuhn_poker"))[:3]
        ['aggressive', 'always-bet', 'always-pass']
    """
    return sorted(entry.name for entry in opponent_entries(game))


def make_opponent(spec: str | Opponent | None, game: pyspiel.Game) -> Opponent:
    """Turn an opponent spec into an opponent for ``game``.

    Args:
        spec: ``None`` (uniform random legal play), a registered name, or an object that already
            follows the :class:`~mage_envs.opponents.base.Opponent` protocol.
        game: The OpenSpiel game the opponent will play.

    Raises:
        ValueError: If ``spec`` is an unknown name (the message lists the valid names) or a name
            that cannot play ``game`` (the message says why). There is no silent fallback.
        TypeError: If ``spec`` is neither a name nor an opponent.
    """
    if spec is None:
        return RandomLegal()
    if isinstance(spec, str):
        return _build(spec, game)
    if isinstance(spec, Opponent):
        return spec
    raise TypeError(
        f"opponent must be a name, an Opponent (with name, reset and act) or None, "
        f"not {type(spec).__name__}."
    )


def _build(name: str, game: pyspiel.Game) -> Opponent:
    match = _MCTS_NAME.fullmatch(name)
    if match:
        return MCTSOpponent(game, simulations=int(match.group(1)))
    entry = OPPONENTS.get(name)
    if entry is None:
        raise ValueError(
            f"Unknown opponent {name!r}. Valid names: {', '.join(opponent_names())} "
            f"(mcts-N for any N >= 1); populations: {', '.join(population_names())}."
        )
    if not entry.fits(game):
        raise ValueError(
            f"Opponent {name!r} cannot play {game}. Names for this game: "
            f"{', '.join(opponent_names(game))}."
        )
    return entry.factory(game)


def opponents_markdown() -> str:
    """Return the table of registered opponents that ``docs/opponents.md`` shows."""
    rows = ["| name | games | what it does |", "|---|---|---|"]
    rows += [f"| `{e.name}` | {e.games} | {e.description} |" for e in opponent_entries()]
    return "\n".join(rows)


def _is_kuhn(game: pyspiel.Game) -> bool:
    return game.get_type().short_name == "kuhn_poker" and game.num_players() == 2


def _is_tic_tac_toe(game: pyspiel.Game) -> bool:
    return game.get_type().short_name == "tic_tac_toe"


def _is_solvable(game: pyspiel.Game) -> bool:
    # Perfect-information games are left to MCTS and perfect play: their trees are usually too
    # large for tabular CFR, and they need no mixed strategies.
    return not solvability_problems(game) and not is_perfect_information(game)


_KUHN = {
    "conservative": "bets and calls only with a King",
    "aggressive": "always bets when it can; facing a bet folds a Jack, calls otherwise",
    "balanced": 'MAGE\'s "intermediate": King bets/calls, Jack checks/folds, Queen bets when not '
    "facing a bet and folds to one",
    "always-pass": "passes (checks or folds) every time",
    "always-bet": "bets (bets or calls) every time",
}
_TIC_TAC_TOE = {
    "biased-random": "random cell, weights centre 4, corners 2, edges 1",
    "order-center": "first free cell of the order centre, corners, edges (MAGE's)",
    "order-corners": "first free cell of the order corners, centre, edges (MAGE's)",
    "order-edges": "first free cell of the order edges, centre, corners (MAGE's)",
    "order-diagonal": "first free cell of the main diagonal, the other corners, edges (MAGE's)",
    "order-anti-diagonal": "first free cell of the anti-diagonal, the other corners, edges "
    "(MAGE's)",
    "order-reversed": "first free cell of the order 9 7 3 1 5 8 6 4 2, cells numbered 1-9 by "
    "rows (MAGE's reversed order)",
    "order-rows": "first free cell, row by row (ours)",
}

register_opponent("random", lambda game: RandomLegal(), description="uniform over legal moves")
for _name, _words in _KUHN.items():
    register_opponent(
        _name, lambda game, s=KUHN_STYLES[_name]: s(), _is_kuhn, games="Kuhn", description=_words
    )
for _name, _words in _TIC_TAC_TOE.items():
    register_opponent(
        _name,
        lambda game, s=TIC_TAC_TOE_STYLES[_name]: s(),
        _is_tic_tac_toe,
        games="tic-tac-toe",
        description=_words,
    )
register_opponent(
    "perfect",
    PerfectPlayOpponent,
    _is_tic_tac_toe,
    games="tic-tac-toe",
    description="a seeded uniform choice among the minimax-optimal moves; never loses",
    bounds=False,  # the reference player the tic-tac-toe bounds table measures against
)
_ZERO_SUM = "two-player zero-sum imperfect-information (Kuhn, Leduc, ...)"
register_opponent(
    "cfr",
    lambda game: CFROpponent(game, "sample"),
    _is_solvable,
    games=_ZERO_SUM,
    description="samples CFR's average policy",
)
register_opponent(
    "cfr-argmax",
    lambda game: CFROpponent(game, "argmax"),
    _is_solvable,
    games=_ZERO_SUM,
    description="plays the argmax of that policy (ties to the lowest action id): MAGE's "
    "evaluation opponent",
)
for _sims in (100, 1000):
    register_opponent(
        f"mcts-{_sims}",
        lambda game, n=_sims: MCTSOpponent(game, simulations=n),
        is_perfect_information,
        games="perfect-information (tic-tac-toe, connect four, ...)",
        description=f"OpenSpiel's C++ `MCTSBot`, {_sims} simulations a move (`mcts-N`: any N >= 1)",
    )

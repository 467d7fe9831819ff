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

A *scheme* is a family of names with a prefix: ``agent:SPEC`` makes any agent an opponent
(:class:`~mage_envs.opponents.text_opponent.TextOpponent`; ``agent:random``,
``agent:local:PATH``, ``agent:openai:MODEL@URL``). :func:`register_opponent_scheme` maps a prefix
to its builder, given as an object or, as Gymnasium's ``entry_point``, a ``"module:attr"``
string imported at the first use: the agents live above mage_envs, which never imports them.
An agent object (``act(observation, info)``) given where an opponent goes is wrapped the same way.
"""

from __future__ import annotations

import importlib
import inspect
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
from mage_envs.opponents.scripted import scripted_opponent
from mage_envs.opponents.text_opponent import TextOpponent
from mage_envs.opponents.tic_tac_toe import TIC_TAC_TOE_STYLES, PerfectPlayOpponent

__all__ = [
    "OPPONENTS",
    "OPPONENT_SCHEMES",
    "POPULATIONS",
    "OpponentEntry",
    "make_opponent",
    "opponent_entries",
    "opponent_names",
    "opponents_markdown",
    "population_names",
    "registered_population",
    "register_opponent",
    "register_opponent_scheme",
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

OPPONENT_SCHEMES: dict[str, str | Callable[[str, pyspiel.Game], Opponent]] = {}
"""Prefix -> builder of ``PREFIX:REST`` names: ``builder(REST, game)``, or a ``"module:attr"``
string naming it (imported at the first use)."""

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


def register_opponent_scheme(
    prefix: str, builder: str | Callable[[str, pyspiel.Game], Opponent]
) -> None:
    """Make every name ``prefix:REST`` buildable: ``builder(REST, game)`` returns the opponent.

    Args:
        prefix: The scheme's prefix (no colon), e.g. ``"agent"``.
        builder: The builder, or ``"module:attr"`` naming it (imported when first needed).
    """
    if not prefix or ":" in prefix:
        raise ValueError(f"A scheme prefix is a word without ':', not {prefix!r}.")
    OPPONENT_SCHEMES[prefix] = builder


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
        spec: ``None`` (uniform random legal play), a registered name, a scheme name
            (``agent:random``, ``agent:local:PATH``, ...), an object that already follows the
            :class:`~mage_envs.opponents.base.Opponent` protocol, or an agent (``name``,
            ``reset(seed)``, ``act(observation, info)``), which plays as a
            :class:`~mage_envs.opponents.text_opponent.TextOpponent`.
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
    if _answers_text(spec):
        return TextOpponent(spec)
    if isinstance(spec, Opponent):
        return spec
    raise TypeError(
        f"opponent must be a name, an Opponent (with name, reset and act) or None, "
        f"not {type(spec).__name__}."
    )


def _answers_text(obj: object) -> bool:
    """Whether ``obj`` is an agent (``act(observation, info)``) rather than an opponent."""
    act = getattr(obj, "act", None)
    if not (callable(act) and callable(getattr(obj, "reset", None))):
        return False
    try:
        inspect.signature(act).bind("", {})
    except (TypeError, ValueError):
        return False
    return True


def _scheme_builder(prefix: str) -> Callable[[str, pyspiel.Game], Opponent]:
    builder = OPPONENT_SCHEMES[prefix]
    if isinstance(builder, str):
        module_name, _, attr = builder.partition(":")
        try:
            builder = getattr(importlib.import_module(module_name), attr)
        except ImportError as error:
            raise ValueError(
                f"Opponents '{prefix}:...' are built by {module_name}, which could not be "
                f"imported ({error}); is the package installed in full?"
            ) from None
        OPPONENT_SCHEMES[prefix] = builder
    return builder


def _build(name: str, game: pyspiel.Game) -> Opponent:
    prefix, colon, rest = name.partition(":")
    if colon and prefix in OPPONENT_SCHEMES:
        return _scheme_builder(prefix)(rest, game)
    match = _MCTS_NAME.fullmatch(name)
    if match:
        return MCTSOpponent(game, simulations=int(match.group(1)))
    entry = OPPONENTS.get(name)
    if entry is None:
        raise ValueError(
            f"Unknown opponent {name!r}. Valid names: {', '.join(opponent_names())} "
            f"(mcts-N for any N >= 1); {_schemes_in_words()}populations: "
            f"{', '.join(population_names())}."
        )
    if not entry.fits(game):
        raise ValueError(
            f"Opponent {name!r} cannot play {game}. Names for this game: "
            f"{', '.join(opponent_names(game))}."
        )
    return entry.factory(game)


def _schemes_in_words() -> str:
    names = ", ".join(f"{prefix}:..." for prefix in OPPONENT_SCHEMES)
    return f"schemes: {names}; " if names else ""


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
register_opponent_scheme("agent", "baselines.opponents.agent:agent_opponent")
register_opponent_scheme("agent-memory", "baselines.opponents.agent:agent_opponent_with_memory")
register_opponent_scheme("league", "baselines.opponents.league:league_opponent")
register_opponent_scheme("script", scripted_opponent)

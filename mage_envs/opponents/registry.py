"""Build opponents from names, so configs and ``gym.make(..., opponent="random")`` can name them.

Names: ``random``; Kuhn poker styles (``conservative``, ``aggressive``, ``balanced``,
``always-pass``, ``always-bet``); ``cfr`` and ``cfr-argmax`` (any two-player zero-sum game);
``mcts-N`` for any N >= 1 (perfect-information games); tic-tac-toe styles (``order-center``,
``order-corners``, ``order-edges``, ``order-diagonal``, ``order-anti-diagonal``,
``order-reversed``, ``order-rows``, ``biased-random``, ``perfect``). A name that
does not fit the game raises a clear error: there is never a silent fallback to random play.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pyspiel

from mage_envs.opponents.base import Opponent, RandomOpponent, is_perfect_information
from mage_envs.opponents.cfr import CFROpponent, solvability_problems
from mage_envs.opponents.kuhn import KUHN_STYLES
from mage_envs.opponents.mcts import MCTSOpponent
from mage_envs.opponents.tic_tac_toe import TIC_TAC_TOE_STYLES, PerfectPlayOpponent

__all__ = ["make_opponent", "opponent_names", "register_opponent"]

Factory = Callable[[pyspiel.Game], Opponent]
_FACTORIES: dict[str, Factory] = {}
_SUPPORTS: dict[str, Callable[[pyspiel.Game], bool]] = {}
_MCTS_NAME = re.compile(r"mcts-([1-9][0-9]*)")


def register_opponent(
    name: str, factory: Factory, supports: Callable[[pyspiel.Game], bool] | None = None
) -> None:
    """Make ``name`` buildable by :func:`make_opponent`.

    Args:
        name: The opponent's name.
        factory: Receives the OpenSpiel game and returns a fresh opponent.
        supports: Optional predicate on the game; :func:`make_opponent` refuses other games with a
            clear error, and :func:`opponent_names` uses it to filter by game.
    """
    _FACTORIES[name] = factory
    if supports is not None:
        _SUPPORTS[name] = supports
    else:
        _SUPPORTS.pop(name, None)


def opponent_names(game: pyspiel.Game | None = None) -> list[str]:
    """Return the names :func:`make_opponent` accepts (for ``game`` if given), sorted.

    ``mcts-N`` is accepted for any N; the list shows ``mcts-100`` and ``mcts-1000``.

    Example:
        >>> import pyspiel
        >>> opponent_names(pyspiel.load_game("kuhn_poker"))[:3]
        ['aggressive', 'always-bet', 'always-pass']
    """
    names = [
        name
        for name in _FACTORIES
        if game is None or name not in _SUPPORTS or _SUPPORTS[name](game)
    ]
    return sorted(names)


def make_opponent(spec: str | Opponent | None, game: pyspiel.Game) -> Opponent:
    """Turn an opponent spec into an opponent for ``game``.

    Args:
        spec: ``None`` (uniform random legal play), a registered name (see the module docstring),
            or an object that already follows the :class:`~mage_envs.opponents.base.Opponent`
            protocol.
        game: The OpenSpiel game the opponent will play.

    Raises:
        ValueError: If ``spec`` is an unknown name (the message lists the valid names) or a name
            that cannot play ``game`` (the message says why). There is no silent fallback.
        TypeError: If ``spec`` is neither a name nor an opponent.
    """
    if spec is None:
        return RandomOpponent()
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
    if name not in _FACTORIES:
        from mage_envs.opponents.population import population_names  # a cycle at import time

        raise ValueError(
            f"Unknown opponent {name!r}. Valid names: {', '.join(opponent_names())} "
            f"(mcts-N for any N >= 1); populations: {', '.join(population_names())}."
        )
    if name in _SUPPORTS and not _SUPPORTS[name](game):
        raise ValueError(
            f"Opponent {name!r} cannot play {game}. Names for this game: "
            f"{', '.join(opponent_names(game))}."
        )
    return _FACTORIES[name](game)


def _short_name(game: pyspiel.Game) -> str:
    return game.get_type().short_name


def _is_kuhn(game: pyspiel.Game) -> bool:
    return _short_name(game) == "kuhn_poker" and game.num_players() == 2


def _is_tic_tac_toe(game: pyspiel.Game) -> bool:
    return _short_name(game) == "tic_tac_toe"


def _is_solvable(game: pyspiel.Game) -> bool:
    # Perfect-information games are left to MCTS and perfect play: their trees are usually too
    # large for tabular CFR, and they need no mixed strategies.
    return not solvability_problems(game) and not is_perfect_information(game)


register_opponent("random", lambda game: RandomOpponent())
for _name, _style in KUHN_STYLES.items():
    register_opponent(_name, lambda game, s=_style: s(), supports=_is_kuhn)
for _name, _style in TIC_TAC_TOE_STYLES.items():
    register_opponent(_name, lambda game, s=_style: s(), supports=_is_tic_tac_toe)
register_opponent("perfect", PerfectPlayOpponent, supports=_is_tic_tac_toe)
register_opponent("cfr", lambda game: CFROpponent(game, "sample"), supports=_is_solvable)
register_opponent("cfr-argmax", lambda game: CFROpponent(game, "argmax"), supports=_is_solvable)
for _sims in (100, 1000):
    register_opponent(
        f"mcts-{_sims}",
        lambda game, n=_sims: MCTSOpponent(game, simulations=n),
        supports=is_perfect_information,
    )

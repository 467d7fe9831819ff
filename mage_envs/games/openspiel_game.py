"""``mage/OpenSpiel-v0``: any two-player, turn-based OpenSpiel game as a text env.

The observation is the game's own observation string (or information state string), and moves are
its own action strings, so every game OpenSpiel ships that fits the shape works with no code:
connect_four, leduc_poker, liars_dice, breakthrough, ... :func:`game_support` says why a game is
rejected.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pyspiel

from mage_envs.games.openspiel_env import OpenSpielTextEnv
from mage_envs.games.text_game import GenericTextGame

__all__ = ["OpenSpielEnv", "game_support", "supported_games", "load_two_player_game"]

_GameType = pyspiel.GameType


def rejection_reason(game_type: pyspiel.GameType) -> str | None:
    """Return why a game of this type cannot be a text env, or ``None`` if it can."""
    if game_type.dynamics != _GameType.Dynamics.SEQUENTIAL:
        return "not turn-based (simultaneous moves or mean-field dynamics)"
    if not game_type.min_num_players <= 2 <= game_type.max_num_players:
        return f"needs {game_type.min_num_players}-{game_type.max_num_players} players, not 2"
    if not (game_type.provides_observation_string or game_type.provides_information_state_string):
        return "provides no observation or information state string"
    if not game_type.default_loadable:
        return "cannot be loaded without parameters"
    return None


@cache
def game_support() -> dict[str, str | None]:
    """Map every registered OpenSpiel game to ``None`` (supported) or the reason it is rejected.

    Example:
        >>> support = game_support()
        >>> support["connect_four"] is None, support["goofspiel"]
        (True, 'not turn-based (simultaneous moves or mean-field dynamics)')
    """
    return {t.short_name: rejection_reason(t) for t in pyspiel.registered_games()}


def supported_games() -> list[str]:
    """Return the names of the OpenSpiel games ``mage/OpenSpiel-v0`` accepts, sorted."""
    return sorted(name for name, reason in game_support().items() if reason is None)


def load_two_player_game(game: str, params: dict | None = None) -> pyspiel.Game:
    """Load ``game`` for two players, with a clear error when it cannot be played as text.

    Raises:
        ValueError: If the game is unknown or rejected; the message says why.
    """
    support = game_support()
    if game not in support:
        raise ValueError(
            f"Unknown OpenSpiel game {game!r}. Supported games: {', '.join(supported_games())}."
        )
    if support[game] is not None:
        raise ValueError(f"OpenSpiel game {game!r} is not supported: {support[game]}.")
    params = dict(params or {})
    game_type = pyspiel.load_game(game).get_type()
    if "players" in game_type.parameter_specification:
        params.setdefault("players", 2)
    loaded = pyspiel.load_game(game, params)
    if loaded.num_players() != 2:
        raise ValueError(f"OpenSpiel game {game!r} loaded with {loaded.num_players()} players.")
    return loaded


class OpenSpielEnv(OpenSpielTextEnv):
    """``mage/OpenSpiel-v0``: a two-player OpenSpiel game against an opponent, as text.

    The reward at the end is the learner's OpenSpiel return times ``reward_scale``; ``success``
    means a positive return.

    Args:
        game: An OpenSpiel game name from :func:`supported_games`.
        game_params: Parameters passed to ``pyspiel.load_game`` (``players`` is fixed to 2).
        **settings: ``opponent``, ``seat``, ... as
            :class:`~mage_envs.games.openspiel_env.OpenSpielTextEnv`.

    Example:
        >>> import gymnasium as gym, mage_envs
        >>> env = gym.make("mage/OpenSpiel-v0", game="connect_four")
        >>> obs, info = env.reset(seed=0)
        >>> info["legal_actions"][:3]
        ['x0', 'x1', 'x2']
    """

    def __init__(
        self, game: str = "connect_four", game_params: dict | None = None, **settings: Any
    ) -> None:
        text_game = GenericTextGame(load_two_player_game(game, game_params))
        super().__init__(**settings, text_game=text_game)

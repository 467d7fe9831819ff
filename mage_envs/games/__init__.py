"""The two-player games of the suite, as single-agent text envs against an opponent."""

from mage_envs.games.kuhn_poker import KuhnPokerEnv, KuhnPokerText
from mage_envs.games.openspiel_game import OpenSpielEnv, game_support, supported_games
from mage_envs.games.tic_tac_toe import TicTacToeEnv, TicTacToeText

__all__ = [
    "KuhnPokerEnv",
    "KuhnPokerText",
    "OpenSpielEnv",
    "TicTacToeEnv",
    "TicTacToeText",
    "game_support",
    "supported_games",
]

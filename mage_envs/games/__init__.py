"""The two-player games of the suite, as single-agent text envs against an opponent.

:class:`TextGame` renders an OpenSpiel game for one player; :class:`OpenSpielTextEnv` is the
Gymnasium env of every game (the learner against an opponent). A game of the suite is a
``TextGame`` subclass and a one-line env class naming it (see ``docs/architecture.md``).
"""

from mage_envs.games.kuhn_poker import KuhnPokerEnv, KuhnPokerText
from mage_envs.games.openspiel_env import SEATS, OpenSpielTextEnv, sample_chance
from mage_envs.games.openspiel_game import OpenSpielEnv, game_support, supported_games
from mage_envs.games.text_game import GenericTextGame, Move, TextGame
from mage_envs.games.tic_tac_toe import TicTacToeEnv, TicTacToeText

__all__ = [
    "SEATS",
    "GenericTextGame",
    "KuhnPokerEnv",
    "KuhnPokerText",
    "Move",
    "OpenSpielEnv",
    "OpenSpielTextEnv",
    "TextGame",
    "TicTacToeEnv",
    "TicTacToeText",
    "game_support",
    "sample_chance",
    "supported_games",
]

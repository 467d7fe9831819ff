"""mage_envs: text environments for language agents that learn within a trial.

Importing the package registers its Gymnasium ids (``mage/KuhnPoker-v0``, ``mage/TicTacToe-v0``,
``mage/OpenSpiel-v0``, ...); ``gym.make("mage_envs:mage/KuhnPoker-v0")`` imports it for you.
"""

from mage_envs.meta import MetaEpisodeWrapper, TextAdapter, TrialResult, make_trial
from mage_envs.registration import ALFWORLD_ENV_IDS, DATA_ENV_IDS, ENV_IDS, register_envs

register_envs()

__all__ = [
    "ALFWORLD_ENV_IDS",
    "DATA_ENV_IDS",
    "ENV_IDS",
    "MetaEpisodeWrapper",
    "TextAdapter",
    "TrialResult",
    "make_trial",
    "register_envs",
]
__version__ = "0.1.0"

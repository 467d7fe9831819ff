"""ALFWorld for language agents: the real text engine, over official or generated games.

``mage/ALFWorld-v0`` plays the official game files (after ``alfworld-download``);
``mage/ALFWorld-Generated-v0`` plays games our generator builds from the floor plans the
``alfworld`` package ships (not the official distribution); ``mage/ALFWorld-Generated-Unseen-v0``
keeps the two task types LaMer held out (cool, pick two). All need ``pip install
'mage-metarl[alfworld]'``; importing this package does not import ``alfworld`` itself.
"""

from mage_envs.alfworld.data import MissingDataError
from mage_envs.alfworld.env import ALFWorldEnv, ALFWorldGeneratedEnv, ALFWorldGeneratedUnseenEnv
from mage_envs.alfworld.generator import GeneratorSettings, generate_game
from mage_envs.alfworld.store import GameStore
from mage_envs.alfworld.tasks import SEEN_TASK_TYPES, TASK_TYPES, UNSEEN_TASK_TYPES, task_types

__all__ = [
    "ALFWorldEnv",
    "ALFWorldGeneratedEnv",
    "ALFWorldGeneratedUnseenEnv",
    "GameStore",
    "GeneratorSettings",
    "MissingDataError",
    "SEEN_TASK_TYPES",
    "TASK_TYPES",
    "UNSEEN_TASK_TYPES",
    "generate_game",
    "task_types",
]

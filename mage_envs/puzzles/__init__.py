"""Single-agent puzzles from LaMer: Sokoban and Minesweeper, with harder variants.

Rules, generators, solvers and text rendering are pure modules with no Gymnasium import
(:mod:`~mage_envs.puzzles.sokoban`, :mod:`~mage_envs.puzzles.sokoban_generator`,
:mod:`~mage_envs.puzzles.sokoban_solver`, :mod:`~mage_envs.puzzles.minesweeper`,
:mod:`~mage_envs.puzzles.minesweeper_logic`); the ``*_env`` modules are thin Gymnasium adapters,
registered as ``mage/Sokoban-v0``, ``mage/SokobanMoreBoxes-v0``, ``mage/SokobanLarge-v0``,
``mage/Minesweeper-v0``, ``mage/MinesweeperMoreMines-v0`` and ``mage/MinesweeperLarge-v0``.
"""

from mage_envs.puzzles.minesweeper import MinesweeperBoard
from mage_envs.puzzles.minesweeper_env import (
    MinesweeperEnv,
    MinesweeperLargeEnv,
    MinesweeperMoreMinesEnv,
)
from mage_envs.puzzles.minesweeper_logic import Deduction, deduce, has_deducible_safe_move
from mage_envs.puzzles.sokoban import SokobanLevel, dead_cells, deadlocked_boxes
from mage_envs.puzzles.sokoban_env import SokobanEnv, SokobanLargeEnv, SokobanMoreBoxesEnv
from mage_envs.puzzles.sokoban_generator import (
    GeneratedLevel,
    GenerationError,
    SokobanSettings,
    generate_level,
)
from mage_envs.puzzles.sokoban_solver import SearchLimitError, Solution, solve

__all__ = [
    "Deduction",
    "GeneratedLevel",
    "GenerationError",
    "MinesweeperBoard",
    "MinesweeperEnv",
    "MinesweeperLargeEnv",
    "MinesweeperMoreMinesEnv",
    "SearchLimitError",
    "SokobanEnv",
    "SokobanLargeEnv",
    "SokobanLevel",
    "SokobanMoreBoxesEnv",
    "SokobanSettings",
    "Solution",
    "dead_cells",
    "deadlocked_boxes",
    "deduce",
    "generate_level",
    "has_deducible_safe_move",
    "solve",
]

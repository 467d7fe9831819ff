"""Registers the suite's env ids with Gymnasium and PettingZoo (once, on ``import mage_envs``)."""

from __future__ import annotations

import gymnasium as gym
import pettingzoo

__all__ = ["ENV_IDS", "DATA_ENV_IDS", "AEC_ENV_IDS", "ALFWORLD_ENV_IDS", "register_envs"]

ENV_IDS: dict[str, str] = {
    "mage/KuhnPoker-v0": "mage_envs.games.kuhn_poker:KuhnPokerEnv",
    "mage/TicTacToe-v0": "mage_envs.games.tic_tac_toe:TicTacToeEnv",
    "mage/OpenSpiel-v0": "mage_envs.games.openspiel_game:OpenSpielEnv",
    "mage/Sokoban-v0": "mage_envs.puzzles.sokoban_env:SokobanEnv",
    "mage/SokobanMoreBoxes-v0": "mage_envs.puzzles.sokoban_env:SokobanMoreBoxesEnv",
    "mage/SokobanLarge-v0": "mage_envs.puzzles.sokoban_env:SokobanLargeEnv",
    "mage/Minesweeper-v0": "mage_envs.puzzles.minesweeper_env:MinesweeperEnv",
    "mage/MinesweeperMoreMines-v0": "mage_envs.puzzles.minesweeper_env:MinesweeperMoreMinesEnv",
    "mage/MinesweeperLarge-v0": "mage_envs.puzzles.minesweeper_env:MinesweeperLargeEnv",
    "mage/ShopSim-v0": "mage_envs.shopsim.env:ShopSimEnv",
    "mage/ShopSimOOD-v0": "mage_envs.shopsim.env:ShopSimOODEnv",
}
"""Every id the suite registers that runs as it is, with its entry point."""

DATA_ENV_IDS: dict[str, str] = {
    "mage/WebShop-v0": "mage_envs.webshop.env:WebShopEnv",
}
"""Registered ids that need data files the user downloads (``gym.make`` without them raises an
error that names the files); left out of :data:`ENV_IDS`, so the default run skips them."""

ALFWORLD_ENV_IDS: dict[str, str] = {
    "mage/ALFWorld-v0": "mage_envs.alfworld.env:ALFWorldEnv",
    "mage/ALFWorld-Generated-v0": "mage_envs.alfworld.env:ALFWorldGeneratedEnv",
    "mage/ALFWorld-Generated-Unseen-v0": "mage_envs.alfworld.env:ALFWorldGeneratedUnseenEnv",
}
"""The ALFWorld ids (they need the ``alfworld`` extra). Registered too, but kept out of
:data:`ENV_IDS`, the default table of ``python -m baselines.run``: the engine plays tens of steps
per second and the official games need a download (see docs/alfworld.md)."""

AEC_ENV_IDS: dict[str, str] = {
    "mage/kuhn_poker-v0": "mage_envs.pettingzoo.kuhn_poker_v0:env",
    "mage/tic_tac_toe-v0": "mage_envs.pettingzoo.tic_tac_toe_v0:env",
}
"""The PettingZoo AEC envs, for ``pettingzoo.make("aec", id)`` (PettingZoo 1.27 and later)."""


def register_envs() -> None:
    """Register the ids of every table above (Gymnasium and PettingZoo) not known yet."""
    for env_id, entry_point in {**ENV_IDS, **DATA_ENV_IDS, **ALFWORLD_ENV_IDS}.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point)
    if hasattr(pettingzoo, "aec_registry"):  # PettingZoo's registry arrived in 1.27
        for env_id, entry_point in AEC_ENV_IDS.items():
            if env_id not in pettingzoo.aec_registry:
                pettingzoo.register("aec", env_id, entry_point)

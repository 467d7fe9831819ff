"""Tic-tac-toe as a PettingZoo AEC env: ``from mage_envs.pettingzoo import tic_tac_toe_v0``.

Example:
    >>> from mage_envs.pettingzoo import tic_tac_toe_v0
    >>> env = tic_tac_toe_v0.env()
    >>> env.reset(seed=0)
    >>> env.agent_selection, len(env.infos["player_0"]["legal_actions"])
    ('player_0', 9)
"""

from mage_envs.games.tic_tac_toe import TicTacToeText
from mage_envs.pettingzoo.aec import OpenSpielAECEnv

__all__ = ["env", "raw_env"]


def raw_env(render_mode: str | None = None) -> OpenSpielAECEnv:
    """Return the unwrapped AEC env."""
    return OpenSpielAECEnv(
        TicTacToeText(), "tic_tac_toe_v0", bounds=(0.0, 1.0), render_mode=render_mode
    )


def env(render_mode: str | None = None) -> OpenSpielAECEnv:
    """Return the AEC env (no extra wrappers: illegal actions raise a clear ``ValueError``)."""
    return raw_env(render_mode=render_mode)

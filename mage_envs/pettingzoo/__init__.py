"""PettingZoo AEC versions of the two-player games, both seats controlled from outside."""

from mage_envs.pettingzoo import kuhn_poker_v0, tic_tac_toe_v0
from mage_envs.pettingzoo.aec import OpenSpielAECEnv

__all__ = ["OpenSpielAECEnv", "kuhn_poker_v0", "tic_tac_toe_v0"]

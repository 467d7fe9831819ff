"""Kuhn poker as a PettingZoo AEC env: ``from mage_envs.pettingzoo import kuhn_poker_v0``.

Example:
    >>> from mage_envs.pettingzoo import kuhn_poker_v0
    >>> env = kuhn_poker_v0.env()
    >>> env.reset(seed=0)
    >>> env.agent_selection, env.infos["player_0"]["legal_actions"]
    ('player_0', ['check', 'bet'])
"""

from mage_envs.games.kuhn_poker import KuhnPokerText
from mage_envs.pettingzoo.aec import OpenSpielAECEnv

__all__ = ["env", "raw_env"]


def raw_env(render_mode: str | None = None) -> OpenSpielAECEnv:
    """Return the unwrapped AEC env."""
    return OpenSpielAECEnv(
        KuhnPokerText(), "kuhn_poker_v0", bounds=(0.0, 2.0), render_mode=render_mode
    )


def env(render_mode: str | None = None) -> OpenSpielAECEnv:
    """Return the AEC env (no extra wrappers: illegal actions raise a clear ``ValueError``)."""
    return raw_env(render_mode=render_mode)

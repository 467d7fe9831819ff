"""Trials: any Gymnasium or PettingZoo env as reflection-carrying multi-episode trials.

See ``docs/meta_episodes.md``. The pieces: :class:`MetaEpisodeWrapper` (the trial loop),
:class:`TextAdapter` / :class:`TextWrapper` (non-text envs as text), :class:`PettingZooTextEnv`
(one agent of a PettingZoo game against opponents), :class:`TrialResult` and the pass@k helpers,
and :class:`Templates` (every text the wrapper adds).
"""

from mage_envs.meta.config import TrialConfig
from mage_envs.meta.convert import TextConversion
from mage_envs.meta.make import make_trial
from mage_envs.meta.pettingzoo_env import PettingZooTextEnv
from mage_envs.meta.policies import (
    AgentPolicy,
    FunctionPolicy,
    OpponentSeat,
    RandomLegalPolicy,
)
from mage_envs.meta.templates import DEFAULT_TEMPLATES, Templates
from mage_envs.meta.text_adapter import TextAdapter, TextWrapper
from mage_envs.meta.trial import TrialResult, differential_returns, mean_pass_at_k, pass_at_k
from mage_envs.meta.wrapper import MetaEpisodeWrapper, default_success

__all__ = [
    "DEFAULT_TEMPLATES",
    "AgentPolicy",
    "FunctionPolicy",
    "MetaEpisodeWrapper",
    "OpponentSeat",
    "PettingZooTextEnv",
    "RandomLegalPolicy",
    "Templates",
    "TextAdapter",
    "TextConversion",
    "TextWrapper",
    "TrialConfig",
    "TrialResult",
    "default_success",
    "differential_returns",
    "make_trial",
    "mean_pass_at_k",
    "pass_at_k",
]

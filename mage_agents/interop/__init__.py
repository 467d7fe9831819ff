"""Our envs and trials for other engines: an OpenEnv server and client, TRL over OpenEnv.

Needs the ``openenv`` extra (``pip install "mage-metarl[openenv]"``); see docs/interop.md.
:mod:`mage_agents.interop.spec` alone needs nothing more than the core; the TRL adapter
(:mod:`mage_agents.interop.trl_openenv`) is imported on first use, since it loads the trainer's
package (torch).
"""

from typing import Any

from mage_agents.interop.openenv_client import MageTrialClient
from mage_agents.interop.openenv_env import MageTrialEnvironment, serve_app
from mage_agents.interop.openenv_models import (
    MAX_ACTION_CHARS,
    MageAction,
    MageObservation,
    MageState,
)
from mage_agents.interop.spec import CLIENT_SETTINGS, MAX_CLIENT_EPISODES, TrialSpec

_TRL = ("OpenEnvTrialEnvironment", "openenv_trial_environment")

__all__ = [
    "CLIENT_SETTINGS",
    "MAX_ACTION_CHARS",
    "MAX_CLIENT_EPISODES",
    "MageAction",
    "MageObservation",
    "MageState",
    "MageTrialClient",
    "MageTrialEnvironment",
    "OpenEnvTrialEnvironment",
    "TrialSpec",
    "openenv_trial_environment",
    "serve_app",
]


def __getattr__(name: str) -> Any:
    if name in _TRL:
        from mage_agents.interop import trl_openenv

        return getattr(trl_openenv, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

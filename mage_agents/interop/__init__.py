"""Our envs and trials for other engines: OpenEnv server and client, TRL, verifiers.

Needs the ``openenv`` extra (``pip install "mage-metarl[openenv]"``), or ``verifiers`` for
:mod:`mage_agents.interop.verifiers_env`; see docs/interop.md. Names are imported on first use:
:mod:`mage_agents.interop.spec` needs only the core, and the TRL adapter
(:mod:`mage_agents.interop.trl_openenv`) loads the trainer's package (torch).
"""

from importlib import import_module
from typing import Any

__all__ = [
    "CLIENT_SETTINGS",
    "MAX_ACTION_CHARS",
    "MAX_CLIENT_EPISODES",
    "MageAction",
    "MageObservation",
    "MageState",
    "MageTrialEnv",
    "MageTrialClient",
    "MageTrialEnvironment",
    "MageTrials",
    "OpenEnvTrialEnvironment",
    "PageHarness",
    "TrialSpec",
    "openenv_trial_environment",
    "serve_app",
]

_HOMES = {
    "CLIENT_SETTINGS": "spec",
    "MAX_CLIENT_EPISODES": "spec",
    "TrialSpec": "spec",
    "MAX_ACTION_CHARS": "openenv_models",
    "MageAction": "openenv_models",
    "MageObservation": "openenv_models",
    "MageState": "openenv_models",
    "MageTrialClient": "openenv_client",
    "MageTrialEnvironment": "openenv_env",
    "serve_app": "openenv_env",
    "MageTrialEnv": "verifiers_env",
    "MageTrials": "verifiers_env",
    "PageHarness": "verifiers_env",
    "OpenEnvTrialEnvironment": "trl_openenv",
    "openenv_trial_environment": "trl_openenv",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Training on TRL: ``MetaRLConfig``, ``MetaRLTrainer`` and an ``environment_factory`` adapter.

``MetaRLTrainer`` subclasses TRL's ``GRPOTrainer`` and overrides only generation and scoring: the
rollout engine plays trials with the policy being trained, every model turn becomes one sample row
with its own advantage from the chosen estimator (:mod:`mage_agents.advantages`), and TRL does the
rest (loss, KL, clipping, PEFT/LoRA, vLLM, logging, checkpoints). See docs/training.md.

Importing this package is light; torch and TRL load when a name is first used.
"""

from importlib import import_module
from typing import Any

__all__ = [
    "MetaRLConfig",
    "MetaRLTrainer",
    "TrialEnvironment",
    "trial_environment",
    "kuhn_policy_table",
    "kuhn_exact_evaluation",
]

_HOMES = {
    "MetaRLConfig": "mage_agents.training.config",
    "MetaRLTrainer": "mage_agents.training.trainer",
    "TrialEnvironment": "mage_agents.training.environment",
    "trial_environment": "mage_agents.training.environment",
    "kuhn_policy_table": "mage_agents.training.kuhn_policy",
    "kuhn_exact_evaluation": "mage_agents.training.kuhn_policy",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'mage_agents.training' has no attribute {name!r}")

"""Advantage estimators: how a batch of trials' rewards become one advantage per turn.

Each estimator is a pure numpy function ``f(trajectories, **settings) -> list[np.ndarray]``
(one array per trajectory, aligned with its turns), in its own module with its formula, a
worked example and the function that reads its settings from a training config: :func:`grpo`,
:func:`rloo`, :func:`gigpo`, :func:`lamer`, :func:`mage`, and :func:`rae` (SPIRAL's
role-conditioned baselines, the one estimator that keeps state across batches). Groups are read from
``Trajectory.group_id`` (MAGE's opponent groups from ``Turn.opponent``).

Every estimator is an entry of the one registry, :data:`ESTIMATORS` (:mod:`.registry`); the
trainer, ``MetaRLConfig`` and the CLI read it when they need it. :func:`estimate` runs one by
name (or any such function) and applies the invalid-answer penalty; adding an estimator is one
module and one :func:`register_estimator` call (docs/architecture.md, "Add an estimator").
"""

from __future__ import annotations

from mage_agents.advantages.gigpo import gigpo, gigpo_settings
from mage_agents.advantages.grpo import grpo, grpo_settings
from mage_agents.advantages.lamer import lamer, lamer_settings
from mage_agents.advantages.mage import mage, mage_settings
from mage_agents.advantages.rae import rae, rae_settings
from mage_agents.advantages.registry import (
    ESTIMATORS,
    Estimator,
    EstimatorEntry,
    config_settings,
    estimate,
    get_estimator,
    is_stateful,
    register_estimator,
)
from mage_agents.advantages.rloo import rloo, rloo_settings

__all__ = [
    "ESTIMATORS",
    "Estimator",
    "EstimatorEntry",
    "config_settings",
    "estimate",
    "get_estimator",
    "is_stateful",
    "register_estimator",
    "grpo",
    "rloo",
    "gigpo",
    "lamer",
    "mage",
    "rae",
]

register_estimator(
    "grpo",
    grpo,
    grpo_settings,
    description="trial return normalised in its group (GRPO)",
    grouped=True,
)
register_estimator(
    "rloo",
    rloo,
    rloo_settings,
    description="trial return minus the leave-one-out mean (RLOO)",
    grouped=True,
)
register_estimator(
    "gigpo",
    gigpo,
    gigpo_settings,
    description="episode term plus a step term grouped by anchor state (GiGPO)",
    grouped=True,
)
register_estimator(
    "lamer",
    lamer,
    lamer_settings,
    description="GiGPO's two terms over returns discounted across episodes (LaMer)",
    grouped=True,
)
register_estimator(
    "mage",
    mage,
    mage_settings,
    description="LaMer's over differential episode rewards, normalised per opponent (MAGE)",
    grouped=True,
)
register_estimator(
    "rae",
    rae,
    rae_settings,
    description="trial return minus a moving (EMA) baseline of its role's returns (SPIRAL)",
    stateful=True,
)

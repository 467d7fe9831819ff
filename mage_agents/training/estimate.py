"""From a config and the trials played to one advantage per model turn.

The estimators (:mod:`mage_agents.advantages`) are pure functions of the trajectories; this
module only passes each one its settings from :class:`~mage_agents.training.MetaRLConfig`.
``scale_advantages`` chooses the normalisation: ``"default"`` keeps each method's published one
(GRPO divides by the group std; GiGPO, LaMer and MAGE centre only, ``mean_norm``; RLOO is
leave-one-out), ``"group"`` divides by the group std, ``"none"`` centres only, and ``"batch"``
centres within groups and divides by the std of all the batch's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["turn_advantages"]


def _settings(config: Any) -> dict[str, Any]:
    scale = config.scale_advantages
    stats = config.statistics
    mode = "mean_std_norm" if scale == "group" else "mean_norm"
    two_terms = {"omega": config.omega, "mode": mode, "stats": stats}
    lamer = {"step_gamma": config.step_gamma, "traj_gamma": config.traj_gamma, **two_terms}
    return {
        "grpo": {"scale_std": scale in ("default", "group"), "stats": stats},
        "rloo": {"stats": stats},
        "gigpo": {"gamma": config.step_gamma, **two_terms},
        "lamer": lamer,
        "mage": {
            **lamer,
            "differential": config.differential_reward,
            "opponent_norm": config.opponent_normalization,
        },
    }[config.estimator]


def turn_advantages(
    config: Any,
    trajectories: Sequence[Any],
    total: Callable[[list[float]], list[float]] | None = None,
) -> list[np.ndarray]:
    """Return one advantage per turn of each trajectory, aligned with ``trajectory.turns``.

    ``total`` sums a few numbers over the processes of a run: with it, ``batch`` scaling divides
    by the std of the whole batch's rows, every process's (its groups are whole on one process).
    """
    from importlib import import_module

    estimator = getattr(
        import_module(f"mage_agents.advantages.{config.estimator}"), config.estimator
    )
    advantages = [
        np.asarray(a, dtype=np.float64) for a in estimator(trajectories, **_settings(config))
    ]
    if config.scale_advantages == "batch":
        flat = np.concatenate(advantages) if advantages else np.zeros(0)
        scale = float(flat.std()) if flat.size > 1 else 0.0
        if total is not None:
            scale = _pooled_std(flat, total)
        if scale > 1e-8:
            advantages = [a / scale for a in advantages]
    return advantages


def _pooled_std(values: np.ndarray, total: Callable[[list[float]], list[float]]) -> float:
    """The std of every process's ``values`` together (two passes, as ``numpy.std``)."""
    summed, count = total([float(values.sum()), float(values.size)])
    if count < 2:
        return 0.0
    mean = summed / count
    (squares,) = total([float(((values - mean) ** 2).sum())])
    return float(np.sqrt(squares / count))

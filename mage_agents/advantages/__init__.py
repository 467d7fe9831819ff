"""Advantage estimators: how a batch of trials' rewards become one advantage per turn.

Each estimator is a pure numpy function ``f(trajectories, **settings) -> list[np.ndarray]``
(one array per trajectory, aligned with its turns), in its own module with its formula and a
worked example: :func:`grpo`, :func:`rloo`, :func:`gigpo`, :func:`lamer`, :func:`mage`. Groups are
read from ``Trajectory.group_id`` (MAGE's opponent groups from ``Turn.opponent``).

:func:`estimate` looks an estimator up by name (or takes any such function), calls it, and
applies the invalid-answer penalty, once, here: ``A_t -= invalid_penalty`` on every turn whose
answer was invalid, after normalisation, so the penalty is never scaled away nor counted twice.
Envs may already charge a penalty in their rewards (``invalid_action_penalty=`` where the env is
made): set one of the two.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mage_agents.advantages.gigpo import gigpo
from mage_agents.advantages.grpo import grpo
from mage_agents.advantages.lamer import lamer
from mage_agents.advantages.mage import mage
from mage_agents.advantages.rloo import rloo

__all__ = ["ESTIMATORS", "Estimator", "get_estimator", "estimate", "grpo", "rloo", "gigpo"]
__all__ += ["lamer", "mage"]

Estimator = Callable[..., list[np.ndarray]]
"""``f(trajectories, **settings)`` -> one advantage array per trajectory, aligned with turns."""

ESTIMATORS: dict[str, Estimator] = {
    "grpo": grpo,
    "rloo": rloo,
    "gigpo": gigpo,
    "lamer": lamer,
    "mage": mage,
}
"""Estimator name -> function."""


def get_estimator(name_or_fn: str | Estimator) -> Estimator:
    """Return the estimator registered under a name, or the callable itself.

    Raises:
        ValueError: For an unknown name (the message lists the known ones).
        TypeError: For something that is neither a name nor a callable.

    Example:
        >>> get_estimator("lamer") is lamer
        True
        >>> get_estimator("ppo")
        Traceback (most recent call last):
        ...
        ValueError: Unknown advantage estimator 'ppo'. Known: grpo, rloo, gigpo, lamer, mage; ...
    """
    if callable(name_or_fn):
        return name_or_fn
    if isinstance(name_or_fn, str):
        if name_or_fn in ESTIMATORS:
            return ESTIMATORS[name_or_fn]
        raise ValueError(
            f"Unknown advantage estimator {name_or_fn!r}. Known: {', '.join(ESTIMATORS)}; "
            "or pass a function f(trajectories, **settings)."
        )
    raise TypeError(
        f"An estimator is a name ({', '.join(ESTIMATORS)}) or a function, "
        f"not {type(name_or_fn).__name__}."
    )


def estimate(
    name_or_fn: str | Estimator,
    trajectories: Sequence[Any],
    *,
    invalid_penalty: float = 0.0,
    **settings: Any,
) -> list[np.ndarray]:
    """Compute per-turn advantages for a batch of trajectories.

    Args:
        name_or_fn: An estimator name from :data:`ESTIMATORS`, or an estimator function.
        trajectories: The batch (:class:`~mage_agents.rollout.Trajectory` objects).
        invalid_penalty: Subtracted from the advantage of every invalid turn (non-negative).
        **settings: The estimator's own settings (``traj_gamma=0.9``, ``stats="trajectory"``...).

    Returns:
        Per trajectory, a float64 array with one advantage per turn (aligned with its turns).

    Raises:
        ValueError: For an unknown name, a negative penalty, or an estimator whose output does
            not match the turns; TypeError for settings the estimator does not take.

    Example:
        >>> from mage_agents.rollout import Trajectory
        >>> a = Trajectory.from_rewards([[1.0]], trial_id="a", invalid={(0, 0)})
        >>> b = Trajectory.from_rewards([[0.0]], trial_id="b")
        >>> [x.tolist() for x in estimate("rloo", [a, b], invalid_penalty=0.5)]
        [[0.5], [-1.0]]
    """
    if invalid_penalty < 0:
        raise ValueError(f"invalid_penalty must be non-negative, not {invalid_penalty}.")
    estimator = get_estimator(name_or_fn)
    advantages = estimator(trajectories, **settings)
    if len(advantages) != len(trajectories):
        raise ValueError(
            f"The estimator returned {len(advantages)} arrays for {len(trajectories)} trajectories."
        )
    for trajectory, values in zip(trajectories, advantages, strict=True):
        if np.shape(values) != (len(trajectory.turns),):
            raise ValueError(
                f"The estimator returned shape {np.shape(values)} for {trajectory.trial_id!r}, "
                f"which has {len(trajectory.turns)} turns."
            )
    if not trajectories:
        return []
    flat = np.concatenate([np.asarray(v, dtype=np.float64) for v in advantages])
    if invalid_penalty:
        turns = (turn for t in trajectories for turn in t.turns)
        flat -= invalid_penalty * np.fromiter((bool(t.invalid) for t in turns), float, len(flat))
    ends = np.cumsum([len(t.turns) for t in trajectories]).tolist()
    return [flat[end - len(t.turns) : end] for t, end in zip(trajectories, ends, strict=True)]

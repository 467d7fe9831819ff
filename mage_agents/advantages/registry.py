"""The estimator registry: every advantage estimator by name, and the one call that runs them.

Like Gymnasium's ``registry: dict[str, EnvSpec]``, :data:`ESTIMATORS` maps a name to an
:class:`EstimatorEntry` (the function and how a training config's fields become its settings),
and everything reads it at call time: :func:`estimate`, ``MetaRLConfig``'s check of
``estimator=``, the ``train`` command's ``--estimator`` choices and the docs. A name registered
from a user's package (:func:`register_estimator`) therefore works everywhere a built-in does.

:func:`estimate` looks an estimator up, calls it, checks what it returned (one array per
trajectory, one value per turn) and applies the batch scaling and the invalid-answer penalty,
once, here: ``A_t -= invalid_penalty`` on every turn whose answer was invalid, after
normalisation, so the penalty is never scaled away nor counted twice. Envs may already charge a
penalty in their rewards (``invalid_action_penalty=`` where the env is made): set one of the two.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "ESTIMATORS",
    "Estimator",
    "EstimatorEntry",
    "register_estimator",
    "get_estimator",
    "config_settings",
    "estimate",
    "is_stateful",
]

Estimator = Callable[..., list[np.ndarray]]
"""``f(trajectories, **settings)`` -> one advantage array per trajectory, aligned with turns."""

ConfigSettings = Callable[[Any], dict[str, Any]]
"""``f(config) -> settings``: the estimator's keyword arguments read from a training config."""

BATCH_STD_FLOOR = 1e-8
"""A batch whose advantages spread less than this is not rescaled (``batch_std``)."""


def _no_settings(config: Any) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class EstimatorEntry:
    """One registered estimator.

    Attributes:
        name: The name ``estimate`` and ``MetaRLConfig(estimator=...)`` take.
        fn: The estimator, ``fn(trajectories, **settings) -> list[np.ndarray]``.
        settings: ``settings(config) -> dict``: its keyword arguments from a training config
            (``MetaRLConfig``'s fields ``step_gamma``, ``statistics``, ...).
        description: What it does, in one line (for the docs).
        stateful: Whether it keeps state across batches (``fn`` takes ``state=``, a mapping it
            reads and updates in place; the trainer keeps it for the run and checkpoints it).
        grouped: Whether it compares each trial with the others of its group
            (``Trajectory.group_id``; mage's turns, with those against the same opponent): a
            trial alone gets zero advantages, and equal trials get equal ones.
    """

    name: str
    fn: Estimator
    settings: ConfigSettings = _no_settings
    description: str = ""
    stateful: bool = False
    grouped: bool = False

    def __call__(self, trajectories: Sequence[Any], **settings: Any) -> list[np.ndarray]:
        """Run the estimator (an entry can be called as its function)."""
        return self.fn(trajectories, **settings)


ESTIMATORS: dict[str, EstimatorEntry] = {}
"""Estimator name -> entry, in registration order (built in: grpo, rloo, gigpo, lamer, mage,
rae)."""


def register_estimator(
    name: str,
    fn: Estimator,
    settings: ConfigSettings | None = None,
    *,
    description: str = "",
    stateful: bool = False,
    grouped: bool = False,
) -> EstimatorEntry:
    """Make ``name`` an estimator for :func:`estimate`, ``MetaRLConfig`` and ``train --estimator``.

    Args:
        name: The estimator's name.
        fn: ``fn(trajectories, **settings) -> list[np.ndarray]``, one array per trajectory.
        settings: ``settings(config) -> dict``: the keyword arguments the trainer passes, read
            from its ``MetaRLConfig`` (default: none).
        description: One line for the docs.
        stateful: ``fn`` takes ``state=``, a mapping kept across batches (see
            :class:`EstimatorEntry`).
        grouped: ``fn`` compares each trial with its group (see :class:`EstimatorEntry`).

    Raises:
        TypeError: If ``fn`` or ``settings`` is not callable.
    """
    if not callable(fn) or (settings is not None and not callable(settings)):
        raise TypeError("register_estimator takes a function and a settings(config) function.")
    entry = EstimatorEntry(name, fn, settings or _no_settings, description, stateful, grouped)
    ESTIMATORS[name] = entry
    return entry


def _entry(name: str) -> EstimatorEntry:
    if name in ESTIMATORS:
        return ESTIMATORS[name]
    raise ValueError(
        f"Unknown advantage estimator {name!r}. Known: {', '.join(ESTIMATORS)}; register one "
        "with register_estimator, or pass a function f(trajectories, **settings)."
    )


def get_estimator(name_or_fn: str | Estimator) -> Estimator:
    """Return the estimator registered under a name, or the callable itself.

    Raises:
        ValueError: For an unknown name (the message lists the known ones).
        TypeError: For something that is neither a name nor a callable.

    Example:
        >>> from mage_agents.advantages import lamer
        >>> get_estimator("lamer") is lamer
        True
        >>> get_estimator("ppo")
        Traceback (most recent call last):
        ...
        ValueError: Unknown advantage estimator 'ppo'. Known: grpo, rloo, gigpo, lamer, mage, rae...
    """
    if isinstance(name_or_fn, str):
        return _entry(name_or_fn).fn
    if callable(name_or_fn):
        return name_or_fn
    raise TypeError(
        f"An estimator is a name ({', '.join(ESTIMATORS)}) or a function, "
        f"not {type(name_or_fn).__name__}."
    )


def is_stateful(name: str) -> bool:
    """Whether the estimator ``name`` keeps state across batches (it takes ``state=``).

    Raises:
        ValueError: For an unknown name.
    """
    return _entry(name).stateful


def config_settings(name: str, config: Any) -> dict[str, Any]:
    """Return the settings ``config`` gives the estimator ``name`` (its entry's ``settings``).

    Raises:
        ValueError: For an unknown name.
    """
    return dict(_entry(name).settings(config))


def estimate(
    name_or_fn: str | Estimator,
    trajectories: Sequence[Any],
    *,
    invalid_penalty: float = 0.0,
    batch_std: bool = False,
    pooled: Callable[[list[float]], list[float]] | None = None,
    **settings: Any,
) -> list[np.ndarray]:
    """Compute per-turn advantages for a batch of trajectories.

    Args:
        name_or_fn: An estimator name from :data:`ESTIMATORS`, or an estimator function.
        trajectories: The batch (:class:`~mage_agents.rollout.Trajectory` objects).
        invalid_penalty: Subtracted from the advantage of every invalid turn (non-negative).
        batch_std: Divide every advantage by the std of all the batch's rows (the estimator's
            own normalisation having centred them), before the penalty.
        pooled: Sums a list of numbers over the processes of a run (each holding whole groups):
            with ``batch_std``, the std is then of every process's rows together.
        **settings: The estimator's own settings (``traj_gamma=0.9``, ``stats="trajectory"``...).

    Returns:
        Per trajectory, a float64 array with one advantage per turn (aligned with its turns).

    Raises:
        ValueError: For an unknown name, a negative penalty, an ``incomplete`` trajectory (the
            backend gave no answer: no result of the policy's), or an estimator whose output
            does not match the turns; TypeError for settings the estimator does not take.

    Example:
        >>> from mage_agents.rollout import Trajectory
        >>> a = Trajectory.from_rewards([[1.0]], trial_id="a", invalid={(0, 0)})
        >>> b = Trajectory.from_rewards([[0.0]], trial_id="b")
        >>> [x.tolist() for x in estimate("rloo", [a, b], invalid_penalty=0.5)]
        [[0.5], [-1.0]]
    """
    if invalid_penalty < 0:
        raise ValueError(f"invalid_penalty must be non-negative, not {invalid_penalty}.")
    failed = [t.trial_id for t in trajectories if getattr(t, "incomplete", False)]
    if failed:
        raise ValueError(
            f"Trajectories {', '.join(map(str, failed[:3]))} are incomplete (the backend gave no "
            "answer); they are no result of the policy's and cannot be given advantages."
        )
    estimator = get_estimator(name_or_fn)
    advantages = estimator(trajectories, **settings)
    _check_shapes(advantages, trajectories)
    if not trajectories and pooled is None:  # with pooled, the others wait for this one's sums
        return []
    flat = np.concatenate([np.zeros(0), *(np.asarray(v, dtype=np.float64) for v in advantages)])
    if batch_std and (flat.size > 1 or pooled is not None):
        spread = float(flat.std()) if pooled is None else _pooled_std(flat, pooled)
        if spread > BATCH_STD_FLOOR:
            flat /= spread
    if invalid_penalty:
        turns = (turn for t in trajectories for turn in t.turns)
        flat -= invalid_penalty * np.fromiter((bool(t.invalid) for t in turns), float, len(flat))
    ends = np.cumsum([len(t.turns) for t in trajectories]).tolist()
    return [flat[end - len(t.turns) : end] for t, end in zip(trajectories, ends, strict=True)]


def _pooled_std(values: np.ndarray, total: Callable[[list[float]], list[float]]) -> float:
    """The std of every process's ``values`` together (two passes, as ``numpy.std``)."""
    summed, count = total([float(values.sum()), float(values.size)])
    if count < 2:
        return 0.0
    mean = summed / count
    (squares,) = total([float(((values - mean) ** 2).sum())])
    return float(np.sqrt(squares / count))


def _check_shapes(advantages: Sequence[Any], trajectories: Sequence[Any]) -> None:
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

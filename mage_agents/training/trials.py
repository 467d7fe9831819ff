"""What a training run plays: its trial settings, their planner, and a check before anything loads.

Light (no torch, no TRL): the command line reads a config's trial settings with it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mage_agents.rollout.plan import TrialPlanner
from mage_envs.meta import TrialConfig

__all__ = ["TRAINING_TRIAL", "training_trial", "env_kwargs_of", "trial_planner", "check_trials"]

TRAINING_TRIAL: Mapping[str, Any] = {"stop_on_success": True}
"""What the trials of training change in :class:`~mage_envs.meta.TrialConfig`'s defaults: they
stop at the first success, as LaMer's and MAGE's rollout loops do (a ``trial:`` mapping is read
over these; a ready ``TrialConfig`` is taken as it is)."""


def training_trial(value: Any) -> TrialConfig:
    """Return the trial settings of a training config.

    A ``TrialConfig`` is taken as it is; a mapping (or its YAML text) is read over
    :data:`TRAINING_TRIAL`.

    Raises:
        ValueError: For a key that is no trial setting, or a bad value (both named).

    Example:
        >>> training_trial({"num_episodes": 2}).stop_on_success
        True
    """
    if isinstance(value, TrialConfig):
        return value
    if isinstance(value, str):
        from mage_agents.yaml_bounds import load_yaml

        value = load_yaml(value) if value.strip() else {}
    if not isinstance(value, Mapping):
        raise ValueError(
            f"trial must be a mapping of trial settings (TrialConfig's), not {value!r}."
        )
    return TrialConfig.from_mapping({**TRAINING_TRIAL, **value})


def env_kwargs_of(config: Any, *, evaluation: bool = False) -> dict[str, Any]:
    """The env's keyword arguments of ``config``'s trials (its penalty, if set, included).

    ``invalid_action_penalty`` goes to the env where it takes one (the suite's envs), else to
    the text conversion (:func:`mage_envs.make_trial` routes it). With ``evaluation``,
    ``config.evaluation_env_kwargs`` is set over ``env_kwargs`` (the held-out split, e.g.).
    """
    kwargs = dict(config.env_kwargs)
    if evaluation:
        kwargs.update(config.evaluation_env_kwargs)
    if config.invalid_action_penalty is not None:
        kwargs["invalid_action_penalty"] = config.invalid_action_penalty
    return kwargs


def trial_planner(config: Any, *, evaluation: bool = False, **settings: Any) -> TrialPlanner:
    """The planner of the trials ``config`` plays (training and evaluation alike).

    Args:
        config: A :class:`~mage_agents.training.MetaRLConfig`.
        evaluation: Plan the evaluation's trials (``evaluation_env_kwargs`` set over the env's).
        **settings: :class:`~mage_agents.rollout.TrialPlanner` fields to set (``stream``, ...).
    """
    kwargs = env_kwargs_of(config, evaluation=evaluation)
    return TrialPlanner(config.env_id, config.opponent, kwargs, config.trial, **settings)


def check_trials(config: Any) -> None:
    """Build and reset one trial of ``config``'s env, so a bad setting fails at once.

    The evaluation's trials are checked too where ``evaluation_env_kwargs`` changes them.

    Raises:
        ValueError: For an unknown env id, env keyword argument or opponent, with the reason
            (before any model loads or any step runs).
    """
    _check_trial(config, evaluation=False)
    if config.evaluation_env_kwargs:
        _check_trial(config, evaluation=True)


def _check_trial(config: Any, *, evaluation: bool) -> None:
    import gymnasium as gym

    from mage_agents.rollout.plan import make_trial_env

    plan = trial_planner(config, evaluation=evaluation).plan(config.task_seed, 0)
    which = "evaluation trials" if evaluation else "trials"
    try:
        env = make_trial_env(plan)
    except gym.error.Error as error:
        raise ValueError(f"env_id {config.env_id!r}: {error}") from error
    except (TypeError, KeyError, ValueError) as error:
        raise ValueError(
            f"The {which} of {config.env_id!r} cannot be made with these settings "
            f"(env_kwargs {plan.env_kwargs}, opponent {config.opponent!r}): "
            f"{str(error).split(' was raised from')[0]}"
        ) from error
    try:
        env.reset(seed=config.task_seed)
    finally:
        env.close()

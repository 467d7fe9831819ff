"""Which trials to play: :class:`TrialPlan` and the groups a trainer compares.

A group is K trials of the same task seed and the same opponent draw (the trial wrapper draws the
opponent from the trial's seed), played by the same policy with different agent seeds. The engine
accepts any object with the attributes of :class:`TrialPlan` that it reads (``trial_id``,
``group_id``, ``task_seed``, ``seed``); the runner's ``TrialSpec`` is one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mage_envs.seeds import child_seed

__all__ = ["TrialPlan", "PlannedTrial", "plan_groups", "make_trial_env"]


class PlannedTrial(Protocol):
    """What the engine reads of a planned trial."""

    trial_id: str
    task_seed: int
    seed: int

    @property
    def group_id(self) -> str:
        """The trial's group."""


@dataclass(frozen=True)
class TrialPlan:
    """One trial to play.

    Attributes:
        trial_id: Unique id of the trial.
        group_id: Trials with the same group id share the task seed and the opponent draw.
        env_id: The Gymnasium id of the inner env.
        task_seed: The trial wrapper's reset seed: the task (deal, level, opponent draw).
        seed: Seeds the agent (``agent.reset(seed)``).
        opponent: The opponent spec, or ``None`` for the env's default.
        num_episodes: Episodes (attempts) per trial.
        env_kwargs: Extra keyword arguments for the env.
        trial_kwargs: Extra keyword arguments for the trial wrapper.
    """

    trial_id: str
    group_id: str
    env_id: str
    task_seed: int
    seed: int
    opponent: str | None = None
    num_episodes: int = 3
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    trial_kwargs: dict[str, Any] = field(default_factory=dict)


def plan_groups(
    env_id: str,
    task_seeds: Sequence[int],
    group_size: int,
    *,
    opponent: str | None = None,
    num_episodes: int = 3,
    env_kwargs: dict[str, Any] | None = None,
    trial_kwargs: dict[str, Any] | None = None,
    seed: int = 0,
) -> list[TrialPlan]:
    """Plan ``group_size`` trials for each task seed, one group per task seed.

    The group id is ``"{env_id}|{opponent}|task{task_seed}"``, followed by ``"|"`` and a digest
    of ``env_kwargs`` and ``trial_kwargs`` when any is given, so that the plans of several calls
    can be played and compared together.

    Args:
        env_id: The env to play.
        task_seeds: One group per seed (the trial wrapper's reset seed).
        group_size: Trials per group (K); they differ only in their agent seed.
        opponent: The opponent spec (a name or a population preset), or ``None``.
        num_episodes: Episodes per trial.
        env_kwargs: Extra keyword arguments for the env.
        trial_kwargs: Extra keyword arguments for the trial wrapper.
        seed: Mixed into every agent seed, so that two training steps over the same task seeds
            sample differently.

    Raises:
        ValueError: For a group size or episode count below 1, a negative task seed, or a task
            seed given twice.

    Example:
        >>> plans = plan_groups("mage/KuhnPoker-v0", [7, 8], group_size=2, opponent="aggressive")
        >>> [(p.group_id, p.trial_id[-2:]) for p in plans][:2]
        [('mage/KuhnPoker-v0|aggressive|task7', 'r0'), ('mage/KuhnPoker-v0|aggressive|task7', 'r1')]
    """
    if group_size < 1 or num_episodes < 1:
        raise ValueError("group_size and num_episodes must be at least 1.")
    env_kwargs, trial_kwargs = dict(env_kwargs or {}), dict(trial_kwargs or {})
    tag = _settings_tag(env_kwargs, trial_kwargs)
    plans, seen = [], set()
    for task_seed in task_seeds:
        if int(task_seed) < 0:
            raise ValueError(f"Task seeds must be non-negative, not {task_seed}.")
        if int(task_seed) in seen:
            raise ValueError(
                f"The task seed {task_seed} is given twice: its trials would repeat the same "
                "trial ids and agent seeds. Give each task once (group_size sets K)."
            )
        seen.add(int(task_seed))
        group_id = f"{env_id}|{opponent}|task{int(task_seed)}{tag}"
        for k in range(group_size):
            agent_seed = child_seed(int(seed), int(task_seed), k)
            plans.append(
                TrialPlan(
                    trial_id=f"{group_id}|s{seed}|r{k}",
                    group_id=group_id,
                    env_id=env_id,
                    task_seed=int(task_seed),
                    seed=agent_seed,
                    opponent=opponent,
                    num_episodes=num_episodes,
                    env_kwargs=dict(env_kwargs),
                    trial_kwargs=dict(trial_kwargs),
                )
            )
    return plans


def _settings_tag(env_kwargs: dict[str, Any], trial_kwargs: dict[str, Any]) -> str:
    """``""`` without extra settings, else ``"|"`` and a short digest of them.

    The same task seed under other env or trial settings is another task (another level
    generator, another seat draw): such trials must not share a group, nor trial ids.
    """
    if not env_kwargs and not trial_kwargs:
        return ""
    text = json.dumps([env_kwargs, trial_kwargs], sort_keys=True, default=repr)
    return "|" + hashlib.sha256(text.encode()).hexdigest()[:10]


def make_trial_env(plan: Any) -> Any:
    """Build the trial env of a plan with :func:`mage_envs.make_trial`.

    ``plan`` needs ``env_id``, ``num_episodes``, ``opponent``, ``env_kwargs`` and
    ``trial_kwargs`` (a :class:`TrialPlan` or the runner's ``TrialSpec``).
    """
    from mage_envs import make_trial

    kwargs = dict(plan.env_kwargs)
    if plan.opponent is not None:
        kwargs["opponent"] = plan.opponent
    return make_trial(plan.env_id, num_episodes=plan.num_episodes, **plan.trial_kwargs, **kwargs)

"""Which trials to play: the one :class:`TrialPlan` type and the one planner, made on demand.

- :class:`TrialPlan`: one trial: its ids, env, opponent, task seed, agent seed and the
  :class:`~mage_envs.meta.TrialConfig` it is played with.
- :func:`group_id`: the one group id. A group is the trials an estimator compares with each
  other: the same env, opponent, task seed (the deal, the level, the opponent draw) and settings,
  played by the same policy with different agent seeds.
- :func:`agent_seed`: the seeding rule of :mod:`mage_envs.seeds` for agents: by position,
  ``child_seed(task_seed, repeat, *stream)``; ``stream`` tells apart the plans of different
  callers (a training step, a process) and is empty for an evaluation.
- :class:`TrialPlanner`: the plans of one (env, opponent, settings), each made when asked for.
- :class:`TrialPlans`: the runner's plan, a lazy sequence over planners, tasks and repeats: it
  has a length and an order, and tells where a trial id stands in it, without holding a plan.
- :func:`plan_groups`: ``K`` trials per listed task seed, as a list (trainers, benchmarks).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, overload

from mage_envs.meta import TrialConfig
from mage_envs.seeds import child_seed

__all__ = [
    "TrialPlan",
    "TrialPlanner",
    "TrialPlans",
    "agent_seed",
    "group_id",
    "settings_digest",
    "plan_groups",
    "with_trial",
    "make_trial_env",
]


@dataclass(frozen=True, slots=True)
class TrialPlan:
    """One trial to play.

    Attributes:
        trial_id: Unique id of the trial (the key of a results file).
        group_id: Trials with the same group id share their task and are compared with each other
            (see :func:`group_id`).
        env_id: The Gymnasium id of the inner env.
        task_seed: The trial wrapper's reset seed: the task (deal, level, opponent draw).
        seed: Seeds the agent (``agent.reset(seed)``; see :func:`agent_seed`).
        opponent: The opponent spec, or ``None`` for the env's default.
        env_kwargs: Extra keyword arguments for the env.
        trial: How the trial runs (episodes, memory, ...).
        agent: The agent's name, where the plan names one (the runner's plans).
        repeat: Index of this trial among the trials of its task.
    """

    trial_id: str
    group_id: str
    env_id: str
    task_seed: int
    seed: int
    opponent: str | None = None
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    trial: TrialConfig = field(default_factory=TrialConfig)
    agent: str | None = None
    repeat: int = 0

    @property
    def env_key(self) -> str:
        """What the trial env is built from: all but the task and the seeds (a JSON string).

        Trials with the same key can play on one env in turn, each reset with its own
        ``task_seed`` (:class:`~mage_agents.rollout.LocalEnvs` reuses envs by it).
        """
        settings = [self.env_id, self.opponent, self.env_kwargs, self.trial.non_defaults()]
        return json.dumps(settings, sort_keys=True, default=repr)

    @property
    def num_episodes(self) -> int:
        """Episodes (attempts) per trial: the trial config's."""
        return self.trial.num_episodes

    @property
    def task(self) -> str:
        """The task key shared by the repeats of the same task."""
        return f"{self.env_id}|{self.opponent}|{self.task_seed}"


def settings_digest(
    env_kwargs: Mapping[str, Any],
    trial_settings: Mapping[str, Any],
    agent_settings: Mapping[str, Any] | None = None,
) -> str:
    """A short digest of the settings that make a task seed another task, or a trial another.

    Example:
        >>> settings_digest({}, {})
        '452cedd0b5'
    """
    settings: dict[str, Any] = {"env": dict(env_kwargs), "trial": dict(trial_settings)}
    if agent_settings:
        settings["agent"] = dict(agent_settings)
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def group_id(
    env_id: str, opponent: str | None, task_seed: int, digest: str = "", scope: str = ""
) -> str:
    """The id of a group: ``[scope|]env|opponent|task<seed>[|digest]``.

    Args:
        env_id: The env played.
        opponent: The opponent spec (``None``: the env's default).
        task_seed: The task.
        digest: The settings' digest (:func:`settings_digest`), when any setting is not the
            default: the same seed under other settings is another task.
        scope: Keeps apart groups that share all the above but must not be compared (two
            groups of one training batch).

    Example:
        >>> group_id("mage/KuhnPoker-v0", "aggressive", 7)
        'mage/KuhnPoker-v0|aggressive|task7'
    """
    base = f"{env_id}|{opponent}|task{int(task_seed)}" + (f"|{digest}" if digest else "")
    return f"{scope}|{base}" if scope else base


def agent_seed(task_seed: int, repeat: int, stream: Sequence[int] = ()) -> int:
    """The agent seed of a trial: ``child_seed(task_seed, repeat, *stream)`` (by position).

    Example:
        >>> agent_seed(4, 1) == agent_seed(4, 1, ()) != agent_seed(4, 1, (5,))
        True
    """
    return child_seed(int(task_seed), int(repeat), *stream)


@dataclass(frozen=True)
class TrialPlanner:
    """The plans of one env, opponent and set of settings, each made when it is asked for.

    Attributes:
        env_id: The env to play.
        opponent: The opponent spec (a name or a population preset), or ``None``.
        env_kwargs: Extra keyword arguments for the env.
        trial: The trial settings.
        agent: The agent's name: trial ids are then the runner's,
            ``agent|env|opponent|n<N>|<digest>|task<seed>|r<repeat>``, whose digest covers the
            env, trial and ``agent_settings``. Without it a trial id is its group id, the stream
            and the repeat.
        agent_settings: The agent's settings that change how it plays (in the digest of ids).
        stream: Mixed into every agent seed (:func:`agent_seed`) and trial id.
        scope: The groups' scope (:func:`group_id`).

    Raises:
        TypeError: For trial settings that are no ``TrialConfig``.
        ValueError: For a negative stream entry.
    """

    env_id: str
    opponent: str | None = None
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    trial: TrialConfig = field(default_factory=TrialConfig)
    agent: str | None = None
    agent_settings: Mapping[str, Any] | None = None
    stream: tuple[int, ...] = ()
    scope: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.trial, TrialConfig):  # made once, by whoever read the settings
            raise TypeError(f"A planner's trial is a TrialConfig, not {self.trial!r}.")
        object.__setattr__(self, "env_kwargs", dict(self.env_kwargs))
        object.__setattr__(self, "stream", tuple(int(s) for s in self.stream))
        if any(s < 0 for s in self.stream):
            raise ValueError(f"A plan's stream is non-negative integers, not {self.stream}.")

    @cached_property
    def _group_digest(self) -> str:
        changed = self.trial.non_defaults()
        if not self.env_kwargs and not changed:
            return ""
        return settings_digest(self.env_kwargs, changed)

    @cached_property
    def prefix(self) -> str:
        """What the trial ids of this planner start with (the runner's config key)."""
        if self.agent is None:
            return ""
        changed = self.trial.non_defaults()
        changed.pop("num_episodes", None)  # the id names it: n<N>
        digest = settings_digest(self.env_kwargs, changed, self.agent_settings)
        n = self.trial.num_episodes
        return f"{self.agent}|{self.env_id}|{self.opponent}|n{n}|{digest}"

    def group_id(self, task_seed: int, scope: str | None = None) -> str:
        """The group of the trials of ``task_seed`` (in this planner's scope, or ``scope``)."""
        scope = self.scope if scope is None else scope
        return group_id(self.env_id, self.opponent, task_seed, self._group_digest, scope)

    def trial_id(self, task_seed: int, repeat: int, scope: str | None = None) -> str:
        """The id of trial ``repeat`` of task ``task_seed``."""
        if self.agent is not None:
            return f"{self.prefix}|task{int(task_seed)}|r{int(repeat)}"
        stream = f"|s{'.'.join(map(str, self.stream))}" if self.stream else ""
        return f"{self.group_id(task_seed, scope)}{stream}|r{int(repeat)}"

    def plan(
        self, task_seed: int, repeat: int, *, trial_id: str | None = None, scope: str | None = None
    ) -> TrialPlan:
        """The plan of trial ``repeat`` of task ``task_seed`` (``trial_id``: another id).

        Raises:
            ValueError: For a negative task seed or repeat.
        """
        task_seed, repeat = int(task_seed), int(repeat)
        if task_seed < 0 or repeat < 0:
            raise ValueError(f"Task seeds and repeats are non-negative, not {task_seed}, {repeat}.")
        return TrialPlan(
            trial_id=self.trial_id(task_seed, repeat, scope) if trial_id is None else trial_id,
            group_id=self.group_id(task_seed, scope),
            env_id=self.env_id,
            task_seed=task_seed,
            seed=agent_seed(task_seed, repeat, self.stream),
            opponent=self.opponent,
            env_kwargs=self.env_kwargs,  # one copy shared by the plans: never changed
            trial=self.trial,
            agent=self.agent,
            repeat=repeat,
        )


class TrialPlans(Sequence[TrialPlan]):
    """Every trial of a run, in a fixed order, each plan made when it is asked for.

    Planner after planner, task after task (``first_task``, ``first_task + 1``, ...), repeat
    after repeat. The order, the length and where a trial id stands (:meth:`position`) are
    known without making a plan, so a plan of ten trillion trials costs nothing until played.

    Args:
        planners: One per (env, opponent) pair, each naming its agent (trial ids are the
            runner's, so they tell their position).
        first_task: The first task seed.
        tasks: Tasks per planner.
        repeats: Trials per task.

    Raises:
        ValueError: For a count below 1, a negative first task, a planner without an agent, or
            two planners with the same trial ids.

    Example:
        >>> plans = TrialPlans([TrialPlanner("mage/KuhnPoker-v0", agent="a")], 5, tasks=3)
        >>> len(plans), plans[1].task_seed, plans.position(plans[2].trial_id)
        (3, 6, 2)
    """

    def __init__(
        self, planners: Sequence[TrialPlanner], first_task: int, tasks: int, repeats: int = 1
    ) -> None:
        if tasks < 1 or repeats < 1:
            raise ValueError("tasks and repeats must all be at least 1.")
        if first_task < 0:
            raise ValueError(f"seed must be a non-negative integer, not {first_task}.")
        if any(p.agent is None for p in planners):
            raise ValueError("The planners of a run name their agent (its trial ids need it).")
        self.planners = list(planners)
        self.first_task, self.tasks, self.repeats = int(first_task), int(tasks), int(repeats)
        self._index = {p.prefix: i for i, p in enumerate(self.planners)}
        if len(self._index) != len(self.planners):
            raise ValueError("Two planners of one run plan the same trial ids.")

    def __len__(self) -> int:
        return len(self.planners) * self.tasks * self.repeats

    @overload
    def __getitem__(self, index: int) -> TrialPlan: ...

    @overload
    def __getitem__(self, index: slice) -> list[TrialPlan]: ...

    def __getitem__(self, index: int | slice) -> TrialPlan | list[TrialPlan]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("TrialPlans index out of range.")
        pair, rest = divmod(index, self.tasks * self.repeats)
        task, repeat = divmod(rest, self.repeats)
        return self.planners[pair].plan(self.first_task + task, repeat)

    def __iter__(self) -> Iterator[TrialPlan]:
        for planner in self.planners:
            for task in range(self.first_task, self.first_task + self.tasks):
                for repeat in range(self.repeats):
                    yield planner.plan(task, repeat)

    @property
    def prefixes(self) -> list[str]:
        """The trial-id prefixes of the run (one per planner: its config key)."""
        return list(self._index)

    def position(self, trial_id: str) -> int | None:
        """Where ``trial_id`` stands in the plan, or ``None`` if it is not one of its trials."""
        prefix, _, rest = trial_id.rpartition("|task")
        pair = self._index.get(prefix)
        task, sep, repeat = rest.partition("|r")
        if pair is None or not sep or not _canonical(task) or not _canonical(repeat):
            return None
        task_index, repeat = int(task) - self.first_task, int(repeat)
        if not (0 <= task_index < self.tasks and repeat < self.repeats):
            return None
        return (pair * self.tasks + task_index) * self.repeats + repeat


def _canonical(number: str) -> bool:
    """Whether ``number`` is a non-negative integer as a trial id writes it (no leading 0)."""
    return number.isdigit() and str(int(number)) == number


def plan_groups(
    env_id: str,
    task_seeds: Sequence[int],
    group_size: int,
    *,
    opponent: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    trial: TrialConfig | Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> list[TrialPlan]:
    """Plan ``group_size`` trials for each task seed, one group per task seed.

    The group id is :func:`group_id`'s, ``"{env_id}|{opponent}|task{task_seed}"`` followed by
    ``"|"`` and a digest of ``env_kwargs`` and the trial's non-default settings when there are
    any, so that the plans of several calls can be played and compared together.

    Args:
        env_id: The env to play.
        task_seeds: One group per seed (the trial wrapper's reset seed).
        group_size: Trials per group (K); they differ only in their agent seed.
        opponent: The opponent spec (a name or a population preset), or ``None``.
        env_kwargs: Extra keyword arguments for the env.
        trial: The trial settings (a ``TrialConfig`` or a mapping of its settings).
        seed: Mixed into every agent seed and trial id, so that two training steps over the same
            task seeds sample differently (``None``: the evaluation's agent seeds).

    Raises:
        ValueError: For a group size below 1, a negative task seed, or a task seed given twice.

    Example:
        >>> plans = plan_groups("mage/KuhnPoker-v0", [7, 8], group_size=2, opponent="aggressive")
        >>> [(p.group_id, p.trial_id[-2:]) for p in plans][:2]
        [('mage/KuhnPoker-v0|aggressive|task7', 'r0'), ('mage/KuhnPoker-v0|aggressive|task7', 'r1')]
    """
    if group_size < 1:
        raise ValueError("group_size must be at least 1.")
    if not isinstance(trial, TrialConfig):
        trial = TrialConfig.from_mapping(trial or {})
    planner = TrialPlanner(
        env_id,
        opponent,
        env_kwargs or {},
        trial,
        stream=() if seed is None else (int(seed),),
    )
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
        plans += [planner.plan(task_seed, k) for k in range(group_size)]
    return plans


def with_trial(plan: TrialPlan, **settings: Any) -> TrialPlan:
    """Return ``plan`` with some trial settings changed (its ids unchanged).

    Example:
        >>> (plan,) = plan_groups("mage/KuhnPoker-v0", [0], 1)
        >>> with_trial(plan, num_episodes=1).num_episodes
        1
    """
    return replace(plan, trial=replace(plan.trial, **settings))


def make_trial_env(plan: TrialPlan) -> Any:
    """Build the trial env of a plan with :func:`mage_envs.make_trial`."""
    from mage_envs import make_trial

    kwargs = dict(plan.env_kwargs)
    if plan.opponent is not None:
        kwargs["opponent"] = plan.opponent
    return make_trial(plan.env_id, config=plan.trial, **kwargs)

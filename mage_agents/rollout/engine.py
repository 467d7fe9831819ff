"""The lockstep rollout engine: many trials in batches, one batched model call per step.

:func:`rollout` keeps up to ``batch_size`` trials running. Each step, every running trial's agent
answers at once (:func:`~mage_agents.base.act_batch`: prompting agents sharing a backend cost one
batched ``generate``), every env is stepped, and each finished trial is yielded as a
:class:`~mage_agents.rollout.Trajectory` while its slot takes the next planned trial. The runner
(evaluation) and the trainer both collect their trials here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from mage_agents.base import Agent, Reply, act_batch
from mage_agents.rollout.envs import LocalEnvs, StepResult, WorkerEnvs
from mage_agents.rollout.plan import make_trial_env
from mage_agents.rollout.types import Trajectory, Turn
from mage_envs.meta.trial import TrialResult
from mage_envs.parsing import extract_tagged, normalize, parse_action

__all__ = ["rollout", "collect", "MAX_STEPS_PER_TRIAL", "shown_move"]

MAX_STEPS_PER_TRIAL = 10_000
"""A trial that has not ended after this many steps is stopped (``Trajectory.step_limit``)."""

INVALID_MOVE = "<invalid>"
"""``Turn.move`` of an answer the env rejected."""


def shown_move(text: str, info: dict[str, Any], accepted: bool) -> str:
    """The legal move read from ``text``, by its listed name; ``"<invalid>"`` if rejected.

    An answer the env accepted through one of its aliases (``pass`` for ``check``) is shown as
    written, normalised, since the aliases are the env's own.

    Example:
        >>> shown_move("<action>Bet</action>", {"legal_actions": ["check", "bet"]}, True)
        'bet'
    """
    if not accepted:
        return INVALID_MOVE
    legal = list(info.get("legal_actions") or [])
    index = parse_action(text, legal)
    return legal[index] if index is not None else normalize(extract_tagged(text))[:80]


@dataclass
class _Live:
    """A trial being played in one slot."""

    trial: Any
    agent: Agent
    observation: str
    info: dict[str, Any]
    started: float
    turns: list[Turn] = field(default_factory=list)
    reflections: int = 0


def _name(value: Any) -> str | None:
    return None if value is None else str(value)


def _group_id(trial: Any) -> str:
    group = getattr(trial, "group_id", None)
    return str(group) if group is not None else str(trial.trial_id)


def _turn(live: _Live, reply: Reply, result: StepResult) -> Turn:
    """The turn of one step: the info before the step says what was asked, after what happened."""
    info, new_info = live.info, result[4]
    play = info.get("phase") != "reflect"
    index = info.get("episode_index")
    episode = int(index) if isinstance(index, int) else live.reflections
    step = info.get("step_in_episode")
    invalid = play and bool(new_info.get("invalid_action"))
    anchor = info.get("inner_observation") if play else None
    return Turn(
        trial_id=str(live.trial.trial_id),
        group_id=_group_id(live.trial),
        episode=episode,
        step=int(step) if isinstance(step, int) else len(live.turns),
        phase="play" if play else "reflect",
        observation=str(live.observation),
        action=reply.text,
        move=shown_move(reply.text, info, not invalid) if play else None,
        anchor=None if anchor is None else str(anchor),
        reward=float(result[1]),
        invalid=invalid,
        opponent=_name(info.get("opponent")),
        seat=_name(info.get("seat")),
        error=reply.error,
        prompt_tokens=int(reply.prompt_tokens),
        completion_tokens=int(reply.completion_tokens),
        prompt_ids=None if reply.prompt_ids is None else list(reply.prompt_ids),
        completion_ids=None if reply.completion_ids is None else list(reply.completion_ids),
        logprobs=None if reply.logprobs is None else [float(x) for x in reply.logprobs],
    )


def _json_scalars(info: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``info`` that are JSON scalars or flat lists of them."""
    scalar = (str, int, float, bool, type(None))
    kept = {}
    for key, value in info.items():
        if key == "trial":
            continue
        if isinstance(value, scalar) or (
            isinstance(value, list | tuple) and all(isinstance(v, scalar) for v in value)
        ):
            kept[str(key)] = list(value) if isinstance(value, list | tuple) else value
    return kept


def _trajectory(live: _Live, trial_figures: dict[str, Any] | None, limited: bool) -> Trajectory:
    figures = live.info.get("trial")
    if figures is None and limited:
        figures = trial_figures  # stopped by the step limit: the episodes so far
    if figures is None:
        raise RuntimeError(
            f"{getattr(live.trial, 'env_id', 'the env')}: the trial ended without "
            "info['trial']; is it a MetaEpisodeWrapper?"
        )
    return Trajectory(
        trial_id=str(live.trial.trial_id),
        group_id=_group_id(live.trial),
        turns=live.turns,
        result=TrialResult.from_info(figures),
        final_info=_json_scalars(live.info),
        step_limit=limited,
        wall_s=round(time.perf_counter() - live.started, 6),
    )


def _start(
    envs: Any, items: list[tuple[int, Any]], slots: list[Agent], make_env: Callable[[Any], Any]
) -> list[_Live]:
    """Start the trials of ``items`` (``(slot, trial)`` pairs) with the slots' agents."""
    for slot, trial in items:
        slots[slot].reset(trial.seed)
    started = envs.start(items, make_env)
    live = []
    for (slot, trial), (observation, info) in zip(items, started, strict=True):
        agent = slots[slot]
        if callable(getattr(agent, "bind", None)):
            agent.bind(envs.env(slot))
        live.append(_Live(trial, agent, observation, dict(info), time.perf_counter()))
    return live


def rollout(
    trials: Sequence[Any],
    new_agent: Callable[[], Agent],
    *,
    batch_size: int = 1,
    make_env: Callable[[Any], Any] = make_trial_env,
    env_workers: int | WorkerEnvs = 0,
    max_steps: int = MAX_STEPS_PER_TRIAL,
) -> Iterator[Trajectory]:
    """Play ``trials``, up to ``batch_size`` at once, yielding each trajectory when it ends.

    Args:
        trials: Planned trials (:class:`~mage_agents.rollout.TrialPlan`, the runner's specs, or
            anything with ``trial_id``, ``group_id``, ``task_seed`` and ``seed``).
        new_agent: Builds one agent per slot; each is reset with the trial's seed before it.
        batch_size: Trials stepped together (one batched generation per step).
        make_env: Builds a trial env (a ``MetaEpisodeWrapper``) from a planned trial.
        env_workers: 0: step the envs here; N >= 1: in N spawned processes (``make_env`` and
            the trials must pickle), with the same results, ended with the rollout; or an open
            :class:`~mage_agents.rollout.WorkerEnvs` pool, kept open for the next rollout.
        max_steps: Steps after which a trial is stopped and marked ``step_limit``.

    Yields:
        One :class:`~mage_agents.rollout.Trajectory` per trial, in the order they finish (the
        same order for any ``env_workers``).

    Example:
        >>> from mage_agents import CallableAgent
        >>> from mage_agents.rollout import plan_groups
        >>> plans = plan_groups("mage/KuhnPoker-v0", [0], group_size=2, num_episodes=2)
        >>> first = lambda: CallableAgent(lambda obs, info: (info["legal_actions"] or ["ok"])[0])
        >>> trajectories = list(rollout(plans, first, batch_size=2))
        >>> [(t.group_id, len(t.result.returns)) for t in trajectories]
        [('mage/KuhnPoker-v0|None|task0', 2), ('mage/KuhnPoker-v0|None|task0', 2)]
    """
    owned = not isinstance(env_workers, WorkerEnvs)
    if batch_size < 1 or max_steps < 1 or (owned and env_workers < 0):
        raise ValueError("Need batch_size >= 1, max_steps >= 1 and env_workers >= 0.")
    pending = list(reversed(trials))
    slots = [new_agent() for _ in range(min(batch_size, len(trials)))]
    if not owned:
        envs: Any = env_workers
    else:
        envs = WorkerEnvs(env_workers) if env_workers else LocalEnvs()
    try:
        live: list[_Live | None] = [None] * len(slots)
        _refill(envs, live, range(len(slots)), pending, slots, make_env)
        while any(t is not None for t in live):
            active = [i for i, t in enumerate(live) if t is not None]
            replies = act_batch(
                [live[i].agent for i in active],
                [live[i].observation for i in active],
                [live[i].info for i in active],
            )
            results = envs.step([(i, r.text) for i, r in zip(active, replies, strict=True)])
            ended = []
            for i, reply, result in zip(active, replies, results, strict=True):
                trajectory = _advance(envs, i, live[i], reply, result, max_steps)
                if trajectory is not None:
                    live[i] = None
                    ended.append(i)
                    yield trajectory
            _refill(envs, live, ended, pending, slots, make_env)
    finally:
        if owned:
            envs.close()
        else:
            envs.clear()  # the caller's pool lives on, without this rollout's envs


def _refill(
    envs: Any,
    live: list[_Live | None],
    free: Sequence[int],
    pending: list[Any],
    slots: list[Agent],
    make_env: Callable[[Any], Any],
) -> None:
    """Give each free slot, in order, the next pending trial (started together)."""
    items = [(slot, pending.pop()) for slot in free[: len(pending)]]
    for (slot, _), started in zip(items, _start(envs, items, slots, make_env), strict=True):
        live[slot] = started


def _advance(
    envs: Any, slot: int, live: _Live, reply: Reply, result: StepResult, max_steps: int
) -> Trajectory | None:
    """Record one step of a trial; return its trajectory when the trial is over."""
    live.turns.append(_turn(live, reply, result))
    live.reflections += live.turns[-1].is_reflection
    observation, _, terminated, truncated, info = result
    live.observation, live.info = observation, dict(info)
    limited = len(live.turns) >= max_steps
    if not (terminated or truncated or limited):
        return None
    figures = envs.finish(slot)
    return _trajectory(live, figures, limited)


def collect(trials: Sequence[Any], new_agent: Callable[[], Agent], **options: Any) -> list:
    """Play ``trials`` with :func:`rollout` and return the trajectories in plan order."""
    order = {str(t.trial_id): k for k, t in enumerate(trials)}
    done = list(rollout(trials, new_agent, **options))
    return sorted(done, key=lambda t: order[t.trial_id])

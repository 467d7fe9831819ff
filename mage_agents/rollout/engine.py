"""The lockstep rollout engine: many trials in batches, one batched model call per step.

:func:`rollout` keeps up to ``batch_size`` trials running. Each step, every running trial's agent
answers at once (:func:`~mage_agents.base.act_batch`: prompting agents sharing a backend cost one
batched ``generate``), every env is stepped, and each finished trial is yielded as a
:class:`~mage_agents.rollout.Trajectory` while its slot takes the next planned trial. The runner
(evaluation) and the trainer both collect their trials here.

A backend fault is not the agent's answer: a trial whose step got no answer from the backend
(:attr:`~mage_agents.base.Reply.backend_failed`: the connection refused, timeouts, server errors
after the retries, ``generate`` raising) stops at once, its env not stepped with the missing
answer, and is yielded marked ``incomplete``; the other trials of the batch play on. The runner
saves it as a failed trial to replay; :func:`collect` (the trainer's call) raises
:class:`BackendFailure` instead, so that no failed trial is trained on. An agent's own failure (an
exception in ``act`` or ``reset``) is its step, played with the empty answer, as before.

The same holds for the other seat: when an agent playing the opponent gets no answer from its
backend (:class:`~mage_agents.rollout.envs.OpponentFailed`, at the trial's start or after a
step), the trial stops ``incomplete``, its failure naming the opponent: never a loss or a win.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace
from itertools import chain, islice
from typing import Any

from mage_agents.base import Agent, Reply, act_batch
from mage_agents.rollout.envs import Ended, LocalEnvs, OpponentFailed, StepResult, WorkerEnvs
from mage_agents.rollout.plan import make_trial_env
from mage_agents.rollout.types import Trajectory, Turn
from mage_envs.invalid import feedback_of
from mage_envs.meta.trial import TrialResult
from mage_envs.parsing import extract_tagged, normalize, parse_action

__all__ = ["rollout", "collect", "BackendFailure", "MAX_STEPS_PER_TRIAL", "shown_move"]

MAX_STEPS_PER_TRIAL = 10_000
"""A trial that has not ended after this many steps is stopped (``Trajectory.step_limit``)."""

INVALID_MOVE = "<invalid>"
"""``Turn.move`` of an answer the env rejected."""


class BackendFailure(RuntimeError):
    """:func:`collect` met a trial the backend gave no answer to (an incomplete trajectory).

    Attributes:
        trajectory: The incomplete trajectory (its last turn holds the backend's error).
    """

    def __init__(self, trajectory: Trajectory) -> None:
        super().__init__(
            f"Trial {trajectory.trial_id}: the backend gave no answer ({trajectory.failure}). "
            "A trial without the model's answers is no result to learn from; pass "
            "keep_incomplete=True to collect() to get such trials back, flagged incomplete."
        )
        self.trajectory = trajectory


def shown_move(text: str, info: dict[str, Any], accepted: bool) -> str:
    """The legal move read from ``text``, by its listed name; ``"<invalid>"`` if rejected.

    An answer written as one of the env's aliases (``pass`` for ``check``, which the env lists in
    ``info["action_aliases"]``) is read as the env reads it; any other answer the env accepted
    (a free-form ``search[...]``) is shown as written, normalised.

    Example:
        >>> shown_move("<action>Bet</action>", {"legal_actions": ["check", "bet"]}, True)
        'bet'
    """
    if not accepted:
        return INVALID_MOVE
    legal = list(info.get("legal_actions") or [])
    index = parse_action(text, legal, info.get("action_aliases"))
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
    reset_error: str | None = None
    latency_s: list[float] = field(default_factory=list)
    failure: str | None = None
    """Why the trial could not start (its opponent's backend failed at the first reset)."""


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
    outcome = new_info
    if play and new_info.get("episode_index") != index:
        # The step ended the episode and the next one started at once (no reflection): the info
        # is the new episode's, and the inner env's last info is in "episode_info".
        last = new_info.get("episode_info")
        outcome = last if isinstance(last, dict) else new_info
    invalid = play and bool(outcome.get("invalid_action"))
    anchor = info.get("inner_observation") if play else None
    moves = outcome.get("opponent_moves") if play else None
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
        faults=int(reply.faults),
        completion=reply.completion,
        invalid_reason=_invalid_reason(new_info, outcome) if invalid else None,
        opponent_moves=[str(m) for m in moves] if isinstance(moves, list | tuple) else None,
        off_format=play and bool(reply.off_format),
    )


def _invalid_reason(new_info: dict[str, Any], outcome: dict[str, Any]) -> str | None:
    """The feedback the inner env's observation after an invalid answer starts with."""
    if outcome is new_info:
        seen = new_info.get("inner_observation")
    else:  # the episode ended and the next one began: its last observation is kept aside
        seen = new_info.get("episode_final_observation")
    return feedback_of(seen) if isinstance(seen, str) else None


def _failed_turn(live: _Live, reply: Reply) -> Turn:
    """The turn of a step the backend gave no answer to: asked, never played in the env."""
    info = live.info
    play = info.get("phase") != "reflect"
    index = info.get("episode_index")
    step = info.get("step_in_episode")
    return Turn(
        trial_id=str(live.trial.trial_id),
        group_id=_group_id(live.trial),
        episode=int(index) if isinstance(index, int) else live.reflections,
        step=int(step) if isinstance(step, int) else len(live.turns),
        phase="play" if play else "reflect",
        observation=str(live.observation),
        action="",
        opponent=_name(info.get("opponent")),
        seat=_name(info.get("seat")),
        error=reply.error,
        prompt_tokens=int(reply.prompt_tokens),
        completion_tokens=int(reply.completion_tokens),
        faults=int(reply.faults),
        completion=reply.completion,
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


def _trajectory(live: _Live, ended: Ended, limited: bool, incomplete: bool = False) -> Trajectory:
    trial_figures, ground_truth = ended
    figures = live.info.get("trial")
    if figures is None and (limited or incomplete):
        figures = trial_figures  # stopped early: the episodes so far
    if figures is None and limited:
        figures = _cut_in_first_episode(live)
    if figures is None and not incomplete:
        raise RuntimeError(
            f"{getattr(live.trial, 'env_id', 'the env')}: the trial ended without "
            "info['trial']; is it a MetaEpisodeWrapper?"
        )
    return Trajectory(
        trial_id=str(live.trial.trial_id),
        group_id=_group_id(live.trial),
        turns=live.turns,
        result=None if figures is None else TrialResult.from_info(figures),
        final_info=_json_scalars(live.info),
        step_limit=limited,
        wall_s=round(time.perf_counter() - live.started, 6),
        incomplete=incomplete,
        reset_error=live.reset_error,
        final_observation=None if incomplete else str(live.observation),
        ground_truth=list(ground_truth),
        latency_s=live.latency_s,
    )


def _cut_in_first_episode(live: _Live) -> dict[str, Any]:
    """The figures of a trial the step limit stopped before any episode ended.

    The episode cut off counts as played and unsolved, with the rewards it earned so far: a
    trainer gets a result for every step-limited trial, and a runner never reads it as solved.
    """
    plays = [t for t in live.turns if t.phase == "play"]
    last = plays[-1] if plays else None
    result = TrialResult.from_episodes(
        [sum(t.reward for t in plays)],
        [False],
        num_episodes=int(getattr(live.trial, "num_episodes", 1)),
        opponents=[last.opponent if last else None],
        seats=[last.seat if last else None],
        invalid_actions=sum(t.invalid for t in plays),
        lengths=[len(plays)],
    )
    return result.to_dict()


def _reset(agent: Agent, seed: int) -> str | None:
    """Reset ``agent``; return why it raised, if it did (contained like ``act()``, not a crash)."""
    try:
        agent.reset(seed)
    except Exception as error:
        return f"reset: {type(error).__name__}: {error}"
    return None


def _start(
    envs: Any, items: list[tuple[int, Any]], slots: list[Agent], make_env: Callable[[Any], Any]
) -> list[_Live]:
    """Start the trials of ``items`` (``(slot, trial)`` pairs) with the slots' agents."""
    reset_errors = [_reset(slots[slot], trial.seed) for slot, trial in items]
    started = envs.start(items, make_env)
    live = []
    for (slot, trial), begun, error in zip(items, started, reset_errors, strict=True):
        agent = slots[slot]
        if isinstance(begun, OpponentFailed):
            live.append(_Live(trial, agent, "", {}, time.perf_counter(), failure=begun.reason))
            continue
        observation, info = begun
        if callable(getattr(agent, "bind", None)):
            agent.bind(envs.env(slot))
        live.append(_Live(trial, agent, observation, dict(info), time.perf_counter()))
        live[-1].reset_error = error
    return live


def rollout(
    trials: Iterable[Any],
    new_agent: Callable[[], Agent],
    *,
    batch_size: int = 1,
    make_env: Callable[[Any], Any] = make_trial_env,
    env_workers: int | WorkerEnvs = 0,
    max_steps: int = MAX_STEPS_PER_TRIAL,
    on_answers: Callable[[Sequence[Reply]], None] | None = None,
) -> Iterator[Trajectory]:
    """Play ``trials``, up to ``batch_size`` at once, yielding each trajectory when it ends.

    Args:
        trials: Planned trials (:class:`~mage_agents.rollout.TrialPlan`, or anything with
            ``trial_id``, ``group_id``, ``task_seed`` and ``seed``), in any iterable: each is
            taken when a slot frees up, so a plan that is made on demand is never held whole.
        new_agent: Builds one agent per slot; each is reset with the trial's seed before it.
        batch_size: Trials stepped together (one batched generation per step).
        make_env: Builds a trial env (a ``MetaEpisodeWrapper``) from a planned trial.
        env_workers: 0: step the envs here; N >= 1: in N spawned processes (``make_env`` and
            the trials must pickle), with the same results, ended with the rollout; or an open
            :class:`~mage_agents.rollout.WorkerEnvs` pool, kept open for the next rollout.
        max_steps: Steps after which a trial is stopped and marked ``step_limit``.
        on_answers: Called with each step's replies as soon as the agents answered, before the
            envs are stepped (progress while a batch is played, before any trial ends).

    Yields:
        One :class:`~mage_agents.rollout.Trajectory` per trial, in the order they finish (the
        same order for any ``env_workers``). A trial the backend gave no answer to ends at that
        step, ``incomplete``.

    Example:
        >>> from mage_agents import CallableAgent
        >>> from mage_agents.rollout import plan_groups
        >>> plans = plan_groups("mage/KuhnPoker-v0", [0], group_size=2, trial={"num_episodes": 1})
        >>> first = lambda: CallableAgent(lambda obs, info: (info["legal_actions"] or ["ok"])[0])
        >>> trajectories = list(rollout(plans, first, batch_size=2))
        >>> [(t.trial_id == p.trial_id, len(t.result.returns)) for t, p in zip(trajectories, plans)]
        [(True, 1), (True, 1)]
    """
    owned = not isinstance(env_workers, WorkerEnvs)
    if batch_size < 1 or max_steps < 1 or (owned and env_workers < 0):
        raise ValueError("Need batch_size >= 1, max_steps >= 1 and env_workers >= 0.")
    # Trials are taken from the plan as slots free up: only those in flight are held.
    plan = iter(trials)
    first = list(islice(plan, batch_size))
    pending = chain(first, plan)
    slots = [new_agent() for _ in first]
    if not owned:
        envs: Any = env_workers
    else:
        envs = WorkerEnvs(env_workers) if env_workers else LocalEnvs()
    try:
        live: list[_Live | None] = [None] * len(slots)
        yield from _fill(envs, live, range(len(slots)), pending, slots, make_env)
        while any(t is not None for t in live):
            active = [i for i, t in enumerate(live) if t is not None]
            asked = time.perf_counter()
            replies = act_batch(
                [live[i].agent for i in active],
                [live[i].observation for i in active],
                [live[i].info for i in active],
            )
            latency = round(time.perf_counter() - asked, 6)
            if on_answers is not None:
                on_answers(replies)
            for i in active:
                live[i].latency_s.append(latency)
            # A step the backend gave no answer to is not played: its trial stops, incomplete.
            pairs = zip(active, replies, strict=True)
            played = [(i, r.text) for i, r in pairs if not r.backend_failed]
            stepped = envs.step(played) if played else []
            results = dict(zip([i for i, _ in played], stepped, strict=True))
            ended = []
            for i, reply in zip(active, replies, strict=True):
                trajectory = _advance(envs, i, live[i], reply, results.get(i), max_steps)
                if trajectory is not None:
                    live[i] = None
                    ended.append(i)
                    yield trajectory
            yield from _fill(envs, live, ended, pending, slots, make_env)
    finally:
        if owned:
            envs.close()
        else:
            envs.clear()  # the caller's pool lives on, without this rollout's envs


def _fill(
    envs: Any,
    live: list[_Live | None],
    free: Sequence[int],
    pending: Iterator[Any],
    slots: list[Agent],
    make_env: Callable[[Any], Any],
) -> Iterator[Trajectory]:
    """Refill the free slots; yield (void) each trial whose opponent failed at its start."""
    while free:
        _refill(envs, live, free, pending, slots, make_env)
        failed = [i for i in free if live[i] is not None and live[i].failure is not None]
        for slot in failed:
            reply = Reply("", error=live[slot].failure, faults=1)
            live[slot].turns.append(_failed_turn(live[slot], reply))
            yield _trajectory(live[slot], envs.finish(slot), limited=False, incomplete=True)
            live[slot] = None
        free = failed


def _refill(
    envs: Any,
    live: list[_Live | None],
    free: Sequence[int],
    pending: Iterator[Any],
    slots: list[Agent],
    make_env: Callable[[Any], Any],
) -> None:
    """Give each free slot, in order, the next pending trial (started together)."""
    items = list(zip(free, islice(pending, len(free)), strict=False))  # pending may run out
    for (slot, _), started in zip(items, _start(envs, items, slots, make_env), strict=True):
        live[slot] = started


def _advance(
    envs: Any, slot: int, live: _Live, reply: Reply, result: StepResult | None, max_steps: int
) -> Trajectory | None:
    """Record one step of a trial; return its trajectory when the trial is over.

    ``result`` is ``None`` for a step the backend gave no answer to: the trial ends incomplete.
    """
    if result is None:
        live.turns.append(_failed_turn(live, reply))
        return _trajectory(live, envs.finish(slot), limited=False, incomplete=True)
    if isinstance(result, OpponentFailed):  # the learner's move was played; the reply was not
        failed = Reply(reply.text, error=result.reason, faults=max(1, reply.faults))
        live.turns.append(replace(_failed_turn(live, failed), action=reply.text))
        return _trajectory(live, envs.finish(slot), limited=False, incomplete=True)
    live.turns.append(_turn(live, reply, result))
    live.reflections += live.turns[-1].is_reflection
    observation, _, terminated, truncated, info = result
    live.observation, live.info = observation, dict(info)
    if terminated or truncated:
        limited = False  # ended on its own, even on the last step allowed
    else:
        limited = len(live.turns) >= max_steps
        if not limited:
            return None
    figures = envs.finish(slot)
    return _trajectory(live, figures, limited)


def collect(
    trials: Sequence[Any],
    new_agent: Callable[[], Agent],
    *,
    keep_incomplete: bool = False,
    **options: Any,
) -> list:
    """Play ``trials`` with :func:`rollout` and return the trajectories in plan order.

    Args:
        trials: The planned trials.
        new_agent: Builds one agent per slot.
        keep_incomplete: Return the trials the backend gave no answer to, flagged
            ``incomplete``, instead of raising.
        **options: :func:`rollout`'s keyword arguments.

    Raises:
        BackendFailure: At the first trial the backend gave no answer to (the rollout is
            stopped, its envs closed), unless ``keep_incomplete``.
        ValueError: If two planned trials share a trial id.
    """
    order: dict[str, int] = {}
    for k, trial in enumerate(trials):
        if order.setdefault(str(trial.trial_id), k) != k:
            raise ValueError(
                f"The trial id {trial.trial_id!r} is planned twice; collect() returns trials by "
                "id, so every planned trial needs its own."
            )
    done = []
    with closing(rollout(trials, new_agent, **options)) as trajectories:
        for trajectory in trajectories:
            if trajectory.incomplete and not keep_incomplete:
                raise BackendFailure(trajectory)  # closing() ends the rollout and its envs
            done.append(trajectory)
    return sorted(done, key=lambda t: order[t.trial_id])

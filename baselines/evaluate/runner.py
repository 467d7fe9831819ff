"""Evaluate an agent on trials: planned up front, played in lockstep batches, saved one by one.

1. :func:`plan_trials` fixes every trial before anything runs: its env, opponent, task seed (the
   deal, the level), repeat index and agent seed. Results therefore do not depend on ``workers``
   or ``batch_size`` for agents whose randomness comes from their seed. The plan is a lazy
   sequence (:class:`~mage_agents.rollout.TrialPlans`): a plan is made when it is played, so a
   run of any size starts at once and holds only the trials in flight.
2. :func:`play_trials` steps up to ``batch_size`` trials together, so that prompting agents sharing
   a backend are answered with one batched generation per step; it is a thin user of the rollout
   engine the trainer uses too (:func:`mage_agents.rollout.rollout`), reading each record off a
   :class:`~mage_agents.rollout.Trajectory`.
3. :func:`evaluate` skips the trials already in the results file (read from the file, the plan
   only telling where each stands), plays the rest (in worker processes if asked) and appends
   each trial as soon as it ends, batched or not (:class:`~baselines.results.ResultsFile`), so a
   killed run resumes where it stopped; with a :class:`~mage_agents.rollout.TranscriptFile`, the
   trial's transcript (what the agent read and wrote) is appended just before its results line.
   A line, once written, survives a killed process (``kill -9``, Ctrl-C); the trials written are
   made durable against a power loss together, one group commit (fsync) at most every
   :data:`COMMIT_EVERY_S` and at the end, not one per line.

A backend fault is not a result: a trial in which a step got no answer from the backend (the
connection refused, timeouts, server errors after the retries: :attr:`Reply.backend_failed`) stops
at once and is saved marked ``"incomplete"`` with the reasons; it is not counted in the figures and
the next run plays it again. An empty answer from a healthy server is the model's, an invalid
answer like any other.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import closing
from itertools import chain, islice
from multiprocessing import get_context
from typing import Any

from baselines.agents import AgentFactory, build_agent_factory
from baselines.report.achievable import task_winnable
from baselines.results import ResultsFile
from mage_agents.base import Agent, Reply
from mage_agents.rollout import (
    MAX_STEPS_PER_TRIAL,
    Trajectory,
    TranscriptFile,
    TrialPlan,
    TrialPlanner,
    TrialPlans,
    make_trial_env,
    rollout,
    transcript,
)
from mage_envs.meta import TrialConfig
from mage_envs.plugins import load_plugins, loaded_plugins

__all__ = ["plan_trials", "trial_planners", "play_trials", "evaluate", "in_plan_order"]
__all__ += ["make_trial_env"]


MAX_ERRORS_KEPT = 5
"""Failed-step reasons kept per trial record (the count is always complete)."""

COMMIT_EVERY_S = 1.0
"""Finished trials are fsync'd together at most this often (and when :func:`evaluate` ends)."""


def plan_trials(
    agent: str,
    env_ids: Sequence[str],
    opponents: Sequence[str | None] = (None,),
    tasks: int = 10,
    repeats: int = 1,
    seed: int = 0,
    env_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    trial: TrialConfig | None = None,
    agent_settings: Mapping[str, Any] | None = None,
) -> TrialPlans:
    """Plan every trial of an evaluation, in a fixed order, each plan made when it is read.

    Args:
        agent: The agent's name (part of each trial id).
        env_ids: Env ids to play.
        opponents: Opponent specs to play each env against (``None``: the env's default).
        tasks: Tasks per (env, opponent); task ``i`` uses env seed ``seed + i``.
        repeats: Trials per task with different agent seeds (for diversity across trials).
        seed: First task seed (non-negative); the agent seed of a trial derives from its task
            seed and repeat (:func:`~mage_agents.rollout.agent_seed`), so a trial id always
            stands for the same trial.
        env_kwargs: Per env id, extra keyword arguments for the env.
        trial: How every trial runs (``None``: ``TrialConfig()``).
        agent_settings: The agent's settings that change how it plays (sampling, ...); like the
            env and trial settings they are hashed into the trial ids, so changing one never
            resumes from trials played with the old value.

    Example:
        >>> plans = plan_trials("random", ["mage/KuhnPoker-v0"], tasks=2, repeats=2)
        >>> [(p.task_seed, p.repeat) for p in plans], len(plan_trials("a", ["x"], tasks=10**13))
        ([(0, 0), (0, 1), (1, 0), (1, 1)], 10000000000000)
    """
    pairs = [(env_id, opponent) for env_id in env_ids for opponent in opponents]
    planners = trial_planners(agent, pairs, env_kwargs, trial or TrialConfig(), agent_settings)
    return TrialPlans(planners, seed, tasks, repeats)


def trial_planners(
    agent: str,
    pairs: Sequence[tuple[str, str | None]],
    env_kwargs: Mapping[str, Mapping[str, Any]] | None,
    trial: TrialConfig,
    agent_settings: Mapping[str, Any] | None = None,
) -> list[TrialPlanner]:
    """One planner per (env id, opponent) pair, in order, each with ``trial`` (see plan_trials)."""
    return [
        TrialPlanner(
            env_id,
            opponent,
            dict((env_kwargs or {}).get(env_id, {})),
            trial,
            agent=agent,
            agent_settings=agent_settings,
        )
        for env_id, opponent in pairs
    ]


def _record(trajectory: Trajectory, spec: TrialPlan) -> dict[str, Any]:
    """The results-file record of one trial, read from its trajectory.

    An ``incomplete`` trajectory (the backend gave no answer) ends with its unplayed turn: that
    turn's error and faults count, its step does not.
    """
    turns, info = trajectory.turns, trajectory.final_info
    played = [t for t in turns if not t.backend_failed]
    actions: dict[int, list[str]] = {}
    for turn in played:
        if turn.phase == "play":
            actions.setdefault(turn.episode, []).append(turn.move)
    errors = [trajectory.reset_error] if trajectory.reset_error is not None else []
    errors += [t.error for t in turns if t.error is not None]
    return {
        **{k: getattr(spec, k) for k in RECORD_HEADER},
        # env_kwargs stay: they decide what a score means (WebShop's reward="fixed", ...)
        "env_kwargs": dict(spec.env_kwargs),
        "task": spec.task,
        # The "% of achievable" bound needs to know.
        "same_task": spec.trial.same_task,
        # An incomplete trial: the episodes finished before the failure (None if none was).
        "trial": None if trajectory.result is None else trajectory.result.to_dict(),
        "final_payoff": info.get("payoff"),
        # The final game ended because of invalid answers (or turns spent on them): a forfeit.
        "final_forfeit": _final_forfeit(trajectory),
        "actions": [actions[k] for k in sorted(actions)],
        "steps": len(played),
        "play_steps": sum(t.phase == "play" for t in played),
        "invalid_steps": sum(t.invalid for t in played),
        # Moves read although the answer was not in the requested format (no tag, free text).
        "off_format_steps": sum(t.off_format and not t.invalid for t in played),
        "failed_steps": len(errors),
        "errors": errors[:MAX_ERRORS_KEPT],
        # Backend attempts that failed, the retried ones included.
        "faults": sum(t.faults for t in turns),
        # Not finished: the backend failed. Not counted; the next run plays it again.
        "incomplete": trajectory.incomplete,
        "step_limit": trajectory.step_limit,
        "prompt_tokens": sum(t.prompt_tokens for t in turns),
        "completion_tokens": sum(t.completion_tokens for t in turns),
        "wall_s": trajectory.wall_s,
        # Whether any line of play solves this task (exact; None where undecided); decided after
        # the clock stops, so it is not counted in the trial's time.
        "winnable": task_winnable(spec),
    }


def _final_forfeit(trajectory: Trajectory) -> bool:
    info, result = trajectory.final_info, trajectory.result
    if result is not None and result.forfeits and result.forfeits[-1]:
        return True  # the env said so (max_invalid_actions, or max_turns spent)
    return bool(info.get("episode_truncated") and info.get("invalid_action"))


RECORD_HEADER = ("trial_id", "agent", "env_id", "opponent", "task_seed", "repeat", "seed")
RECORD_HEADER += ("num_episodes",)
"""The plan's fields a results record starts with (with its ``env_kwargs``)."""


def _transcript(trajectory: Trajectory, spec: TrialPlan) -> dict[str, Any] | None:
    """The transcript of a finished trial, headed by its spec (``None`` for an incomplete one)."""
    if trajectory.incomplete or trajectory.result is None:
        return None
    header = {k: getattr(spec, k) for k in TRANSCRIPT_HEADER}
    return transcript(trajectory, **header)


TRANSCRIPT_HEADER = ("agent", "env_id", "opponent", "task_seed", "repeat", "seed", "num_episodes")
"""The spec fields a transcript starts with (after its trial id)."""


def play_trials(
    specs: Sequence[TrialPlan],
    new_agent: Callable[[], Agent],
    batch_size: int = 1,
    make_env: Callable[[TrialPlan], Any] = make_trial_env,
    env_workers: int = 0,
) -> Iterator[dict[str, Any]]:
    """Play ``specs``, up to ``batch_size`` at once, yielding each trial's record when it ends.

    A thin user of the rollout engine (:func:`mage_agents.rollout.rollout`): a new agent is built
    per concurrent slot (``new_agent()``) and reset at the start of each trial; with
    ``env_workers=N`` the envs are stepped in N worker processes. A trial the backend gave no
    answer to is stopped by the engine and yielded as an ``"incomplete": true`` record.
    """
    plays = _play(specs, new_agent, batch_size, make_env, env_workers, transcripts=False)
    with closing(plays):
        for record, _ in plays:
            yield record


def _play(
    specs: Sequence[TrialPlan],
    new_agent: Callable[[], Agent],
    batch_size: int,
    make_env: Callable[[TrialPlan], Any],
    env_workers: int,
    transcripts: bool,
    on_answers: Callable[[Sequence[Reply]], None] | None = None,
) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    """:func:`play_trials`, yielding each record with its transcript (if asked and finished)."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1.")
    in_flight: dict[str, TrialPlan] = {}  # the plans taken by the engine and not yet ended

    def taken() -> Iterator[TrialPlan]:
        for spec in specs:
            in_flight[spec.trial_id] = spec
            yield spec

    trajectories = rollout(
        taken(),
        new_agent,
        batch_size=batch_size,
        make_env=make_env,
        env_workers=env_workers,
        max_steps=MAX_STEPS_PER_TRIAL,
        on_answers=on_answers,
    )
    with closing(trajectories):  # a caller that stops early ends the rollout and its envs
        for trajectory in trajectories:
            spec = in_flight.pop(trajectory.trial_id)
            kept = _transcript(trajectory, spec) if transcripts else None
            yield _record(trajectory, spec), kept


_WORKER: dict[str, Any] = {}


WORKER_POLL_S = 0.2
"""How often a worker process checks that the runner that started it is still alive."""


def _worker_init(
    agent_config: Any,
    make_env: Callable[[TrialPlan], Any],
    runner_pid: int | None = None,
    plugins: Sequence[str] = (),
) -> None:
    # Ctrl-C reaches the whole process group: the runner alone handles it (saves, says how to
    # resume) and shuts the pool down, instead of every worker printing a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if runner_pid is not None:
        threading.Thread(target=_exit_with_runner, args=(runner_pid,), daemon=True).start()
    load_plugins(plugins)  # the names the runner's plug-ins registered exist here too
    _WORKER["factory"] = build_agent_factory(agent_config)
    _WORKER["make_env"] = make_env


def _exit_with_runner(runner_pid: int) -> None:
    """End this worker once its runner is gone (``kill -9`` gives the pool no time to stop it)."""
    while os.getppid() == runner_pid:
        time.sleep(WORKER_POLL_S)
    os._exit(1)  # the runner is gone: nothing left to report to, so no cleanup either


def _worker_play(
    spec: TrialPlan, transcripts: bool
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    factory, make_env = _WORKER["factory"], _WORKER["make_env"]
    record, kept = next(_play([spec], factory.new_agent, 1, make_env, 0, transcripts))
    notes = factory.notes()
    return ({**record, "backend_notes": notes} if notes else record), kept


def evaluate(
    agent: AgentFactory | Any,
    specs: Sequence[TrialPlan],
    results: ResultsFile,
    workers: int = 1,
    batch_size: int = 1,
    make_env: Callable[[TrialPlan], Any] = make_trial_env,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    stop_after_failures: int | None = None,
    env_workers: int = 0,
    transcripts: TranscriptFile | None = None,
    on_answers: Callable[[Sequence[Reply]], None] | None = None,
) -> list[dict[str, Any]]:
    """Play the trials of ``specs`` that ``results`` lacks, appending each as it finishes.

    Args:
        agent: An :class:`~baselines.agents.AgentFactory`, or an agent config it can be built from
            (a spec string such as ``"random"`` or a dict). With ``workers > 1`` it must be a
            config, since each worker process builds its own agent.
        specs: The planned trials (see :func:`plan_trials`).
        results: Where finished trials are stored; trials already there are skipped. Trials the
            backend failed are stored marked incomplete (see :meth:`ResultsFile.failed`) and
            played again by the next call.
        workers: Processes playing trials in parallel (scripted agents; 1 for model agents,
            which batch instead).
        batch_size: Trials stepped together in each process.
        make_env: Builds a trial env from a spec (tests inject their own); with ``workers > 1``
            it must be importable by name (a module-level function).
        on_record: Called with each new record, once it is written (progress bars).
        stop_after_failures: Stop starting trials after this many incomplete trials in a row
            (a backend that is down fails them all, each after its retries); ``None``: never.
            The trials not started are simply not in ``results``: the next call plays them.
        env_workers: With ``workers=1``: step the envs of a batch in this many spawned
            processes while generation stays batched here (slow envs); 0 steps them here.
        transcripts: Where each finished trial's transcript is appended, just before its
            results line (open it with ``keep=results.finished()``); ``None``: no transcripts.
        on_answers: Called with each step's replies as they come (progress while a batch
            generates); with ``workers > 1`` the answers are played in the workers, unseen.

    Returns:
        The records of every finished trial in ``specs``, in plan order (old and new); the
        incomplete ones are in ``results.failed()``.
    """
    todo = (s for s in specs if s.trial_id not in results)  # taken as they are played
    keep = _Keeper(results, on_record, stop_after_failures, transcripts)
    first = list(islice(todo, 2))
    todo = chain(first, todo)
    try:
        if workers > 1 and len(first) > 1:
            _evaluate_in_processes(agent, todo, workers, make_env, keep)
        else:
            factory = agent if isinstance(agent, AgentFactory) else build_agent_factory(agent)
            keep.notes = factory.notes
            written = transcripts is not None
            plays = _play(
                todo, factory.new_agent, batch_size, make_env, env_workers, written, on_answers
            )
            for record, kept in plays:
                if not keep(record, kept):
                    plays.close()  # ends the rollout: its envs (and env workers) are closed
                    break
    finally:  # done, stopped, Ctrl-C or an error: what was written is made durable
        keep.commit()
    return in_plan_order(specs, results.records())


def in_plan_order(specs: Iterable[TrialPlan], records: Iterable[dict[str, Any]]) -> list:
    """The records of ``specs``' trials, in plan order (reading the records, not the plan).

    A :class:`~mage_agents.rollout.TrialPlans` tells each id's position without making a plan;
    any other plan is read once.
    """
    position = getattr(specs, "position", None)
    if position is None:
        order = {spec.trial_id: i for i, spec in enumerate(specs)}
        position = order.get
    placed = [(position(r["trial_id"]), r) for r in records]
    return [r for at, r in sorted((p for p in placed if p[0] is not None), key=lambda p: p[0])]


class _Keeper:
    """Saves each record, reports it, and says whether to go on (False after too many failures)."""

    def __init__(
        self,
        results: ResultsFile,
        on_record: Callable[[dict[str, Any]], None] | None,
        stop_after_failures: int | None,
        transcripts: TranscriptFile | None = None,
        notes: Callable[[], list[str]] | None = None,
    ) -> None:
        self.results = results
        self.on_record = on_record
        self.stop_after_failures = stop_after_failures
        self.transcripts = transcripts
        self.notes = notes
        self.streak = 0
        self.committed = time.perf_counter()

    def __call__(self, record: dict[str, Any], transcript: dict[str, Any] | None = None) -> bool:
        # What the backend could not do as asked (thinking without a switch, a refused field);
        # records from worker processes carry their own.
        notes = self.notes() if self.notes else []
        if notes:
            record = {**record, "backend_notes": notes}
        if self.transcripts is not None and transcript is not None:
            # first: a kill before the results line leaves a transcript the next open drops
            self.transcripts.append(transcript, sync=False)
        self.results.append(record, sync=False)  # written: a killed process loses nothing
        if time.perf_counter() - self.committed >= COMMIT_EVERY_S:
            self.commit()
        if self.on_record:
            self.on_record(record)
        self.streak = self.streak + 1 if record.get("incomplete") else 0
        return self.stop_after_failures is None or self.streak < self.stop_after_failures

    def commit(self) -> None:
        """Make the trials written so far durable: one fsync a file for the whole group.

        The transcripts go first, as they are written first: a power loss between the two
        leaves transcripts without results lines, which the next open drops.
        """
        if self.transcripts is not None:
            self.transcripts.sync()
        self.results.sync()
        self.committed = time.perf_counter()


def _evaluate_in_processes(
    agent: Any,
    todo: Iterable[TrialPlan],
    workers: int,
    make_env: Callable[[TrialPlan], Any],
    keep: _Keeper,
) -> None:
    if isinstance(agent, AgentFactory):
        agent = agent.config
    if agent is None:
        raise ValueError(
            "workers > 1 needs an agent config (a spec string or dict), not an object."
        )
    context = get_context("spawn")  # no fork: torch and thread pools do not survive it safely
    init_args = (agent, make_env, os.getpid(), loaded_plugins())
    pool = ProcessPoolExecutor(workers, context, _worker_init, init_args)
    transcripts = keep.transcripts is not None
    pending = iter(todo)
    try:
        # a few trials queued per worker: the plan is taken as it is played, never whole
        running = {pool.submit(_worker_play, s, transcripts) for s in islice(pending, 2 * workers)}
        while running:
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                if not keep(*future.result()):
                    return
            running |= {
                pool.submit(_worker_play, s, transcripts) for s in islice(pending, len(done))
            }
    finally:  # on a stop, an error or Ctrl-C: drop the trials not started, end the workers
        pool.shutdown(wait=True, cancel_futures=True)

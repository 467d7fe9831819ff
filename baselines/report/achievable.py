"""'% of achievable': solved tasks over the tasks that any agent could solve, exact per task.

A task seed fixes everything an agent faces in a Kuhn poker trial: the deal and the opponent's own
random draws (the wrapper replays the seed in every attempt of a ``same_task`` trial). So whether a
task is winnable at all is decided by playing every line of play of the agent on it
(:func:`task_winnable`, a handful of lines in Kuhn poker); the runner stores the answer in each
record as ``winnable``. The figure is then solved / winnable over the trials played: a rate with
its Wilson interval inside [0, 100%], and the count of winnable trials beside it. (The earlier
figure divided a success interval by the *expected* clairvoyant share, 3/6 or 4/6 of deals, while
the sampled tasks have their own share: a random agent could read "100% [71-118]".)

Groups where it cannot be decided get no figure rather than a made-up one: other envs, fresh
tasks per attempt (``same_task=False`` with N > 1, where N attempts face N games), a seat that
changes within the trial, records written before the ``winnable`` field existed.

:func:`trial_bound` still gives the expected share (MAGE's clairvoyant share, from
:mod:`mage_envs.bounds`) for a trial's opponent and seat.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

from baselines.report.summary import Interval, wilson_interval
from mage_agents.rollout.plan import make_trial_env, with_trial

__all__ = ["trial_bound", "task_winnable", "achievable_interval"]

MAX_LINES = 256
"""A task with more lines of play than this is left undecided (``None``)."""

_SEATS = {"first": 0, "second": 1}


@cache
def _kuhn_bound(opponent: str, seat: int) -> float | None:
    try:
        from mage_envs.bounds import kuhn_bounds

        return float(kuhn_bounds(opponent, seat).clairvoyant_share)
    except (ImportError, ValueError, TypeError, KeyError):
        return None


@cache
def _plays_kuhn_poker(env_id: str) -> bool:
    """Whether ``env_id`` is made by :class:`~mage_envs.games.KuhnPokerEnv` (bounds fit it)."""
    import mage_envs  # noqa: F401  (registers the ids)
    from mage_envs.games import KuhnPokerEnv

    try:
        entry = gym.spec(env_id).entry_point
        creator = entry if callable(entry) else load_env_creator(entry)
    except (gym.error.Error, ImportError, AttributeError, ValueError):
        return False
    return isinstance(creator, type) and issubclass(creator, KuhnPokerEnv)


def trial_bound(record: dict[str, Any]) -> float | None:
    """Return the bound on the pass@N of ``record``'s trial, or ``None`` where none is known."""
    if not _plays_kuhn_poker(str(record.get("env_id"))):
        return None
    trial = record["trial"]
    if int(trial["num_episodes"]) > 1 and record.get("same_task") is not True:
        return None
    opponents, seats = trial.get("opponents") or [], trial.get("seats") or []
    if not opponents or len(set(seats)) != 1 or seats[0] not in _SEATS:
        return None  # a seat that changes within the trial has no single bound
    if len(set(opponents)) != 1 or not isinstance(opponents[0], str):
        return None
    return _kuhn_bound(opponents[0], _SEATS[seats[0]])


def task_winnable(plan: Any) -> bool | None:
    """Whether some line of play solves the task of a :class:`~mage_agents.rollout.TrialPlan`.

    ``None`` where it cannot be decided. The task is replayed through the same trial env the
    runner builds (one attempt: every attempt of a ``same_task`` trial replays it), trying every
    legal action at every decision.
    """
    trial = plan.trial
    # Only Kuhn poker's tasks are small enough to decide by playing every line.
    if not _plays_kuhn_poker(str(plan.env_id)) or trial.seat_rotation == "episode":
        return None
    if plan.num_episodes > 1 and not trial.same_task:
        return None
    key = json.dumps(
        [plan.env_id, plan.opponent, plan.task_seed, plan.env_kwargs, trial.non_defaults()],
        sort_keys=True,
        default=repr,
    )
    if key not in _DECIDED:
        if len(_DECIDED) >= 100_000:
            _DECIDED.clear()
        _DECIDED[key] = _winnable(with_trial(plan, num_episodes=1))
    return _DECIDED[key]


_DECIDED: dict[str, bool | None] = {}
"""Tasks already decided, by their settings (the repeats of a task share the answer)."""


def _winnable(plan: Any) -> bool | None:
    env = _replay_env(plan)
    lines: list[list[str]] = [[]]
    tried = 0
    while lines:
        line = lines.pop()
        tried += 1
        if tried > MAX_LINES:
            return None
        solved, legal = _play_line(env, plan.task_seed, line)
        if solved:
            return True
        lines.extend(line + [action] for action in reversed(legal))
    return False


_REPLAY_ENVS: dict[str, Any] = {}
"""Trial envs that replay tasks, by what they are built from (``TrialPlan.env_key``)."""
MAX_REPLAY_ENVS = 8


def _replay_env(plan: Any) -> Any:
    """A trial env for ``plan``'s settings: built once, then reset with each task's seed.

    Every line of play starts with ``reset(seed=task_seed)``, which fixes the whole task (the
    seeding convention), so one env serves every task with the same settings.
    """
    key = plan.env_key
    env = _REPLAY_ENVS.get(key)
    if env is None:
        if len(_REPLAY_ENVS) >= MAX_REPLAY_ENVS:
            for old in _REPLAY_ENVS.values():
                old.close()
            _REPLAY_ENVS.clear()
        env = _REPLAY_ENVS[key] = make_trial_env(plan)
    return env


def _play_line(env: Any, seed: int, line: list[str]) -> tuple[bool, list[str]]:
    """Play ``line`` from the task's start: (solved, the legal actions if the episode goes on)."""
    _, info = env.reset(seed=seed)
    for action in line:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated or info.get("phase") != "play":
            return bool(info.get("episode_success")), []
    return False, list(info.get("legal_actions") or [])


def achievable_interval(records: Sequence[dict[str, Any]], success: Interval) -> Interval | None:
    """Solved / winnable over ``records`` (each must say whether its task is winnable).

    ``success`` (the group's pass@N) is not needed: the figure is recounted from the records.
    The interval's ``n`` is the number of winnable trials.
    """
    flags = [record.get("winnable") for record in records]
    if not flags or any(flag is None for flag in flags):
        return None
    winnable = [r for r, flag in zip(records, flags, strict=True) if flag]
    if not winnable:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    solved = sum(bool(r["trial"]["pass_at_k"][-1]) for r in winnable)
    return wilson_interval(solved, len(winnable))

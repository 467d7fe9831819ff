"""Where a batch's envs live: in this process, or in spawned worker processes.

The engine talks to its envs through one small interface, keyed by slot (the batch position a
trial occupies): ``start`` trials, ``step`` many slots at once, ``finish`` a slot. With
:class:`WorkerEnvs` the envs of a batch are spread over ``N`` spawned processes (slot ``i`` lives
in worker ``i % N``) and a batch step costs one round trip per worker, all workers stepping at the
same time; generation stays in the main process. Every env is made, reset and stepped with the
same arguments in the same order as in :class:`LocalEnvs`, so the results are the same bytes.

An opponent whose backend gave no answer (:class:`~mage_envs.opponents.OpponentFault`, raised
by ``reset`` or ``step``) fails its slot only: the slot's result is an :class:`OpponentFailed`,
and the engine voids that trial as it does when the learner's backend fails.

A :class:`WorkerEnvs` pool can outlive one rollout (``with WorkerEnvs(4) as pool: ...``, then
``rollout(..., env_workers=pool)`` at every training step), so its processes start once.
"""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

from mage_envs.opponents.registry import OPPONENT_SCHEMES, register_opponent_scheme
from mage_envs.opponents.text_opponent import OpponentFault
from mage_envs.plugins import load_plugins, loaded_plugins

__all__ = ["LocalEnvs", "WorkerEnvs", "StepResult", "Ended", "OpponentFailed"]

StepResult = tuple[Any, float, bool, bool, dict[str, Any]]
"""What ``env.step`` returns: observation, reward, terminated, truncated, info."""


class OpponentFailed(NamedTuple):
    """A slot whose opponent's backend gave no answer: no result for either player."""

    reason: str
    """The opponent's name and its backend's error."""


class Ended(NamedTuple):
    """What a finished slot's env leaves: its trial figures so far and the hidden truth."""

    figures: dict[str, Any] | None
    """The figures of the episodes played so far (``None`` before any episode ended)."""
    ground_truth: list[dict[str, Any]]
    """Per episode, what the env knew and the agent was not shown (``ground_truth()``)."""


def _ground_truth_of(env: Any) -> list[dict[str, Any]]:
    """The trial env's hidden truth per episode (empty for an env that reports none)."""
    truth = getattr(env, "ground_truth", None)
    return list(truth()) if callable(truth) else []


def _result_of(env: Any) -> dict[str, Any] | None:
    """The figures of the episodes played so far (a trial stopped by the step limit)."""
    result = getattr(env, "result", None)
    if not callable(result):
        return None
    try:
        return result().to_dict()
    except RuntimeError:  # no episode finished yet
        return None


class LocalEnvs:
    """The envs of a batch, in this process.

    A finished trial's env is kept, idle, for a later trial built the same way: the same
    ``make_env`` and the same ``trial.env_key`` (a :class:`~mage_agents.rollout.TrialPlan`'s
    env, opponent, env settings and trial settings: all but the task and the seeds). That trial
    resets it with its own task seed, which fixes everything the env plays (the same seed, the
    same trial, byte for byte), so a rollout builds an env per concurrent slot, not per trial.
    A trial without an ``env_key`` gets a new env. :meth:`clear` (the end of a rollout on a
    pool that lives on) keeps the idle envs of the settings played since the last clear, for the
    next rollout (a trainer's next step), and closes the others (a league's retired opponent).
    """

    MAX_IDLE = 64
    """Idle envs kept at most; a finished env beyond them is closed."""

    def __init__(self) -> None:
        self._envs: dict[int, Any] = {}
        self._keys: dict[int, Hashable | None] = {}
        self._idle: dict[Hashable, list[Any]] = {}
        self._played: set[Hashable] = set()  # the settings started since the last clear

    def start(
        self, items: Sequence[tuple[int, Any]], make_env: Callable[[Any], Any]
    ) -> list[tuple[Any, dict[str, Any]]]:
        """Make (or take an idle) env for each ``(slot, trial)``; reset it with the task seed."""
        started = []
        for slot, trial in items:
            if slot in self._envs:  # left by an abandoned rollout
                self._keys.pop(slot, None)
                self._envs.pop(slot).close()
            key = _reuse_key(make_env, trial)
            self._played.add(key)
            idle = self._idle.get(key) if key is not None else None
            env = idle.pop() if idle else make_env(trial)
            self._envs[slot], self._keys[slot] = env, key
            try:
                started.append(env.reset(seed=trial.task_seed))
            except OpponentFault as fault:
                started.append(OpponentFailed(str(fault)))
        return started

    def env(self, slot: int) -> Any:
        """The env object of ``slot`` (for agents that read the game state through ``bind``)."""
        return self._envs[slot]

    def step(self, actions: Sequence[tuple[int, str]]) -> list[StepResult | OpponentFailed]:
        """Step each ``(slot, action)``, in order."""
        results: list[StepResult | OpponentFailed] = []
        for slot, action in actions:
            try:
                results.append(self._envs[slot].step(action))
            except OpponentFault as fault:
                results.append(OpponentFailed(str(fault)))
        return results

    def finish(self, slot: int) -> Ended:
        """End the trial of ``slot``: its figures so far and hidden truth; its env goes idle."""
        env, key = self._envs.pop(slot), self._keys.pop(slot)
        ended = Ended(_result_of(env), _ground_truth_of(env))
        if key is None or sum(map(len, self._idle.values())) >= self.MAX_IDLE:
            env.close()
        else:
            self._idle.setdefault(key, []).append(env)
        return ended

    def clear(self) -> None:
        """Close every env still open, and the idle envs of settings not played since the last."""
        for slot in list(self._envs):
            self._keys.pop(slot, None)
            self._envs.pop(slot).close()
        played, self._played = self._played, set()
        for key in [k for k in self._idle if k not in played]:
            for env in self._idle.pop(key):
                env.close()

    def close(self) -> None:
        """Close every env, idle ones included."""
        self.clear()
        idle, self._idle = self._idle, {}
        for envs in idle.values():
            for env in envs:
                env.close()


def _reuse_key(make_env: Callable[[Any], Any], trial: Any) -> Hashable | None:
    """What an idle env must have been built from to play ``trial`` (``None``: never reused)."""
    env_key = getattr(trial, "env_key", None)
    return None if env_key is None else (make_env, env_key)


def _parent_registrations() -> tuple[tuple[str, ...], dict[str, Any]]:
    """What a spawned worker must register to build the parent's opponents.

    A spawned process imports only what unpickling needs: the plug-ins (``--import``) and the
    opponent schemes that a higher layer registered (``agent:``, ``league:`` come with ``import
    baselines``) would be missing there. A scheme goes as its ``"module:attr"`` name, or as its
    builder when that pickles (by reference; a lambda does not, and stays the parent's).
    """
    schemes = {}
    for prefix, builder in OPPONENT_SCHEMES.items():
        try:
            pickle.dumps(builder)
        except (pickle.PicklingError, AttributeError, TypeError):
            continue
        schemes[prefix] = builder
    return loaded_plugins(), schemes


def _serve(conn: Any, plugins: tuple[str, ...] = (), schemes: dict[str, Any] | None = None) -> None:
    """A worker's loop: run the commands it receives on its envs and send back the results.

    Args:
        conn: The worker's end of the pipe.
        plugins: The parent's plug-in modules, imported first.
        schemes: The parent's opponent schemes (builders or their names), registered here too.
    """
    load_plugins(plugins)
    for prefix, builder in (schemes or {}).items():
        register_opponent_scheme(prefix, builder)
    envs = LocalEnvs()
    while True:
        message = conn.recv()
        if message is None:
            envs.close()
            conn.close()
            return
        command, argument = message
        try:
            if command == "start":
                answer: Any = envs.start(*argument)
            elif command == "step":
                answer = envs.step(argument)
            elif command == "finish":
                answer = envs.finish(argument)
            else:
                answer = envs.clear()
            conn.send(("ok", answer))
        except Exception as error:  # reported in the main process, with the env's own message
            conn.send(("error", f"{type(error).__name__}: {error}"))


class WorkerEnvs:
    """The envs of a batch, stepped in ``workers`` spawned processes.

    The trials and the ``make_env`` given to :meth:`start` must pickle (plain data, a
    module-level function). Use it as a context manager, or call :meth:`close`.

    Args:
        workers: Processes to start (at least 1).

    Raises:
        RuntimeError: In :meth:`start`, :meth:`step` and :meth:`finish`, if an env raised in its
            worker (the message is the env's).
    """

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"env_workers must be at least 1, not {workers}.")
        context = multiprocessing.get_context("spawn")  # no fork: torch threads do not survive it
        self._conns, self._processes = [], []
        registrations = _parent_registrations()
        for _ in range(workers):
            parent, child = context.Pipe()
            process = context.Process(target=_serve, args=(child, *registrations), daemon=True)
            process.start()
            child.close()
            self._conns.append(parent)
            self._processes.append(process)

    @staticmethod
    def _receive(conn: Any) -> Any:
        try:
            status, answer = conn.recv()
        except EOFError as error:
            raise RuntimeError("An env worker process died (see its output above).") from error
        if status == "error":
            raise RuntimeError(f"An env failed in its worker process: {answer}")
        return answer

    def __enter__(self) -> WorkerEnvs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def workers(self) -> int:
        """The number of worker processes."""
        return len(self._conns)

    def _scatter(
        self, command: str, items: Sequence[tuple[int, Any]], make_env: Any = None
    ) -> list[Any]:
        """Send each worker its share of ``items`` (keyed by slot), all at once; gather in order."""
        if not self._conns:
            raise RuntimeError("These env workers are closed.")
        by_worker: dict[int, list[int]] = {}
        for index, (slot, _) in enumerate(items):
            by_worker.setdefault(slot % len(self._conns), []).append(index)
        for worker, indices in by_worker.items():
            share = [items[i] for i in indices]
            self._conns[worker].send((command, share if make_env is None else (share, make_env)))
        answers: list[Any] = [None] * len(items)
        failure = None
        for worker, indices in by_worker.items():
            try:  # every worker must be read, or its answer would wait in the pipe
                share = self._receive(self._conns[worker])
            except RuntimeError as error:
                failure = failure or error
                continue
            for i, answer in zip(indices, share, strict=True):
                answers[i] = answer
        if failure is not None:
            raise failure
        return answers

    def start(
        self, items: Sequence[tuple[int, Any]], make_env: Callable[[Any], Any]
    ) -> list[tuple[Any, dict[str, Any]]]:
        """Make and reset the env of each ``(slot, trial)`` in the worker holding the slot."""
        return self._scatter("start", items, make_env)

    def env(self, slot: int) -> Any:
        """Envs in workers cannot be handed to agents."""
        raise TypeError(
            "This agent reads the env's state (it has bind()); it cannot play with env_workers, "
            "whose envs live in other processes. Use env_workers=0."
        )

    def step(self, actions: Sequence[tuple[int, str]]) -> list[StepResult]:
        """Step each ``(slot, action)``: one message per worker, all workers at once."""
        return self._scatter("step", actions)

    def finish(self, slot: int) -> Ended:
        """Close the env of ``slot`` in its worker; return its figures so far and hidden truth."""
        conn = self._conns[slot % len(self._conns)]
        conn.send(("finish", slot))
        return Ended(*self._receive(conn))

    def clear(self) -> None:
        """Close the envs still open in every worker (an abandoned rollout's); keep the workers."""
        for conn in self._conns:
            conn.send(("clear", None))
        for conn in self._conns:
            self._receive(conn)

    def close(self) -> None:
        """Stop the workers (each closes its envs first)."""
        for conn in self._conns:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        for process in self._processes:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
                process.join()
        for conn in self._conns:
            conn.close()
        self._conns, self._processes = [], []

"""Where a batch's envs live: in this process, or in spawned worker processes.

The engine talks to its envs through one small interface, keyed by slot (the batch position a
trial occupies): ``start`` a trial, ``step`` many slots at once, ``finish`` a slot. With
:class:`WorkerEnvs` the envs of a batch are spread over ``N`` spawned processes (slot ``i`` lives
in worker ``i % N``) and a batch step costs one round trip per worker, all workers stepping at the
same time; generation stays in the main process. Every env is made, reset and stepped with the
same arguments in the same order as in :class:`LocalEnvs`, so the results are the same bytes.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["LocalEnvs", "WorkerEnvs", "StepResult"]

StepResult = tuple[Any, float, bool, bool, dict[str, Any]]
"""What ``env.step`` returns: observation, reward, terminated, truncated, info."""


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

    Args:
        make_env: Builds the trial env of a planned trial.
    """

    def __init__(self, make_env: Callable[[Any], Any]) -> None:
        self.make_env = make_env
        self._envs: dict[int, Any] = {}

    def start(self, slot: int, trial: Any) -> tuple[Any, dict[str, Any]]:
        """Make the env of ``trial`` in ``slot`` and reset it with the trial's task seed."""
        env = self.make_env(trial)
        self._envs[slot] = env
        return env.reset(seed=trial.task_seed)

    def env(self, slot: int) -> Any:
        """The env object of ``slot`` (for agents that read the game state through ``bind``)."""
        return self._envs[slot]

    def step(self, actions: Sequence[tuple[int, str]]) -> list[StepResult]:
        """Step each ``(slot, action)``, in order."""
        return [self._envs[slot].step(action) for slot, action in actions]

    def finish(self, slot: int) -> dict[str, Any] | None:
        """Close the env of ``slot``; return its trial figures so far, if it has any."""
        env = self._envs.pop(slot)
        result = _result_of(env)
        env.close()
        return result

    def close(self) -> None:
        """Close every env still open."""
        for slot in list(self._envs):
            self._envs.pop(slot).close()


def _serve(conn: Any, make_env: Callable[[Any], Any]) -> None:
    """A worker's loop: run the commands it receives on its envs and send back the results."""
    envs = LocalEnvs(make_env)
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
            else:
                answer = envs.finish(argument)
            conn.send(("ok", answer))
        except Exception as error:  # reported in the main process, with the env's own message
            conn.send(("error", f"{type(error).__name__}: {error}"))


class WorkerEnvs:
    """The envs of a batch, stepped in ``workers`` spawned processes.

    Args:
        make_env: Builds the trial env of a planned trial; it and the plans must pickle (a
            module-level function, plain data).
        workers: Processes to start (at least 1).

    Raises:
        RuntimeError: In :meth:`step` and :meth:`start`, if an env raised in its worker.
    """

    def __init__(self, make_env: Callable[[Any], Any], workers: int) -> None:
        if workers < 1:
            raise ValueError(f"env_workers must be at least 1, not {workers}.")
        context = multiprocessing.get_context("spawn")  # no fork: torch threads do not survive it
        self._conns, self._processes = [], []
        for _ in range(workers):
            parent, child = context.Pipe()
            process = context.Process(target=_serve, args=(child, make_env), daemon=True)
            process.start()
            child.close()
            self._conns.append(parent)
            self._processes.append(process)

    def _conn(self, slot: int) -> Any:
        return self._conns[slot % len(self._conns)]

    @staticmethod
    def _receive(conn: Any) -> Any:
        try:
            status, answer = conn.recv()
        except EOFError as error:
            raise RuntimeError("An env worker process died (see its output above).") from error
        if status == "error":
            raise RuntimeError(f"An env failed in its worker process: {answer}")
        return answer

    def start(self, slot: int, trial: Any) -> tuple[Any, dict[str, Any]]:
        """Make and reset the env of ``trial`` in the worker that holds ``slot``."""
        conn = self._conn(slot)
        conn.send(("start", (slot, trial)))
        return self._receive(conn)

    def env(self, slot: int) -> Any:
        """Envs in workers cannot be handed to agents."""
        raise TypeError(
            "This agent reads the env's state (it has bind()); it cannot play with env_workers, "
            "whose envs live in other processes. Use env_workers=0."
        )

    def step(self, actions: Sequence[tuple[int, str]]) -> list[StepResult]:
        """Step each ``(slot, action)``: one message per worker, all workers at once."""
        by_worker: dict[int, list[int]] = {}
        for index, (slot, _) in enumerate(actions):
            by_worker.setdefault(slot % len(self._conns), []).append(index)
        for worker, indices in by_worker.items():
            self._conns[worker].send(("step", [actions[i] for i in indices]))
        results: list[Any] = [None] * len(actions)
        for worker, indices in by_worker.items():
            for i, result in zip(indices, self._receive(self._conns[worker]), strict=True):
                results[i] = result
        return results

    def finish(self, slot: int) -> dict[str, Any] | None:
        """Close the env of ``slot`` in its worker; return its trial figures so far."""
        conn = self._conn(slot)
        conn.send(("finish", slot))
        return self._receive(conn)

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

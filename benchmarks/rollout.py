"""Benchmark: the rollout engine's overhead, env workers for slow envs, estimator cost.

1. Overhead: 64 trials of 3-episode Kuhn poker (8 groups of 8, MAGE's training population)
   collected in one batch of 64 by a zero-shot agent on the tiny random Llama, with token ids and
   log-probs returned (what a trainer collects). Printed: the share of wall time spent outside
   ``generate`` (envs, trial wrapper, prompts, parsing, turn records; target under 10%).
2. Env workers: the same 64 trials played by a random agent on a Kuhn env slowed by 20 ms a step
   (a stand-in for ALFWorld's engine or a search server), with the envs stepped here or in 2, 4
   and 8 worker processes of one pool; the pool's start-up (imports) is shown apart, since a
   trainer keeps one pool for every step.
3. Estimators: the cost of each estimator (through ``estimate``, invalid penalty on) over 10,000
   turns: 1,250 trials of 3 episodes (2 play turns each, 2 reflections), groups of 8, 3 opponents.

Run: ``python -m benchmarks rollout [--trials 64] [--tokens 32] [--hidden 64] [--layers 2]
[--part 1|2|3]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from benchmarks import positive_int
from benchmarks.generation import TimedBackend
from mage_agents import RandomLegalAgent
from mage_agents.advantages import ESTIMATORS, estimate
from mage_agents.rollout import Trajectory, WorkerEnvs, collect, make_trial_env, plan_groups

__all__ = ["main", "slow_kuhn", "estimator_batch"]

KUHN = "mage/KuhnPoker-v0"
POPULATION = "mage-kuhn-train"


def _plans(trials: int) -> list:
    groups = max(1, trials // 8)
    return plan_groups(KUHN, range(groups), trials // groups, opponent=POPULATION)


def overhead(args: argparse.Namespace, return_ids: bool) -> dict[str, float]:
    """Collect the trials with the tiny model; return wall, generation time and their ratio."""
    from mage_agents.local_model import LocalModelBackend
    from mage_agents.prompting import LLMAgent
    from mage_agents.tiny_model import build_tiny_model

    model, tokenizer = build_tiny_model(layers=args.layers, hidden=args.hidden)
    backend = LocalModelBackend(
        model,
        tokenizer,
        max_new_tokens=args.tokens,
        batch_size=args.trials,
        stop_strings=(),
        return_ids=return_ids,
    )
    timed = TimedBackend(backend)
    plans = _plans(args.trials)
    start = time.perf_counter()
    trajectories = collect(plans, lambda: LLMAgent(timed, "zero-shot"), batch_size=len(plans))
    wall = time.perf_counter() - start
    turns = sum(len(t.turns) for t in trajectories)
    return {"wall": wall, "generate": timed.seconds, "turns": turns, "trials": len(plans)}


SLOW_STEP_S = 0.02
"""Seconds added to every step of the slowed env (ALFWorld's engine: about 60 ms a step)."""


def slow_kuhn(plan: Any) -> Any:
    """The trial env of ``plan`` with :data:`SLOW_STEP_S` added to every step."""
    return _Slow(make_trial_env(plan))


class _Slow:
    """Waits before each step, as an env waiting on an engine or a search server would."""

    def __init__(self, env: Any) -> None:
        self.env = env

    def reset(self, **kwargs: Any) -> Any:
        return self.env.reset(**kwargs)

    def step(self, action: str) -> Any:
        time.sleep(SLOW_STEP_S)
        return self.env.step(action)

    def close(self) -> None:
        self.env.close()


def workers(trials: int, env_workers: int) -> tuple[float, float]:
    """``(start_s, play_s)`` of the trials on the slow env with ``env_workers`` processes.

    ``play_s`` is a warm pool's time; ``start_s`` is what the first rollout paid on top of it
    (spawning the workers, their imports).
    """
    plans = _plans(trials)

    def play(pool: Any) -> float:
        start = time.perf_counter()
        collect(
            plans, RandomLegalAgent, batch_size=len(plans), make_env=slow_kuhn, env_workers=pool
        )
        return time.perf_counter() - start

    if not env_workers:
        return 0.0, play(0)
    start = time.perf_counter()
    with WorkerEnvs(env_workers) as pool:
        play(pool)
        cold = time.perf_counter() - start
        warm = play(pool)
    return cold - warm, warm


def estimator_batch(turns: int = 10_000, seed: int = 0) -> list[Trajectory]:
    """Synthetic trials of 8 turns (3 episodes of 2 play turns, 2 reflections), ``turns`` in all."""
    rng = np.random.default_rng(seed)
    trajectories = []
    for i in range(turns // 8):
        rewards = rng.integers(-2, 3, size=(3, 2)).astype(float).tolist()
        anchors = [[f"s{rng.integers(6)}" for _ in range(2)] for _ in range(3)]
        invalid = {(0, 0)} if rng.random() < 0.1 else set()
        trajectories.append(
            Trajectory.from_rewards(
                rewards,
                trial_id=f"t{i}",
                group_id=f"g{i // 8}",
                anchors=anchors,
                opponent=f"o{(i // 8) % 3}",
                invalid=invalid,
            )
        )
    return trajectories


def estimator_costs(repeats: int = 7) -> dict[str, tuple[float, float]]:
    """Best-of-``repeats`` (wall ms, CPU ms) of each estimator over 10,000 turns."""
    batch = estimator_batch()
    costs = {}
    for name in ESTIMATORS:
        walls, cpus = [], []
        for _ in range(repeats):
            wall, cpu = time.perf_counter(), time.process_time()
            estimate(name, batch, invalid_penalty=0.5)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        costs[name] = (1000 * min(walls), 1000 * min(cpus))
    return costs


def main(argv: list[str]) -> None:
    """Print the three measurements (``--part N`` for one of them)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks rollout")
    parser.add_argument(
        "--trials", type=positive_int, default=64, help="trials collected (default 64)"
    )
    parser.add_argument(
        "--tokens", type=positive_int, default=32, help="new tokens per turn (default 32)"
    )
    parser.add_argument(
        "--hidden", type=positive_int, default=64, help="model hidden size (default 64)"
    )
    parser.add_argument(
        "--layers", type=positive_int, default=2, help="transformer layers (default 2)"
    )
    parser.add_argument("--part", type=int, choices=(1, 2, 3), help="run one part only")
    args = parser.parse_args(argv)
    parts = (args.part,) if args.part else (1, 2, 3)
    if 1 in parts:
        _overhead_table(args)
    if 2 in parts:
        _workers_table(args.trials)
    if 3 in parts:
        _estimator_table()


def _overhead_table(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(1)
    print(
        f"1. {args.trials} Kuhn trials x 3 episodes, one batch, tiny Llama ({args.layers} "
        f"layers, hidden {args.hidden}), {args.tokens} new tokens a turn, 1 torch thread"
    )
    print(f"{'ids+logprobs':<14}{'turns':>7}{'wall s':>9}{'gen s':>9}{'outside':>9}")
    for return_ids in (True, False):
        row = overhead(args, return_ids)
        share = (row["wall"] - row["generate"]) / row["wall"]
        print(
            f"{'yes' if return_ids else 'no':<14}{row['turns']:>7}{row['wall']:>9.2f}"
            f"{row['generate']:>9.2f}{share:>9.1%}"
        )


def _workers_table(trials: int) -> None:
    delay = f"{1000 * SLOW_STEP_S:.0f} ms"
    print(f"\n2. {trials} trials, random agent, env slowed by {delay} a step, one batch")
    base = workers(trials, 0)[1]
    print(f"{'env_workers':<14}{'pool start s':>13}{'play s':>9}{'speed-up':>10}")
    print(f"{0:<14}{'-':>13}{base:>9.2f}{1.0:>9.2f}x")
    for n in (2, 4, 8):
        start, play = workers(trials, n)
        print(f"{n:<14}{start:>13.2f}{play:>9.2f}{base / play:>9.2f}x")


def _estimator_table() -> None:
    print("\n3. estimator cost, 10,000 turns (best of 7, invalid penalty on)")
    print(f"{'estimator':<10}{'wall ms':>9}{'CPU ms':>9}")
    for name, (wall, cpu) in estimator_costs().items():
        print(f"{name:<10}{wall:>9.1f}{cpu:>9.1f}")

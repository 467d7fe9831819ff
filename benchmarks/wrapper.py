"""Benchmark: MetaEpisodeWrapper overhead, wrapped against bare env, in the same run.

Reference: the bare text env (``gym.make(id)``; FrozenLake through ``TextWrapper``), played by a
random-legal text agent for a fixed number of seeded episodes, each seed played 3 times. Ours: the
same env inside ``MetaEpisodeWrapper`` (3 same-task episodes per trial, reflections on, the given
memory mode), playing the same games; the reflection steps are part of the wrapper's cost.
Figures are inner play steps per CPU second of the process (``time.process_time``); each side is
timed ``--repeats`` times, interleaved, and the best time counts (the least disturbed by other
load). Overhead = bare rate / wrapped rate - 1;
the added microseconds per play step are printed too (what the wrapper costs in absolute terms).

Usage: ``python -m benchmarks wrapper [--episodes N] [--repeats R] [--memory MODE]``
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import gymnasium as gym

import mage_envs  # noqa: F401  (registers the ids)
from benchmarks import positive_int
from mage_envs.meta import MetaEpisodeWrapper, TextWrapper

ENVS: dict[str, Callable[[], gym.Env]] = {
    "mage/KuhnPoker-v0": lambda: gym.make("mage/KuhnPoker-v0"),
    "mage/TicTacToe-v0": lambda: gym.make("mage/TicTacToe-v0"),
    "FrozenLake-v1 (text)": lambda: TextWrapper(gym.make("FrozenLake-v1")),
    "mage/Sokoban-v0": lambda: gym.make("mage/Sokoban-v0"),
    "mage/Minesweeper-v0": lambda: gym.make("mage/Minesweeper-v0"),
}
CLOCK = time.process_time
"""CPU seconds of this process: the wall clock of a shared machine also counts other jobs."""

SLOW = {"mage/Sokoban-v0", "mage/Minesweeper-v0"}
"""Envs played for a fifth of ``--episodes`` (a Sokoban reset generates a level)."""


def bare(make: Callable[[], gym.Env], episodes: int) -> tuple[int, float]:
    """Play ``episodes`` seeded episodes, each seed 3 times; return (play steps, seconds).

    Seeds repeat as in the wrapped run's 3-episode same-task trials (trial ``t`` replays seed
    ``t``), and the agent draws its moves from the same stream, so both sides play the same games.
    """
    env, rng, steps = make(), random.Random(0), 0
    start = CLOCK()
    for episode in range(episodes):
        _, info = env.reset(seed=episode // 3)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(rng.choice(info["legal_actions"]))
            steps += 1
            done = terminated or truncated
    return steps, CLOCK() - start


def wrapped(make: Callable[[], gym.Env], episodes: int, memory: str) -> tuple[int, float]:
    """Play trials of 3 episodes until ``episodes`` inner episodes; return (play steps, seconds)."""
    env = MetaEpisodeWrapper(make(), num_episodes=3, memory=memory)
    rng, steps, trial = random.Random(0), 0, 0
    start = CLOCK()
    while trial * 3 < episodes:
        _, info = env.reset(seed=trial)
        done = False
        while not done:
            if info["phase"] == "reflect":
                action = "<reflection>Try the other move first.</reflection>"
            else:
                action, steps = rng.choice(info["legal_actions"]), steps + 1
            _, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        trial += 1
    return steps, CLOCK() - start


def best_rate(run: Callable[[], tuple[int, float]], repeats: int) -> float:
    """Return the best steps/second over ``repeats`` runs."""
    return max(steps / seconds for steps, seconds in (run() for _ in range(repeats)))


def main(argv: list[str]) -> None:
    """Print bare and wrapped steps per second and the overhead for each env."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks wrapper")
    parser.add_argument(
        "--episodes", type=positive_int, default=3000, help="inner episodes per run"
    )
    parser.add_argument(
        "--repeats", type=positive_int, default=3, help="timed runs per side (best counts)"
    )
    parser.add_argument(
        "--memory",
        default="reflection_only",
        choices=["reflection_only", "history_only", "history_and_reflection"],
    )
    args = parser.parse_args(argv)
    print(
        f"{'env':24} {'bare steps/s':>14} {'wrapped steps/s':>16} {'overhead':>9} "
        f"{'added us/step':>14}"
    )
    for name, make in ENVS.items():
        rates: dict[str, list[float]] = {"bare": [], "wrapped": []}
        episodes = args.episodes // 5 if name in SLOW else args.episodes
        for _ in range(args.repeats):  # interleaved, so load changes hit both sides
            rates["bare"].append(best_rate(lambda m=make, n=episodes: bare(m, n), 1))
            rates["wrapped"].append(
                best_rate(lambda m=make, n=episodes: wrapped(m, n, args.memory), 1)
            )
        b, w = max(rates["bare"]), max(rates["wrapped"])
        added = (1 / w - 1 / b) * 1e6
        print(f"{name:24} {b:14,.0f} {w:16,.0f} {b / w - 1:9.1%} {added:14.1f}")

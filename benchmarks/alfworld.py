"""Benchmark: speed of ``mage/ALFWorld-Generated-v0`` on the real engine, with and without caches.

Figures, for whole rooms (the default) and small ones (6 receptacles, 6 objects):

- make s: the first reset of a new seed with an empty cache folder: our generator, the expert's
  check on the engine, and the folder written (paid once per game, then read from the cache).
- load+reset s: ``reset`` on a game already in the cache folder but not loaded in this process
  (a new task; the process's caches are emptied first).
- restart s: ``reset`` on the game just played (a same-task trial's next episode).
- steps/s: ``step`` calls per second of a random agent choosing among ``info["legal_actions"]``,
  episodes of 30 turns (resets not timed).

"cached" is ``speedups=True`` (the default: memoised template parses and PDDL translations,
one-level context copies; identical output), "plain" is TextWorld as shipped.

Usage: ``python -m benchmarks alfworld [--games N] [--seconds S]``
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

import gymnasium as gym

import mage_envs  # noqa: F401  (registers the ids)
from benchmarks import positive_float, positive_int
from mage_envs.alfworld import speedups

ROOMS = {"whole rooms": {}, "small rooms": {"max_receptacles": 6, "max_objects": 6}}
"""The generator settings measured."""


def _mean_reset(env: gym.Env, seeds: list[int]) -> float:
    start = time.perf_counter()
    for seed in seeds:
        env.reset(seed=seed)
    return (time.perf_counter() - start) / len(seeds)


def _steps_per_second(env: gym.Env, seeds: list[int], seconds: float) -> float:
    rng, steps, busy = random.Random(0), 0, 0.0
    while busy < seconds:
        for seed in seeds:
            _, info = env.reset(seed=seed)
            done, start = False, time.perf_counter()
            while not done:
                _, _, terminated, truncated, info = env.step(rng.choice(info["legal_actions"]))
                steps, done = steps + 1, terminated or truncated
            busy += time.perf_counter() - start
            if busy >= seconds:
                break
    return steps / busy


def measure(kwargs: dict, games: int, seconds: float, cache: str) -> dict[str, float]:
    """Return the figures of one room size (the games are made in ``cache``, then reused)."""
    seeds = list(range(games))
    fresh = gym.make("mage/ALFWorld-Generated-v0", cache_dir=cache, **kwargs)
    figures = {"make s": _mean_reset(fresh, seeds)}
    fresh.close()
    for name, cached in (("cached", True), ("plain", False)):
        speedups.disable()  # empties the caches: the games were translated while being made
        env = gym.make("mage/ALFWorld-Generated-v0", cache_dir=cache, speedups=cached, **kwargs)
        figures[f"load+reset s ({name})"] = _mean_reset(env, seeds)
        env.reset(seed=0)
        figures[f"restart s ({name})"] = _mean_reset(env, [0] * games)
        figures[f"steps/s ({name})"] = _steps_per_second(env, seeds, seconds)
        env.close()
    return figures


def main(argv: list[str]) -> None:
    """Print one table row per room size."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks alfworld")
    parser.add_argument(
        "--games", type=positive_int, default=6, help="games (seeds 0..N-1) per room size"
    )
    parser.add_argument(
        "--seconds", type=positive_float, default=20.0, help="seconds of play per figure"
    )
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ.setdefault("ALFWORLD_DATA", os.path.join(cache, "alfworld-data"))
        for label, kwargs in ROOMS.items():
            rows.append((label, measure(kwargs, args.games, args.seconds, cache)))
    columns = list(rows[0][1])
    print("| rooms | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for label, figures in rows:
        print(f"| {label} | " + " | ".join(f"{figures[c]:.2f}" for c in columns) + " |")

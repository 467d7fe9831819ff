"""Benchmark: level generation and play speed of the Sokoban and Minesweeper text envs.

Figures, per registered id:

- reset ms: mean wall time of ``env.reset(seed=i)`` over fresh seeds (for Sokoban: carving, reverse
  play, the verifying A* solve and the text). The reference is TextArena's Sokoban-v0 reset,
  72 ms on this machine (measured by the issue's author; TextArena is not a dependency, so the
  figure is quoted, not re-measured), and the ratio says how many times faster ours is.
- steps/s: ``env.step`` calls per second of a random agent choosing among ``info["legal_actions"]``,
  episodes run to the end (resets not timed). Reference in the same run: the same random play on
  the pure rules module (no text, no parsing), so the ratio is the cost of the text interface.

Usage: ``python -m benchmarks puzzles [--resets N] [--seconds S]``
"""

from __future__ import annotations

import argparse
import random
import time

import gymnasium as gym

import mage_envs  # noqa: F401  (registers the ids)
from benchmarks import positive_float, positive_int
from mage_envs.puzzles import MinesweeperBoard, generate_level

SOKOBAN_IDS = ("mage/Sokoban-v0", "mage/SokobanMoreBoxes-v0", "mage/SokobanLarge-v0")
MINESWEEPER_IDS = (
    "mage/Minesweeper-v0",
    "mage/MinesweeperMoreMines-v0",
    "mage/MinesweeperLarge-v0",
)
TEXTARENA_SOKOBAN_RESET_MS = 72.0
"""TextArena Sokoban-v0 reset time measured on the project's 2-core machine (quoted)."""


def reset_ms(env_id: str, resets: int) -> float:
    """Mean milliseconds per seeded reset over ``resets`` fresh seeds."""
    env = gym.make(env_id)
    start = time.perf_counter()
    for seed in range(resets):
        env.reset(seed=seed)
    return (time.perf_counter() - start) / resets * 1000


def env_steps_per_second(env_id: str, seconds: float) -> float:
    """Steps per second of random legal play through the text env (resets not counted)."""
    env, rng = gym.make(env_id), random.Random(0)
    steps, busy, seed = 0, 0.0, 0
    while busy < seconds:
        _, info = env.reset(seed=seed)
        seed += 1
        done = False
        start = time.perf_counter()
        while not done:
            _, _, terminated, truncated, info = env.step(rng.choice(info["legal_actions"]))
            steps += 1
            done = terminated or truncated
        busy += time.perf_counter() - start
    return steps / busy


def sokoban_rules_steps_per_second(env_id: str, seconds: float, levels: int = 50) -> float:
    """Steps per second of random legal moves on the pure rules, same levels and turn budget.

    The levels are generated before the clock starts and replayed in turn.
    """
    game = gym.make(env_id).unwrapped
    starts = [generate_level(seed, game.settings).level for seed in range(levels)]
    rng, steps, busy, episode = random.Random(0), 0, 0.0, 0
    while busy < seconds:
        level = starts[episode % levels]
        episode += 1
        start = time.perf_counter()
        for _ in range(game.max_steps):
            moves = level.legal_moves()
            if not moves or level.solved:
                break
            level = level.step(rng.choice(moves)).level
            steps += 1
        busy += time.perf_counter() - start
    return steps / busy


def minesweeper_rules_steps_per_second(env_id: str, seconds: float, boards: int = 50) -> float:
    """Steps per second of random reveals of unopened cells on the pure rules.

    The boards are drawn before the clock starts and copied for each game.
    """
    game = gym.make(env_id).unwrapped
    drawn = [
        MinesweeperBoard.generate(seed, game.height, game.width, game.num_mines)
        for seed in range(boards)
    ]
    rng, steps, busy, episode = random.Random(0), 0, 0.0, 0
    while busy < seconds:
        board, click = drawn[episode % boards]
        board = board.copy()
        episode += 1
        start = time.perf_counter()
        board.reveal(*click)
        while not board.won and not board.lost:
            closed = [(r, c) for r in range(game.height) for c in range(game.width)
                      if not board.opened[r, c]]  # fmt: skip
            board.reveal(*rng.choice(closed))
            steps += 1
        busy += time.perf_counter() - start
    return steps / busy


def main(argv: list[str]) -> None:
    """Print reset times and step rates of every puzzle id with their references."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks puzzles")
    parser.add_argument(
        "--resets", type=positive_int, default=300, help="seeded resets timed per id"
    )
    parser.add_argument(
        "--seconds", type=positive_float, default=1.0, help="time per step-rate figure"
    )
    args = parser.parse_args(argv)
    print(
        f"{'env':30} {'reset ms':>9} {'TextArena/ours':>15} {'steps/s':>9} {'rules steps/s':>14}"
        f" {'ours/rules':>10}"
    )
    for env_id in SOKOBAN_IDS + MINESWEEPER_IDS:
        ms = reset_ms(env_id, args.resets)
        ours = env_steps_per_second(env_id, args.seconds)
        if env_id in SOKOBAN_IDS:
            rules = sokoban_rules_steps_per_second(env_id, args.seconds)
            ratio = f"{TEXTARENA_SOKOBAN_RESET_MS / ms:15.1f}"
        else:
            rules = minesweeper_rules_steps_per_second(env_id, args.seconds)
            ratio = f"{'-':>15}"
        print(f"{env_id:30} {ms:9.2f} {ratio} {ours:9,.0f} {rules:14,.0f} {ours / rules:10.2f}")
    print(
        f"TextArena Sokoban-v0 reset: {TEXTARENA_SOKOBAN_RESET_MS:.0f} ms (quoted, see docstring)."
    )

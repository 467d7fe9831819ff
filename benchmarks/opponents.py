"""Benchmark: MCTS move time and CFR build time, against OpenSpiel references in the same run.

MCTS: our :class:`~mage_envs.opponents.MCTSOpponent` (C++ ``MCTSBot`` behind the opponent
protocol) on the empty tic-tac-toe board (the costliest move), against OpenSpiel's Python
``MCTSBot`` on the same position and settings; also its mean move time over seeded games against
random play. CFR: the time until the Kuhn poker equilibrium is
ready (C++ ``CFRSolver``, 1000 iterations, caches off), against OpenSpiel's Python ``CFRSolver``
with the same iterations, and the time of a second request (served from memory). Targets from the
issue: an MCTS-1000 move under 5 ms, the CFR equilibrium ready in under 1 s.

Usage: ``python -m benchmarks opponents [--games G] [--python-moves M]``
"""

from __future__ import annotations

import argparse
import inspect
import os
import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import cfr, mcts

from benchmarks import positive_int
from mage_envs.opponents import MCTSOpponent, SeatView, equilibrium_policy
from mage_envs.opponents.cfr import clear_memory_cache


def ours_mcts_ms(simulations: int, games: int) -> float:
    """Return the mean milliseconds per move of our MCTS opponent in seeded games vs random."""
    game = pyspiel.load_game("tic_tac_toe")
    bot, rng, times = MCTSOpponent(game, simulations), np.random.default_rng(0), []
    for i in range(games):
        bot.reset(seed=i, player=i % 2)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == i % 2:
                start = time.perf_counter()
                action = bot.act(SeatView.from_state(state, i % 2))
                times.append(time.perf_counter() - start)
            else:
                action = int(rng.choice(state.legal_actions()))
            state.apply_action(action)
    return 1000 * float(np.mean(times))


def ours_opening_ms(simulations: int, moves: int) -> float:
    """Return the mean milliseconds of our MCTS opponent's opening move (the costliest)."""
    game = pyspiel.load_game("tic_tac_toe")
    bot, view = MCTSOpponent(game, simulations), SeatView.from_state(game.new_initial_state(), 0)
    total = 0.0
    for i in range(moves):
        bot.reset(seed=i, player=0)
        start = time.perf_counter()
        bot.act(view)
        total += time.perf_counter() - start
    return 1000 * total / moves


def python_mcts_ms(simulations: int, moves: int) -> float:
    """Return the mean milliseconds per opening move of OpenSpiel's Python MCTS bot."""
    game = pyspiel.load_game("tic_tac_toe")
    rng = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    uct_c = inspect.signature(MCTSOpponent).parameters["uct_c"].default  # the same as ours
    bot = mcts.MCTSBot(game, uct_c, simulations, evaluator, solve=True, random_state=rng)
    state = game.new_initial_state()
    start = time.perf_counter()
    for _ in range(moves):
        bot.step(state)
    return 1000 * (time.perf_counter() - start) / moves


def cfr_seconds() -> tuple[float, float, float]:
    """Return (ours cold, ours cached, Python CFRSolver) seconds for 1000 Kuhn iterations."""
    game = pyspiel.load_game("kuhn_poker")
    previous = os.environ.get("MAGE_CACHE_DIR")
    os.environ["MAGE_CACHE_DIR"] = "off"
    try:
        clear_memory_cache()
        start = time.perf_counter()
        equilibrium_policy(game, 1000)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        equilibrium_policy(game, 1000)
        cached = time.perf_counter() - start
    finally:
        if previous is None:
            os.environ.pop("MAGE_CACHE_DIR")
        else:
            os.environ["MAGE_CACHE_DIR"] = previous
    start = time.perf_counter()
    solver = cfr.CFRSolver(game)
    for _ in range(1000):
        solver.evaluate_and_update_policy()
    solver.average_policy()
    return cold, cached, time.perf_counter() - start


def main(argv: list[str]) -> None:
    """Print MCTS move times and CFR build times next to their references and targets."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks opponents")
    parser.add_argument(
        "--games", type=positive_int, default=40, help="tic-tac-toe games per MCTS size"
    )
    parser.add_argument(
        "--python-moves",
        type=positive_int,
        default=10,
        help="moves timed for the Python MCTS reference",
    )
    args = parser.parse_args(argv)
    print(
        f"{'MCTS, tic-tac-toe':18} {'ours opening ms':>15} {'python opening ms':>17} "
        f"{'speedup':>8} {'ours ms/move in games':>22}"
    )
    for simulations in (100, 1000):
        opening = ours_opening_ms(simulations, 5 * args.python_moves)
        reference = python_mcts_ms(simulations, args.python_moves)
        in_games = ours_mcts_ms(simulations, args.games)
        print(
            f"{'mcts-' + str(simulations):18} {opening:15.3f} {reference:17.2f} "
            f"{reference / opening:8.1f} {in_games:22.3f}"
        )
    print("target: an mcts-1000 move under 5 ms")
    cold, cached, reference = cfr_seconds()
    print(f"\n{'CFR, Kuhn, 1000 iters':22} {'ours s':>12} {'python s':>15} {'speedup':>8}")
    print(f"{'cold (no cache)':22} {cold:12.4f} {reference:15.3f} {reference / cold:8.1f}")
    print(f"{'cached (same process)':22} {cached:12.6f}")
    print("target: equilibrium ready in under 1 s")

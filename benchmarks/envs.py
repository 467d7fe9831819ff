"""Benchmark: our text envs against raw pyspiel and TextArena random play, in the same run.

References, measured in the same run and interleaved with ours:

- pyspiel: OpenSpiel random play that builds, at every decision, the acting player's observation
  string and the action strings (what a text agent needs), chance sampled as OpenSpiel does, one
  random stream for the whole run (no per-game seeding: the stricter reference).
- TextArena (optional, ``pip install textarena`` or the ``bench`` extra; skipped with a message
  when absent): the same game (Kuhn: one hand, ``max_rounds=1``), ``ta.make`` per game as its
  examples play (its observation wrapper keeps every message of its lifetime), both seats played
  by a random-legal agent that writes ``[move]`` and reads each observation string.

Ours: ``gym.make(id)`` (with Gymnasium's default wrappers), a random-legal agent writing move names
as text, the env parsing them, rendering the learner's text and playing the opponent (uniform
random). "seeded" resets every game with a seed never used before in the run (reproducible one by
one, how the runner plays; TextArena gets such seeds too, and a seed that comes back, as in a
same-task trial, is cheaper for us: the ``wrapper`` benchmark replays seeds); "unseeded" seeds
only the first game. A game is the same unit everywhere, so games per second is the fair ratio.
Time is CPU time of this process (``time.process_time``), and each figure is the best of
``--repeats`` interleaved runs: on a shared machine the wall clock also counts the time other
jobs held the cores. Our envs are made once and reused across the runs, as a rollout worker
keeps its env, so their view caches are warm.

Usage: ``python -m benchmarks envs [--seconds S] [--repeats R] [--profile]``
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import pstats
import random
import time
from collections.abc import Callable

import gymnasium as gym
import pyspiel

import mage_envs  # noqa: F401  (registers the ids)
from benchmarks import positive_float, positive_int

GAMES = {"mage/KuhnPoker-v0": "kuhn_poker", "mage/TicTacToe-v0": "tic_tac_toe"}
TEXTARENA = {"kuhn_poker": ("KuhnPoker-v0", {"max_rounds": 1}), "tic_tac_toe": ("TicTacToe-v0", {})}
"""OpenSpiel game -> TextArena id and settings playing the same game (one Kuhn hand)."""

Rate = tuple[float, float]  # games/s, decisions/s

CLOCK = time.process_time
"""CPU seconds of this process: on a shared machine the wall clock also counts the time other
jobs held the cores, which hits each side differently."""

_fresh_seeds = itertools.count(1)
"""Seeds for "seeded" runs: never the same twice in a process, so no run replays a seed."""


def timed(play_game: Callable[[int], int], seconds: float) -> Rate:
    """Return (games/s, decisions/s) of ``play_game(i) -> decisions`` for ``seconds`` of CPU."""
    games = decisions = 0
    batch, start = 8, CLOCK()
    last = start
    while last - start < seconds:
        for _ in range(batch):
            decisions += play_game(games)
            games += 1
        now = CLOCK()
        if now - last < 0.02:  # reading a CPU clock can cost a game or more: read it rarely
            batch *= 2
        last = now
    elapsed = last - start
    return games / elapsed, decisions / elapsed


def pyspiel_random(game_name: str, seconds: float) -> Rate:
    """Return (games/s, decisions/s) of pyspiel random play with strings."""
    game, rng = pyspiel.load_game(game_name), random.Random(0)

    def play_game(_: int) -> int:
        state, decisions = game.new_initial_state(), 0
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(actions, probs)[0])
                continue
            player = state.current_player()
            state.observation_string(player)
            legal = state.legal_actions()
            [state.action_to_string(player, a) for a in legal]
            state.apply_action(rng.choice(legal))
            decisions += 1
        return decisions

    return timed(play_game, seconds)


def ours(env: gym.Env, seconds: float, seed_every_game: bool = True) -> Rate:
    """Return (games/s, learner decisions/s) of our env with a random-legal text agent.

    With ``seed_every_game`` each game is ``reset(seed=s)`` with a seed never used before
    (reproducible one by one, the way the runner plays); otherwise only the first reset is
    seeded, as the reference is.
    """
    rng = random.Random(0)
    env.reset(seed=0)

    def play_game(_: int) -> int:
        _, info = env.reset(seed=next(_fresh_seeds) if seed_every_game else None)
        decisions, done = 0, False
        while not done:
            _, _, terminated, truncated, info = env.step(rng.choice(info["legal_actions"]))
            decisions += 1
            done = terminated or truncated
        return decisions

    return timed(play_game, seconds)


def _textarena_legal(env, game_name: str) -> list[str]:
    """Return the legal moves of TextArena's game state, as its parser wants them."""
    game_state = env.state.game_state
    if game_name == "kuhn_poker":
        return [f"[{move}]" for move in game_state["current_legal_action_tree"]]
    board = game_state["board"]
    return [f"[{3 * r + c}]" for r in range(3) for c in range(3) if board[r][c] == ""]


def textarena_random(game_name: str, seconds: float, seed_every_game: bool = True) -> Rate | None:
    """Return (games/s, decisions/s) of TextArena random play, or ``None`` if not installed."""
    try:
        import textarena as ta
    except ImportError:
        return None
    env_id, settings = TEXTARENA[game_name]
    rng = random.Random(0)

    def play_game(i: int) -> int:
        env = ta.make(env_id, **settings)
        seed = next(_fresh_seeds) if seed_every_game or i == 0 else None
        env.reset(num_players=2, seed=seed)
        decisions, done = 0, False
        while not done:
            env.get_observation()  # the text the acting player reads
            done, _ = env.step(rng.choice(_textarena_legal(env, game_name)))
            decisions += 1
        env.close()
        return decisions

    return timed(play_game, seconds)


def _best(runs: list[Rate | None]) -> Rate | None:
    done = [r for r in runs if r is not None]
    return max(done) if done else None


def measure(env_id: str, seconds: float, repeats: int) -> dict[str, Rate | None]:
    """Return the best rate of every side, over ``repeats`` interleaved runs."""
    game_name = GAMES[env_id]
    # Made once and reused across the repeats, as a rollout worker keeps its env: from the second
    # run on, the views of the commonest decision points are cached.
    seeded_env, unseeded_env = gym.make(env_id), gym.make(env_id)
    sides: dict[str, Callable[[], Rate | None]] = {
        "pyspiel": lambda: pyspiel_random(game_name, seconds),
        "textarena seeded": lambda: textarena_random(game_name, seconds),
        "textarena unseeded": lambda: textarena_random(game_name, seconds, False),
        "ours seeded": lambda: ours(seeded_env, seconds),
        "ours unseeded": lambda: ours(unseeded_env, seconds, False),
    }
    runs: dict[str, list[Rate | None]] = {name: [] for name in sides}
    for _ in range(repeats):
        for name, run in sides.items():
            runs[name].append(run())
    return {name: _best(rates) for name, rates in runs.items()}


def _ratio(a: Rate | None, b: Rate | None) -> str:
    return "-" if a is None or b is None else f"{a[0] / b[0]:.2f}"


def _rate(rate: Rate | None) -> str:
    return "-" if rate is None else f"{rate[0]:,.0f}"


def print_table(results: dict[str, dict[str, Rate | None]]) -> None:
    """Print games per second of every side and ours against each reference."""
    header = ("env", "seeding", "pyspiel", "TextArena", "ours", "/pyspiel", "/TextArena")
    print("{:20} {:9} {:>9} {:>10} {:>9} {:>9} {:>11}".format(*header))
    for env_id, sides in results.items():
        for seeding in ("seeded", "unseeded"):
            mine, ta = sides[f"ours {seeding}"], sides[f"textarena {seeding}"]
            ref = sides["pyspiel"]
            print(
                f"{env_id:20} {seeding:9} {_rate(ref):>9} {_rate(ta):>10} {_rate(mine):>9}"
                f" {_ratio(mine, ref):>9} {_ratio(mine, ta):>11}"
            )
        mine, ref = sides["ours seeded"], sides["pyspiel"]
        print(
            f"{'':20} decisions/s: pyspiel {ref[1]:,.0f} (both players),"
            f" ours {mine[1]:,.0f} (learner only)"
        )


def profile(env_id: str, seconds: float) -> None:
    """Print where our env's time goes (cProfile, seeded resets), the costliest functions first.

    The env plays ``seconds`` unprofiled first, so the profile shows its steady state.
    """
    env, profiler = gym.make(env_id), cProfile.Profile()
    ours(env, seconds)
    profiler.runcall(ours, env, seconds)
    print(f"\nProfile of {env_id}, seeded resets (tottime, top 15):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


def main(argv: list[str]) -> None:
    """Print the table of both envs against the references."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks envs")
    parser.add_argument("--seconds", type=positive_float, default=1.0, help="time per measurement")
    parser.add_argument(
        "--repeats", type=positive_int, default=3, help="interleaved runs (best counts)"
    )
    parser.add_argument("--profile", action="store_true", help="also profile our envs")
    args = parser.parse_args(argv)
    try:
        import textarena  # noqa: F401
    except ImportError:
        print("TextArena is not installed (pip install textarena): its columns are skipped.")
    results = {env_id: measure(env_id, args.seconds, args.repeats) for env_id in GAMES}
    print_table(results)
    if args.profile:
        for env_id in GAMES:
            profile(env_id, args.seconds)

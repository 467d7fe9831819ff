"""Benchmark: our text envs against raw pyspiel random play, in the same run.

Reference: OpenSpiel random play that builds, at every decision, the acting player's observation
string and the action strings (what a text agent needs), with chance sampled as OpenSpiel does.
Ours: ``gym.make(...)`` (with Gymnasium's default wrappers), a seeded reset per game, text
rendering, parsing of the agent's text and the opponent's move, for the same games. A game is the
same unit in both, so the ratio of games per second is the fair figure; decisions per second are
printed too (ours counts only the learner's decisions, the reference both players').

Usage: ``python -m baselines.bench envs [--seconds S]``
"""

from __future__ import annotations

import argparse
import random
import time

import gymnasium as gym
import pyspiel

import mage_envs  # noqa: F401  (registers the ids)

GAMES = {"mage/KuhnPoker-v0": "kuhn_poker", "mage/TicTacToe-v0": "tic_tac_toe"}


def pyspiel_random(game_name: str, seconds: float) -> tuple[float, float]:
    """Return (games/s, decisions/s) of pyspiel random play with strings."""
    game, rng = pyspiel.load_game(game_name), random.Random(0)
    games = decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
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
        games += 1
    elapsed = time.perf_counter() - start
    return games / elapsed, decisions / elapsed


def ours(env_id: str, seconds: float, seed_every_game: bool = True) -> tuple[float, float]:
    """Return (games/s, learner decisions/s) of our env with a random-legal text agent.

    With ``seed_every_game`` each game is ``reset(seed=i)`` (reproducible one by one, the way the
    runner plays); otherwise only the first reset is seeded, as the reference is.
    """
    env, rng = gym.make(env_id), random.Random(0)
    games = decisions = 0
    env.reset(seed=0)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, info = env.reset(seed=games if seed_every_game else None)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(rng.choice(info["legal_actions"]))
            decisions += 1
            done = terminated or truncated
        games += 1
    elapsed = time.perf_counter() - start
    return games / elapsed, decisions / elapsed


def main(argv: list[str]) -> None:
    """Print the table of both envs against the pyspiel reference."""
    parser = argparse.ArgumentParser(prog="python -m baselines.bench envs")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args(argv)
    header = ("env", "pyspiel games/s", "ours games/s", "ratio", "seeded once", "ratio")
    print("{:20} {:>16} {:>13} {:>6} {:>12} {:>6}".format(*header))
    for env_id, game_name in GAMES.items():
        ref_games, ref_decisions = pyspiel_random(game_name, args.seconds)
        our_games, our_decisions = ours(env_id, args.seconds)
        once_games, _ = ours(env_id, args.seconds, seed_every_game=False)
        print(
            f"{env_id:20} {ref_games:16,.0f} {our_games:13,.0f} {our_games / ref_games:6.2f}"
            f" {once_games:12,.0f} {once_games / ref_games:6.2f}"
        )
        print(
            f"{'':20} decisions/s: pyspiel {ref_decisions:,.0f} (both players),"
            f" ours {our_decisions:,.0f} (learner only)"
        )

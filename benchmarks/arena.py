"""Arena throughput: games per second of the arena's game loop against TextArena's two-player loop.

Every side plays whole games of the same OpenSpiel game (Kuhn poker: one hand; tic-tac-toe):

- **arena, scripted**: :meth:`baselines.arena.games.Players.play` with two scripted players
  (Kuhn: ``cfr`` against ``random``; tic-tac-toe: ``biased-random`` against ``random``), each game
  seeded from its deal as the arena seeds it;
- **arena, one text seat**: the same with one seat an agent (``agent:random``) that reads its
  own seat's page, rendered by the env's text game, and writes a move name the referee parses;
- **TextArena**: its own loop (``ta.make`` per game, ``env.get_observation()`` then
  ``env.step("[move]")`` for each seat, a random legal move in its bracket format), as
  ``python -m benchmarks envs`` plays it (``pip install textarena``; skipped when absent);
- **pyspiel**: random play on the bare OpenSpiel state with its strings (the floor).

Time is this process's CPU time, the best of ``--repeats`` interleaved runs (see
:mod:`benchmarks.envs`, whose timer and TextArena loop this reuses).

Usage: ``python -m benchmarks arena [--seconds S] [--repeats R]``
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools

from baselines.arena.games import ArenaGame, Players
from benchmarks import positive_float, positive_int
from benchmarks.envs import GAMES, Rate, pyspiel_random, textarena_random, timed

__all__ = ["main", "arena_rate", "PAIRS"]

PAIRS = {
    "mage/KuhnPoker-v0": {"scripted": ("cfr", "random"), "text seat": ("agent:random", "random")},
    "mage/TicTacToe-v0": {
        "scripted": ("biased-random", "random"),
        "text seat": ("agent:random", "random"),
    },
}
"""Env -> side -> the two players of the arena's sides."""


def arena_rate(env_id: str, names: tuple[str, str], seconds: float) -> Rate:
    """(games/s, moves/s) of the arena playing ``names`` against each other, seats alternating."""
    players = Players(env_id, list(names))
    deals = itertools.count()

    def play_game(i: int) -> int:
        first, second = names if i % 2 == 0 else names[::-1]
        record = players.play(ArenaGame(first, second, next(deals), seed=0))
        return int(record["moves"])

    return timed(play_game, seconds)


def measure(env_id: str, seconds: float, repeats: int) -> dict[str, Rate | None]:
    """The best rate of every side over ``repeats`` interleaved runs."""
    game_name = GAMES[env_id]
    sides = {
        "pyspiel": lambda: pyspiel_random(game_name, seconds),
        "textarena": lambda: textarena_random(game_name, seconds),
        **{
            f"arena {side}": (lambda pair=pair: arena_rate(env_id, pair, seconds))
            for side, pair in PAIRS[env_id].items()
        },
    }
    runs: dict[str, list[Rate | None]] = {name: [] for name in sides}
    for _ in range(repeats):
        for name, run in sides.items():
            runs[name].append(run())
    return {
        name: max((r for r in rates if r is not None), default=None) for name, rates in runs.items()
    }


def _games(rate: Rate | None) -> str:
    return "-" if rate is None else f"{rate[0]:,.0f}"


def main(argv: list[str]) -> None:
    """Print games per second of every side, and the arena's against TextArena's."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks arena")
    parser.add_argument(
        "--seconds", type=positive_float, default=1.0, help="CPU seconds per measurement"
    )
    parser.add_argument(
        "--repeats", type=positive_int, default=3, help="interleaved runs (best counts)"
    )
    args = parser.parse_args(argv)
    header = ("env", "pyspiel", "TextArena", "arena scripted", "arena text seat")
    print("{:20} {:>9} {:>10} {:>15} {:>16}   {}".format(*header, "ratios to TextArena"))
    for env_id in PAIRS:
        rates = measure(env_id, args.seconds, args.repeats)
        ta = rates["textarena"]
        cells = [_games(rates[k]) for k in ("pyspiel", "textarena")]
        cells += [_games(rates["arena scripted"]), _games(rates["arena text seat"])]
        ratios = (
            "-"
            if ta is None
            else ", ".join(
                f"{side} {rates[f'arena {side}'][0] / ta[0]:.2f}x" for side in PAIRS[env_id]
            )
        )
        print("{:20} {:>9} {:>10} {:>15} {:>16}   {}".format(env_id, *cells, ratios))
    if importlib.util.find_spec("textarena") is None:
        print("TextArena is not installed (pip install textarena): its column is skipped.")

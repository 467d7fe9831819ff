"""The table of exact bounds per opponent and seat (``python -m baselines.run bounds``).

Kuhn poker: best-response value, best success probability and MAGE's clairvoyant share, per opponent
and seat, plus each opponent's exploitability. Tic-tac-toe: whether each opponent can be beaten from
each seat (exact for scripted opponents) and the record of perfect play against MCTS (seeded games).
"""

from __future__ import annotations

import argparse

import pyspiel

from baselines.bounds.mage_oracle import MAGE_MODELS, MAGE_PAPER_BOUND, mage_oracle_share
from baselines.errors import EXIT_OK, EXIT_SETTINGS, print_error
from baselines.run_flags import add_import_option
from mage_envs.bounds import (
    KUHN_GAME_VALUE,
    KUHN_OPPONENTS,
    TIC_TAC_TOE_OPPONENTS,
    exploitability,
    kuhn_bounds,
    kuhn_bounds_table,
    tic_tac_toe_bounds_table,
)

__all__ = [
    "bounds_markdown",
    "kuhn_markdown",
    "mage_oracle_markdown",
    "tic_tac_toe_markdown",
    "main",
]

SEATS = ("first", "second")


def kuhn_markdown() -> str:
    """Return the Kuhn poker bounds as markdown tables."""
    lines = [
        "| opponent | agent seat | best-response value (chips/hand) | best success probability "
        "| clairvoyant share (exact bound) |",
        "|---|---|---:|---:|---:|",
    ]
    for row in kuhn_bounds_table():
        lines.append(
            f"| {row.opponent} | {SEATS[row.seat]} | {row.best_response_value:+.4f} "
            f"| {row.best_success_probability:.4f} | {row.clairvoyant_share:.4f} |"
        )
    game = pyspiel.load_game("kuhn_poker")
    lines += [
        "",
        f"Equilibrium value: {KUHN_GAME_VALUE:+.4f} chips/hand in the first seat, "
        f"{-KUHN_GAME_VALUE:+.4f} in the second (what a safe strategy guarantees).",
        "",
        "| opponent | exploitability (chips/hand, mean over seats) |",
        "|---|---:|",
    ]
    lines += [f"| {name} | {exploitability(name, game):.6f} |" for name in KUHN_OPPONENTS]
    return "\n".join(lines)


def mage_oracle_markdown() -> str:
    """Return MAGE's oracle share beside the exact bound, per MAGE opponent and seat."""
    lines = [
        "| opponent | agent seat | MAGE's oracle (its paper's bound) "
        "| exact bound (clairvoyant share) |",
        "|---|---|---:|---:|",
    ]
    for name in MAGE_MODELS:
        for seat in (0, 1):
            exact = kuhn_bounds(name, seat).clairvoyant_share
            lines.append(
                f"| {name} | {SEATS[seat]} | {mage_oracle_share(name, seat):.4f} | {exact:.4f} |"
            )
    lines += [
        "",
        f"MAGE's paper quotes {MAGE_PAPER_BOUND:.1%} (84/128: the oracle's count on its 128 "
        "validation deals) against CFR with the agent second; the exact bound there is 50%.",
    ]
    return "\n".join(lines)


def tic_tac_toe_markdown(games: int = 100, seed: int = 0) -> str:
    """Return the tic-tac-toe bounds as a markdown table (``games`` seeded games per MCTS row)."""
    lines = [
        "| opponent | agent seat | beatable | best win probability | best expected payoff "
        f"| perfect play W/D/L ({games} seeded games) |",
        "|---|---|---|---:|---:|---|",
    ]
    for row in tic_tac_toe_bounds_table(TIC_TAC_TOE_OPPONENTS, games, seed):
        seat = "first (X)" if row.seat == 0 else "second (O)"
        if row.perfect_play is None:
            lines.append(
                f"| {row.opponent} | {seat} | {'yes' if row.beatable else 'no'} "
                f"| {row.best_win_probability:.4f} | {row.best_expected_payoff:+.4f} | exact |"
            )
        else:
            record = row.perfect_play
            beaten = "yes" if record.wins else f"not in {games} games"
            lines.append(
                f"| {row.opponent} | {seat} | {beaten} | | "
                f"| {record.wins}/{record.draws}/{record.losses} |"
            )
    return "\n".join(lines)


def bounds_markdown(games: int = 100, seed: int = 0) -> str:
    """Return the whole bounds report (Kuhn poker, then tic-tac-toe) as markdown text."""
    return (
        "## Kuhn poker\n\n"
        + kuhn_markdown()
        + "\n\n### MAGE's oracle and the exact bound\n\n"
        + mage_oracle_markdown()
        + "\n\n## Tic-tac-toe\n\n"
        + tic_tac_toe_markdown(games, seed)
        + "\n"
    )


def describe(parser: argparse.ArgumentParser) -> None:
    """Give ``bounds``' parser the page its ``--help`` shows."""
    parser.description = "Print exact bounds on what an agent can score against each opponent."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``bounds``: the MCTS rows' seeded games."""
    parser.add_argument(
        "--games", type=int, default=100, help="seeded games of perfect play vs each MCTS"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of those games")
    add_import_option(parser.add_argument)


def command(args: argparse.Namespace, argv: list[str] | None = None) -> int:
    """Print the bounds report; return the exit code."""
    if args.games < 1:
        print_error(f"--games must be >= 1, not {args.games}.")
        return EXIT_SETTINGS
    print(bounds_markdown(args.games, args.seed))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Print the bounds report (``python -m baselines.run bounds`` is the way)."""
    parser = argparse.ArgumentParser(prog="python -m baselines.run bounds")
    describe(parser)
    add_arguments(parser)
    return command(parser.parse_args(argv), argv)


if __name__ == "__main__":
    raise SystemExit(main())

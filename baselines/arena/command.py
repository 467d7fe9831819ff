"""``python -m baselines.run arena``: agents against agents, every pair in both seats, rated.

Every pair of ``--agents`` plays ``--games`` deals in both seat orders (the same deals for both
orders and every pair, so luck cancels: :mod:`baselines.arena.games`). A player is an opponent
name (``cfr``, ``cfr-argmax``, ``mcts-1000``, ``conservative``, ``random``, ...) or an agent
(``agent:local:PATH``, ``agent:openai:MODEL@URL``, ``agent-memory:...``, or the bare spec
``local:PATH``). The report: Bradley-Terry ratings with bootstrap intervals, anchored at
``--anchor`` (``random`` when it plays), head-to-head records with Wilson intervals, and for
Kuhn poker the exact expected payoff of every pair of tabular policies beside the sampled one
(:mod:`baselines.arena.ratings`, :mod:`baselines.arena.exact`).

With ``--out DIR`` every game is a line of ``DIR/results.jsonl``, written as it ends; a killed
arena rerun with the same command plays only the games missing (a game whose player's backend
failed is saved as failed and played again). Adding a player and rerunning plays only its games.
``DIR`` also gets ``arena.md`` (the tables) and ``ratings.png``.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from baselines.arena.exact import exact_values
from baselines.arena.games import Players, game_id, schedule
from baselines.arena.ratings import HeadToHead, Rating, duplicate_matches, head_to_head, ratings
from baselines.errors import (
    EXIT_FAILED_TRIALS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    SETTINGS_ERRORS,
    print_warning,
    settings_error,
)
from baselines.folder_lock import FolderLock
from baselines.progress import RunProgress
from baselines.report.tables import markdown_cell
from baselines.results import ResultsFile
from baselines.run_flags import add_threads_option
from baselines.threads import threads_setting, use_threads
from mage_agents.atomic_file import write_atomic

__all__ = ["add_arguments", "describe", "command", "play_arena", "ArenaReport", "markdown"]


MIN_BOOTSTRAP = 20
"""Fewest bootstrap resamples ``--bootstrap`` takes: fewer cannot place a 95% interval's ends."""


def describe(parser: argparse.ArgumentParser) -> None:
    """Give the arena's ``--help`` these words."""
    parser.description = __doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arena's options."""
    add = parser.add_argument
    add("--agents", nargs="+", required=True, metavar="PLAYER", help="two or more players")
    add("--env", default="mage/KuhnPoker-v0", help="a two-player game of the suite")
    add("--games", type=int, default=100, help="deals per pair, each played in both seat orders")
    add("--seed", type=int, default=0, help="seeds the deals and the players (default 0)")
    add("--anchor", help="the player rated 0 (default: random if it plays, else the first)")
    add(
        "--bootstrap",
        type=int,
        default=200,
        help="bootstrap resamples for the 95%% intervals (>= 20; default 200)",
    )
    add("--out", help="folder for results.jsonl (resumable), arena.md and ratings.png")
    add_threads_option(add)
    add("--no-plots", action="store_false", dest="plots", help="skip ratings.png")
    add("--import", action="append", dest="imports", default=[], help="a plug-in module")


@dataclass
class ArenaReport:
    """What an arena found: its games and figures.

    Attributes:
        names: The players, in the order given.
        records: The finished games' records.
        failed: The games whose player's backend gave no answer (not counted).
        ratings: Bradley-Terry ratings, best first (empty before a match is complete).
        pairs: Head-to-head records.
        exact: ``(a, b) -> a's exact expected payoff`` where both are tabular Kuhn policies.
        resumed: Games read back from the results file rather than played.
    """

    names: list[str]
    records: list[dict[str, Any]]
    failed: list[dict[str, Any]]
    ratings: list[Rating]
    pairs: list[HeadToHead]
    exact: dict[tuple[str, str], float]
    resumed: int


def play_arena(
    env_id: str,
    names: list[str],
    games: int,
    seed: int = 0,
    out: str | Path | None = None,
    anchor: str | None = None,
    bootstrap: int = 200,
    progress: Any = None,
) -> ArenaReport:
    """Play (or resume) an arena and compute its figures (see the module docstring)."""
    if anchor is None:
        anchor = "random" if "random" in names else names[0]
    if anchor not in names:
        raise ValueError(f"--anchor {anchor!r} is not one of the players ({', '.join(names)}).")
    players = Players(env_id, names)
    store = ResultsFile(None if out is None else Path(out) / "results.jsonl")
    damage = store.damage_note()
    if damage:  # the file keeps the lines; a game recorded only there has no record
        print_warning(f"{damage}; a game recorded only there is played again.")
    planned = schedule(names, games, seed)  # lazy: each game made as its turn comes
    done = store.finished()
    ids, resumed = set(), 0  # the games met so far (resumed or played): as many as records
    synced = time.perf_counter()
    for game in planned:
        gid = game_id(env_id, game)
        ids.add(gid)
        if gid in done:
            resumed += 1
            continue
        record = players.play(game)
        base = {"trial_id": gid, "env_id": env_id, "first": game.first, "second": game.second}
        base.update(deal=game.deal, seed=game.seed)
        if "fault" in record:
            record = {"incomplete": True, "errors": [record["fault"]]}
        # Each line is written at once (a killed arena loses no game); the disk is synced at
        # most once a second, which costs scripted games, thousands a second, nothing.
        sync = time.perf_counter() - synced > 1.0
        store.append({**base, **record}, sync=sync)
        synced = time.perf_counter() if sync else synced
        if progress is not None:
            progress(game)
    store.sync()
    records = store.records(ids)
    outcomes = [(r["first"], r["second"], r["deal"], *r["payoffs"]) for r in records]
    if anchor is None:
        anchor = "random" if "random" in names else names[0]
    matches = duplicate_matches(outcomes)
    rated = any(anchor in match[:2] for match in matches)
    table = ratings(names, matches, anchor, bootstrap, seed) if rated else []
    pairs = head_to_head(names, outcomes)
    return ArenaReport(
        names, records, store.failed(ids), table, pairs, exact_values(players), resumed
    )


def markdown(report: ArenaReport, anchor: str) -> str:
    """The arena's tables as markdown (what ``arena.md`` holds)."""
    lines = [
        f"| player | rating (Elo scale, {markdown_cell(anchor)} = 0) | 95% interval | matches |"
    ]
    lines.append("|---|---:|---:|---:|")
    lines += [
        f"| {markdown_cell(r.name)} | {r.rating:+.0f} | [{r.low:+.0f}, {r.high:+.0f}] | "
        f"{r.matches} |"
        for r in report.ratings
    ]
    exact = bool(report.exact)
    head = "| player | opponent | W/D/L | win rate | 95% Wilson | mean payoff ± 95% |"
    lines += ["", head + (" exact expected payoff |" if exact else "")]
    lines.append("|---|---|---|---:|---:|---:|" + ("---:|" if exact else ""))
    for p in report.pairs:
        row = (
            f"| {markdown_cell(p.player)} | {markdown_cell(p.other)} | "
            f"{p.wins}/{p.draws}/{p.losses} | {p.win_rate:.3f} | "
            f"[{p.win_low:.3f}, {p.win_high:.3f}] | {p.mean_payoff:+.4f} ± {p.payoff_ci95:.4f} |"
        )
        if exact:
            value = report.exact.get((p.player, p.other))
            row += " - |" if value is None else f" {value:+.4f} |"
        lines.append(row)
    return "\n".join(lines) + "\n"


def _print(report: ArenaReport, anchor: str, console: Console) -> None:
    table = Table(
        title=f"Ratings (Bradley-Terry on duplicate matches, Elo scale, {anchor} = 0, 95% "
        "bootstrap)"
    )
    for column in ("player", "rating", "interval", "matches"):
        table.add_column(column, justify="left" if column == "player" else "right")
    for r in report.ratings:
        interval = f"[{r.low:+.0f}, {r.high:+.0f}]"
        table.add_row(Text(r.name), f"{r.rating:+.0f}", interval, str(r.matches))
    console.print(table)
    pairs = Table(title="Head to head (both seats, the same deals)")
    columns = ["player", "opponent", "W/D/L", "win rate [95% Wilson]", "mean payoff ± 95%"]
    columns += ["exact"] if report.exact else []
    for column in columns:
        pairs.add_column(column, justify="left" if column in ("player", "opponent") else "right")
    for p in report.pairs:
        row = [Text(p.player), Text(p.other), f"{p.wins}/{p.draws}/{p.losses}"]
        row += [f"{p.win_rate:.3f} [{p.win_low:.3f}, {p.win_high:.3f}]"]
        row.append(f"{p.mean_payoff:+.4f} ± {p.payoff_ci95:.4f}")
        if report.exact:
            value = report.exact.get((p.player, p.other))
            row.append("-" if value is None else f"{value:+.4f}")
        pairs.add_row(*row)
    console.print(pairs)


def command(args: argparse.Namespace, argv: list[str]) -> int:
    """Run ``arena`` with its parsed ``args``; return the exit code."""
    console = Console() if Console().is_terminal else Console(width=200)
    names = list(args.agents)
    anchor = args.anchor or ("random" if "random" in names else names[0])
    start = time.perf_counter()
    try:
        if args.bootstrap < MIN_BOOTSTRAP:
            raise ValueError(
                f"--bootstrap counts the resamples behind the 95% intervals: give "
                f">= {MIN_BOOTSTRAP} (default 200), not {args.bootstrap}."
            )
        use_threads(threads_setting(args.threads))
        total = len(names) * (len(names) - 1) * max(args.games, 0)
        with (
            FolderLock(args.out, "arena") if args.out else contextlib.nullcontext(),
            RunProgress(console, "arena", total, unit="games") as progress,
        ):
            report = play_arena(
                args.env,
                names,
                args.games,
                args.seed,
                args.out,
                anchor,
                args.bootstrap,
                progress=lambda game: progress.trial_ended(),
            )
            _write(report, anchor, args)
    except KeyboardInterrupt:
        again = "python -m baselines.run " + " ".join(shlex.quote(a) for a in argv)
        console.print(f"Interrupted: every finished game is saved; rerun to resume: {again}")
        return EXIT_INTERRUPTED
    except SETTINGS_ERRORS as error:
        return settings_error(error)
    if not report.ratings:
        console.print(f"No ratings yet: the anchor {anchor} has no completed match.")
    _print(report, anchor, console)
    played = len(report.records) - report.resumed
    console.print(
        f"{len(report.records)} games ({report.resumed} resumed, {played} played) in "
        f"{time.perf_counter() - start:.1f} s."
    )
    if report.failed:
        print_warning(  # on stderr, as the runner's failures
            f"{len(report.failed)} games failed (a player's backend gave no answer): not "
            "counted; run the same command again to play them. First: "
            f"{report.failed[0]['errors'][0]}",
            "red",
        )
        return EXIT_FAILED_TRIALS
    return EXIT_OK


def _write(report: ArenaReport, anchor: str, args: argparse.Namespace) -> None:
    if not args.out or not report.ratings:
        return
    folder = Path(args.out)
    write_atomic(folder / "arena.md", markdown(report, anchor))
    if args.plots:
        from baselines.arena.plot import plot_ratings

        plot_ratings(report.ratings, anchor, folder / "ratings.png", args.env)

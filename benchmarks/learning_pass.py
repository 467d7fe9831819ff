"""pass@k of the policy being trained on small Minesweeper boards (the learning benchmark's part 3).

The greedy policy over the legal moves is deterministic and so is a board replayed in every attempt
of a trial, so one trial per board gives that board's pass@k exactly. The boards are a fixed,
held-out set of seeds; whatever a trainer plays in training, the score is always taken on trials
of three attempts that stop at the first win (LaMer's evaluation), with the trainer's memory.

Besides pass@k, the score says whether the policy reads its memory: ``mine_repeats`` is the share
of later attempts that open a cell an earlier attempt showed to be a mine (its losing move, which
the memory lists with its negative reward). A policy blind to its memory replays the losing
attempt move for move, so it reopens the mine whenever attempt 1 lost on one; reading the memory
brings the share down. Every later attempt counts, also one after an attempt that only ran out
of turns (no mine to reopen). ``known_mine_repeats`` counts only the later attempts that have a
known mine to avoid: the share of known mistakes repeated, 1 for a memory-blind greedy policy.
"""

from __future__ import annotations

from typing import Any

from benchmarks.learning_common import ATTEMPTS, EVAL_SEEDS, play_scored

__all__ = ["EVAL_SEEDS", "ATTEMPTS", "pass_scores", "mine_repeats"]


def mine_repeats(trajectory: Any) -> tuple[int, int, int]:
    """Return one trial's later attempts: ``(opening a known mine, played, with a known mine)``.

    A known mine is the cell an earlier attempt lost on: its last play turn, with a negative
    reward and a valid move (the variant gives a mine -0.1; every reveal earns more than 0).
    """
    episodes: dict[int, list[Any]] = {}
    for turn in trajectory.turns:
        if turn.phase == "play":
            episodes.setdefault(turn.episode, []).append(turn)
    known: set[str] = set()
    repeats = later = informed = 0
    for index in sorted(episodes):
        moves = [t.move for t in episodes[index]]
        if index > 0:
            later += 1
            informed += bool(known)
            repeats += bool(known.intersection(moves))
        last = episodes[index][-1]
        if last.reward < 0 and not last.invalid:
            known.add(last.move)
    return repeats, later, informed


def pass_scores(trainer: Any, seeds: tuple[int, ...] = EVAL_SEEDS) -> dict[str, Any]:
    """Return the greedy policy's pass@1..3 over ``seeds`` and its shares of mine repeats."""
    cases = [(trainer.args.opponent, seed) for seed in seeds]
    trajectories = play_scored(trainer, cases, ATTEMPTS, stop_on_success=True)
    passes = [t.result.pass_at_k for t in trajectories]
    counts = [mine_repeats(t) for t in trajectories]
    repeats, later, informed = (sum(c[k] for c in counts) for k in range(3))
    return {
        "pass_at_k": [sum(p[k] for p in passes) / len(passes) for k in range(ATTEMPTS)],
        "mine_repeats": repeats / later if later else 0.0,
        "later_attempts": later,
        "known_mine_repeats": repeats / informed if informed else 0.0,
        "known_mine_attempts": informed,
    }

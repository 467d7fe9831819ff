"""'% of achievable': a success rate divided by the exact bound of what any agent could reach.

The bounds come from :mod:`mage_envs.bounds`. Today that is Kuhn poker against an opponent with an
explicit policy: MAGE's "theoretical upper bound", the share of deals an agent wins when it knows
the deal and the opponent's policy (``clairvoyant_share``), for the seat of the trial. Groups where
no bound exists (other envs, search opponents such as MCTS) get no figure rather than a made-up one.

The clairvoyant share bounds pass@N only when every attempt of a trial faces the same game: the
same deal against a deterministic opponent (MAGE's CFR argmax, the Kuhn styles). Against a
stochastic opponent (``random``, ``cfr``) N attempts at a deal can win it more often than one
attempt can, so the share bounds only single-attempt trials (N = 1) there.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from baselines.summary import Interval

__all__ = ["trial_bound", "achievable_interval"]

_SEATS = {"first": 0, "second": 1}


@cache
def _kuhn_bound(opponent: str, seat: int, num_episodes: int) -> float | None:
    try:
        import pyspiel

        from mage_envs.bounds import kuhn_bounds, policy_table

        table = policy_table(opponent, pyspiel.load_game("kuhn_poker"))
        share = float(kuhn_bounds(opponent, seat).clairvoyant_share)
    except (ImportError, ValueError, TypeError, KeyError):
        return None
    deterministic = all(p in (0.0, 1.0) for moves in table.values() for _, p in moves)
    return share if deterministic or num_episodes == 1 else None


def trial_bound(record: dict[str, Any]) -> float | None:
    """Return the bound on the pass@N of ``record``'s trial, or ``None`` where none is known."""
    if record.get("env_id") != "mage/KuhnPoker-v0":
        return None
    trial = record["trial"]
    opponents, seats = trial.get("opponents") or [], trial.get("seats") or []
    if not opponents or not seats or seats[-1] not in _SEATS or not isinstance(opponents[0], str):
        return None
    return _kuhn_bound(opponents[0], _SEATS[seats[-1]], int(trial["num_episodes"]))


def achievable_interval(records: Sequence[dict[str, Any]], success: Interval) -> Interval | None:
    """Divide a success interval by the mean bound of the records (all must have a bound)."""
    bounds = [trial_bound(r) for r in records]
    if not bounds or any(b is None for b in bounds):
        return None
    mean_bound = sum(bounds) / len(bounds)
    if mean_bound <= 0:
        return None
    return Interval(
        success.value / mean_bound, success.low / mean_bound, success.high / mean_bound, success.n
    )

"""'% of achievable': a success rate divided by the exact bound of what any agent could reach.

The bounds come from :mod:`mage_envs.bounds`. Today that is Kuhn poker against an opponent with an
explicit policy: MAGE's "theoretical upper bound", the share of deals an agent wins when it knows
the deal and the opponent's policy (``clairvoyant_share``), for the seat of the trial. Groups where
no bound exists (other envs, search opponents such as MCTS) get no figure rather than a made-up one.

The clairvoyant share bounds a single attempt, and pass@N of a trial whose attempts replay the same
task (``same_task=True``, the default): replaying the seed replays the deal and the opponent's own
random draws, so every attempt faces the same game, and some line of play wins it or none does
(in Kuhn poker, always betting and calling wins whenever anything does). With a fresh deal per
attempt, N attempts can beat the one-attempt share, so such trials (N > 1) get no figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

from baselines.summary import Interval

__all__ = ["trial_bound", "achievable_interval"]

_SEATS = {"first": 0, "second": 1}


@cache
def _kuhn_bound(opponent: str, seat: int) -> float | None:
    try:
        from mage_envs.bounds import kuhn_bounds

        return float(kuhn_bounds(opponent, seat).clairvoyant_share)
    except (ImportError, ValueError, TypeError, KeyError):
        return None


@cache
def _plays_kuhn_poker(env_id: str) -> bool:
    """Whether ``env_id`` is made by :class:`~mage_envs.games.KuhnPokerEnv` (bounds fit it)."""
    import mage_envs  # noqa: F401  (registers the ids)
    from mage_envs.games import KuhnPokerEnv

    try:
        entry = gym.spec(env_id).entry_point
        creator = entry if callable(entry) else load_env_creator(entry)
    except (gym.error.Error, ImportError, AttributeError, ValueError):
        return False
    return isinstance(creator, type) and issubclass(creator, KuhnPokerEnv)


def trial_bound(record: dict[str, Any]) -> float | None:
    """Return the bound on the pass@N of ``record``'s trial, or ``None`` where none is known."""
    if not _plays_kuhn_poker(str(record.get("env_id"))):
        return None
    trial = record["trial"]
    if int(trial["num_episodes"]) > 1 and record.get("same_task") is not True:
        return None
    opponents, seats = trial.get("opponents") or [], trial.get("seats") or []
    if not opponents or len(set(seats)) != 1 or seats[0] not in _SEATS:
        return None  # a seat that changes within the trial has no single bound
    if len(set(opponents)) != 1 or not isinstance(opponents[0], str):
        return None
    return _kuhn_bound(opponents[0], _SEATS[seats[0]])


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

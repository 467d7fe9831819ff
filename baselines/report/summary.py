"""Summary statistics of evaluation records, each with a 95% confidence interval.

- Rates (pass@k, success per attempt, win/draw/loss) use the Wilson score interval, which stays
  inside [0, 1] and is sensible at 0% and 100%, where the normal interval collapses to zero width.
- Means (returns) use Student's t interval over trials (each trial counts once). A game cut off
  by invalid answers (a forfeit) is scored in every return as the env scores it: the game's worst
  payoff by default (:class:`~mage_envs.games.openspiel_env.OpenSpielTextEnv`), a loss in W/D/L;
  the forfeit rate is the share of games played that were forfeited. Under a published answer
  rule the final return is also given as the published env scored it (a forfeit 0).
- The off-format rate is the share of play steps whose move was read although the answer was not
  in the requested format (no ``<action>`` tag, or other words around the move in it); strict
  parsing (``parse="strict"``) counts those steps invalid instead.
- pass@k for a trial is 1 if any of its first k attempts succeeded; a trial that stopped early on a
  success counts as solved for every later k (LaMer/MAGE's evaluation). Success per attempt k is
  the success rate among the trials that played attempt k.
- Diversity (LaMer's exploration measure) is computed over the trials of the same task (same env,
  opponent and task seed, different agent seeds): the share of distinct action sequences, the
  entropy of the distribution of whole sequences, and the entropy of the individual actions, in
  bits, averaged over tasks with at least two trials.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Interval",
    "GroupSummary",
    "t_quantile",
    "mean_interval",
    "wilson_interval",
    "entropy_bits",
    "summarize",
    "diversity",
    "published_final_return",
]

Z95 = 1.959963984540054
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


@dataclass(frozen=True)
class Interval:
    """An estimate with its 95% confidence interval ``[low, high]`` over ``n`` observations."""

    value: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        """Half the interval's width (NaN when undefined)."""
        return (self.high - self.low) / 2


def t_quantile(df: int) -> float:
    """Return the 0.975 quantile of Student's t with ``df`` degrees of freedom.

    Exact table values to three decimals up to 30, then the Cornish-Fisher expansion.

    Example:
        >>> t_quantile(10), round(t_quantile(100), 3)
        (2.228, 1.984)
    """
    if df < 1:
        raise ValueError("t_quantile needs df >= 1.")
    if df <= len(_T975):
        return _T975[df - 1]
    z = Z95
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def mean_interval(values: Sequence[float]) -> Interval:
    """Return the mean and its Student-t 95% interval (NaN bounds with fewer than two values).

    Example:
        >>> iv = mean_interval([1.0, 2.0, 3.0])
        >>> iv.value, round(iv.half_width, 4)
        (2.0, 2.4843)
    """
    n = len(values)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    mean = math.fsum(values) / n
    if n < 2:
        return Interval(mean, math.nan, math.nan, n)
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = t_quantile(n - 1) * math.sqrt(variance / n)
    return Interval(mean, mean - half, mean + half, n)


def wilson_interval(successes: float, n: int) -> Interval:
    """Return a rate and its Wilson score 95% interval.

    Example:
        >>> iv = wilson_interval(0, 10)
        >>> iv.value, iv.low, round(iv.high, 4)
        (0.0, 0.0, 0.2775)
    """
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    p = successes / n
    z2 = Z95**2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # the clamps only absorb rounding: mathematically low <= p <= high within [0, 1]
    return Interval(p, min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half)), n)


def entropy_bits(items: Iterable[Any]) -> float:
    """Return the Shannon entropy, in bits, of the empirical distribution of ``items``.

    Example:
        >>> entropy_bits(["a", "b", "a", "b"]), entropy_bits(["a", "a"])
        (1.0, 0.0)
    """
    counts = Counter(items)
    total = sum(counts.values())
    if total == 0:
        return math.nan
    return max(0.0, -sum(c / total * math.log2(c / total) for c in counts.values()))


@dataclass
class GroupSummary:
    """The figures of one group of trials (one agent on one env against one opponent spec).

    ``win``, ``draw``, ``loss`` and ``forfeit_rate`` are empty intervals (``n == 0``) for envs
    without an opponent. ``steps`` counts every step, reflections included; ``invalid_rate`` and
    ``off_format_rate`` are over ``play_steps`` (a reflection is never an invalid action);
    ``forfeit_rate`` is over the games played. Both leave out what records of older versions
    did not measure (their play steps' format, their games before the final one).
    """

    key: dict[str, Any]
    trials: int
    num_episodes: int
    pass_at_k: list[Interval]
    success_at: list[Interval]
    mean_return: Interval
    final_return: Interval
    win: Interval
    draw: Interval
    loss: Interval
    invalid_rate: Interval
    off_format_rate: Interval
    forfeit_rate: Interval
    failed_steps: int
    steps: int
    play_steps: int
    tokens_per_trial: float
    wall_s: float
    diversity: dict[str, float] = field(default_factory=dict)
    achievable: Interval | None = None
    published_final_return: Interval | None = None
    """The final return as the published env scored it (:func:`published_final_return`), for
    groups played under a published answer rule; ``None`` otherwise."""


def _rate(flags: Sequence[bool]) -> Interval:
    return wilson_interval(sum(bool(f) for f in flags), len(flags))


def _pass_and_success(trials: Sequence[dict[str, Any]], n: int) -> tuple[list, list]:
    passes, successes = [], []
    for k in range(n):
        passes.append(_rate([bool(t["pass_at_k"][k]) for t in trials if len(t["pass_at_k"]) > k]))
        successes.append(_rate([t["successes"][k] for t in trials if len(t["successes"]) > k]))
    return passes, successes


def _outcome(record: dict[str, Any]) -> float:
    """The sign of the final attempt: its game payoff when recorded, else its return.

    A final game cut off by invalid answers has no payoff and counts as a loss (a forfeit),
    whatever its return: with no invalid-action penalty that return is 0, which is no draw.
    """
    if record.get("final_forfeit"):  # also where a forfeit is scored 0 (forfeit_payoff: 0)
        return -1.0
    payoff = record.get("final_payoff")
    return record["trial"]["final_return"] if payoff is None else payoff


def published_final_return(record: dict[str, Any]) -> float | None:
    """The final return as the published env scored it, for a record played under its rules.

    MAGE's envs cut a game off at ``max_turns`` and gave it no payoff, so an agent writing junk
    until then scored 0, above one that plays and loses; ours score that forfeit lost
    (``forfeit_payoff``). ``None`` for records played under our own answer rules.

    Example:
        >>> record = {"env_kwargs": {"answer_rules": "mage", "reward_scale": 5},
        ...           "trial": {"final_return": -10.0}, "final_forfeit": True, "final_payoff": -2}
        >>> published_final_return(record)
        0.0
    """
    kwargs = record.get("env_kwargs") or {}
    if kwargs.get("answer_rules", "ours") == "ours":
        return None
    final = float(record["trial"]["final_return"])
    if record.get("final_forfeit") and record.get("final_payoff") is not None:
        final -= float(record["final_payoff"]) * float(kwargs.get("reward_scale", 1.0))
    return final


def _forfeits(record: dict[str, Any]) -> list[bool]:
    """Per game played whose end is known, whether it was forfeited.

    Records of older versions know only whether the final game was (``final_forfeit``), or
    nothing: their other games are left out rather than counted as played out.
    """
    trial = record["trial"]
    if "forfeits" in trial:
        return [bool(f) for f in trial["forfeits"]]
    return [bool(record["final_forfeit"])] if "final_forfeit" in record else []


Achievable = Callable[[Sequence[dict[str, Any]], Interval], "Interval | None"]
"""``f(records, pass@N interval) -> interval as a share of the bound`` (or ``None``)."""


def summarize_group(
    key: dict[str, Any], records: Sequence[dict[str, Any]], achievable: Achievable | None = None
) -> GroupSummary:
    """Return the :class:`GroupSummary` of ``records`` (all of the same group).

    ``achievable``, when given, turns the group's pass@N into a share of what is achievable.
    """
    trials = [r["trial"] for r in records]
    n = max(t["num_episodes"] for t in trials)
    passes, successes = _pass_and_success(trials, n)
    two_player = any(o is not None for t in trials for o in t.get("opponents") or [])
    outcomes = [_outcome(r) for r in records] if two_player else []
    steps = sum(r.get("steps", 0) for r in records)
    play_steps = sum(r["play_steps"] for r in records)
    invalid = sum(r.get("invalid_steps", 0) for r in records)
    # over the records that measured it (older versions did not)
    measured = [r for r in records if "off_format_steps" in r]
    off_format = sum(r["off_format_steps"] for r in measured)
    forfeits = [f for r in records for f in _forfeits(r)] if two_player else []
    tokens = sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in records)
    published = [published_final_return(r) for r in records]
    return GroupSummary(
        key=key,
        trials=len(records),
        num_episodes=n,
        pass_at_k=passes,
        success_at=successes,
        mean_return=mean_interval([math.fsum(t["returns"]) / len(t["returns"]) for t in trials]),
        final_return=mean_interval([t["final_return"] for t in trials]),
        win=_rate([o > 0 for o in outcomes]),
        draw=_rate([o == 0 for o in outcomes]),
        loss=_rate([o < 0 for o in outcomes]),
        invalid_rate=wilson_interval(invalid, play_steps),
        off_format_rate=wilson_interval(off_format, sum(r["play_steps"] for r in measured)),
        forfeit_rate=_rate(forfeits),
        failed_steps=sum(r.get("failed_steps", 0) for r in records),
        steps=steps,
        play_steps=play_steps,
        tokens_per_trial=tokens / len(records),
        wall_s=math.fsum(r.get("wall_s", 0.0) for r in records),
        diversity=diversity(records),
        achievable=achievable(records, passes[-1]) if achievable else None,
        published_final_return=(
            mean_interval(published) if None not in published else None  # type: ignore[arg-type]
        ),
    )


def diversity(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Return the mean distinct-sequence share, sequence entropy and action entropy over tasks.

    Records of the same task share ``record["task"]``; each record's ``actions`` is a list of
    episodes, each a list of the moves played. Tasks with a single trial are skipped; without any
    task of two or more trials the result is empty.

    Example:
        >>> recs = [{"task": "t", "actions": [["a", "b"]]}, {"task": "t", "actions": [["a", "c"]]}]
        >>> diversity(recs)
        {'tasks': 1, 'distinct_share': 1.0, 'sequence_entropy': 1.0, 'action_entropy': 1.5}
    """
    by_task: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_task[record.get("task")].append(record)
    groups = [group for group in by_task.values() if len(group) >= 2]
    if not groups:
        return {}
    distinct, seq_entropy, act_entropy = [], [], []
    for group in groups:
        sequences = [tuple(tuple(ep) for ep in r.get("actions", [])) for r in group]
        distinct.append(len(set(sequences)) / len(sequences))
        seq_entropy.append(entropy_bits(sequences))
        act_entropy.append(entropy_bits(a for seq in sequences for ep in seq for a in ep))
    return {
        "tasks": len(groups),
        "distinct_share": math.fsum(distinct) / len(groups),
        "sequence_entropy": math.fsum(seq_entropy) / len(groups),
        "action_entropy": math.fsum(act_entropy) / len(groups),
    }


def summarize(
    records: Iterable[dict[str, Any]],
    by: Sequence[str] | Callable[[dict[str, Any]], dict[str, Any]] = (
        "agent",
        "env_id",
        "opponent",
    ),
    achievable: Achievable | None = None,
) -> list[GroupSummary]:
    """Group records and summarise each group, in sorted key order.

    Args:
        records: Trial records as written by the runner.
        by: Record fields to group on, or a function record -> key dict (e.g. the seat of the
            final attempt).
        achievable: See :func:`summarize_group`.
    """
    key_of = by if callable(by) else (lambda r: {name: r.get(name) for name in by})
    groups: dict[tuple, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for record in records:
        key = key_of(record)
        groups.setdefault(tuple(sorted((k, str(v)) for k, v in key.items())), (key, []))[1].append(
            record
        )
    return [summarize_group(key, recs, achievable) for _, (key, recs) in sorted(groups.items())]

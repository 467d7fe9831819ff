"""The arena's figures: Bradley-Terry ratings with bootstrap intervals, and head-to-head records.

- **Ratings**: a Bradley-Terry model fitted by ``choix`` (``ilsr_pairwise_dense``: the maximum
  of the likelihood of the win counts, with a weak prior, ``alpha=0.01``, so that a player who
  never lost keeps a finite rating). The unit compared is a *duplicate match*
  (:func:`duplicate_matches`): the two games of one deal, seats swapped; the player with the
  higher total payoff over the two wins it (duplicate scoring, as in poker competitions: the
  cards cancel, and in poker the chips count, not how many small pots were won). A tie counts
  half a win for each side. Ratings are on the
  Elo scale (``400 / ln 10`` times the log-strength), with the *anchor* at 0: a scripted player
  (``random`` by default) that plays the same way in every run, so that ratings of different
  runs with the same anchor can be compared. The 95% interval comes from a paired bootstrap:
  the deals are resampled with replacement, each deal with every game played on it (both seat
  orders of every pair), so luck that cancels in the games does not widen the interval.
- **Head to head**: for each pair, wins, draws and losses of the row player over both seats, its
  win rate with a Wilson score interval (:func:`wilson_interval`), and its mean payoff.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Rating",
    "HeadToHead",
    "wilson_interval",
    "ratings",
    "head_to_head",
    "duplicate_matches",
    "ELO",
]

ELO = 400.0 / math.log(10.0)
"""Elo points per unit of Bradley-Terry log-strength."""

PRIOR = 0.01
"""``choix``'s ``alpha``: a weak prior that keeps an undefeated player's rating finite."""


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% with the default ``z``).

    Example:
        >>> [round(x, 4) for x in wilson_interval(8, 10)]
        [0.4902, 0.9433]
        >>> wilson_interval(0, 0)
        (0.0, 1.0)
    """
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Rating:
    """One player's rating.

    Attributes:
        name: The player.
        rating: Elo-scale rating, the anchor at 0.
        low: The bootstrap interval's lower end (2.5th percentile).
        high: Its upper end (97.5th percentile).
        matches: The compared units it took part in (duplicate matches: two games each).
    """

    name: str
    rating: float
    low: float
    high: float
    matches: int


@dataclass(frozen=True)
class HeadToHead:
    """The record of ``player`` against ``other`` over both seats.

    Attributes:
        player: The row player.
        other: Its opponent.
        wins: Games ``player`` won (a higher payoff than the other's).
        draws: Games drawn.
        losses: Games lost.
        mean_payoff: ``player``'s mean payoff per game.
        win_low: Wilson 95% interval of the win rate, lower end.
        win_high: Its upper end.
        payoff_ci95: Half-width of the mean payoff's 95% interval (1.96 standard errors of the
            per-deal means: the two orders of a deal are one sample, so the cards cancel).
    """

    player: str
    other: str
    wins: int
    draws: int
    losses: int
    mean_payoff: float
    win_low: float
    win_high: float
    payoff_ci95: float = math.inf

    @property
    def games(self) -> int:
        """Games played."""
        return self.wins + self.draws + self.losses

    @property
    def win_rate(self) -> float:
        """Share of games won."""
        return self.wins / self.games if self.games else 0.0


Outcome = tuple[str, str, int, float, float]
"""(first player, second player, deal, first's payoff, second's payoff) of one played game; the
higher payoff wins."""


def duplicate_matches(outcomes: Sequence[Outcome]) -> list[Outcome]:
    """Pair the two games of each deal and pair of players into one match of total payoffs.

    A deal whose other order is not played yet (an arena stopped midway) is left out.

    Example:
        >>> duplicate_matches([("a", "b", 0, 2.0, -2.0), ("b", "a", 0, 1.0, -1.0)])
        [('a', 'b', 0, 1.0, -1.0)]
    """
    seen: dict[tuple[str, str, int], tuple[float, float]] = {}
    matches = []
    for first, second, deal, x, y in outcomes:
        other = seen.pop((second, first, deal), None)
        if other is None:
            seen[(first, second, deal)] = (x, y)
            continue
        # ``other`` is the game with ``second`` first: its payoffs are (second's, first's).
        matches.append((second, first, deal, other[0] + y, other[1] + x))
    return matches


def _wins_matrix(names: Sequence[str], outcomes: Sequence[Outcome]) -> np.ndarray:
    index = {n: i for i, n in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for first, second, _, mine, theirs in outcomes:
        a, b = index[first], index[second]
        if mine > theirs:
            wins[a, b] += 1
        elif mine < theirs:
            wins[b, a] += 1
        else:
            wins[a, b] += 0.5
            wins[b, a] += 0.5
    return wins


def _fit(names: Sequence[str], outcomes: Sequence[Outcome], anchor: int) -> np.ndarray:
    try:
        import choix
    except ImportError:
        raise ValueError(
            "The arena's ratings need choix: pip install 'mage-metarl[arena]' (or pip install "
            "choix)."
        ) from None
    strengths = choix.ilsr_pairwise_dense(_wins_matrix(names, outcomes), alpha=PRIOR)
    return ELO * (strengths - strengths[anchor])


def ratings(
    names: Sequence[str],
    outcomes: Sequence[Outcome],
    anchor: str | None = None,
    bootstrap: int = 200,
    seed: int = 0,
) -> list[Rating]:
    """Fit the Bradley-Terry ratings of ``names``, best first, with bootstrap intervals.

    Args:
        names: The players.
        outcomes: The compared units: the duplicate matches (:func:`duplicate_matches`), or
            single games.
        anchor: The player rated 0 (default: the first name).
        bootstrap: Bootstrap resamples of the deals.
        seed: Seeds the resampling.

    A player without a completed match (its every game failed so far) is left out: it has no
    rating, only the prior's.

    Raises:
        ValueError: If the anchor is not a player or has no completed match.
    """
    names = list(names)
    anchor = names[0] if anchor is None else anchor
    if anchor not in names:
        raise ValueError(f"--anchor {anchor!r} is not one of the players ({', '.join(names)}).")
    played = {n: 0 for n in names}
    for first, second, *_ in outcomes:
        played[first] += 1
        played[second] += 1
    if not played[anchor]:
        raise ValueError(f"The anchor {anchor!r} has no completed match: there is nothing to rate.")
    names = [n for n in names if played[n]]
    at = names.index(anchor)
    point = _fit(names, outcomes, at)
    by_deal: dict[int, list[Outcome]] = {}
    for outcome in outcomes:
        by_deal.setdefault(outcome[2], []).append(outcome)
    deals = sorted(by_deal)
    rng = np.random.default_rng(seed)
    draws = np.empty((bootstrap, len(names)))
    for b in range(bootstrap):
        picked = rng.integers(len(deals), size=len(deals))
        draws[b] = _fit(names, [o for i in picked for o in by_deal[deals[i]]], at)
    low, high = np.percentile(draws, [2.5, 97.5], axis=0) if bootstrap else (point, point)
    table = [
        Rating(n, float(point[i]), float(low[i]), float(high[i]), played[n])
        for i, n in enumerate(names)
    ]
    return sorted(table, key=lambda r: -r.rating)


def head_to_head(names: Sequence[str], outcomes: Sequence[Outcome]) -> list[HeadToHead]:
    """Every ordered pair's record over both seats (``player`` before ``other`` in ``names``)."""
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            games = [(d, x, y) for f, s, d, x, y in outcomes if (f, s) == (a, b)]
            games += [(d, y, x) for f, s, d, x, y in outcomes if (f, s) == (b, a)]
            if not games:
                continue
            wins = sum(x > y for _, x, y in games)
            losses = sum(x < y for _, x, y in games)
            low, high = wilson_interval(wins, len(games))
            mean = float(np.mean([x for _, x, _ in games]))
            by_deal: dict[int, list[float]] = {}
            for deal, x, _ in games:
                by_deal.setdefault(deal, []).append(x)
            samples = np.array([np.mean(v) for v in by_deal.values()])
            n = len(samples)
            half = 1.96 * float(samples.std(ddof=1)) / math.sqrt(n) if n > 1 else math.inf
            draws = len(games) - wins - losses
            rows.append(HeadToHead(a, b, wins, draws, losses, mean, low, high, half))
    return rows

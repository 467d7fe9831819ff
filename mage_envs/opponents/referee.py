"""A referee: play two policies against each other for K seeded games and summarise the payoffs."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyspiel

from mage_envs.opponents.base import Opponent, SeatView
from mage_envs.opponents.registry import make_opponent

__all__ = ["MatchResult", "play_match", "play_game"]


@dataclass(frozen=True)
class MatchResult:
    """Payoffs of the first policy over a match.

    Attributes:
        payoffs: The first policy's payoff in each game, in order.
        seats: The first policy's seat in each game.
        mean: The mean payoff.
        ci95: Half-width of the 95% confidence interval of the mean (normal approximation,
            1.96 standard errors; ``inf`` for a single game). It is 0 when every payoff is the
            same, which says nothing about the games not played: read it with the game count.
        wins: Games with a positive payoff.
        draws: Games with a zero payoff.
        losses: Games with a negative payoff.
    """

    payoffs: tuple[float, ...]
    seats: tuple[int, ...]
    mean: float
    ci95: float
    wins: int
    draws: int
    losses: int

    @classmethod
    def from_payoffs(cls, payoffs: list[float], seats: list[int]) -> MatchResult:
        """Summarise a list of payoffs."""
        values = np.asarray(payoffs, dtype=float)
        n = len(values)
        half = 1.96 * float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else math.inf
        return cls(
            tuple(float(v) for v in values),
            tuple(seats),
            float(values.mean()),
            half,
            int((values > 0).sum()),
            int((values == 0).sum()),
            int((values < 0).sum()),
        )

    def __str__(self) -> str:
        return (
            f"{self.mean:+.4f} +/- {self.ci95:.4f} over {len(self.payoffs)} games "
            f"(W/D/L {self.wins}/{self.draws}/{self.losses})"
        )


def play_game(
    game: pyspiel.Game, bots: tuple[Opponent, Opponent], rng: np.random.Generator
) -> list[float]:
    """Play one game with ``bots[p]`` in seat ``p`` (already reset); return both returns.

    Raises:
        ValueError: If a bot returns an illegal action.
    """
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
            continue
        player = state.current_player()
        view = SeatView.from_state(state, player)
        action = bots[player].act(view)
        if action not in view.legal_actions:
            raise ValueError(
                f"{bots[player].name!r} chose illegal action {action!r}; "
                f"legal: {list(view.legal_actions)}."
            )
        state.apply_action(int(action))
    return [float(r) for r in state.returns()]


def play_match(
    game: pyspiel.Game | str,
    first: Opponent | str,
    second: Opponent | str,
    num_games: int,
    seed: int = 0,
    first_seat: int | None = None,
) -> MatchResult:
    """Play ``first`` against ``second`` for ``num_games`` seeded games.

    Args:
        game: A two-player OpenSpiel game, or its name.
        first: The policy whose payoffs are reported (an opponent object or name).
        second: The other policy.
        num_games: How many games.
        seed: Seeds chance and both policies; the same seed replays the same match.
        first_seat: 0 or 1 to fix ``first``'s seat; ``None`` alternates, starting in seat 0.

    Raises:
        ValueError: If the game is not two-player and sequential, or the settings are invalid.

    Example:
        >>> result = play_match("kuhn_poker", "always-bet", "always-pass", num_games=10)
        >>> result.mean, result.wins  # always-bet wins the pot every time
        (1.0, 10)
    """
    if isinstance(game, str):
        game = pyspiel.load_game(game)
    sequential = game.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    if game.num_players() != 2 or not sequential:
        raise ValueError(f"The referee plays a two-player sequential game; {game} is not one.")
    if num_games < 1:
        raise ValueError(f"num_games must be >= 1, not {num_games}.")
    if first_seat not in (None, 0, 1):
        raise ValueError(f"first_seat must be None, 0 or 1, not {first_seat!r}.")
    first, second = make_opponent(first, game), make_opponent(second, game)
    rng = np.random.default_rng(seed)
    payoffs, seats = [], []
    for i in range(num_games):
        seat = i % 2 if first_seat is None else first_seat
        # 63-bit, not mage_envs.seeds.draw_seed: the bounds table's seeded MCTS records
        # (docs/opponents.md, tests/test_bounds.py) are played from these seeds.
        first_seed, second_seed = (int(s) for s in rng.integers(2**63 - 1, size=2))
        first.reset(first_seed, seat)
        second.reset(second_seed, 1 - seat)
        bots = (first, second) if seat == 0 else (second, first)
        payoffs.append(play_game(game, bots, rng)[seat])
        seats.append(seat)
    return MatchResult.from_payoffs(payoffs, seats)

"""Exact bounds on what an agent can score against an opponent: results as "% of achievable".

Kuhn poker, for an opponent with an explicit policy (:class:`~mage_envs.opponents.PolicyOpponent`)
and the agent's seat:

- ``best_response_value``: expected chips per hand of a best response (OpenSpiel's C++
  ``TabularBestResponse``). Averaged over the two seats it is the opponent's exploitability.
- ``best_success_probability``: the highest probability of a positive payoff any strategy reaches
  (a best response to the same policy, with utility 1 for a win and 0 otherwise; OpenSpiel's
  ``BestResponsePolicy`` with that utility).
- ``clairvoyant_share``: MAGE's "theoretical upper bound": the probability of a positive payoff
  when the agent also knows the opponent's card (the same deal repeats in a trial), i.e. the
  best success probability given each deal, averaged over deals. For a deterministic opponent it
  is the share of winnable deals. It bounds one episode, and also pass@N of a ``same_task`` trial
  in Kuhn poker: the replayed seed replays the opponent's random draws with the deal, and the
  event "some line wins" then has this same probability. It does not bound pass@N over fresh
  deals.

Tic-tac-toe: against an opponent with an explicit policy, the exact best win probability and best
expected payoff from each seat (expectimax over the opponent's move probabilities; "beatable" means
a win probability above 0). MCTS is stochastic search with no explicit policy, so for it we report
the empirical win/draw/loss record of perfect play over seeded games.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyspiel
from open_spiel.python.algorithms import best_response

from mage_envs.opponents import (
    MatchResult,
    Opponent,
    PerfectPlayOpponent,
    PolicyOpponent,
    SeatView,
    make_opponent,
    opponent_entries,
    play_match,
)
from mage_envs.opponents.cfr import PolicyTable
from mage_envs.opponents.openspiel_policy import OpponentPolicy

__all__ = [
    "KUHN_GAME_VALUE",
    "KUHN_OPPONENTS",
    "TIC_TAC_TOE_OPPONENTS",
    "KuhnBounds",
    "TablePolicy",
    "TicTacToeBounds",
    "bounds_opponents",
    "policy_table",
    "exploitability",
    "best_response_value",
    "best_success_probability",
    "clairvoyant_success_share",
    "kuhn_bounds",
    "kuhn_bounds_table",
    "tic_tac_toe_bounds",
    "tic_tac_toe_bounds_table",
    "percent_of_achievable",
]

KUHN_GAME_VALUE = -1.0 / 18.0
"""Value of Kuhn poker for the first player under equilibrium play (Kuhn, 1950)."""


def bounds_opponents(game: str) -> tuple[str, ...]:
    """Return the registered opponents of ``game`` that the bounds table lists, in order.

    Example:
        >>> bounds_opponents("kuhn_poker")[:3]
        ('random', 'conservative', 'aggressive')
    """
    loaded = pyspiel.load_game(game)
    return tuple(e.name for e in opponent_entries(loaded) if e.bounds)


KUHN_OPPONENTS = bounds_opponents("kuhn_poker")
"""The Kuhn poker opponents of the bounds table (from the opponent registry)."""

TIC_TAC_TOE_OPPONENTS = bounds_opponents("tic_tac_toe")
"""The tic-tac-toe opponents of the bounds table (from the opponent registry)."""


def _policy_opponent(opponent: str | Opponent, game: pyspiel.Game) -> PolicyOpponent:
    built = make_opponent(opponent, game)
    if not isinstance(built, PolicyOpponent):
        raise TypeError(
            f"Exact bounds need an opponent with explicit action probabilities (a PolicyOpponent); "
            f"{built.name!r} is a {type(built).__name__}."
        )
    return built


def policy_table(opponent: str | Opponent, game: pyspiel.Game) -> PolicyTable:
    """Return the opponent's policy at every information state of ``game``, in OpenSpiel's format.

    Walks the whole game tree, so it is meant for small games (Kuhn poker, Leduc poker).
    """
    bot = _policy_opponent(opponent, game)
    table: PolicyTable = {}
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            view = SeatView.from_state(state, state.current_player())
            if view.information_state not in table:
                probs = bot.action_probabilities(view)
                table[view.information_state] = [(a, float(probs.get(a, 0.0))) for a in probs]
        stack.extend(state.child(a) for a in state.legal_actions())
    return table


def exploitability(opponent: str | Opponent, game: pyspiel.Game) -> float:
    """Return the opponent's exploitability: a best response's mean gain over the two seats."""
    return float(pyspiel.exploitability(game, policy_table(opponent, game)))


def best_response_value(opponent: str | Opponent, game: pyspiel.Game, seat: int) -> float:
    """Return the expected payoff of a best response in ``seat`` against the opponent's policy."""
    responder = pyspiel.TabularBestResponse(game, _check_seat(seat), policy_table(opponent, game))
    return float(responder.value(game.new_initial_state().history_str()))


class _TableOpponent:
    """The policy of a :func:`policy_table`, as an opponent with action probabilities."""

    def __init__(self, table: PolicyTable) -> None:
        self._table = table

    def action_probabilities(self, view: SeatView) -> dict[int, float]:
        return dict(self._table[view.information_state])


class TablePolicy(OpponentPolicy):
    """The OpenSpiel policy of a :func:`policy_table` (to check the C++ and Python tools agree)."""

    def __init__(self, game: pyspiel.Game, table: PolicyTable) -> None:
        super().__init__(game, _TableOpponent(table))


class _UtilityBestResponse(best_response.BestResponsePolicy):
    """OpenSpiel's best response, with the payoff at the leaves mapped through ``utility``."""

    def __init__(self, game, player, policy, utility: Callable[[float], float], root_state=None):
        self._utility = utility
        super().__init__(game, player, policy, root_state=root_state)

    def value(self, state):
        """Return the best responder's value, ``utility(payoff)`` at the leaves."""
        if state.is_terminal():
            return self._utility(state.player_return(self._player_id))
        return super().value(state)


def _wins(payoff: float) -> float:
    return float(payoff > 0)


def best_success_probability(opponent: str | Opponent, game: pyspiel.Game, seat: int) -> float:
    """Return the highest probability of a positive payoff in ``seat`` against the opponent."""
    policy = OpponentPolicy(game, _policy_opponent(opponent, game))
    responder = _UtilityBestResponse(game, _check_seat(seat), policy, _wins)
    return float(responder.value(game.new_initial_state()))


def clairvoyant_success_share(opponent: str | Opponent, game: pyspiel.Game, seat: int) -> float:
    """Return the success probability of an agent that also knows the opening deal (MAGE's bound).

    Chance outcomes before the first decision (the deal) are enumerated; for each, the agent best
    responds knowing them, and the win probabilities are averaged with the deal probabilities.
    """
    policy = OpponentPolicy(game, _policy_opponent(opponent, game))
    total = 0.0
    for state, probability in _deals(game.new_initial_state()):
        responder = _UtilityBestResponse(game, _check_seat(seat), policy, _wins, root_state=state)
        total += probability * responder.value(state)
    return float(total)


def _deals(state: pyspiel.State, probability: float = 1.0):
    """Yield (state, probability) for each outcome of the chance nodes before the first move."""
    if not state.is_chance_node():
        yield state, probability
        return
    for action, p in state.chance_outcomes():
        yield from _deals(state.child(action), probability * p)


def _check_seat(seat: int) -> int:
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 (first) or 1 (second), not {seat!r}.")
    return seat


@dataclass(frozen=True)
class KuhnBounds:
    """What the best possible agent scores against one Kuhn poker opponent from one seat.

    Attributes:
        opponent: The opponent's name.
        seat: The agent's seat (0 first, 1 second).
        best_response_value: Expected chips per hand of a best response.
        best_success_probability: Highest probability of a positive payoff of any strategy.
        clairvoyant_share: Success probability when the agent also knows the deal (MAGE's bound).
        nash_value: The seat's equilibrium value (-1/18 first, +1/18 second): what a safe
            strategy guarantees against anyone.
    """

    opponent: str
    seat: int
    best_response_value: float
    best_success_probability: float
    clairvoyant_share: float
    nash_value: float


def kuhn_bounds(opponent: str | Opponent, seat: int) -> KuhnBounds:
    """Return the exact bounds against a Kuhn poker ``opponent`` with the agent in ``seat``.

    Example:
        >>> bounds = kuhn_bounds("always-bet", seat=0)
        >>> round(bounds.best_response_value, 4), bounds.best_success_probability
        (0.3333, 0.5)
    """
    game = pyspiel.load_game("kuhn_poker")
    bot = _policy_opponent(opponent, game)
    return KuhnBounds(
        opponent=bot.name,
        seat=_check_seat(seat),
        best_response_value=best_response_value(bot, game, seat),
        best_success_probability=best_success_probability(bot, game, seat),
        clairvoyant_share=clairvoyant_success_share(bot, game, seat),
        nash_value=KUHN_GAME_VALUE if seat == 0 else -KUHN_GAME_VALUE,
    )


def kuhn_bounds_table(opponents: Sequence[str | Opponent] = KUHN_OPPONENTS) -> list[KuhnBounds]:
    """Return :func:`kuhn_bounds` for every opponent and both seats."""
    return [kuhn_bounds(opponent, seat) for opponent in opponents for seat in (0, 1)]


@dataclass(frozen=True)
class TicTacToeBounds:
    """What the best possible agent achieves against one tic-tac-toe opponent from one seat.

    Attributes:
        opponent: The opponent's name.
        seat: The agent's seat (0 plays X first, 1 plays O second).
        best_win_probability: Exact highest win probability (``None`` for opponents without an
            explicit policy, such as MCTS).
        best_expected_payoff: Exact best expected payoff, win 1 / draw 0 / loss -1 (or ``None``).
        perfect_play: Empirical record of perfect play against the opponent (``None`` when the
            exact figures are given).
    """

    opponent: str
    seat: int
    best_win_probability: float | None
    best_expected_payoff: float | None
    perfect_play: MatchResult | None

    @property
    def beatable(self) -> bool | None:
        """Whether some strategy wins with positive probability (``None`` if only empirical)."""
        if self.best_win_probability is None:
            return None
        return self.best_win_probability > 0


def _expectimax(state, seat, bot, utility, memo) -> float:
    # Keyed by board: every tic-tac-toe policy here depends on the position only.
    key = str(state)
    if key not in memo:
        if state.is_terminal():
            memo[key] = utility(state.returns()[seat])
        elif state.current_player() == seat:
            memo[key] = max(
                _expectimax(state.child(a), seat, bot, utility, memo) for a in state.legal_actions()
            )
        else:
            probs = bot.action_probabilities(SeatView.from_state(state, state.current_player()))
            memo[key] = sum(
                p * _expectimax(state.child(a), seat, bot, utility, memo)
                for a, p in probs.items()
                if p > 0
            )
    return memo[key]


def tic_tac_toe_bounds(
    opponent: str | Opponent, seat: int, games: int = 20, seed: int = 0
) -> TicTacToeBounds:
    """Return the bounds against a tic-tac-toe ``opponent`` with the agent in ``seat``.

    Exact for opponents with explicit move probabilities that depend on the position only (all
    built-in styles); otherwise (MCTS) the record of ``games`` seeded games of perfect play.

    Example:
        >>> bounds = tic_tac_toe_bounds("order-rows", seat=1)
        >>> bounds.best_win_probability, bounds.beatable
        (1.0, True)
    """
    game = pyspiel.load_game("tic_tac_toe")
    bot = make_opponent(opponent, game)
    _check_seat(seat)
    if not isinstance(bot, PolicyOpponent):
        record = play_match(game, PerfectPlayOpponent(game), bot, games, seed, first_seat=seat)
        return TicTacToeBounds(bot.name, seat, None, None, record)
    root = game.new_initial_state()
    win = _expectimax(root, seat, bot, _wins, {})
    payoff = _expectimax(root, seat, bot, float, {})
    return TicTacToeBounds(bot.name, seat, win, payoff, None)


def tic_tac_toe_bounds_table(
    opponents: Sequence[str | Opponent] = TIC_TAC_TOE_OPPONENTS, games: int = 20, seed: int = 0
) -> list[TicTacToeBounds]:
    """Return :func:`tic_tac_toe_bounds` for every opponent and both seats."""
    return [
        tic_tac_toe_bounds(opponent, seat, games, seed) for opponent in opponents for seat in (0, 1)
    ]


def percent_of_achievable(success_rate: float, bound: float) -> float:
    """Return a success rate as a percentage of a bound (for example the clairvoyant share).

    Example:
        >>> percent_of_achievable(0.5, 0.625)
        80.0
    """
    if not bound > 0:
        raise ValueError(f"bound must be positive, not {bound}: nothing is achievable.")
    return 100.0 * success_rate / bound

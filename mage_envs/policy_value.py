"""The exact value of a given Kuhn poker policy against each opponent, from each seat.

A learner's policy is a table: for each information state of its seat (OpenSpiel's
``information_state_string``), the probability of each action id. Against an opponent with an
explicit policy (:class:`~mage_envs.opponents.PolicyOpponent`), the expected payoff is a finite
sum over the deals and betting lines, computed by OpenSpiel's ``expected_game_score.policy_value``:
no sampling, no noise. Training uses it to score the current greedy policy exactly (Kuhn poker has
six information states per seat) and to keep the best checkpoint.

Information states missing from the table are played uniformly: they are the states the learner
never reaches against that opponent, so they do not change the value.

:func:`kuhn_exploitability` reads one table as the policy of *both* seats (a self-play learner's)
and returns its NashConv and exploitability from OpenSpiel's best responses: how much a best
responder gains over the game's value, exactly. It needs every one of the twelve states.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import pyspiel
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

from mage_envs.bounds import KUHN_OPPONENTS, _check_seat, best_response_value, policy_table
from mage_envs.opponents import Opponent

__all__ = [
    "KuhnExploitability",
    "KuhnPolicyValue",
    "LearnerTable",
    "kuhn_exploitability",
    "greedy_table",
    "kuhn_information_states",
    "kuhn_policy_value",
    "kuhn_policy_values",
]

LearnerTable = Mapping[str, Mapping[int, float]]
"""A learner's policy: information state -> {action id: probability}."""


@cache
def _kuhn() -> pyspiel.Game:
    return pyspiel.load_game("kuhn_poker")


def kuhn_information_states(seat: int) -> list[str]:
    """Return the information states at which ``seat`` acts in Kuhn poker, sorted.

    Example:
        >>> kuhn_information_states(0)
        ['0', '0pb', '1', '1pb', '2', '2pb']
    """
    _check_seat(seat)
    found: set[str] = set()
    stack = [_kuhn().new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.current_player() == seat:
            found.add(state.information_state_string(seat))
        stack.extend(state.child(a) for a in state.legal_actions())
    return sorted(found)


def greedy_table(table: LearnerTable) -> dict[str, dict[int, float]]:
    """Return the deterministic policy that plays each state's most probable action.

    Ties go to the lowest action id, so the result is reproducible.

    Example:
        >>> greedy_table({"0": {0: 0.4, 1: 0.6}, "1": {0: 0.5, 1: 0.5}})
        {'0': {0: 0.0, 1: 1.0}, '1': {0: 1.0, 1: 0.0}}
    """
    result = {}
    for info, probs in table.items():
        best = min(probs, key=lambda a: (-probs[a], a))
        result[info] = {a: float(a == best) for a in sorted(probs)}
    return result


class _LearnerPolicy(openspiel_policy.Policy):
    """The learner's table at its own states; uniform where the table has no entry."""

    def __init__(self, game: pyspiel.Game, seat: int, table: LearnerTable) -> None:
        super().__init__(game, [seat])
        self._table = table

    def action_probabilities(self, state, player_id=None):
        """Return ``{action: probability}`` at ``state`` (normalised, legal actions only)."""
        player = state.current_player() if player_id is None else player_id
        legal = state.legal_actions(player)
        probs = self._table.get(state.information_state_string(player))
        if probs is None:
            return {a: 1.0 / len(legal) for a in legal}
        return _normalised(probs, legal, state.information_state_string(player))


def _normalised(probs: Mapping[int, float], legal: list[int], info: str) -> dict[int, float]:
    kept = {a: float(probs.get(a, 0.0)) for a in legal}
    if any(p < 0 for p in kept.values()) or not sum(kept.values()) > 0:
        raise ValueError(
            f"The policy at information state {info!r} gives the legal actions {legal} the "
            f"probabilities {kept}: they must be non-negative with a positive sum."
        )
    total = sum(kept.values())
    return {a: p / total for a, p in kept.items()}


class _OpponentPolicy(openspiel_policy.Policy):
    def __init__(self, game: pyspiel.Game, seat: int, opponent: str | Opponent) -> None:
        super().__init__(game, [seat])
        self._table = policy_table(opponent, game)

    def action_probabilities(self, state, player_id=None):
        player = state.current_player() if player_id is None else player_id
        return dict(self._table[state.information_state_string(player)])


def kuhn_policy_value(table: LearnerTable, opponent: str | Opponent, seat: int) -> float:
    """Return the learner's expected chips per hand in ``seat`` against ``opponent``.

    Args:
        table: The learner's policy (see :data:`LearnerTable`); missing states play uniformly.
        opponent: A Kuhn opponent with explicit probabilities (a name such as ``"aggressive"``,
            or a :class:`~mage_envs.opponents.PolicyOpponent`).
        seat: 0 (the learner acts first) or 1.

    Raises:
        ValueError: If the seat is not 0 or 1, or a state's probabilities are not a distribution.
        TypeError: If the opponent has no explicit policy (MCTS, an endpoint).

    Example:
        >>> always_bet = {s: {1: 1.0} for s in kuhn_information_states(0)}
        >>> round(kuhn_policy_value(always_bet, "aggressive", seat=0), 4)
        -0.3333
    """
    game = _kuhn()
    learner = _LearnerPolicy(game, _check_seat(seat), table)
    other = _OpponentPolicy(game, 1 - seat, opponent)
    policies = [learner, other] if seat == 0 else [other, learner]
    values = expected_game_score.policy_value(game.new_initial_state(), policies)
    return float(values[seat])


@dataclass(frozen=True)
class KuhnPolicyValue:
    """The exact value of a learner's policy against one opponent from one seat.

    Attributes:
        opponent: The opponent's name.
        seat: The learner's seat (0 first, 1 second).
        value: Expected chips per hand of the learner's policy.
        best_response_value: Expected chips per hand of a best response (the most achievable).
    """

    opponent: str
    seat: int
    value: float
    best_response_value: float

    @property
    def share_of_best(self) -> float | None:
        """``value / best_response_value`` (``None`` when the best response gains nothing)."""
        if self.best_response_value <= 0:
            return None
        return self.value / self.best_response_value


def kuhn_policy_values(
    table: LearnerTable,
    opponents: Sequence[str] = KUHN_OPPONENTS,
    seats: Sequence[int] = (0, 1),
) -> list[KuhnPolicyValue]:
    """Return :func:`kuhn_policy_value` for every opponent and seat, beside the best response.

    Example:
        >>> always_bet = {s: {1: 1.0} for seat in (0, 1) for s in kuhn_information_states(seat)}
        >>> [round(v.value, 3) for v in kuhn_policy_values(always_bet, ["always-pass"], [0])]
        [1.0]
    """
    return [
        KuhnPolicyValue(
            opponent, seat, kuhn_policy_value(table, opponent, seat), _best_value(opponent, seat)
        )
        for opponent in opponents
        for seat in seats
    ]


@cache
def _best_value(opponent: str, seat: int) -> float:
    return best_response_value(opponent, _kuhn(), seat)


@dataclass(frozen=True)
class KuhnExploitability:
    """How far a Kuhn poker policy, played in both seats, is from a Nash equilibrium.

    Attributes:
        nash_conv: The sum over the seats of a best response's gain against the policy
            (OpenSpiel's ``nash_conv``; 0 at an equilibrium, 11/12 for the uniform policy).
        exploitability: ``nash_conv / 2``, the mean gain per seat (OpenSpiel's).
    """

    nash_conv: float
    exploitability: float


class _TablePolicy(openspiel_policy.Policy):
    """One table as the policy of every seat."""

    def __init__(self, game: pyspiel.Game, table: LearnerTable) -> None:
        super().__init__(game, list(range(game.num_players())))
        self._table = table

    def action_probabilities(self, state, player_id=None):
        """Return ``{action: probability}`` at ``state`` from the table (normalised)."""
        player = state.current_player() if player_id is None else player_id
        info = state.information_state_string(player)
        return _normalised(self._table[info], state.legal_actions(player), info)


def kuhn_exploitability(table: LearnerTable) -> KuhnExploitability:
    """Return the exact NashConv and exploitability of ``table`` played in both seats.

    Args:
        table: Information state -> {action id: probability} at all twelve states of Kuhn poker
            (both seats': a self-play learner's policy).

    Raises:
        ValueError: If a state is missing, or its probabilities are not a distribution.

    Example:
        >>> uniform = {s: {0: 0.5, 1: 0.5} for p in (0, 1) for s in kuhn_information_states(p)}
        >>> result = kuhn_exploitability(uniform)
        >>> round(result.nash_conv, 6), round(result.exploitability, 6)  # 11/12, 11/24
        (0.916667, 0.458333)
    """
    game = _kuhn()
    missing = [s for p in (0, 1) for s in kuhn_information_states(p) if s not in table]
    if missing:
        raise ValueError(
            f"The policy has no probabilities at the information states {missing}: the "
            "exploitability of a policy needs it at every state of both seats."
        )
    policy = _TablePolicy(game, table)
    nash_conv = float(openspiel_exploitability.nash_conv(game, policy))
    return KuhnExploitability(nash_conv, nash_conv / game.num_players())

import pyspiel
import pytest
from open_spiel.python.algorithms import best_response

from mage_envs.bounds import TablePolicy, best_response_value, policy_table
from mage_envs.policy_value import (
    greedy_table,
    kuhn_information_states,
    kuhn_policy_value,
    kuhn_policy_values,
)

GAME = pyspiel.load_game("kuhn_poker")


def constant(action):
    return {s: {action: 1.0} for seat in (0, 1) for s in kuhn_information_states(seat)}


def best_response_table(opponent, seat):
    policy = TablePolicy(GAME, policy_table(opponent, GAME))
    responder = best_response.BestResponsePolicy(GAME, seat, policy)
    table = {}
    for info in kuhn_information_states(seat):
        try:
            table[info] = {responder.best_response_action(info): 1.0}
        except KeyError:  # a state the opponent never lets the learner reach
            pass
    return table


@pytest.mark.parametrize(
    ("opponent", "seat", "expected"),
    [
        ("aggressive", 0, -1 / 3),  # J and Q lose 2 to the caller's K, win 1 vs a folded J
        ("aggressive", 1, 0.0),
        ("conservative", 0, 0.0),
        ("always-pass", 0, 1.0),
        ("always-pass", 1, 1.0),
        ("always-bet", 0, 0.0),  # both always put in 2 chips: a fair showdown
    ],
)
def test_always_bet_has_the_known_values(opponent, seat, expected):
    assert kuhn_policy_value(constant(1), opponent, seat) == pytest.approx(expected)


@pytest.mark.parametrize("opponent", ["aggressive", "conservative", "balanced", "cfr", "random"])
@pytest.mark.parametrize("seat", [0, 1])
def test_the_best_response_reaches_the_best_response_value(opponent, seat):
    value = kuhn_policy_value(best_response_table(opponent, seat), opponent, seat)
    assert value == pytest.approx(best_response_value(opponent, GAME, seat))


def test_the_equilibrium_against_itself_is_the_game_value():
    cfr = policy_table("cfr", GAME)
    table = {s: dict(cfr[s]) for s in kuhn_information_states(0)}
    assert kuhn_policy_value(table, "cfr", 0) == pytest.approx(-1 / 18, abs=2e-3)


def test_missing_states_play_uniformly_and_actions_matter():
    uniform = kuhn_policy_value({}, "aggressive", 0)
    half = {s: {0: 0.5, 1: 0.5} for s in kuhn_information_states(0)}
    assert kuhn_policy_value(half, "aggressive", 0) == pytest.approx(uniform)
    bet, fold = (
        kuhn_policy_value(constant(1), "aggressive", 0),
        kuhn_policy_value(constant(0), "aggressive", 0),
    )
    assert (bet, fold) == (pytest.approx(-1 / 3), pytest.approx(-1.0))


def test_values_come_beside_the_best_response_and_greedy_picks_the_argmax():
    table = {s: {0: 0.2, 1: 0.8} for seat in (0, 1) for s in kuhn_information_states(seat)}
    assert greedy_table(table) == constant(1) | {s: {0: 0.0, 1: 1.0} for s in table}
    rows = kuhn_policy_values(greedy_table(table), ["aggressive"], [0, 1])
    assert [(r.opponent, r.seat) for r in rows] == [("aggressive", 0), ("aggressive", 1)]
    assert rows[1].best_response_value == pytest.approx(1 / 3)
    assert rows[1].share_of_best == pytest.approx(0.0)


def test_bad_tables_and_seats_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="information state '0'"):
        kuhn_policy_value({"0": {0: 0.0, 1: 0.0}}, "aggressive", 0)
    with pytest.raises(ValueError, match="seat must be"):
        kuhn_policy_value({}, "aggressive", 2)

"""Exact bounds: hand derivations, independent enumerations and OpenSpiel's own tools agree."""

import itertools
from fractions import Fraction
from pathlib import Path

import gymnasium as gym
import pyspiel
import pytest
from open_spiel.python.algorithms import best_response

import mage_envs  # noqa: F401
from baselines.bounds.command import bounds_markdown, main
from mage_envs.bounds import (
    KUHN_GAME_VALUE,
    KUHN_OPPONENTS,
    TablePolicy,
    best_response_value,
    exploitability,
    kuhn_bounds,
    percent_of_achievable,
    policy_table,
    tic_tac_toe_bounds,
)
from mage_envs.opponents import SeatView, make_opponent

KUHN = pyspiel.load_game("kuhn_poker")

# Worked on paper (chips per hand, probabilities), agent seat 0 = first, 1 = second:
# always-bet, first: J check-fold -1, Q bet 0 (wins vs J, loses vs K), K bet +2 -> 1/3;
#   success: J never, Q half the time, K always -> 1/2. Second: facing a bet, J folds -1,
#   Q calls 0, K calls +2 -> 1/3, success 1/2.
# conservative, first: J bets (Q folds +1, K calls -2) -1/2, Q checks (J checks +1, K bets and
#   Q folds -1) 0, K +1 -> 1/6. Winnable deals: (J,Q) by a bluff, (Q,J), (K,J), (K,Q) -> 4/6.
# conservative, second: its K bets and we fold (-1, deals (K,J), (K,Q)); otherwise it checks and
#   we bet, it folds (+1, four deals) -> (4 - 2) / 6 = 1/3.
HAND = {
    ("always-bet", 0): (Fraction(1, 3), Fraction(1, 2), Fraction(1, 2)),
    ("always-bet", 1): (Fraction(1, 3), Fraction(1, 2), Fraction(1, 2)),
    ("conservative", 0): (Fraction(1, 6), Fraction(2, 3), Fraction(2, 3)),
    ("conservative", 1): (Fraction(1, 3), Fraction(2, 3), Fraction(2, 3)),
    ("always-pass", 0): (Fraction(1), Fraction(1), Fraction(1)),
}


@pytest.mark.parametrize(("name", "seat"), sorted(HAND))
def test_kuhn_bounds_match_hand_derivations(name, seat):
    value, success, clairvoyant = HAND[(name, seat)]
    bounds = kuhn_bounds(name, seat)
    assert bounds.best_response_value == pytest.approx(float(value), abs=1e-12)
    assert bounds.best_success_probability == pytest.approx(float(success), abs=1e-12)
    assert bounds.clairvoyant_share == pytest.approx(float(clairvoyant), abs=1e-12)


@pytest.mark.parametrize("name", KUHN_OPPONENTS)
def test_cpp_best_response_agrees_with_python_best_response(name):
    policy = TablePolicy(KUHN, policy_table(name, KUHN))
    for seat in (0, 1):
        python_value = best_response.BestResponsePolicy(KUHN, seat, policy).value(
            KUHN.new_initial_state()
        )
        assert best_response_value(name, KUHN, seat) == pytest.approx(python_value, abs=1e-12)


def clairvoyant_by_enumeration(name: str, seat: int) -> float:
    """Average over the six deals of the best win probability knowing the deal (expectimax)."""
    opponent = make_opponent(name, KUHN)

    def best(state):
        if state.is_terminal():
            return float(state.returns()[seat] > 0)
        children = {a: best(state.child(a)) for a in state.legal_actions()}
        if state.current_player() == seat:
            return max(children.values())
        probs = opponent.action_probabilities(SeatView.from_state(state, 1 - seat))
        return sum(p * children[a] for a, p in probs.items())

    total = 0.0
    for first in range(3):
        for second in range(3):
            if first != second:
                state = KUHN.new_initial_state()
                state.apply_action(first)
                state.apply_action(second)
                total += best(state) / 6
    return total


def always_bet_success(name: str, seat: int) -> float:
    """Win probability of betting and calling always, from the opponent's bet probabilities."""
    bet = {info: dict(row)[1] for info, row in policy_table(name, KUHN).items()}
    total = 0.0
    for first in range(3):
        for second in range(3):
            if first == second:
                continue
            mine, theirs = (first, second) if seat == 0 else (second, first)
            if seat == 0:  # we bet; it folds ("Xb") or calls and the higher card wins
                fold = 1 - bet[f"{theirs}b"]
                total += (fold + (1 - fold) * (mine > theirs)) / 6
            else:  # it bets first (we call), or checks and faces our bet ("Xpb")
                opens, fold = bet[str(theirs)], 1 - bet[f"{theirs}pb"]
                total += (
                    opens * (mine > theirs) + (1 - opens) * (fold + (1 - fold) * (mine > theirs))
                ) / 6
    return total


@pytest.mark.parametrize("name", KUHN_OPPONENTS)
@pytest.mark.parametrize("seat", [0, 1])
def test_success_bounds_agree_with_independent_enumerations(name, seat):
    bounds = kuhn_bounds(name, seat)
    assert bounds.clairvoyant_share == pytest.approx(clairvoyant_by_enumeration(name, seat))
    # Betting and calling never lower the chance of a positive payoff in Kuhn poker (a fold
    # always loses, a bet adds fold equity), so always-bet is success-optimal and knowing the
    # opponent's card cannot raise the success probability.
    assert bounds.best_success_probability == pytest.approx(always_bet_success(name, seat))
    assert bounds.clairvoyant_share == pytest.approx(bounds.best_success_probability)


def test_cfr_bounds_are_the_game_value_and_argmax_is_exploitable():
    for seat, sign in ((0, 1), (1, -1)):
        assert kuhn_bounds("cfr", seat).best_response_value == pytest.approx(
            sign * KUHN_GAME_VALUE, abs=2e-3
        )
    assert exploitability("cfr", KUHN) <= 1e-3
    argmax = exploitability("cfr-argmax", KUHN)
    mean_br = (
        kuhn_bounds("cfr-argmax", 0).best_response_value
        + kuhn_bounds("cfr-argmax", 1).best_response_value
    ) / 2
    assert argmax == pytest.approx(mean_br)
    # By hand: cfr-argmax (first) checks a Jack or Queen, folds a Jack and calls with a Queen,
    # bets a King; (second) bets or calls a King, checks and folds a Jack or Queen. Against it,
    # first seat: J bets (+1 vs Q, -2 vs K) -1/2, Q checks (+1 vs J, -1 vs K) 0, K +1 -> 1/6.
    # Second seat: facing a bet (a King) fold -1; after a check (J or Q) bet: J folds +1, Q calls
    # a King +2 and beats a Jack -1 -> (-1 - 1 + 1 + 1 + 2 - 1) / 6 = 1/6.
    assert argmax == pytest.approx(1 / 6, abs=1e-12)
    assert exploitability("random", KUHN) == pytest.approx(11 / 24)  # NashConv 11/12, halved


def pure_strategy_optimum(name: str, seat: int) -> tuple[float, float]:
    """(best value, best win probability) over the 64 pure strategies of ``seat``: brute force."""
    table = policy_table(name, KUHN)
    mine = sorted(info for info in table if len(info) % 2 == 1 - seat)  # "0", "0pb" vs "0p", "0b"

    def outcome(state, choice):
        if state.is_terminal():
            payoff = state.returns()[seat]
            return payoff, float(payoff > 0)
        if state.is_chance_node():
            branches = state.chance_outcomes()
        elif state.current_player() == seat:
            branches = [(choice[state.information_state_string()], 1.0)]
        else:
            branches = table[state.information_state_string()]
        results = [(p, outcome(state.child(a), choice)) for a, p in branches if p > 0]
        return sum(p * v for p, (v, _) in results), sum(p * w for p, (_, w) in results)

    results = [
        outcome(KUHN.new_initial_state(), dict(zip(mine, actions, strict=True)))
        for actions in itertools.product((0, 1), repeat=len(mine))
    ]
    return max(v for v, _ in results), max(w for _, w in results)


@pytest.mark.parametrize("name", KUHN_OPPONENTS)
def test_kuhn_bounds_equal_the_best_pure_strategy(name):
    # An independent derivation: in a finite game some pure strategy is a best response.
    for seat in (0, 1):
        value, success = pure_strategy_optimum(name, seat)
        bounds = kuhn_bounds(name, seat)
        assert bounds.best_response_value == pytest.approx(value, abs=1e-12)
        assert bounds.best_success_probability == pytest.approx(success, abs=1e-12)


def test_kuhn_bounds_refuse_opaque_opponents_and_bad_seats():
    class Opaque:
        name = "opaque"

        def reset(self, seed, player):
            pass

        def act(self, view):
            return 0

    with pytest.raises(TypeError, match="explicit action probabilities"):
        kuhn_bounds(Opaque(), 0)
    with pytest.raises(ValueError, match="seat must be 0"):
        kuhn_bounds("random", 2)


def test_tic_tac_toe_order_rows_is_beaten_by_hand_lines():
    # Second seat: X plays the first free cell in row order. O: (1, 2), (2, 2), (3, 2) wins.
    env = gym.make("mage/TicTacToe-v0", opponent="order-rows", seat="second")
    env.reset(seed=0)
    for move in ("(1, 2)", "(2, 2)", "(3, 2)"):
        _, reward, terminated, _, _ = env.step(move)
    assert terminated and reward == 1.0
    # First seat: centre, O takes (1,1); corner (1,3), O takes (1,2); (3,1) completes a diagonal.
    env = gym.make("mage/TicTacToe-v0", opponent="order-rows", seat="first")
    env.reset(seed=0)
    for move in ("(2, 2)", "(1, 3)", "(3, 1)"):
        _, reward, terminated, _, _ = env.step(move)
    assert terminated and reward == 1.0
    for seat in (0, 1):
        bounds = tic_tac_toe_bounds("order-rows", seat)
        assert bounds.best_win_probability == 1.0 and bounds.beatable


def test_tic_tac_toe_random_is_beatable_but_not_surely():
    for seat in (0, 1):
        bounds = tic_tac_toe_bounds("random", seat)
        assert 0.9 < bounds.best_win_probability < 1.0
        assert bounds.best_expected_payoff <= bounds.best_win_probability
    # From the first seat a loss is impossible with best play, so payoff equals win probability.
    first = tic_tac_toe_bounds("random", 0)
    assert first.best_expected_payoff == pytest.approx(first.best_win_probability)


def test_tic_tac_toe_mcts_gets_an_empirical_record():
    bounds = tic_tac_toe_bounds("mcts-1000", 0, games=10)
    assert bounds.best_win_probability is None and bounds.beatable is None
    record = bounds.perfect_play
    assert record.losses == 0 and record.wins + record.draws == 10


def test_percent_of_achievable():
    assert percent_of_achievable(0.25, 0.5) == 50.0
    with pytest.raises(ValueError, match="bound must be positive"):
        percent_of_achievable(0.1, 0.0)


def test_bounds_report_prints_every_opponent_and_seat(capsys):
    text = bounds_markdown(games=4)
    for name in KUHN_OPPONENTS:
        assert f"| {name} | first |" in text and f"| {name} | second |" in text
    assert "| mcts-1000 | second (O) |" in text and "| order-rows | first (X) | yes |" in text
    assert main(["--games", "4"]) == 0
    assert "## Kuhn poker" in capsys.readouterr().out
    assert main(["--games", "0"]) == 2
    assert "--games must be >= 1" in capsys.readouterr().err


def test_docs_show_the_table_the_report_prints():
    docs = (Path(__file__).parents[1] / "docs" / "opponents.md").read_text()
    assert docs[docs.index("## Kuhn poker\n") :].strip() == bounds_markdown().strip()

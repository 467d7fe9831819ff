"""Tic-tac-toe opponents: MCTS strength, scripted styles, perfect play on tactical positions."""

import pyspiel
import pytest

from mage_envs.opponents import MCTSOpponent, PerfectPlayOpponent, SeatView, make_opponent
from mage_envs.opponents.referee import play_match
from mage_envs.opponents.tic_tac_toe import minimax_value, optimal_actions

TTT = pyspiel.load_game("tic_tac_toe")


def position(moves: str) -> pyspiel.State:
    """Play cells written as digits 0-8 (3 * row + col), X first."""
    state = TTT.new_initial_state()
    for cell in moves:
        state.apply_action(int(cell))
    return state


def view(moves: str) -> SeatView:
    state = position(moves)
    return SeatView.from_state(state, state.current_player())


def test_mcts_1000_never_loses_to_random():
    result = play_match(TTT, "mcts-1000", "random", num_games=50, seed=0)
    assert result.losses == 0 and set(result.seats) == {0, 1}


def test_mcts_1000_draws_against_perfect_play_as_first_player():
    result = play_match(TTT, "mcts-1000", PerfectPlayOpponent(TTT), 30, seed=0, first_seat=0)
    assert result.draws == 30


def test_mcts_1000_as_second_player_holds_perfect_play_almost_always():
    # With OpenSpiel's default evaluator (one random rollout per leaf) a perfect X that varies its
    # optimal moves still wins about 1% of games (6 of 500 measured); three rollouts close it.
    default = play_match(TTT, "mcts-1000", PerfectPlayOpponent(TTT), 100, seed=0, first_seat=1)
    assert default.wins == 0 and default.losses <= 5
    stronger = MCTSOpponent(TTT, simulations=1000, rollouts=3)
    result = play_match(TTT, stronger, PerfectPlayOpponent(TTT), 30, seed=0, first_seat=1)
    assert result.draws == 30
    # The weak bot, for contrast, loses a large share: the check above can fail.
    weak = play_match(TTT, "mcts-100", PerfectPlayOpponent(TTT), 100, seed=0, first_seat=1)
    assert weak.losses >= 20


def test_mcts_takes_a_win_and_blocks_a_loss():
    # X has 0 and 1, O has 3 and 4; X to move wins at 2.
    assert make_opponent("mcts-1000", TTT).act(view("0314")) == 2
    # X has 0 and 1, O has 4; O to move must block at 2.
    assert make_opponent("mcts-1000", TTT).act(view("041")) == 2


def test_mcts_is_seeded_and_named_by_simulations():
    def moves(seed):
        bot = make_opponent("mcts-37", TTT)
        bot.reset(seed, 0)
        return [bot.act(view("")) for _ in range(8)]

    assert moves(5) == moves(5)
    assert make_opponent("mcts-37", TTT).name == "mcts-37"
    with pytest.raises(ValueError, match="perfect-information"):
        make_opponent("mcts-100", pyspiel.load_game("kuhn_poker"))
    with pytest.raises(ValueError, match="simulations and rollouts"):
        MCTSOpponent(TTT, simulations=0)


def test_mcts_plays_connect_four():
    game = pyspiel.load_game("connect_four")
    bot = make_opponent("mcts-50", game)
    bot.reset(0, 0)
    state = game.new_initial_state()
    assert bot.act(SeatView.from_state(state, 0)) in state.legal_actions()


@pytest.mark.parametrize(
    ("name", "moves", "expected"),
    [
        ("order-center", "", 4),
        ("order-center", "4", 0),
        ("order-corners", "0", 2),
        ("order-edges", "", 1),
        ("order-rows", "01", 2),
        ("order-rows", "0314", 2),
    ],
)
def test_preferred_orders_take_the_first_free_cell(name, moves, expected):
    bot = make_opponent(name, TTT)
    assert bot.act(view(moves)) == expected
    assert bot.action_probabilities(view(moves))[expected] == 1.0


def test_biased_random_favours_centre_then_corners():
    probs = make_opponent("biased-random", TTT).action_probabilities(view(""))
    assert probs[4] == pytest.approx(4 / 16)  # weights: centre 4, corners 2, edges 1
    assert probs[0] == pytest.approx(2 / 16) and probs[1] == pytest.approx(1 / 16)
    assert sum(probs.values()) == pytest.approx(1)


def test_perfect_play_values_and_tactics():
    assert minimax_value(position("")) == 0.0
    assert minimax_value(position("01")) == 1.0  # O on an edge next to X's corner loses
    assert optimal_actions(position("0314")) == [2]  # X wins at once
    assert optimal_actions(position("041")) == [2]  # O must block
    assert optimal_actions(position("0")) == [4]  # against a corner, only the centre draws


def test_perfect_play_never_loses_to_random_and_is_seeded():
    result = play_match(TTT, "perfect", "random", num_games=100, seed=1)
    assert result.losses == 0 and result.wins > 80
    again = play_match(TTT, "perfect", "random", num_games=100, seed=1)
    assert again.payoffs == result.payoffs


def test_tic_tac_toe_styles_refuse_other_games():
    kuhn = pyspiel.load_game("kuhn_poker")
    for name in ("order-center", "biased-random", "perfect"):
        with pytest.raises(ValueError, match="cannot play"):
            make_opponent(name, kuhn)
    with pytest.raises(ValueError, match="tic_tac_toe only"):
        PerfectPlayOpponent(pyspiel.load_game("connect_four"))


def test_weighted_random_refuses_infinite_or_missing_weights():
    from mage_envs.opponents import WeightedRandomOpponent

    for weights in ((float("inf"),) + (1.0,) * 8, (float("nan"),) * 9, (1.0,) * 8):
        with pytest.raises(ValueError, match="nine positive finite numbers"):
            WeightedRandomOpponent("bad", weights)


def test_only_opponents_that_read_the_state_get_a_copy_of_it():
    import gymnasium as gym

    import mage_envs  # noqa: F401  (registers the ids)

    seen = {}
    for name in ("random", "order-center", "perfect"):
        env = gym.make("mage/TicTacToe-v0", opponent=name, seat="second").unwrapped
        opponent = env.opponent
        act = opponent.act

        def spy(view, act=act, name=name):
            seen[name] = view.state
            return act(view)

        opponent.act = spy
        env.reset(seed=3)
    assert seen["random"] is None and seen["order-center"] is None
    assert isinstance(seen["perfect"], pyspiel.State)  # it searches from the state
    state = position("4")
    assert SeatView.from_state(state, 1, with_state=False).state is None
    assert SeatView.from_state(state, 1).state.history() == [4]

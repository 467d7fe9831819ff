"""Opponent names, clear errors (never a silent random fallback), and the referee."""

import math

import pyspiel
import pytest
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import expected_game_score

from mage_envs.opponents import (
    Opponent,
    PolicyOpponent,
    RandomOpponent,
    SeatView,
    make_opponent,
    opponent_names,
    play_match,
    register_opponent,
)
from mage_envs.opponents.referee import MatchResult

KUHN = pyspiel.load_game("kuhn_poker")
TTT = pyspiel.load_game("tic_tac_toe")


def test_names_per_game():
    kuhn = set(opponent_names(KUHN))
    assert {"random", "conservative", "aggressive", "balanced", "cfr", "cfr-argmax"} <= kuhn
    assert {"always-pass", "always-bet"} <= kuhn and "mcts-100" not in kuhn
    ttt = set(opponent_names(TTT))
    assert {"mcts-100", "mcts-1000", "order-center", "biased-random", "perfect"} <= ttt
    assert "conservative" not in ttt and "cfr" not in ttt
    assert {"cfr", "cfr-argmax", "random"} <= set(opponent_names(pyspiel.load_game("leduc_poker")))


@pytest.mark.parametrize("game", [KUHN, TTT])
def test_every_listed_name_builds_a_named_opponent(game):
    for name in opponent_names(game):
        opponent = make_opponent(name, game)
        assert isinstance(opponent, Opponent) and opponent.name == name


def test_unknown_name_lists_valid_names_and_populations():
    with pytest.raises(ValueError) as error:
        make_opponent("mcts", TTT)  # MAGE's silent-random spec: here an error
    message = str(error.value)
    assert "Unknown opponent 'mcts'" in message
    assert "conservative" in message and "mcts-N" in message and "mage-kuhn-train" in message
    with pytest.raises(ValueError, match="Unknown opponent 'mcts-0'"):
        make_opponent("mcts-0", TTT)


def test_wrong_game_and_wrong_type_are_clear():
    with pytest.raises(ValueError, match="'conservative' cannot play tic_tac_toe"):
        make_opponent("conservative", TTT)
    with pytest.raises(TypeError, match="not int"):
        make_opponent(3, TTT)
    bot = RandomOpponent()
    assert make_opponent(bot, TTT) is bot and isinstance(make_opponent(None, TTT), RandomOpponent)


def test_register_a_new_opponent(scratch_registries):  # undone after the test
    class FirstLegal(PolicyOpponent):
        name = "first-legal"

        def action_probabilities(self, view):
            return {a: float(a == view.legal_actions[0]) for a in view.legal_actions}

    register_opponent("first-legal", lambda game: FirstLegal(), supports=lambda g: True)
    assert "first-legal" in opponent_names(TTT)
    assert play_match(TTT, "first-legal", "first-legal", 2).payoffs == (1.0, -1.0)


def test_referee_known_outcomes_and_interval():
    result = play_match(KUHN, "always-bet", "always-pass", num_games=10)
    assert (result.mean, result.ci95, result.wins) == (1.0, 0.0, 10)
    assert result.seats == (0, 1) * 5
    single = play_match(KUHN, "random", "random", num_games=1)
    assert math.isinf(single.ci95)
    summary = MatchResult.from_payoffs([2.0, -1.0, 0.0, 1.0], [0, 1, 0, 1])
    assert (summary.wins, summary.draws, summary.losses) == (2, 1, 1)
    assert summary.mean == 0.5
    assert summary.ci95 == pytest.approx(1.96 * math.sqrt(5 / 3) / 2)


def test_referee_mean_matches_the_exact_value():
    # conservative (first) against always-bet (second), computed exactly by OpenSpiel.
    policies = [
        openspiel_policy.tabular_policy_from_callable(
            KUHN, lambda s, n=name: make_opponent(n, KUHN).action_probabilities(_view(s))
        )
        for name in ("conservative", "always-bet")
    ]
    exact = expected_game_score.policy_value(KUHN.new_initial_state(), policies)[0]
    result = play_match(KUHN, "conservative", "always-bet", 2000, seed=3, first_seat=0)
    assert abs(result.mean - exact) < result.ci95
    assert play_match(KUHN, "conservative", "always-bet", 2000, seed=3, first_seat=0) == result


def _view(state):
    return SeatView.from_state(state, state.current_player())


def test_referee_rejects_illegal_moves_and_bad_settings():
    class Cheater:
        name = "cheater"

        def reset(self, seed, player):
            pass

        def act(self, view):
            return 99

    with pytest.raises(ValueError, match="'cheater' chose illegal action 99"):
        play_match(TTT, Cheater(), "random", 1)
    with pytest.raises(ValueError, match="num_games"):
        play_match(TTT, "random", "random", 0)
    with pytest.raises(ValueError, match="first_seat"):
        play_match(TTT, "random", "random", 2, first_seat=2)


@pytest.mark.parametrize("game", [KUHN, TTT])
def test_numpy_integer_seeds_replay_like_python_ints(game):
    # Users seed from numpy arrays (np.arange, rng.integers); every opponent must accept them.
    import numpy as np

    state = game.new_initial_state()
    while state.is_chance_node():  # Kuhn: deal the first card of each outcome list
        state.apply_action(state.legal_actions()[0])
    view = SeatView.from_state(state, state.current_player())
    for name in opponent_names(game):
        bot = make_opponent(name, game)
        bot.reset(np.int64(7), 0)
        with_numpy = [bot.act(view) for _ in range(5)]
        bot.reset(7, 0)
        assert [bot.act(view) for _ in range(5)] == with_numpy, name


def test_policy_without_a_positive_probability_is_a_clear_error():
    class Silent(PolicyOpponent):
        name = "silent"

        def action_probabilities(self, view):
            return {a: 0.0 for a in view.legal_actions}

    bot = Silent()
    bot.reset(0, 0)
    with pytest.raises(ValueError, match="'silent' gave no action a positive probability"):
        bot.act(SeatView.from_state(TTT.new_initial_state(), 0))


def test_referee_refuses_games_it_cannot_referee():
    with pytest.raises(ValueError, match="two-player sequential game"):
        play_match("kuhn_poker(players=3)", "random", "random", 2)
    with pytest.raises(ValueError, match="two-player sequential game"):
        play_match("matrix_rps", "random", "random", 2)

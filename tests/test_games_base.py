"""The game base class: one constructor for every game, the game named by text_game_class."""

import inspect

import pytest

from mage_envs.games import (
    KuhnPokerEnv,
    KuhnPokerText,
    OpenSpielEnv,
    OpenSpielTextEnv,
    TicTacToeEnv,
)


def test_the_base_plays_any_text_game_and_a_subclass_is_its_text_game():
    direct = OpenSpielTextEnv(opponent="always-bet", text_game=KuhnPokerText())
    named = KuhnPokerEnv(opponent="always-bet")
    assert direct.reset(seed=4) == named.reset(seed=4)
    assert direct.step("bet")[:4] == named.step("bet")[:4]


def test_the_base_without_a_game_says_what_to_give():
    with pytest.raises(TypeError, match="text_game"):
        OpenSpielTextEnv()


@pytest.mark.parametrize("env_class", [KuhnPokerEnv, TicTacToeEnv])
def test_game_classes_have_no_constructor_of_their_own(env_class):
    assert "__init__" not in vars(env_class)
    assert inspect.signature(env_class) == inspect.signature(OpenSpielTextEnv)


def test_the_generic_game_forwards_every_setting_to_the_base():
    env = OpenSpielEnv("tic_tac_toe", opponent="mcts-100", seat="second", max_invalid_actions=1)
    env.reset(seed=0)
    assert env.step("nonsense")[3] is True  # one invalid answer stops the game

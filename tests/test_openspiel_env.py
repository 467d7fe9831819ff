"""mage/OpenSpiel-v0: any two-player turn-based OpenSpiel game as text."""

import gymnasium as gym
import pytest

import mage_envs  # noqa: F401
from mage_envs.games.openspiel_game import game_support, supported_games
from mage_envs.text import fit_text

# Games whose random play is long; played with a step cap.
LONG = {"chess", "go", "hex", "othello", "amazons", "backgammon", "checkers", "dark_chess"}


def test_connect_four_full_game_from_text():
    env = gym.make("mage/OpenSpiel-v0", game="connect_four")
    obs, info = env.reset(seed=3)
    done, steps = False, 0
    while not done:
        column = info["legal_actions"][steps % len(info["legal_actions"])]
        obs, reward, terminated, truncated, info = env.step(f"<action>{column}</action>")
        assert not info["invalid_action"]
        done, steps = terminated or truncated, steps + 1
    assert terminated and "The game is over" in obs
    assert reward == info["payoff"] and info["payoff"] in (-1.0, 0.0, 1.0)


def test_rejected_games_say_why():
    support = game_support()
    assert support["goofspiel"].startswith("not turn-based")
    assert "players" in support["bridge"]
    assert support["tic_tac_toe"] is None and "leduc_poker" in supported_games()
    with pytest.raises(ValueError, match="not supported: not turn-based"):
        gym.make("mage/OpenSpiel-v0", game="goofspiel")
    with pytest.raises(ValueError, match="Unknown OpenSpiel game"):
        gym.make("mage/OpenSpiel-v0", game="tic-tac-toe")


@pytest.mark.parametrize("game", supported_games())
def test_every_supported_game_plays_from_text(game):
    try:
        env = gym.make("mage/OpenSpiel-v0", game=game, max_invalid_actions=1)
    except ValueError as error:  # a game that loads but is not two-player must say so
        assert "players" in str(error)
        return
    obs, info = env.reset(seed=0)
    assert isinstance(obs, str) and info["legal_actions"]
    names = info["legal_actions"]
    assert len({n.lower() for n in names}) == len(names), "move names must be unique"
    for step in range(60 if game in LONG else 400):
        obs, reward, terminated, truncated, info = env.step(
            info["legal_actions"][step % len(info["legal_actions"])]
        )
        assert not info["invalid_action"], (game, obs)
        view = env.unwrapped.text_game.observation_text(env.unwrapped.state, info["player"])
        assert fit_text(view) == view, "no character of the view may be lost to '?'"
        if terminated:
            assert "payoff" in info
            break


@pytest.mark.parametrize(("game", "drawn"), [("dots_and_boxes", "+- -+"), ("twixt", "  a  b  c")])
def test_boards_drawn_for_a_terminal_become_plain_ascii(game, drawn):
    env = gym.make("mage/OpenSpiel-v0", game=game)
    obs, _ = env.reset(seed=0)
    assert drawn in obs and "?" not in obs and "[0m" not in obs

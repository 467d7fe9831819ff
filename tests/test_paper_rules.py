"""LaMer's turn rules for Sokoban and Minesweeper, scripted from its published code.

Sokoban (``sokoban/envs.py``: the worker plays every move of the turn and returns the last move's
reward; ``sokoban/env.py``: a blocked move is gym-sokoban's -0.1 no-op, and the episode ends when
the solver finds no path; ``projection.py``: moves cut to 3). Minesweeper (``game/env.py``: a mine
gives -0.1 and ends the episode; the script's ``max_turns=7``). The paper configs select them.
"""

import gymnasium as gym
import numpy as np
import pytest

import mage_envs
from baselines import run

CORRIDOR = "#######\n#@$__.#\n#######"
# One push up from here leaves a level no solution exists for, though no box is in a dead cell
# or frozen: only a solver sees it (found by search over generated levels).
SOLVER_ONLY_DEADLOCK = "######\n##__.#\n##_$$#\n##_+_#\n##___#\n######"


def paper_env_kwargs(config, env_id):
    return run.load_settings(["--config", config])["env_kwargs"][env_id]


def sokoban(**kwargs):
    env = gym.make("mage/Sokoban-v0", **kwargs)
    env.reset(seed=0, options={"level": CORRIDOR})
    return env


def test_the_paper_config_selects_lamers_sokoban_rules():
    assert paper_env_kwargs("lamer_sokoban", "mage/Sokoban-v0") == {"turn_rules": "lamer"}
    assert gym.make("mage/Sokoban-v0").unwrapped.turn_rules == "ours"


def test_a_blocked_move_then_a_push_in_one_turn():
    env = sokoban(turn_rules="lamer")
    obs, reward, terminated, truncated, info = env.step("<action>up, right</action>")
    assert not info["invalid_action"]
    assert info["moves_applied"] == ["right"] and info["moves_made"] == 2
    assert "#_@$_.#" in info["board"]
    assert reward == pytest.approx(-0.1)  # the last move's reward: the push, -0.1
    summed = sokoban(turn_rules="lamer", turn_reward="sum")
    assert summed.step("up, right")[1] == pytest.approx(-0.2)
    # ours: a turn whose first move is blocked is invalid and nothing moves
    ours = sokoban()
    _, reward, _, _, info = ours.step("up, right")
    assert info["invalid_action"] and info["moves_made"] == 0 and reward == pytest.approx(-0.1)


def test_four_moves_in_a_turn_are_cut_to_three():
    env = sokoban(turn_rules="lamer")
    _, reward, terminated, _, info = env.step("left, right, right, right")
    assert info["moves_applied"] == ["right", "right"] and info["moves_made"] == 3
    assert "#__@$.#" in info["board"] and not terminated
    assert reward == pytest.approx(-0.1)
    # the box lands on the target with the last move: +1 box, +10 solved, -0.1 the move
    _, reward, terminated, _, info = env.step("right, up, up, up")
    assert terminated and info["success"] and reward == pytest.approx(10.9)
    ours = sokoban()
    _, _, _, _, info = ours.step("left, right, right, right")
    assert info["invalid_action"] and info["moves_made"] == 0


def test_lamer_ends_the_episode_once_no_solution_exists():
    for rules, ends in (("lamer", True), ("ours", False)):
        env = gym.make("mage/Sokoban-v0", turn_rules=rules)
        env.reset(seed=0, options={"level": SOLVER_ONLY_DEADLOCK})
        _, _, terminated, _, info = env.step("up")
        assert info["moves_applied"] == ["up"]
        assert terminated is ends and info["deadlock"] is ends


def test_bad_turn_rules_are_refused():
    with pytest.raises(ValueError, match="turn_rules"):
        gym.make("mage/Sokoban-v0", turn_rules="verl")


def minesweeper_trial(**env_kwargs):
    mines = np.zeros((6, 6), dtype=bool)
    mines[0:3, 2] = True  # column 3, rows 1 to 3
    env = mage_envs.make_trial("mage/Minesweeper-v0", num_episodes=2, **env_kwargs)
    obs, info = env.reset(seed=0, options={"mines": mines, "first_click": (1, 2)})
    return env


def test_a_mine_on_turn_3_gives_minus_a_tenth_and_ends_the_episode():
    kwargs = paper_env_kwargs("lamer_minesweeper", "mage/Minesweeper-v0")
    assert kwargs == {"max_steps": 7, "mine_reward": -0.1}
    env = minesweeper_trial(**kwargs)
    assert env.step("(2, 2)")[1] == 0.5  # one numbered cell
    assert env.step("(2, 2)")[1] == -1.0  # already open: no effect
    _, reward, terminated, _, info = env.step("(1, 3)")
    assert info["mine_hit"] and info["turn"] == 3
    assert info["phase"] == "reflect" and not terminated  # the episode ended, the trial goes on
    assert reward == pytest.approx(-0.1) and info["episode_return"] == pytest.approx(-0.6)
    ours = minesweeper_trial()
    for answer in ("(2, 2)", "(2, 2)"):
        ours.step(answer)
    assert ours.step("(1, 3)")[1] == 0.0


def test_turn_8_of_minesweeper_never_comes():
    env = minesweeper_trial(**paper_env_kwargs("lamer_minesweeper", "mage/Minesweeper-v0"))
    for turn in range(1, 8):
        _, _, _, _, info = env.step("not a cell")  # invalid answers still spend turns
        assert info["turn"] == turn
    assert info["phase"] == "reflect" and info["episode_truncated"]
    ours = gym.make("mage/Minesweeper-v0")
    assert ours.unwrapped.max_steps == 33

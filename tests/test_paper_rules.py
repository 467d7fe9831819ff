"""The published rules the paper configs select, one quirk per test, with its reward sequence.

Sokoban (LaMer's ``sokoban/projection.py``, ``envs.py``, ``sokoban/env.py`` over gym-sokoban):
``turn_rules="lamer"`` exactly, ``"lamer-fixed"`` without the repeated solve bonus and the spurious
first-move bonus, ``"ours"``. Minesweeper (LaMer's ``game/env.py``, ``projection.py``), Kuhn poker
and tic-tac-toe (MAGE's ``projection.py``): ``answer_rules``. The same sequences are checked
against the published code's own numbers in ``tests/test_published_pages.py``.
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
ON_TARGET = "######\n#@_$.#\n#_*__#\n#____#\n#____#\n######"  # one box starts on a target
RULES = ("lamer", "lamer-fixed", "ours")


def paper_env_kwargs(config, env_id):
    return run.load_settings(["--config", config]).env_kwargs[env_id]


def sokoban(level=CORRIDOR, **kwargs):
    env = gym.make("mage/Sokoban-v0", **kwargs)
    env.reset(seed=0, options={"level": level})
    return env


def turn_rewards(level, turns, rules):
    env = sokoban(level, turn_rules=rules)
    outcomes = []
    for turn in turns:
        _, reward, terminated, _, info = env.step(f"<action>{turn}</action>")
        outcomes.append((round(reward, 6), terminated, info["success"]))
        if terminated:
            break
    return outcomes


def test_the_paper_config_selects_lamers_sokoban_rules():
    assert paper_env_kwargs("lamer_sokoban", "mage/Sokoban-v0") == {
        "turn_rules": "lamer",
        "invalid_action_penalty": 0,  # LaMer's evaluation charged no format penalty
    }
    assert gym.make("mage/Sokoban-v0").unwrapped.turn_rules == "ours"


def test_a_blocked_move_then_a_push_in_one_turn():
    env = sokoban(turn_rules="lamer")
    obs, reward, terminated, truncated, info = env.step("<action>up, right</action>")
    assert not info["invalid_action"]
    assert info["moves_applied"] == ["right"] and info["moves_made"] == 2
    assert "#_@$_.#" in info["board"]
    assert reward == pytest.approx(-0.1)  # the last move's reward: the push, -0.1
    summed = sokoban(turn_rules="lamer", turn_reward="sum")
    assert summed.step("<action>up, right</action>")[1] == pytest.approx(-0.2)
    # ours: a turn whose first move is blocked is invalid and nothing moves
    ours = sokoban()
    _, reward, _, _, info = ours.step("up, right")
    assert info["invalid_action"] and info["moves_made"] == 0 and reward == pytest.approx(-0.1)


def test_four_moves_in_a_turn_are_cut_to_three():
    env = sokoban(turn_rules="lamer")
    _, reward, terminated, _, info = env.step("<action>left, right, right, right</action>")
    assert info["moves_applied"] == ["right", "right"] and info["moves_made"] == 3
    assert "#__@$.#" in info["board"] and not terminated
    assert reward == pytest.approx(-0.1)
    ours = sokoban()
    _, _, _, _, info = ours.step("left, right, right, right")
    assert info["invalid_action"] and info["moves_made"] == 0


def test_lamer_cuts_a_turn_to_the_moves_per_turn_setting():
    # LaMer's projection cuts to num_actions_per_turn, the setting, not to 3
    level = "##########\n#@______$.#\n##########"
    env = sokoban(level, turn_rules="lamer", moves_per_turn=5)
    obs, _, _, _, info = env.step("<action>right, right, right, right, right, right</action>")
    assert info["moves_applied"] == ["right"] * 5 and info["moves_made"] == 5
    assert "Only the first 5 moves were played." in obs
    env = sokoban(level, turn_rules="lamer", moves_per_turn=2)
    _, _, _, _, info = env.step("<action>right, right, right</action>")
    assert info["moves_applied"] == ["right"] * 2
    obs, *_ = sokoban(level, turn_rules="lamer").step("<action>right, right, right, right</action>")
    assert "Only the first 3 moves were played." in obs  # the default, 3, says so too


def test_lamer_reads_only_the_action_tag_and_the_first_word_each_piece_contains():
    env = sokoban(turn_rules="lamer")
    _, reward, _, _, info = env.step("right")  # no tag: LaMer plays "still" (-0.1)
    # ... and the env charges its invalid_action_penalty (0.1 by default) on top
    assert info["invalid_action"] and info["moves_made"] == 0 and reward == pytest.approx(-0.2)
    _, _, _, _, info = env.step("<action>go left then up, Right</action>")  # "up" comes first
    assert not info["invalid_action"] and info["moves_applied"] == ["right"]
    assert info["moves_made"] == 2  # the blocked "up" counted as a move
    ours = sokoban()
    assert ours.step("right")[4]["moves_applied"] == ["right"]


def test_moves_after_the_solve_score_the_solve_bonus_again():
    level = "######\n#@$_.#\n######"
    assert turn_rewards(level, ["right, right, left"], "lamer") == [(9.9, True, True)]
    # fixed and ours: the turn ends at the solving move, +1 box, +10 solved, -0.1 the move (ours
    # sums the turn's moves: -0.1 + 10.9)
    assert turn_rewards(level, ["right, right, left"], "lamer-fixed") == [(10.9, True, True)]
    assert turn_rewards(level, ["right, right, left"], "ours") == [(10.8, True, True)]


@pytest.mark.parametrize(("penalty", "expected"), [(0.0, -0.1), (0.5, -0.6)])
def test_an_unreadable_answer_costs_still_and_the_format_penalty(penalty, expected):
    # LaMer's evaluation: still's -0.1 alone; its training: -0.1 and the trainer's 0.5
    env = sokoban(turn_rules="lamer", invalid_action_penalty=penalty)
    _, reward, _, _, info = env.step("I would go right")
    assert info["invalid_action"] and reward == pytest.approx(expected)
    _, reward, _, _, info = env.step("<action>still</action>")  # read: no penalty
    assert not info["invalid_action"] and reward == pytest.approx(-0.1)


def test_a_solve_undone_in_the_same_turn_still_counts_as_won():
    level = "#######\n#@$_._#\n#######"
    # the third push moves the box off the target into a corner: -1.1, and no solution is left
    assert turn_rewards(level, ["right, right, right"], "lamer") == [(-1.1, True, True)]
    assert turn_rewards(level, ["right, right, right"], "lamer-fixed") == [(10.9, True, True)]


def test_still_after_the_solve_leaves_the_episode_open_and_won():
    level = "######\n#@$_.#\n######"
    assert turn_rewards(level, ["right, right, still", "left"], "lamer") == [
        (-0.1, False, True),  # still is never done, so the solved level plays on
        (9.9, True, True),
    ]
    assert turn_rewards(level, ["right, right, still"], "lamer-fixed") == [(10.9, True, True)]


def test_moves_after_a_deadlock_are_still_played():
    level = "#######\n#_____#\n#_$_$.#\n#.@___#\n#######"
    # up pushes a box against the top wall (dead); then a box lands on its target: +0.9
    assert turn_rewards(level, ["up, right, right"], "lamer") == [(0.9, True, False)]
    assert turn_rewards(level, ["up, right, right"], "lamer-fixed") == [(0.9, True, False)]
    assert turn_rewards(level, ["up, right, right"], "ours") == [(-0.1, True, False)]


def test_a_box_starting_on_a_target_gives_lamers_first_move_a_spurious_bonus():
    # the first move is blocked by the wall: -0.1, but LaMer's reset counted 0 boxes on targets
    assert turn_rewards(ON_TARGET, ["left", "left"], "lamer") == [
        (0.9, False, False),
        (-0.1, False, False),
    ]
    assert turn_rewards(ON_TARGET, ["left", "left"], "lamer-fixed")[0] == (-0.1, False, False)
    # a restart of the same level counts 0 again: the bonus comes back in every attempt
    trial = mage_envs.make_trial(
        "mage/Sokoban-v0", turn_rules="lamer", num_episodes=2, max_steps=1, templates="lamer"
    )
    trial.reset(seed=0, options={"level": ON_TARGET})
    answers = ("<action>left</action>", "no reflection", "<action>up</action>")
    rewards = [trial.step(answer)[1] for answer in answers]
    assert rewards == pytest.approx([0.9, 0.0, 0.9])


def test_lamer_ends_the_episode_once_no_solution_exists():
    for rules, ends in (("lamer", True), ("lamer-fixed", True), ("ours", False)):
        env = gym.make("mage/Sokoban-v0", turn_rules=rules)
        env.reset(seed=0, options={"level": SOLVER_ONLY_DEADLOCK})
        _, _, terminated, _, info = env.step("<action>up</action>")
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
    assert kwargs == {"max_steps": 7, "mine_reward": -0.1, "answer_rules": "lamer"}
    env = minesweeper_trial(**kwargs)
    assert env.step("<action>(2, 2)</action>")[1] == 0.5  # one numbered cell
    assert env.step("<action>(2, 2)</action>")[1] == -1.0  # already open: no effect
    _, reward, terminated, _, info = env.step("<action>(1, 3)</action>")
    assert info["mine_hit"] and info["turn"] == 3
    assert info["phase"] == "reflect" and not terminated  # the episode ended, the trial goes on
    assert reward == pytest.approx(-0.1) and info["episode_return"] == pytest.approx(-0.6)
    ours = minesweeper_trial()
    for answer in ("(2, 2)", "(2, 2)"):
        ours.step(answer)
    assert ours.step("(1, 3)")[1] == 0.0


def test_lamer_counts_only_an_unreadable_answer_as_invalid():
    env = minesweeper_trial(answer_rules="lamer")
    outcomes = []
    answers = ["<action>(2, 2)</action>", "<action>(2, 2)</action>", "(4, 4)"]
    for answer in [*answers, "<action>(9, 9)</action>"]:
        _, reward, _, _, info = env.step(answer)
        outcomes.append((reward, info["invalid_action"]))
    # a reveal; a click on an open cell and one off the board cost -1 but are valid answers;
    # an untagged cell cannot be read at all: -1, invalid (LaMer's trainer adds its penalty)
    assert outcomes == [(0.5, False), (-1.0, False), (-1.0, True), (-1.0, False)]
    ours = minesweeper_trial()
    assert [ours.step(a)[4]["invalid_action"] for a in ("(2, 2)", "(2, 2)", "(4, 4)")] == [
        False,
        True,
        False,
    ]


def test_turn_8_of_minesweeper_never_comes():
    env = minesweeper_trial(**paper_env_kwargs("lamer_minesweeper", "mage/Minesweeper-v0"))
    for turn in range(1, 8):
        _, _, _, _, info = env.step("not a cell")  # invalid answers still spend turns
        assert info["turn"] == turn
    assert info["phase"] == "reflect" and info["episode_truncated"]
    ours = gym.make("mage/Minesweeper-v0")
    assert ours.unwrapped.max_steps == 33


def test_mage_reads_kuhn_actions_upper_case_in_the_first_tag_only():
    env = gym.make("mage/KuhnPoker-v0", answer_rules="mage", opponent="always-pass", seat="second")
    env.reset(seed=0)
    for answer in ("<action>pass</action>", "PASS", "<action>PASS or BET</action>"):
        _, reward, done, _, info = env.step(answer)
        assert info["invalid_action"] and reward == 0.0 and not done
    _, _, done, _, info = env.step("<action> BET </action> <action>PASS</action>")
    assert not info["invalid_action"] and done  # a bet after a check: the opponent checks/folds
    ours = gym.make("mage/KuhnPoker-v0", opponent="always-pass", seat="second")
    ours.reset(seed=0)
    assert not ours.step("pass")[4]["invalid_action"]


def test_mage_reads_the_first_tic_tac_toe_cell_and_refuses_taken_ones():
    env = gym.make("mage/TicTacToe-v0", answer_rules="mage", opponent="order-center")
    env.reset(seed=0)
    _, _, _, _, info = env.step("<action>(1,1)</action> <action>(3, 3)</action>")
    assert not info["invalid_action"] and str(env.unwrapped.state).startswith("x")
    for answer in ("<action>(1, 1)</action>", "(1, 2)", "<action>(0, 2)</action>"):
        assert env.step(answer)[4]["invalid_action"]  # taken, untagged, off the board


def test_unknown_answer_rules_are_refused():
    with pytest.raises(ValueError, match="answer_rules"):
        gym.make("mage/KuhnPoker-v0", answer_rules="lamer")
    with pytest.raises(ValueError, match="answer_rules"):
        gym.make("mage/Minesweeper-v0", answer_rules="mage")

"""Minesweeper rules and the text env: first click, cascades, win, LaMer's reward table, flags."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import mage_envs  # noqa: F401
from mage_envs import MetaEpisodeWrapper
from mage_envs.puzzles import MinesweeperBoard, MinesweeperEnv
from mage_envs.puzzles.minesweeper_text import CellMove, parse_cell_move

MINESWEEPER_IDS = [
    "mage/Minesweeper-v0",
    "mage/MinesweeperMoreMines-v0",
    "mage/MinesweeperLarge-v0",
]

# A wall of mines in column 3 (1-indexed), plus one in the top-right corner. Hand-computed counts:
#   col:  1 2 3 4 5 6
#   row1  0 2 * 2 1 *
#   row2  0 3 * 3 1 1
#   row3  0 2 * 2 0 0
WALL = np.array(
    [
        [0, 0, 1, 0, 0, 1],
        [0, 0, 1, 0, 0, 0],
        [0, 0, 1, 0, 0, 0],
    ],
    dtype=bool,
)


def test_counts_by_hand():
    board = MinesweeperBoard(WALL)
    expected = [[0, 2, 0, 2, 1, 0], [0, 3, 0, 3, 1, 1], [0, 2, 0, 2, 0, 0]]
    safe = ~WALL
    assert (board.counts[safe] == np.array(expected)[safe]).all()


def test_cascade_opens_the_zero_region_and_its_border():
    board = MinesweeperBoard(WALL)
    result = board.reveal(0, 0)
    assert set(result.opened) == {(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)}
    result = board.reveal(2, 5)
    assert set(result.opened) == {(2, 5), (2, 4), (1, 4), (1, 5), (1, 3), (2, 3)}
    assert not board.won
    assert board.reveal(0, 3).opened == ((0, 3),)
    assert board.reveal(0, 4).opened == ((0, 4),)
    assert board.won and not board.lost


def test_flags_stop_a_cascade_and_open_cells_do_nothing():
    board = MinesweeperBoard(WALL)
    assert board.toggle_flag(1, 0)
    assert set(board.reveal(0, 0).opened) == {(0, 0), (0, 1), (1, 1)}
    assert board.reveal(0, 0).opened == () and board.reveal(1, 0).opened == ()
    assert not board.toggle_flag(0, 0)  # an open cell cannot be flagged


def test_mine_loses_and_shows_only_the_mine_that_went_off():
    board = MinesweeperBoard(WALL)
    board.reveal(0, 0)
    assert board.reveal(1, 2).mine and board.lost and not board.won
    # The other mines stay hidden: the next episode of a trial replays this layout.
    assert ["".join(row) for row in board.rows()] == [".2????", ".3X???", ".2????"]


def test_view_marks_unopened_and_flagged_cells():
    board = MinesweeperBoard(WALL)
    board.toggle_flag(0, 5)
    board.reveal(0, 0)
    assert board.view()[0].tolist() == [0, 2, -1, -1, -1, -2]


@pytest.mark.parametrize("safe_opening", [False, True])
@pytest.mark.parametrize(
    ("height", "width", "mines"), [(6, 6, 3), (6, 6, 5), (8, 8, 10), (4, 7, 12)]
)
def test_first_click_is_never_a_mine(height, width, mines, safe_opening):
    if safe_opening and mines > height * width - 10:
        pytest.skip("too many mines for a safe opening")
    for seed in range(200):
        board, (r, c) = MinesweeperBoard.generate(seed, height, width, mines, safe_opening)
        assert board.num_mines == mines and not board.mines[r, c]
        if safe_opening:
            assert not board.mines[max(0, r - 1) : r + 2, max(0, c - 1) : c + 2].any()
            assert board.counts[r, c] == 0
        assert not board.copy().reveal(r, c).mine


def test_first_click_is_made_at_reset():
    env = gym.make("mage/Minesweeper-v0")
    for seed in range(50):
        obs, info = env.reset(seed=seed)
        r, c = info["first_click"]
        assert info["view"][r - 1][c - 1] >= 0 and not info["mine_hit"]
        assert f"The first cell, ({r}, {c}), was opened for you." in obs
        assert f"({r}, {c})" not in info["legal_actions"]


# -- the env's reward table on the hand-made board ------------------------------------------------


def _wall_env(**kwargs):
    env = gym.make("mage/Minesweeper-v0", height=3, width=6, num_mines=4, **kwargs)
    obs, info = env.reset(options={"mines": WALL, "first_click": (1, 1)})
    return env, obs, info


def test_reward_table_through_a_winning_game():
    env, obs, info = _wall_env()
    assert len(info["opened"]) == 6 and info["level_seed"] is None
    table = [
        ("(1, 1)", -1.0, True),  # already open: no effect
        ("(9, 9)", -1.0, True),  # off the board
        ("I am not sure", -1.0, True),  # no cell
        ("(3, 6)", 2.0, False),  # cascade of six cells
        ("<action>(1, 4)</action>", 0.5, False),  # one cell
    ]
    for answer, reward, invalid in table:
        obs, got, terminated, truncated, info = env.step(answer)
        assert (got, info["invalid_action"], terminated) == (reward, invalid, False), answer
    obs, reward, terminated, truncated, info = env.step("row 1 col 5")
    assert reward == 10.0 and terminated and not truncated and info["success"]
    assert "You won" in obs and info["legal_actions"] == []


def test_opening_a_mine_ends_the_episode():
    env, obs, info = _wall_env()
    obs, reward, terminated, truncated, info = env.step("(2, 3)")
    assert reward == 0.0 and terminated and info["mine_hit"] and not info["success"]
    assert "was a mine" in obs and " 2  . 3 X ? ? ?" in obs


def test_a_loss_does_not_leak_the_layout_into_the_next_attempt():
    """Same-task trials replay the board: the lost attempt's memory must not show its mines."""
    env = MetaEpisodeWrapper(
        gym.make("mage/Minesweeper-v0"), num_episodes=2, memory="history_and_reflection"
    )
    env.reset(seed=0)
    mines = np.argwhere(env.unwrapped.board.mines)
    row, col = (int(v) + 1 for v in mines[0])
    reflect_obs, *_, info = env.step(f"({row}, {col})")
    assert info["phase"] == "reflect" and "X" in reflect_obs
    next_obs, *_ = env.step("<reflection>Avoid that cell.</reflection>")
    for text in (reflect_obs, next_obs):
        assert "*" not in text  # no other mine is drawn anywhere


def test_custom_board_won_by_the_first_click_is_rejected():
    env = gym.make("mage/Minesweeper-v0", height=3, width=3, num_mines=1)
    layout = np.array([[1, 0, 0], [0, 0, 0], [0, 0, 0]], dtype=bool)
    with pytest.raises(ValueError, match="alone wins"):  # (3, 3) is a 0: it opens all 8 cells
        env.reset(options={"mines": layout, "first_click": (3, 3)})
    _, info = env.reset(options={"mines": layout, "first_click": (2, 2)})  # a 1: one cell
    assert not info["success"] and info["legal_actions"]


def test_rewards_scale_but_penalties_are_charged_as_given():
    env, *_ = _wall_env(reward_scale=2.0, mine_reward=-1.0)
    assert env.step("(1, 1)")[1] == -1.0  # already open: the penalty, not scaled
    assert env.step("(3, 6)")[1] == 4.0
    assert env.step("(1, 4)")[1] == 1.0
    assert env.step("(2, 3)")[1] == -2.0
    env, *_ = _wall_env(reward_scale=10.0, invalid_action_penalty=0.5, no_effect_penalty=0.25)
    assert env.step("(1, 1)")[1] == -0.25 and env.step("nothing")[1] == -0.5


def test_lamers_training_costs_a_no_effect_click_1_and_an_unreadable_answer_1_5():
    # LaMer's env gives -1 for a click that changes nothing; its projection plays an unreadable
    # answer as (-1, -1), off the board (-1), and its trainer adds the format penalty 0.5
    kwargs = dict(answer_rules="lamer", invalid_action_penalty=0.5, no_effect_penalty=1.0)
    env, *_ = _wall_env(**kwargs)
    _, reward, _, _, info = env.step("<action>(1, 1)</action>")
    assert reward == -1.0 and not info["invalid_action"]
    _, reward, _, _, info = env.step("(1, 1)")  # no tag
    assert reward == -1.5 and info["invalid_action"]
    plain, *_ = _wall_env(answer_rules="lamer")  # no no_effect_penalty: one cost (evaluation)
    assert plain.step("(1, 1)")[1] == plain.step("<action>(1, 1)</action>")[1] == -1.0
    with pytest.raises(ValueError, match="no_effect_penalty must be >= 0"):
        _wall_env(no_effect_penalty=-1)


def test_invalid_moves_change_nothing():
    env, obs0, info0 = _wall_env()
    for answer in ["(1, 1)", "(0, 2)", "", "(1, 4) or (1, 5)", "flag (1, 6)"]:
        obs, reward, terminated, truncated, info = env.step(answer)
        assert info["invalid_action"] and info["view"] == info0["view"]
        assert info["legal_actions"] == info0["legal_actions"] and obs.startswith("Invalid move")


def test_flags_when_allowed():
    env, obs, info = _wall_env(allow_flags=True)
    assert "flag (1, 6)" in info["legal_actions"] and "(1, 6)" in info["legal_actions"]
    obs, reward, terminated, truncated, info = env.step("flag (1, 6)")
    assert reward == 0.0 and not info["invalid_action"] and info["view"][0][5] == -2
    assert "(1, 6)" not in info["legal_actions"] and " 1  . 2 ? ? ? F" in obs
    obs, reward, *_, info = env.step("(1, 6)")
    assert info["invalid_action"] and "flagged" in obs
    obs, reward, *_, info = env.step("unflag (1, 6)")
    assert info["view"][0][5] == -1 and not info["invalid_action"]


def test_truncation_after_max_steps():
    env, *_ = _wall_env(max_steps=2)
    assert env.step("nonsense")[3] is False
    obs, reward, terminated, truncated, info = env.step("(1, 4)")
    assert truncated and not terminated and "Out of turns (2)" in obs


def test_default_turn_budget_opens_every_safe_cell():
    env = MinesweeperEnv()
    assert env.max_steps == 33


def test_random_legal_play_always_ends_with_a_verdict():
    env = gym.make("mage/Minesweeper-v0")
    rng = np.random.default_rng(0)
    outcomes = set()
    for seed in range(100):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            move = info["legal_actions"][rng.integers(len(info["legal_actions"]))]
            _, reward, terminated, truncated, info = env.step(move)
            assert not info["invalid_action"] and not truncated
            done = terminated
        outcomes.add(info["success"])
        assert info["success"] != info["mine_hit"]
    assert outcomes == {True, False}


@pytest.mark.parametrize("env_id", MINESWEEPER_IDS)
def test_same_seed_same_board_and_text(env_id):
    first = [gym.make(env_id).reset(seed=seed)[0] for seed in range(10)]
    again = [gym.make(env_id).reset(seed=seed)[0] for seed in range(10)]
    assert first == again and len(set(first)) > 5


def test_variant_settings():
    assert gym.make("mage/MinesweeperMoreMines-v0").unwrapped.num_mines == 5
    large = gym.make("mage/MinesweeperLarge-v0").unwrapped
    assert (large.height, large.width, large.num_mines) == (8, 8, 10)
    assert gym.make("mage/MinesweeperLarge-v0", num_mines=12).unwrapped.num_mines == 12


@pytest.mark.parametrize(
    "kwargs",
    [dict(allow_flags=True), dict(safe_opening=True), dict(height=9, width=12, num_mines=20)],
)
def test_check_env_with_settings(kwargs):
    check_env(MinesweeperEnv(**kwargs), skip_render_check=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(num_mines=0), "num_mines"),
        (dict(num_mines=36), "num_mines"),  # not "max_steps", which the user did not set
        (dict(height=1), "2x2"),
        (dict(max_steps=0), "max_steps"),
        (dict(height=3, width=3, num_mines=1, safe_opening=True), "too small for a safe opening"),
    ],
)
def test_bad_settings_are_rejected_with_the_right_reason(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MinesweeperEnv(**kwargs)


@pytest.mark.parametrize(
    "options",
    [
        {"mines": np.ones((2, 2)), "first_click": (1, 1)},
        {"mines": WALL},
        {"mines": WALL, "first_click": (1, 3)},
    ],
)
def test_bad_custom_boards_are_rejected(options):
    with pytest.raises(ValueError):
        gym.make("mage/Minesweeper-v0", height=3, width=6).reset(options=options)


PARSES = [
    ("(2, 3)", CellMove(1, 2)),
    ("2,3", CellMove(1, 2)),
    ("<answer>[4 1]</answer>", CellMove(3, 0)),
    ("row 5 col 6", CellMove(4, 5)),
    ("Flag (1, 1)", CellMove(0, 0, True)),
    ("(1, 1) or (2, 2)", None),
    ("open the corner", None),
    ("", None),
]


@pytest.mark.parametrize(("text", "move"), PARSES)
def test_parse_cell_move_table(text, move):
    assert parse_cell_move(text) == move


@settings(max_examples=80, deadline=None)
@given(
    answers=st.lists(
        st.one_of(
            st.text(max_size=40),
            st.tuples(st.integers(-3, 12), st.integers(-3, 12)).map(lambda p: f"({p[0]}, {p[1]})"),
        ),
        max_size=15,
    )
)
def test_fuzzed_answers_never_raise(answers):
    env = gym.make("mage/Minesweeper-v0", allow_flags=True)
    obs, info = env.reset(seed=2)
    for answer in answers:
        obs, reward, terminated, truncated, info = env.step(answer)
        assert env.observation_space.contains(obs)
        if terminated or truncated:
            obs, info = env.reset(seed=2)

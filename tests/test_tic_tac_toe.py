"""Tic-tac-toe: scripted move tables, coordinates, rewards and invalid moves."""

import pytest

from mage_envs.games.tic_tac_toe import TicTacToeEnv, cell_name


def cell(row, col):
    """OpenSpiel cell id of a 1-indexed (row, col)."""
    return (row - 1) * 3 + (col - 1)


# learner seat, opponent cells, learner moves (any accepted spelling), expected payoff
TABLE = [
    ("first", [cell(2, 1), cell(3, 1)], ["(1, 1)", "1,2", "<action>(1, 3)</action>"], 1),
    ("first", [cell(2, 2), cell(1, 2), cell(3, 2)], ["(1, 1)", "(1, 3)", "(3, 3)"], -1),
    (
        "first",
        [cell(2, 2), cell(1, 3), cell(2, 1), cell(3, 2)],
        ["(1, 1)", "(3, 1)", "(2, 3)", "(1, 2)", "(3, 3)"],
        0,
    ),
    ("second", [cell(1, 1), cell(1, 2), cell(1, 3)], ["(2, 2)", "(3, 3)"], -1),
    ("second", [cell(1, 1), cell(1, 2), cell(3, 3)], ["(2, 1)", "(2, 2)", "[2 3]"], 1),
]


@pytest.mark.parametrize(("seat", "opp", "moves", "payoff"), TABLE)
def test_move_table(scripted, seat, opp, moves, payoff):
    env = TicTacToeEnv(opponent=scripted(opp), seat=seat, reward_scale=10)
    obs, info = env.reset(seed=0)
    for move in moves:
        assert not info.get("payoff")
        obs, reward, terminated, truncated, info = env.step(move)
        assert not info["invalid_action"], obs
    assert terminated and not truncated
    assert info["payoff"] == payoff and reward == 10 * payoff
    assert info["success"] == (payoff > 0)
    expected = {1: "You won.", -1: "You lost.", 0: "It is a draw."}[payoff]
    assert obs.endswith(expected)


def test_board_text_and_marks(scripted):
    env = TicTacToeEnv(opponent=scripted([cell(1, 1)]), seat="second")
    obs, info = env.reset(seed=0)
    assert "You play O and move second" in obs
    assert "The opponent played (1, 1)." in obs
    assert "1    X | . | ." in obs
    assert "(1, 1)" not in info["legal_actions"] and len(info["legal_actions"]) == 8


def test_occupied_cell_is_invalid_and_changes_nothing(scripted):
    env = TicTacToeEnv(opponent=scripted([cell(2, 2)]), invalid_action_penalty=0.1)
    env.reset(seed=0)
    env.step("(1, 1)")
    before = env.state.history()
    obs, reward, terminated, truncated, info = env.step("(2, 2)")
    assert info["invalid_action"] and reward == -0.1
    assert env.state.history() == before
    assert obs.startswith("Invalid move")


def test_cell_names_cover_the_board():
    assert [cell_name(a) for a in (0, 4, 8)] == ["(1, 1)", "(2, 2)", "(3, 3)"]


def test_random_seat_is_drawn_from_the_seed():
    seats = {TicTacToeEnv(seat="random").reset(seed=s)[1]["seat"] for s in range(20)}
    assert seats == {"first", "second"}
    env = TicTacToeEnv(seat="random")
    assert [env.reset(seed=s)[1]["seat"] for s in range(10)] == [
        env.reset(seed=s)[1]["seat"] for s in range(10)
    ]


def test_seat_option_overrides_for_one_game():
    env = TicTacToeEnv(seat="first")
    assert env.reset(seed=0, options={"seat": "second"})[1]["seat"] == "second"
    assert env.reset(seed=0)[1]["seat"] == "first"

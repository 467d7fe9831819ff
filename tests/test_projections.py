"""The published answer projections: hand-checked cases and fuzzing with untrusted text."""

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mage_envs.projections import (
    SOKOBAN_ACTIONS,
    action_tag,
    lamer_alfworld,
    lamer_minesweeper,
    lamer_sokoban,
    lamer_webshop,
    mage_kuhn,
    mage_tictactoe,
    published_reflection,
    webshop_action,
)

# answers built from the pieces the projections look for, so fuzzing reaches their branches
PIECES = ["<action>", "</action>", "<remark>", "</remark>", "<ACTION>", "(", ")", ",", " ", "\n"]
PIECES += ["up", "Left", "still", "PASS", "BET", "2", "13", "click[", "]", "search[", "x"]
answers = st.lists(st.sampled_from(PIECES) | st.text(max_size=5), max_size=30).map("".join)


def test_sokoban_reads_from_the_first_start_tag_to_the_last_end_tag():
    # one piece between commas: its first word of up, down, left, right, still
    assert lamer_sokoban("<action>up</action> then <action>left</action>") == (["up"], True)
    assert lamer_sokoban("<action>left</action>, <action>up</action>") == (["left", "up"], True)
    assert lamer_sokoban("</action> <action>up") == (["still"], False)  # end before start
    assert lamer_sokoban("<ACTION>up</ACTION>") == (["still"], False)  # tags are case-sensitive
    assert lamer_sokoban("<action>push down, STILL</action>") == (["down", "still"], True)


def test_minesweeper_keeps_the_cell_as_written():
    assert lamer_minesweeper("<action>(  3 ,4)</action>") == ("  3", "4")
    assert lamer_minesweeper("<action>(3; 4)</action>") is None
    assert lamer_minesweeper("<action>(1, 1)</action> <action>(2, 2)</action>") == ("1", "1")


def test_kuhn_and_tictactoe_read_the_first_tag():
    assert mage_kuhn("<action>BET</action><action>PASS</action>") == 1
    assert mage_kuhn("<action>Bet</action>") == -1
    assert mage_tictactoe("<action>(2, 3) (1, 1)</action>") == (2, 3)
    assert mage_tictactoe("<action>2, 3</action>") == (-1, -1)


def test_alfworld_and_webshop_lower_case_everything_and_keep_a_tail_without_tags():
    assert lamer_alfworld("<ACTION>Open Drawer 1</ACTION>") == ("open drawer 1", True)
    assert lamer_alfworld("x" * 40 + "END") == ("x" * 27 + "end", False)
    assert lamer_webshop("no tag, just " + "y" * 20) == ("y" * 20, False)
    assert webshop_action("click[a] and click[b]") == ("click[a] and click", "b")
    assert webshop_action("search[]") == ("search[]", None)


def test_reflections_are_read_as_each_paper_did():
    answer = "<remark> a </remark> and <remark>b</remark>"
    assert published_reflection(answer, 2000, last=False) == "a"
    assert published_reflection(answer, 2000, last=True) == "b"
    assert published_reflection("</remark> x <remark>", 2000, last=False) == ""
    assert (
        published_reflection("<remark>" + "z" * 3000 + "</remark>", 2000, last=True) == "z" * 2000
    )
    assert published_reflection("no tag", 2000, last=True) == ""


bracketed = st.lists(st.sampled_from(["[", "]", "\n", "a", "click", " ", "[]", "]["]), max_size=25)


@settings(max_examples=500, deadline=None)
@given(bracketed.map("".join) | answers)
def test_webshop_action_is_webshops_own_regex_match(answer):
    import re

    match = re.match(r"(.+)\[(.+)\]", answer)  # web_agent_site/engine/engine.py, parse_action
    expected = (answer, None) if match is None else (match.group(1), match.group(2))
    assert webshop_action(answer) == expected


@settings(max_examples=300, deadline=None)
@given(answers)
def test_projections_never_fail_on_untrusted_text(answer):
    moves, valid = lamer_sokoban(answer)
    assert 1 <= len(moves) <= 3 and set(moves) <= set(SOKOBAN_ACTIONS)
    assert valid or moves == ["still"]
    cell = lamer_minesweeper(answer)
    assert cell is None or all(part.strip().isdigit() for part in cell)
    assert mage_kuhn(answer) in (-1, 0, 1)
    row, col = mage_tictactoe(answer)
    assert (row, col) == (-1, -1) or min(row, col) >= 0
    for read, tail in ((lamer_alfworld, 30), (lamer_webshop, 20)):
        command, valid = read(answer)
        assert command == command.lower() and (valid or len(command) <= tail)
    name, argument = webshop_action(answer)
    assert argument is None or name + "[" + argument + "]" in answer
    for last in (True, False):
        assert len(published_reflection(answer, 10, last)) <= 10


@settings(max_examples=60, deadline=None)
@given(answers)
def test_envs_under_published_rules_take_any_answer(answer):
    for env_id, kwargs in (
        ("mage/Sokoban-v0", {"turn_rules": "lamer"}),
        ("mage/Sokoban-v0", {"turn_rules": "lamer-fixed"}),
        ("mage/Minesweeper-v0", {"answer_rules": "lamer"}),
        ("mage/KuhnPoker-v0", {"answer_rules": "mage"}),
        ("mage/TicTacToe-v0", {"answer_rules": "mage"}),
        ("mage/ShopSim-v0", {"answer_rules": "lamer", "num_products": 30}),
    ):
        env = gym.make(env_id, **kwargs)
        env.reset(seed=1)
        obs, reward, terminated, truncated, info = env.step(answer)
        assert isinstance(obs, str) and isinstance(info["invalid_action"], bool)


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("mage/Sokoban-v0", {"turn_rules": "lamer"}),
        ("mage/Minesweeper-v0", {"answer_rules": "lamer"}),
        ("mage/KuhnPoker-v0", {"answer_rules": "mage"}),
        ("mage/TicTacToe-v0", {"answer_rules": "mage"}),
        ("mage/ShopSim-v0", {"answer_rules": "lamer", "num_products": 30}),
    ],
)
def test_every_listed_legal_action_is_a_tagged_answer_that_plays(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    _, info = env.reset(seed=2)
    for _ in range(4):
        legal = info["legal_actions"]
        if not legal:
            break
        assert all(move.startswith("<action>") and move.endswith("</action>") for move in legal)
        _, _, terminated, truncated, info = env.step(legal[-1])
        assert not info["invalid_action"]
        if terminated or truncated:
            break
    assert action_tag("up") == "<action>up</action>"


def test_a_number_too_long_for_int_reads_as_off_the_board():
    # Python's int() refuses more than 4300 digits; the published code would crash there
    huge = "9" * 5000
    assert mage_tictactoe(f"<action>({huge}, 1)</action>")[0] > 3
    assert mage_tictactoe(f"<action>({'0' * 5000}2, 1)</action>") == (2, 1)  # leading zeros
    assert lamer_minesweeper(f"<action>({huge}, 1)</action>") == (huge, "1")  # as written
    mines = gym.make("mage/Minesweeper-v0", answer_rules="lamer")
    mines.reset(seed=0)
    _, reward, _, _, info = mines.step(f"<action>({huge}, 1)</action>")
    assert reward == -1.0 and not info["invalid_action"]  # LaMer: off the board, a valid answer
    board = gym.make("mage/TicTacToe-v0", answer_rules="mage")
    board.reset(seed=0)
    _, reward, _, _, info = board.step(f"<action>(1, {huge})</action>")
    assert reward == 0.0 and info["invalid_action"]  # MAGE: off the board is invalid

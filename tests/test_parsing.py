import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mage_envs.parsing import grid_pairs, normalize, parse_action

KUHN = ["check", "bet"]
GRID = ["(1, 1)", "(1, 2)", "(2, 3)", "(3, 3)"]


@pytest.mark.parametrize(
    ("text", "legal", "aliases", "expected"),
    [
        ("bet", KUHN, None, 1),
        ("  BET  ", KUHN, None, 1),
        ("<action>BET</action>", KUHN, None, 1),
        ("<ACTION> check </ACTION>", KUHN, None, 0),
        ("<answer>bet</answer>", KUHN, None, 1),
        ("I think... <action>check</action> no wait <action>bet</action>", KUHN, None, 1),
        ("I will bet.", KUHN, None, 1),
        ("**Check**", KUHN, None, 0),
        ("pass", KUHN, {"pass": "check"}, 0),
        ("Pass", ["fold", "call"], {"pass": "fold", "bet": "call"}, 0),
        ("check or bet", KUHN, None, None),
        ("betting is fun", KUHN, None, None),
        ("", KUHN, None, None),
        ("raise", KUHN, None, None),
        ("(2, 3)", GRID, None, 2),
        ("2,3", GRID, None, 2),
        ("[2 3]", GRID, None, 2),
        ("row 2 col 3", GRID, None, 2),
        ("<action>(3,3)</action>", GRID, None, 3),
        ("I play (1, 2) now", GRID, None, 1),
        ("(2, 2)", GRID, None, None),
        ("(1, 1) or (1, 2)", GRID, None, None),
        ("x0", ["x0", "x1"], None, 0),
        ("I'd go down", ["u", "d"], None, None),
        ("d", ["u", "d"], None, 1),
        ("(2, 3)", ["(2, 3)", "flag (2, 3)"], None, 0),
        ("2,3", ["open (2, 3)", "flag (2, 3)"], None, None),
        ("flag 2,3", ["open (2, 3)", "flag (2, 3)"], None, None),
    ],
)
def test_parse_action_table(text, legal, aliases, expected):
    assert parse_action(text, legal, aliases) == expected


def test_non_string_and_empty_legal_are_rejected():
    assert parse_action(None, KUHN) is None
    assert parse_action(b"bet", KUHN) is None
    assert parse_action(3, KUHN) is None
    assert parse_action("bet", []) is None


def test_alias_to_an_illegal_move_is_ignored():
    assert parse_action("call", KUHN, {"call": "fold"}) is None


def test_normalize_and_pairs():
    assert normalize("  Hello   World!! ") == "hello world"
    assert grid_pairs("row 1 col 2 and (3, 1)") == [(1, 2), (3, 1)]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_unicode_never_raises(text):
    for legal in (KUHN, GRID, ["x0", "x1", "x2"]):
        result = parse_action(text, legal, {"pass": "check"})
        assert result is None or 0 <= result < len(legal)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(GRID), st.text(alphabet="abc ,.", max_size=20))
def test_a_legal_move_inside_tags_is_always_found(move, noise):
    assert parse_action(f"{noise}<action>{move}</action>{noise}", GRID) == GRID.index(move)


def test_very_long_text_is_parsed_from_its_end():
    assert parse_action("x" * 1_000_000 + " <action>bet</action>", KUHN) == 1

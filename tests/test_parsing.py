import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mage_envs.parsing import (
    _exact_tables,
    _full_parse,
    grid_pairs,
    normalize,
    parse_action,
)

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


KUHN_FACING = ["fold", "call"]
FACING_ALIASES = {"pass": "fold", "bet": "call"}


@pytest.mark.parametrize(
    ("text", "legal", "aliases"),
    [
        ("don't bet", KUHN, None),
        ("I will not call", KUHN_FACING, FACING_ALIASES),
        ("I should never bet here", KUHN, None),
        ("<action>I don't bet</action>", KUHN, None),
        ("I won\u2019t bet", KUHN, None),
        ("no bet", KUHN, None),
        ("not (1, 1)", GRID, None),
        ("I avoid (1, 2)", GRID, None),
        ("I won't bet, I check", KUHN, None),
    ],
)
def test_a_move_in_a_negated_sentence_is_not_chosen(text, legal, aliases):
    assert parse_action(text, legal, aliases) is None


def test_negation_in_another_sentence_does_not_matter():
    assert parse_action("I do not have the King. Still, I bet.", KUHN) == 1
    assert parse_action("No doubt about it: bet", KUHN) == 1


def test_curly_apostrophe_joins_a_word_like_a_straight_one():
    assert parse_action("I\u2019d go down", ["u", "d"]) is None
    assert parse_action("\u201cbet\u201d", KUHN) == 1


@pytest.mark.parametrize("text", ["1 2 3", "(1, 2, 3)", "1 1 1 1 1 1", "1,1,1,1"])
def test_three_or_more_numbers_are_no_coordinate_pair(text):
    assert grid_pairs(text) == []
    assert parse_action(text, ["(1, 1)", "(1, 2)", "(2, 3)"]) is None


def test_an_alias_counts_only_when_no_move_name_is_mentioned():
    # "bet" is an alias of "call" when facing a bet: echoing the history must not make the
    # answer ambiguous, and the named move wins.
    assert parse_action("The opponent bet, so I fold.", KUHN_FACING, FACING_ALIASES) == 0
    assert parse_action("I pass.", KUHN, {"pass": "check"}) == 0


def test_a_tag_before_a_long_tail_is_still_read():
    text = "<action>check</action>" + " I could also bet." * 5_000
    assert len(text) > 20_000
    assert parse_action(text, KUHN) == 0


def test_nested_or_mismatched_tags():
    assert parse_action("<action>a<action>bet</action>", KUHN) == 1
    assert parse_action("<action>bet</action> then </answer>", KUHN) == 1


ADVERSARIAL = [
    "<action>" * 3_000,
    "<answer>x" * 3_000,
    "bet check " * 2_000,
    "bet no. " * 2_500,
    "1 " * 10_000,
    "row " * 5_000,
    "(" * 20_000,
    "</action>" * 3_000 + "<action>" * 3_000 + "</answer>",
]
"""Long answers built to make a careless parser slow; ``benchmarks parser`` times them."""


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_adversarial_long_answers_name_no_move(text):
    grid = [f"({r}, {c})" for r in range(1, 20) for c in range(1, 20)]
    for legal in (KUHN, grid):
        assert parse_action(text, legal, {"pass": "check"}) is None


_PIECES = ["bet", "check", "pass", "not", "don't", "no", "(1, 2)", "(2, 3)", "1", "2", "3", ",",
           ".", " ", "\n", "<action>", "</action>", "\u2019", "'", "I", "x0"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12))
def test_a_chosen_move_is_named_in_the_text(pieces):
    text = "".join(pieces)
    for legal, aliases in ((KUHN, {"pass": "check"}), (GRID, None)):
        index = parse_action(text, legal, aliases)
        if index is not None:
            chosen = legal[index]
            spellings = {chosen} | {a for a, t in (aliases or {}).items() if t == chosen}
            named = any(s in text.lower() for s in spellings)
            assert named or set(grid_pairs(chosen)) & set(grid_pairs(text)), (text, chosen)


# The fast path (a legal move, bare or in one tag) must answer exactly as the full rules do;
# ``_full_parse`` is the parser without it.
_LEGAL_LISTS = [
    KUHN,
    KUHN_FACING,
    GRID,
    ["Bet", "bet"],  # names that normalise alike: the full rules break the tie
    ["bet", "bet", "check"],
    ["x0", "x1", "<action>x2</action>", ""],
    ["open (2, 3)", "flag (2, 3)", "(2, 3)"],
    ["\u201cbet\u201d", "'check'", "no", "I'd"],
]
_FAST_PIECES = sorted({*_PIECES, *(n for names in _LEGAL_LISTS for n in names)} | {
    "<ACTION>", "</ACTION>", "<answer>", "</answer>", "< action >", "BET", " ", "  ", "\t",
    "**", "?", "\u201c", "\u201d", "\u00a0", "I think", "x" * 30})  # fmt: skip


_EDGES = ["", "", "", " ", "<action>", "</action>", "<answer>", "</answer>", "**", ".", "\u201c"]


@settings(max_examples=800, deadline=None)
@given(
    st.sampled_from(_LEGAL_LISTS),
    st.data(),
    st.lists(st.sampled_from(_FAST_PIECES), max_size=3),
    st.sampled_from([None, {"pass": "check"}, FACING_ALIASES]),
)
def test_the_fast_path_answers_as_the_full_rules(legal, data, pieces, aliases):
    # A legal name (in any case) between edges, or loose pieces: near the fast path's boundary.
    name = data.draw(st.sampled_from(legal))
    name = data.draw(st.sampled_from([name, name.upper(), f" {name} ", "".join(pieces)]))
    before, after = data.draw(st.sampled_from(_EDGES)), data.draw(st.sampled_from(_EDGES))
    text = before + name + after
    full = _full_parse(text, legal, aliases)
    assert parse_action(text, legal, aliases) == full, (text, legal)
    assert parse_action(text, tuple(legal), aliases) == full


@settings(max_examples=300, deadline=None)
@given(st.text(), st.sampled_from(_LEGAL_LISTS))
def test_the_fast_path_answers_as_the_full_rules_on_any_text(text, legal):
    for candidate in (text, f"<action>{text}</action>", f"<answer>{text}</answer>"):
        assert parse_action(candidate, legal) == _full_parse(candidate, legal, None), candidate


@pytest.mark.parametrize("legal", _LEGAL_LISTS)
def test_the_fast_path_takes_each_move_as_written(legal):
    tables = _exact_tables(tuple(legal))
    for i, name in enumerate(legal):
        for text in (name, f"<action>{name}</action>", f"<answer>{name}</answer>"):
            assert parse_action(text, legal) == _full_parse(text, legal, None), (text, legal)
            if tables is not None and "<" not in name:  # distinct names: each is found
                assert parse_action(text, legal) == i

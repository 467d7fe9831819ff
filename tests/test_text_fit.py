from hypothesis import given, settings
from hypothesis import strategies as st

from mage_envs.text import _OUTSIDE_CHARSET, _TYPOGRAPHY, MAX_TEXT_CHARS, fit_text


def full_fit(text: str, max_chars: int = MAX_TEXT_CHARS) -> str:
    """fit_text's rule without its shortcut for text already within the charset."""
    return _OUTSIDE_CHARSET.sub("?", text[:max_chars].translate(_TYPOGRAPHY))[:max_chars]


def test_the_typography_map_holds_no_ascii_character():
    # fit_text returns ASCII text within the charset as it is: that needs no mapped ASCII.
    assert all(code > 127 for code in _TYPOGRAPHY)  # a translation table: code points


NEAR_ASCII = st.sampled_from("ab \n\t\r\x00\x07\x0b\x1b\x7f\u2019\u2014\u00e9")


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=NEAR_ASCII, max_size=40) | st.text(max_size=40),
    st.integers(0, 50),
)
def test_fit_text_is_its_full_rule(text, max_chars):
    assert fit_text(text, max_chars) == full_fit(text, max_chars)
    assert fit_text(text) == full_fit(text)


def test_text_within_the_charset_comes_back_as_is():
    text = "Legal moves: (1, 1), (2, 3).\n\tOK"
    assert fit_text(text) is text
    assert fit_text("x" * 10, 4) == "xxxx"

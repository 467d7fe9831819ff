"""The text of the suite: the charset and ``spaces.Text`` of every observation and action.

Every text env (games, puzzles, converted envs, the trial wrapper) builds its spaces with
:func:`text_space`, keeps what it shows within the charset with :func:`fit_text`, and renders with
:func:`render_text`, so the same rules hold everywhere.

Two charsets. Our own pages are ASCII (:data:`TEXT_CHARSET`). The pages of the published presets
(``templates="lamer"`` / ``"mage"``) are the bytes the papers' code sent, and their wording is not
ASCII (``√``, ``–``, ``’``, ``“ ”``, ``e‑commerce``): those pages use :data:`PAGE_CHARSET`
(:func:`page_text_space`, :func:`fit_page_text`), which holds every character of the published
wording, so the wording and the published observation text pass unchanged.
"""

from __future__ import annotations

import copy
import functools
import re
import string
import unicodedata

from gymnasium import spaces

from mage_envs.parsing import extract_tagged

__all__ = [
    "shown_action",
    "TEXT_CHARSET",
    "PAGE_CHARSET",
    "MAX_TEXT_CHARS",
    "fit_page_text",
    "fit_text",
    "page_text_space",
    "plain_ascii",
    "render_text",
    "text_space",
]

TEXT_CHARSET = "".join(sorted(set(string.printable)))
"""Characters an observation may contain (ASCII printable, with space and newline).

A sorted string, not a set: ``spaces.Text`` samples from the charset in its iteration order, and a
set's order changes from one process to the next.
"""

_PAGE_BLOCKS = (
    (0x00A0, 0x024F),  # Latin-1 Supplement, Latin Extended-A and -B (accented letters, ° ® ×)
    (0x2000, 0x206F),  # General Punctuation (‑ – — ’ “ ” • …)
    (0x20A0, 0x20CF),  # Currency Symbols (€)
    (0x2100, 0x214F),  # Letterlike Symbols (™ ℃)
    (0x2190, 0x21FF),  # Arrows (→)
    (0x2200, 0x22FF),  # Mathematical Operators (√ ≤ ≥)
    (0x2500, 0x25FF),  # Box Drawing, Block Elements, Geometric Shapes
    (0x2600, 0x27BF),  # Miscellaneous Symbols and Dingbats (★ ✓)
)
PAGE_CHARSET = TEXT_CHARSET + "".join(
    c for low, high in _PAGE_BLOCKS for c in map(chr, range(low, high + 1)) if c.isprintable()
)
"""Characters a page of a published preset may contain: :data:`TEXT_CHARSET`, Latin letters
with accents, punctuation, currency, letterlike symbols, arrows, mathematical operators, box
drawing, shapes and dingbats (the printable characters of those Unicode blocks).

It holds every character of the published prompts of LaMer and MAGE (a test checks the prompt
files), so their wording passes unchanged; what a model writes (a reflection, an answer shown in
the memory) keeps every character in it, and any other character (an emoji, a CJK letter) becomes
``?``. A sorted-by-block string, not a set, for the reason given at :data:`TEXT_CHARSET`.
"""

MAX_TEXT_CHARS = 16_384
"""Upper bound on the length of an observation, used for ``spaces.Text``."""

_OUTSIDE_CHARSET = re.compile(f"[^{re.escape(TEXT_CHARSET)}]")
_OUTSIDE_PAGE_CHARSET = re.compile(f"[^{re.escape(PAGE_CHARSET)}]")
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def _box_drawing_in_ascii(char: str) -> str:
    """Return ``-``, ``|`` or ``+`` for a box-drawing character, by its Unicode name."""
    name = unicodedata.name(char, "")
    horizontal = any(word in name for word in ("HORIZONTAL", "LEFT", "RIGHT"))
    vertical = any(word in name for word in ("VERTICAL", "UP", "DOWN"))
    if horizontal == vertical:
        return "+"
    return "-" if horizontal else "|"


_BOX_DRAWING = str.maketrans({chr(c): _box_drawing_in_ascii(chr(c)) for c in range(0x2500, 0x2580)})


def text_space(max_length: int = MAX_TEXT_CHARS) -> spaces.Text:
    """Return the ``spaces.Text`` of every text observation and action of the suite.

    Example:
        >>> text_space().contains("Legal moves: check, bet.")
        True
    """
    return _text_space(max_length, TEXT_CHARSET)


def page_text_space(max_length: int = MAX_TEXT_CHARS) -> spaces.Text:
    """Return the ``spaces.Text`` of a published preset's pages (charset :data:`PAGE_CHARSET`).

    Example:
        >>> page_text_space().contains("Box on Target (`\u221a`)")
        True
    """
    return _text_space(max_length, PAGE_CHARSET)


@functools.cache
def _built_text_space(max_length: int, charset: str) -> spaces.Text:
    return spaces.Text(max_length=max_length, charset=charset)


def _text_space(max_length: int, charset: str) -> spaces.Text:
    """A new ``spaces.Text``, copied from one built once per charset and length.

    Building a ``Text`` makes a numpy integer per charset character (thousands for
    :data:`PAGE_CHARSET`), and every env build makes several spaces. A shallow copy shares those
    read-only tables and has its own generator (none until it is seeded or sampled).
    """
    return copy.copy(_built_text_space(int(max_length), charset))


def fit_page_text(text: str, max_chars: int = MAX_TEXT_CHARS) -> str:
    """Keep ``text`` within :data:`PAGE_CHARSET` and ``max_chars``: other characters become ``?``.

    Nothing is respelled: a published page keeps its curly quotes and dashes.

    Example:
        >>> print(fit_page_text("It\u2019s \u221a \u2014 fine \U0001f600"))
        It’s √ — fine ?
    """
    if len(text) <= max_chars and _OUTSIDE_PAGE_CHARSET.search(text) is None:
        return text
    return _OUTSIDE_PAGE_CHARSET.sub("?", text[:max_chars])


def render_text(text: str, render_mode: str | None) -> str | None:
    """Render a text env's current text: returned for ``"ansi"``, printed for ``"human"``.

    Example:
        >>> render_text("Legal moves: bet.", "ansi")
        'Legal moves: bet.'
    """
    if render_mode == "human":
        print(text)
        return None
    return text if render_mode == "ansi" else None


def plain_ascii(text: str) -> str:
    r"""Drop terminal colour codes and draw box-drawing lines with ``-``, ``|`` and ``+``.

    Some OpenSpiel games draw their boards for a terminal (``twixt`` in colour, ``dots_and_boxes``
    with box-drawing lines); :func:`fit_text` would turn each of those characters into ``?``.

    Example:
        >>> plain_ascii("\x1b[91ma\x1b[0m \u250c\u2574 \u2576\u2510")
        'a +- -+'
    """
    return _ANSI_ESCAPE.sub("", text).translate(_BOX_DRAWING)


_TYPOGRAPHY = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u00a0\u2002\u2003\u2009\u202f", " "),
        "\u2026": "...",
        "\u2022": "*",
        "\u00d7": "x",
    }
)
"""Typographic punctuation that models write, mapped to its ASCII spelling."""


def fit_text(text: str, max_chars: int = MAX_TEXT_CHARS) -> str:
    r"""Keep ``text`` within :data:`TEXT_CHARSET` and ``max_chars``.

    Curly quotes, dashes, ellipses and special spaces (common in model answers that end up in
    memory) become their ASCII spelling; any other character outside the charset becomes ``?``.

    Example:
        >>> fit_text("It\u2019s \u201cfine\u201d \u2014 caf\u00e9\u2026")
        'It\'s "fine" - caf?...'
    """
    if len(text) <= max_chars and text.isascii() and _OUTSIDE_CHARSET.search(text) is None:
        return text  # the common case, already within: no copy (the typography is not ASCII)
    return _OUTSIDE_CHARSET.sub("?", text[:max_chars].translate(_TYPOGRAPHY))[:max_chars]


MAX_SHOWN_ACTION_CHARS = 200
"""An answer is shown in memory cut to this many characters (its tagged action if it has one)."""


def shown_action(action: object) -> str:
    r"""Return an answer as memory shows it: the tagged action if any, one line, cut short.

    Example:
        >>> shown_action("Let me think...\n<action>bet</action>")
        'bet'
    """
    text = action if isinstance(action, str) else repr(action)
    text = " ".join(extract_tagged(text[-20_000:]).split())
    if len(text) > MAX_SHOWN_ACTION_CHARS:
        text = text[: MAX_SHOWN_ACTION_CHARS - 3] + "..."
    return fit_text(text) or "(empty answer)"

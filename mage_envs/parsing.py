"""Tolerant parsing of an agent's action text into one of the legal moves.

Agent text is untrusted input: it may be empty, very long, wrapped in tags, in any case, or full of
reasoning that mentions several moves. :func:`parse_action` never raises on a ``str``; it returns
the index of the chosen legal move, or ``None`` when the text does not pick exactly one.

The rules, in order:

1. If the text contains ``<action>...</action>`` (or ``<answer>...</answer>``) tags, only the
   content of the last such tag is read.
2. The text is normalised (case, spacing, surrounding punctuation and quotes); an exact match with a
   legal move or one of its aliases wins.
3. Grid moves: a single coordinate pair written ``(2, 3)``, ``2,3``, ``[2 3]`` or ``row 2 col 3``
   matches the legal move with the same pair.
4. Otherwise, if exactly one legal move (or alias) is mentioned as a whole word, it is chosen.
   Text that mentions two different legal moves is ambiguous and is rejected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

__all__ = ["normalize", "parse_action", "extract_tagged", "grid_pairs"]

MAX_ACTION_CHARS = 20_000
"""Longer answers are cut to their last ``MAX_ACTION_CHARS`` characters before parsing."""

_TAG = re.compile(r"<\s*(action|answer)\s*>(.*?)<\s*/\s*\1\s*>", re.IGNORECASE | re.DOTALL)
_PAIR = re.compile(
    r"(?:row\s*)?[\(\[]?\s*(\d{1,3})\s*(?:,|\s|;|col(?:umn)?)\s*(?:col(?:umn)?\s*)?(\d{1,3})\s*[\)\]]?",
    re.IGNORECASE,
)
_STRIP = " \t\r\n.,;:!?\"'`*_"


def extract_tagged(text: str) -> str:
    """Return the content of the last ``<action>`` or ``<answer>`` tag, or the text itself.

    Example:
        >>> extract_tagged("I think... <action>BET</action>")
        'BET'
    """
    matches = _TAG.findall(text)
    return matches[-1][1] if matches else text


def normalize(text: str) -> str:
    """Lower-case, collapse whitespace and strip surrounding punctuation and quotes.

    Example:
        >>> normalize("  **Call.** ")
        'call'
    """
    return " ".join(text.lower().split()).strip(_STRIP)


def grid_pairs(text: str) -> list[tuple[int, int]]:
    """Return every coordinate pair written in ``text``, in order.

    Example:
        >>> grid_pairs("(2, 3) or 1,1")
        [(2, 3), (1, 1)]
    """
    return [(int(r), int(c)) for r, c in _PAIR.findall(text)]


@lru_cache(maxsize=4096)
def _normalized_name(name: str) -> str:
    """Normalise a move name; names repeat every step, so they are cached."""
    return normalize(name)


def _aliases_by_index(
    legal: Sequence[str], aliases: Mapping[str, str] | None
) -> list[tuple[str, int]]:
    """Return (normalised name, legal index) for every legal move and alias."""
    index = {_normalized_name(name): i for i, name in enumerate(legal)}
    names = list(index.items())
    for alias, target in (aliases or {}).items():
        target_index = index.get(_normalized_name(target))
        if target_index is not None:
            names.append((_normalized_name(alias), target_index))
    return names


def _mentioned(text: str, names: list[tuple[str, int]]) -> set[int]:
    """Return the legal indices whose name or alias appears in ``text`` as a whole word."""
    found = set()
    for name, i in names:
        # An apostrophe joins a word here, so the alias "d" is not found in "I'd".
        if name and re.search(r"(?<![\w'])" + re.escape(name) + r"(?![\w'])", text):
            found.add(i)
    return found


def parse_action(
    text: object,
    legal: Sequence[str],
    aliases: Mapping[str, str] | None = None,
) -> int | None:
    """Map agent text to the index of one legal move.

    Args:
        text: The agent's answer. Anything that is not a ``str`` is rejected.
        legal: The legal move names, as shown to the agent.
        aliases: Extra accepted spellings, alias -> legal move name (e.g. ``{"fold": "pass"}``).
            An alias whose target is not legal now is ignored.

    Returns:
        The index into ``legal`` of the chosen move, or ``None`` if the text names no legal move or
        names more than one.

    Example:
        >>> parse_action("<action>Bet</action>", ["pass", "bet"])
        1
        >>> parse_action("2,3", ["(1, 1)", "(2, 3)"])
        1
        >>> parse_action("pass or bet?", ["pass", "bet"]) is None
        True
    """
    if not isinstance(text, str) or not legal:
        return None
    answer = normalize(extract_tagged(text[-MAX_ACTION_CHARS:]))
    for i, name in enumerate(legal):  # the common case, checked before building alias tables
        if _normalized_name(name) == answer and legal.count(name) == 1:
            return i
    names = _aliases_by_index(legal, aliases)
    exact = {i for name, i in names if name == answer}
    if len(exact) == 1:
        return exact.pop()
    pair_index = _match_pair(answer, legal)
    if pair_index is not None:
        return pair_index
    mentioned = _mentioned(answer, names)
    return mentioned.pop() if len(mentioned) == 1 else None


def _match_pair(answer: str, legal: Sequence[str]) -> int | None:
    """Match a single coordinate pair in the answer against legal moves written as pairs."""
    pairs = set(grid_pairs(answer))
    if len(pairs) != 1:
        return None
    wanted = pairs.pop()
    matches = [i for i, name in enumerate(legal) if grid_pairs(name) == [wanted]]
    return matches[0] if len(matches) == 1 else None

r"""Keeping an API key out of what we print and store, without touching what a model wrote.

Two texts come back from an endpoint, and they are redacted differently:

- **Errors** (an error answer's detail, a failed request's reason), which we print and store
  in results: every echo of the key is replaced by ``***``, written plainly or as a server may
  echo it: JSON-escaped (``\/``, ``\u002d``), URL-encoded (``%2F``), or partly masked, a
  prefix and a suffix of the key around asterisks (``sk-AUDIT/SEC*****2b1d``, as providers
  print a rejected key). A key shorter than :data:`MIN_SECRET_LENGTH` (``x``, ``none``,
  ``EMPTY``: what local servers take) is replaced only where it stands as a word of its own,
  so that ``c`` does not turn ``connection`` into ``***onne***tion``.
- **Answers** (the text a model wrote, which is played): never changed, except that a key of at
  least :data:`MIN_SECRET_LENGTH` characters found in it verbatim is replaced (no model writes a
  random secret of that length: it is a server echoing the request). A shorter key is not
  searched for in answers at all.

Example:
    >>> redact_error("bad key sk-AUDIT\\/SEC-42*****2b1d", "sk-AUDIT/SEC-42-2b1d")
    'bad key ***'
    >>> redact_answer("<action>bet</action>", "c")
    '<action>bet</action>'
"""

from __future__ import annotations

import re

__all__ = ["MIN_SECRET_LENGTH", "MASK", "redact_error", "redact_answer"]

MIN_SECRET_LENGTH = 8
"""Keys shorter than this are no secrets worth searching answers for (nor words of errors)."""

MASK = "***"
"""What replaces the key."""

MIN_SHOWN = 4
"""A masked key shows at least this many of its characters (prefix and suffix) to be redacted."""

_UNIT = re.compile(r"\\+u[0-9a-fA-F]{4}|\\+/|%[0-9a-fA-F]{2}|.", re.DOTALL)
"""One character of a text as a server may have encoded it: JSON-escaped, URL-encoded, plain."""

_STARS = re.compile(r"\*{3,}")


def redact_answer(text: str, key: str | None) -> str:
    """``text``, a model's answer, with a key of :data:`MIN_SECRET_LENGTH`+ characters replaced."""
    if not key or len(key) < MIN_SECRET_LENGTH:
        return text
    return text.replace(key, MASK)


def redact_error(text: str, key: str | None) -> str:
    """``text``, an error, with every echo of ``key`` replaced (see the module docstring)."""
    if not key or not text:
        return text
    chars, starts = _decode(text)
    decoded = "".join(chars)
    if len(key) < MIN_SECRET_LENGTH:
        spans = _words(decoded, key)
    else:
        spans = _occurrences(decoded, key) + _masked(decoded, key)
    if not spans:
        return text
    starts.append(len(text))  # where a span ending at the last character ends
    out, at = [], 0
    for start, end in _merged(spans):
        out += [text[at : starts[start]], MASK]
        at = starts[end]
    return "".join(out) + text[at:]


def _decode(text: str) -> tuple[list[str], list[int]]:
    """Each character of ``text`` decoded, and where its encoding starts in ``text``."""
    units = list(_UNIT.finditer(text))
    return [_char(u.group()) for u in units], [u.start() for u in units]


def _char(unit: str) -> str:
    """The character one match of :data:`_UNIT` stands for."""
    if len(unit) == 1:
        return unit
    if unit.startswith("%"):
        return chr(int(unit[1:], 16))
    escaped = unit.lstrip("\\")
    return "/" if escaped == "/" else chr(int(escaped[1:], 16))


def _occurrences(decoded: str, key: str) -> list[tuple[int, int]]:
    spans, at = [], decoded.find(key)
    while at >= 0:
        spans.append((at, at + len(key)))
        at = decoded.find(key, at + 1)
    return spans


def _words(decoded: str, key: str) -> list[tuple[int, int]]:
    """Occurrences of a short key standing as a word of its own (no letter or digit beside)."""
    pattern = re.compile(rf"(?<![0-9A-Za-z]){re.escape(key)}(?![0-9A-Za-z])")
    return [m.span() for m in pattern.finditer(decoded)]


def _masked(decoded: str, key: str) -> list[tuple[int, int]]:
    """Runs of asterisks with a prefix of the key before and a suffix after, showing enough."""
    spans = []
    for stars in _STARS.finditer(decoded):
        start, end = stars.span()
        before, after = decoded[max(start - len(key), 0) : start], decoded[end : end + len(key)]
        shown_before = next((j for j in range(len(key) - 1, 0, -1) if before.endswith(key[:j])), 0)
        shown_after = next((i for i in range(len(key) - 1, 0, -1) if after.startswith(key[-i:])), 0)
        if shown_before + shown_after >= MIN_SHOWN:
            spans.append((start - shown_before, end + shown_after))
    return spans


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged

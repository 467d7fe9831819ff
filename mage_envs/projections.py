"""How the published code of LaMer and MAGE read an answer: its ``projection.py`` of each env.

A *projection* turns a model's answer into what the published env received, and a valid flag
(0 means the trainer charged its format penalty). These pure functions restate those rules, quirks
included, so that an env can play an answer exactly as the papers' code did under
``turn_rules="lamer"`` / ``answer_rules="lamer"`` / ``"mage"``, and a published page can show the
answer as the papers' memory wrote it. Our own tolerant reading is :mod:`mage_envs.parsing`.

Rules shared by the published projections: tags are matched exactly and case-sensitively
(``<action>``, ``</action>``, ``<remark>``, ``</remark>``, with ``str.find`` or ``str.rfind``), the
content is ``str.strip``-ed, and an end tag found before the start tag leaves an empty content.
Sources, all under ``agent_system/environments/``: LaMer @9a4756c ``sokoban/``, ``minesweeper/``,
``alfworld/``, ``webshop/`` ``projection.py``; MAGE @9b2e588 ``kuhnpoker/``, ``TicTacToe/``
``projection.py`` (MAGE's ALFWorld and WebShop projections are LaMer's, byte for byte).
"""

from __future__ import annotations

import re
import sys

__all__ = [
    "SOKOBAN_ACTIONS",
    "action_tag",
    "lamer_sokoban",
    "lamer_minesweeper",
    "mage_kuhn",
    "mage_tictactoe",
    "lamer_alfworld",
    "lamer_webshop",
    "webshop_action",
    "published_reflection",
    "projected_number",
]

SOKOBAN_ACTIONS = ("up", "down", "left", "right", "still")
"""LaMer's Sokoban action words, in the order its projection tries them (``still``: a no-op)."""

_START, _END = "<action>", "</action>"
_MINE_CELL = re.compile(r"\(( *\d+) *, *(\d+) *\)")
_TTT_CELL = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_WEBSHOP_ACTION = re.compile(r"(.+)\[(.+)\]")
"""WebShop's ``parse_action`` pattern, which :func:`webshop_action` reads in linear time."""


def action_tag(move: str) -> str:
    """The answer a published projection reads as ``move``: the move inside ``<action>`` tags.

    Under published answer rules an env lists its legal actions this way, so that a legal action
    sent as the answer plays the move (``info["legal_actions"]``).

    Example:
        >>> action_tag("PASS")
        '<action>PASS</action>'
    """
    return f"{_START}{move}{_END}"


def projected_number(digits: str) -> int:
    r"""The number a published projection's ``int()`` makes of ``digits`` (a ``\d+`` match).

    Python refuses to convert more than 4300 digits, where the published code would have crashed
    on the answer; such a number (its leading zeros aside) lies beyond any board, so it is read
    as ``sys.maxsize``, off every board, instead of failing on untrusted text.

    Example:
        >>> projected_number(" 02"), projected_number("9" * 5000) == sys.maxsize
        (2, True)
    """
    try:
        return int(digits.strip().lstrip("0") or "0")
    except ValueError:  # more digits than int() converts
        return sys.maxsize


def _between(text: str, start: int, end: int, tag: str = _START) -> str:
    """The text between a start tag at ``start`` and an end tag at ``end``, stripped."""
    return text[start + len(tag) : end].strip()


def lamer_sokoban(answer: str, moves_per_turn: int | None = 3) -> tuple[list[str], bool]:
    """LaMer's Sokoban projection: the moves of a turn and whether the answer was valid.

    The content runs from the first ``<action>`` to the last ``</action>``, lower-cased; each
    comma-separated piece becomes the first word of :data:`SOKOBAN_ACTIONS` it *contains*
    (``"go left then up"`` is ``up``), and pieces with none are dropped; at most
    ``moves_per_turn`` moves (LaMer's ``num_actions_per_turn``, 3; ``None``: every move). No
    tag, or no move: ``["still"]``, invalid.

    Example:
        >>> lamer_sokoban("<action>Left, go left then up, jump, down, right</action>")
        (['left', 'up', 'down'], True)
        >>> lamer_sokoban("left")
        (['still'], False)
    """
    start, end = answer.find(_START), answer.rfind(_END)
    if start == -1 or end == -1:
        return ["still"], False
    moves = []
    for piece in _between(answer, start, end).lower().split(","):
        move = next((word for word in SOKOBAN_ACTIONS if word in piece), None)
        if move is not None:
            moves.append(move)
    return (moves[:moves_per_turn], True) if moves else (["still"], False)


def lamer_minesweeper(answer: str) -> tuple[str, str] | None:
    """LaMer's Minesweeper projection: the row and column as written, or ``None`` (invalid).

    The first ``(row, col)`` inside the first ``<action>...</action>``; the row keeps the spaces
    written before it and both keep leading zeros (its memory writes ``( 2, 3)``, ``(02, 3)``).

    Example:
        >>> lamer_minesweeper("<action>( 2, 3) or (4, 4)</action>")
        (' 2', '3')
        >>> lamer_minesweeper("(2, 3)") is None
        True
    """
    start, end = answer.find(_START), answer.find(_END)
    if start == -1 or end == -1:
        return None
    match = _MINE_CELL.search(_between(answer, start, end))
    return None if match is None else (match.group(1), match.group(2))


def mage_kuhn(answer: str) -> int:
    """MAGE's Kuhn poker projection: 0 (PASS), 1 (BET) or -1 (invalid).

    Only ``PASS`` or ``BET``, upper-case, alone inside the first ``<action>...</action>``.

    Example:
        >>> mage_kuhn("<action> BET </action>"), mage_kuhn("<action>pass</action>")
        (1, -1)
    """
    start, end = answer.find(_START), answer.find(_END)
    if start == -1 or end == -1:
        return -1
    return {"PASS": 0, "BET": 1}.get(_between(answer, start, end), -1)


def mage_tictactoe(answer: str) -> tuple[int, int]:
    """MAGE's tic-tac-toe projection: ``(row, col)`` 1-indexed, or ``(-1, -1)`` (invalid).

    The first ``(row, col)`` inside the first ``<action>...</action>``.

    Example:
        >>> mage_tictactoe("<action>(2,3)</action>"), mage_tictactoe("(2, 3)")
        ((2, 3), (-1, -1))
    """
    start, end = answer.find(_START), answer.find(_END)
    if start == -1 or end == -1:
        return -1, -1
    match = _TTT_CELL.search(_between(answer, start, end))
    if match is None:
        return -1, -1
    return projected_number(match.group(1)), projected_number(match.group(2))


def _lower_command(answer: str, tail: int) -> tuple[str, bool]:
    """LaMer's ALFWorld and WebShop projection, which keep the last ``tail`` characters untagged."""
    text = answer.lower()
    start, end = text.find(_START), text.find(_END)
    if start == -1 or end == -1:
        return text[-tail:], False
    return _between(text, start, end), True


def lamer_alfworld(answer: str) -> tuple[str, bool]:
    """LaMer's ALFWorld projection: the command sent to the game, and whether it was valid.

    The whole answer is lower-cased; the command is the content of the first
    ``<action>...</action>``, verbatim; without the tag, the last 30 characters (invalid).

    Example:
        >>> lamer_alfworld("I go. <action>Go to Desk 1</action>")
        ('go to desk 1', True)
        >>> lamer_alfworld("Let me go to desk 1 now, then open it")
        ('go to desk 1 now, then open it', False)
    """
    return _lower_command(answer, 30)


def lamer_webshop(answer: str) -> tuple[str, bool]:
    """LaMer's WebShop projection: as :func:`lamer_alfworld`, keeping 20 characters untagged.

    Example:
        >>> lamer_webshop("<action>click[Buy Now]</action>")
        ('click[buy now]', True)
    """
    return _lower_command(answer, 20)


def webshop_action(action: str) -> tuple[str, str | None]:
    r"""WebShop's own reading of an action (``web_agent_site/engine/engine.py``, ``parse_action``).

    ``re.match(r"(.+)\[(.+)\]")``: the name runs to the last ``[`` that a ``]`` follows on the
    same line; the argument is ``None`` when there is no match (nothing then happens).

    Example:
        >>> webshop_action("click[b0xyz]"), webshop_action("buy it")
        (('click', 'b0xyz'), ('buy it', None))
    """
    # The regex's own backtracking is quadratic ("[" * 10_000 took 2.4 s, 40_000 took 39 s); its
    # match, read off directly: ``.`` stops at the first newline, the greedy name ends at the
    # last "[" that leaves an argument before the line's last "]".
    line = action.split("\n", 1)[0]
    close = line.rfind("]")
    open_ = line.rfind("[", 1, close - 1) if close > 1 else -1
    if open_ < 1:
        return action, None
    return line[:open_], line[open_ + 1 : close]


def published_reflection(answer: str, max_chars: int, last: bool) -> str:
    """The reflection the published code stored: inside ``<remark>...</remark>``, else ``""``.

    Args:
        answer: The model's answer.
        max_chars: Kept characters (2000 in both papers).
        last: ``str.rfind`` for both tags (LaMer's Minesweeper, ALFWorld and WebShop, MAGE's
            tic-tac-toe) or ``str.find`` (LaMer's Sokoban, MAGE's Kuhn poker).

    Example:
        >>> published_reflection("<remark>a</remark> <remark>b</remark>", 2000, last=True)
        'b'
        >>> published_reflection("<remark>a</remark> <remark>b</remark>", 2000, last=False)
        'a'
    """
    find = answer.rfind if last else answer.find
    start, end = find("<remark>"), find("</remark>")
    if start == -1 or end == -1:
        return ""
    return _between(answer, start, end, "<remark>")[:max_chars]

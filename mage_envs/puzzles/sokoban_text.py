"""What a Sokoban player reads (the board with a legend) and how its answer becomes moves."""

from __future__ import annotations

import re

from mage_envs.parsing import MAX_ACTION_CHARS, extract_tagged, normalize, parse_action
from mage_envs.puzzles.grid_text import cell_name, draw_grid
from mage_envs.puzzles.sokoban import DIRECTIONS, LEGEND, SokobanLevel

__all__ = ["parse_moves", "board_text", "RULES"]

RULES = (
    "Sokoban: push every box onto a target. You push a box by walking into it; the cell behind "
    "it must be free. You cannot pull boxes, and you cannot push two boxes at once."
)
"""The rules, as shown at the top of every observation."""

_NAMES = {
    "up": "up", "u": "up", "north": "up",
    "down": "down", "d": "down", "south": "down",
    "left": "left", "l": "left", "west": "left",
    "right": "right", "r": "right", "east": "right",
}  # fmt: skip
_FILLERS = {"then", "and", "move", "moves", "go"}
_WORD_ALIASES = {"north": "up", "south": "down", "west": "left", "east": "right"}


def parse_moves(text: object) -> list[str]:
    """Read the moves an answer asks for, in order; an empty list when it names none clearly.

    A list such as ``"up, left, left"`` (commas, spaces, ``then``/``and`` between moves; the
    letters ``u d l r`` and the compass words are accepted) gives every move. Otherwise free text
    that names exactly one direction (``"I will go up."``) gives that one move, and text naming
    several directions among other words is ambiguous, so it gives none. The content of the last
    ``<action>`` or ``<answer>`` tag is read when there is one.

    Example:
        >>> parse_moves("<action>Up, left, L</action>")
        ['up', 'left', 'left']
        >>> parse_moves("The box is below me, so I push it down.")
        ['down']
        >>> parse_moves("up or left?")
        []
    """
    if not isinstance(text, str):
        return []
    answer = normalize(extract_tagged(text[-MAX_ACTION_CHARS:]))
    words = re.findall(r"[a-z]+|[^a-z\s,;.>\-]", answer)
    if words and all(w in _NAMES or w in _FILLERS for w in words):
        moves = [_NAMES[w] for w in words if w in _NAMES]
        if moves:
            return moves
    index = parse_action(answer, list(DIRECTIONS), _WORD_ALIASES)
    return [] if index is None else [list(DIRECTIONS)[index]]


def board_text(level: SokobanLevel) -> str:
    r"""Return the legend, the numbered board and where the player stands.

    Example:
        >>> print(board_text(SokobanLevel.from_text("#####\n#@$.#\n#####")))
        Legend: # wall, _ floor, . target, $ box, * box on a target, @ you, + you on a target.
            1 2 3 4 5
         1  # # # # #
         2  # @ $ . #
         3  # # # # #
        You are at (row, col) = (2, 2). Boxes on targets: 0 of 1.
    """
    where = cell_name(*level.position(level.player))
    return (
        f"Legend: {LEGEND}.\n{draw_grid(level.rows())}\n"
        f"You are at (row, col) = {where}. "
        f"Boxes on targets: {level.boxes_on_targets} of {len(level.boxes)}."
    )

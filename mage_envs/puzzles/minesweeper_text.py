"""What a Minesweeper player reads (the numbered board) and how its answer becomes a move."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mage_envs.parsing import MAX_ACTION_CHARS, extract_tagged, grid_pairs, normalize
from mage_envs.puzzles.grid_text import draw_grid
from mage_envs.puzzles.minesweeper import LEGEND, MinesweeperBoard

__all__ = ["CellMove", "parse_cell_move", "board_text"]

_FLAG = re.compile(r"(?<!\w)(un)?flag(?:ged|s)?(?!\w)")


@dataclass(frozen=True)
class CellMove:
    """One move on a cell, 0-indexed.

    Attributes:
        row: Row, 0-indexed.
        col: Column, 0-indexed.
        flag: True for "flag"/"unflag" (toggle a flag), False to open the cell.
    """

    row: int
    col: int
    flag: bool = False


def parse_cell_move(text: object) -> CellMove | None:
    """Read one move written ``(row, col)`` (1-indexed) or ``flag (row, col)``; None if unclear.

    The content of the last ``<action>`` or ``<answer>`` tag is read when there is one. Text with
    no coordinate pair, or with two different pairs, names no single cell and gives None. The
    cell is not checked against the board here.

    Example:
        >>> parse_cell_move("<action>(2, 3)</action>")
        CellMove(row=1, col=2, flag=False)
        >>> parse_cell_move("flag 4,1")
        CellMove(row=3, col=0, flag=True)
        >>> parse_cell_move("(1, 1) or (2, 2)") is None
        True
    """
    if not isinstance(text, str):
        return None
    answer = normalize(extract_tagged(text[-MAX_ACTION_CHARS:]))
    pairs = set(grid_pairs(answer))
    if len(pairs) != 1:
        return None
    row, col = pairs.pop()
    return CellMove(row - 1, col - 1, bool(_FLAG.search(answer)))


def board_text(board: MinesweeperBoard) -> str:
    """Return the legend and the numbered board.

    Example:
        >>> import numpy as np
        >>> board = MinesweeperBoard(np.array([[1, 0, 0], [0, 0, 0]], dtype=bool))
        >>> _ = board.reveal(1, 2)
        >>> print(board_text(board))
        Legend: ? unopened, . opened with no mine around, 1-8 mines around, F flag.
            1 2 3
         1  ? 1 .
         2  ? 1 .
    """
    return f"Legend: {LEGEND}.\n{draw_grid(board.rows())}"

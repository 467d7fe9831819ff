"""Text drawing of a character grid with 1-indexed row and column numbers (for the puzzles)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["draw_grid", "cell_name"]


def cell_name(row: int, col: int) -> str:
    """Return the ``(row, col)`` name, 1-indexed, of a 0-indexed cell.

    Example:
        >>> cell_name(0, 2)
        '(1, 3)'
    """
    return f"({row + 1}, {col + 1})"


def draw_grid(rows: Sequence[Sequence[str]]) -> str:
    """Draw rows of one-character cells, space-separated, with column and row numbers.

    Numbers are right-aligned so that boards up to 99 x 99 stay in columns.

    Example:
        >>> print(draw_grid(["#_#", "_@_"]))
            1 2 3
         1  # _ #
         2  _ @ _
    """
    width = len(rows[0]) if rows else 0
    pad = max(2, len(str(len(rows))))
    cols = max(1, len(str(width)))
    header = " " * (pad + 2) + " ".join(str(c + 1).rjust(cols) for c in range(width))
    lines = [
        f"{r + 1:>{pad}}  " + " ".join(cell.rjust(cols) for cell in row)
        for r, row in enumerate(rows)
    ]
    return "\n".join([header.rstrip(), *lines])

"""Minesweeper rules: mine layouts, reveals with cascades, flags, and the text board. No Gymnasium.

Cells are ``(row, col)``, 0-indexed here (the text shown to an agent is 1-indexed). Opening a cell
with no mine around it opens its neighbours too, and so on (a *cascade*); flagged cells are never
opened by a cascade. The game is won when every cell without a mine is open.

Text symbols: ``?`` unopened, ``.`` opened with no mine around (a blank cell), ``1``-``8`` opened
with that many mines around, ``F`` flagged; after a loss ``X`` marks the mine that went off. The
other mines stay hidden even then: a trial replays the same layout in its next episode, so showing
them would hand the agent (and its reflection) the solution.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

import numpy as np

__all__ = ["MinesweeperBoard", "Reveal", "UNOPENED", "FLAGGED", "neighbours", "check_settings"]

UNOPENED = -1
"""Value of an unopened cell in :meth:`MinesweeperBoard.view`."""

FLAGGED = -2
"""Value of a flagged (unopened) cell in :meth:`MinesweeperBoard.view`."""

LEGEND = "? unopened, . opened with no mine around, 1-8 mines around, F flag"
"""The symbols of the text board, as shown to the agent."""

_SYMBOLS = {UNOPENED: "?", FLAGGED: "F", 0: ".", **{n: str(n) for n in range(1, 9)}}


def neighbours(row: int, col: int, height: int, width: int) -> list[tuple[int, int]]:
    """Return the up to 8 cells around ``(row, col)`` inside the board, in reading order.

    Example:
        >>> neighbours(0, 0, 3, 3)
        [(0, 1), (1, 0), (1, 1)]
    """
    return [
        (r, c)
        for r in range(max(0, row - 1), min(height, row + 2))
        for c in range(max(0, col - 1), min(width, col + 2))
        if (r, c) != (row, col)
    ]


@dataclass(frozen=True)
class Reveal:
    """What opening one cell did.

    Attributes:
        opened: The cells newly opened, in the order the cascade reached them (empty when the
            cell was already open or flagged, or held a mine).
        mine: Whether the cell held a mine (the game is lost).
    """

    opened: tuple[tuple[int, int], ...]
    mine: bool


class MinesweeperBoard:
    """A board: where the mines are, what is open and what is flagged.

    Args:
        mines: Boolean array, True where a mine lies.

    Example:
        >>> board = MinesweeperBoard(np.array([[1, 0, 0], [0, 0, 0], [0, 0, 0]], dtype=bool))
        >>> len(board.reveal(2, 2).opened), board.won
        (8, True)
    """

    def __init__(self, mines: np.ndarray) -> None:
        mines = np.asarray(mines, dtype=bool)
        if mines.ndim != 2 or mines.size == 0:
            raise ValueError(f"mines must be a non-empty 2-D array, not shape {mines.shape}.")
        self.mines = mines
        padded = np.pad(mines.astype(np.int8), 1)
        h, w = mines.shape
        self.counts = sum(
            padded[1 + dr : 1 + dr + h, 1 + dc : 1 + dc + w]
            for dr in (-1, 0, 1)
            for dc in (-1, 0, 1)
            if (dr, dc) != (0, 0)
        ).astype(np.int8)
        self.opened = np.zeros_like(mines)
        self.flagged = np.zeros_like(mines)
        self.exploded: tuple[int, int] | None = None

    @classmethod
    def generate(
        cls,
        seed: int,
        height: int = 6,
        width: int = 6,
        num_mines: int = 3,
        safe_opening: bool = False,
    ) -> tuple[MinesweeperBoard, tuple[int, int]]:
        """Draw a layout and a first click that is never a mine; return both, the click not made.

        Args:
            seed: The same seed gives the same layout and click.
            height: Rows.
            width: Columns.
            num_mines: Mines on the board.
            safe_opening: Keep the first click's neighbours free of mines too, so that it opens
                an area (as many modern versions do); by default only the clicked cell is safe.

        Layouts where the first click alone would win are drawn again.
        """
        check_settings(height, width, num_mines, safe_opening)
        rng = random.Random(seed)
        for _ in range(1000):
            click = (int(rng.random() * height), int(rng.random() * width))
            banned = {click} | (set(neighbours(*click, height, width)) if safe_opening else set())
            free = [(r, c) for r in range(height) for c in range(width) if (r, c) not in banned]
            mines = np.zeros((height, width), dtype=bool)
            for r, c in _sample(rng, free, num_mines):
                mines[r, c] = True
            board = cls(mines)
            if not board.copy()._wins_at(click):
                return board, click
        raise ValueError(
            f"Every layout of {num_mines} mines on {height}x{width} is won by the first click; "
            "use more mines or a bigger board."
        )

    def copy(self) -> MinesweeperBoard:
        """Return an independent copy."""
        board = MinesweeperBoard(self.mines)
        board.opened, board.flagged = self.opened.copy(), self.flagged.copy()
        board.exploded = self.exploded
        return board

    @property
    def shape(self) -> tuple[int, int]:
        """``(height, width)``."""
        return self.mines.shape

    @property
    def num_mines(self) -> int:
        """Number of mines."""
        return int(self.mines.sum())

    @property
    def won(self) -> bool:
        """Whether every cell without a mine is open."""
        return self.exploded is None and int(self.opened.sum()) == self.mines.size - self.num_mines

    @property
    def lost(self) -> bool:
        """Whether a mine went off."""
        return self.exploded is not None

    def reveal(self, row: int, col: int) -> Reveal:
        """Open a cell; a cell with no mine around opens its neighbours too (the cascade).

        Opening an open or flagged cell does nothing. Cells outside the board raise ``IndexError``.
        """
        self._check(row, col)
        if self.opened[row, col] or self.flagged[row, col]:
            return Reveal((), False)
        if self.mines[row, col]:
            self.exploded = (row, col)
            return Reveal((), True)
        opened, queue = [], deque([(row, col)])
        self.opened[row, col] = True
        while queue:
            r, c = queue.popleft()
            opened.append((r, c))
            if self.counts[r, c]:
                continue
            for nr, nc in neighbours(r, c, *self.shape):
                if not self.opened[nr, nc] and not self.flagged[nr, nc]:
                    self.opened[nr, nc] = True
                    queue.append((nr, nc))
        return Reveal(tuple(opened), False)

    def toggle_flag(self, row: int, col: int) -> bool:
        """Flag or unflag an unopened cell; return whether anything changed."""
        self._check(row, col)
        if self.opened[row, col]:
            return False
        self.flagged[row, col] = not self.flagged[row, col]
        return True

    def view(self) -> np.ndarray:
        """What a player sees: counts where open, :data:`UNOPENED` or :data:`FLAGGED` elsewhere."""
        view = np.where(self.opened, self.counts, UNOPENED).astype(np.int8)
        view[self.flagged & ~self.opened] = FLAGGED
        return view

    def rows(self) -> list[list[str]]:
        """The board as rows of one-character symbols; ``X`` marks the mine that went off.

        The other mines are never shown, not even after a loss (see the module docstring).
        """
        rows = [[_SYMBOLS[v] for v in row] for row in self.view().tolist()]
        if self.exploded is not None:
            rows[self.exploded[0]][self.exploded[1]] = "X"
        return rows

    def _wins_at(self, click: tuple[int, int]) -> bool:
        self.reveal(*click)
        return self.won

    def _check(self, row: int, col: int) -> None:
        h, w = self.shape
        if not (0 <= row < h and 0 <= col < w):
            raise IndexError(f"Cell ({row}, {col}) is outside the {h}x{w} board (0-indexed).")


def check_settings(height: int, width: int, num_mines: int, safe_opening: bool) -> None:
    """Raise ``ValueError`` unless the board size and mine count make a playable game."""
    if height < 2 or width < 2:
        raise ValueError(f"A board needs at least 2x2 cells, not {height}x{width}.")
    kept_free = 9 if safe_opening else 1
    most = height * width - kept_free - 1
    if most < 1:
        raise ValueError(
            f"A {height}x{width} board is too small for a safe opening (the 9 cells around the "
            "first click stay free, and one more safe cell is needed): use at least 11 cells."
        )
    if not 1 <= num_mines <= most:
        raise ValueError(
            f"num_mines must be between 1 and {most} on a "
            f"{height}x{width} board{' with a safe opening' if safe_opening else ''}, "
            f"not {num_mines}."
        )


def _sample(rng: random.Random, cells: list, k: int) -> list:
    """Draw ``k`` distinct cells with a partial Fisher-Yates shuffle, using only ``random()``."""
    cells = list(cells)
    for i in range(k):
        j = i + int(rng.random() * (len(cells) - i))
        cells[i], cells[j] = cells[j], cells[i]
    return cells[:k]

"""Exact Minesweeper deduction: which unopened cells are certainly safe, which certainly mines.

A cell is *deducibly safe* when no mine layout consistent with what the player sees (the open
numbers and the total mine count) puts a mine on it. The helper decides this exactly:

1. Every open number gives a constraint: its unopened neighbours hold exactly that many mines.
   Cells in some constraint form the *frontier*; the other unopened cells are unconstrained.
2. Constraints that share cells form independent components. Each component's assignments are
   enumerated by backtracking, pruning as soon as a constraint cannot be met, and summarised per
   mine count: which cells can be a mine, which can be safe.
3. The mine total ties the components together: a component's count is feasible only if the other
   components and the unconstrained cells can hold the remaining mines.

Flags are the player's guesses, not facts: flagged cells count as unopened.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mage_envs.puzzles.minesweeper import neighbours

__all__ = ["Deduction", "deduce", "has_deducible_safe_move"]


@dataclass(frozen=True)
class Deduction:
    """Certain facts about the unopened cells (0-indexed ``(row, col)``).

    Attributes:
        safe: Cells that hold no mine in any consistent layout.
        mines: Cells that hold a mine in every consistent layout.
    """

    safe: frozenset[tuple[int, int]]
    mines: frozenset[tuple[int, int]]


def deduce(view: np.ndarray, num_mines: int, max_nodes: int = 2_000_000) -> Deduction:
    """Return the deducibly safe cells and the certain mines of a visible board.

    Args:
        view: What the player sees: the open cells' counts (0-8), negative for unopened or
            flagged cells (as :meth:`MinesweeperBoard.view` returns).
        num_mines: Mines on the whole board.
        max_nodes: Backtracking budget; boards of the suite's sizes stay far below it.

    Raises:
        ValueError: When no mine layout fits the view.
        RuntimeError: When the enumeration needs more than ``max_nodes`` steps.

    Example:
        >>> view = np.array([[0, 1, -1], [0, 1, -1], [0, 1, -1]])
        >>> facts = deduce(view, num_mines=1)
        >>> sorted(facts.safe), sorted(facts.mines)
        ([(0, 2), (2, 2)], [(1, 2)])
    """
    view = np.asarray(view)
    height, width = view.shape
    unknown = [(r, c) for r in range(height) for c in range(width) if view[r, c] < 0]
    constraints = _constraints(view)
    frontier = {cell for cells, _ in constraints for cell in cells}
    others = [cell for cell in unknown if cell not in frontier]
    budget = [max_nodes]
    summaries = [_enumerate(comp, budget) for comp in _components(constraints)]
    return _combine(summaries, others, num_mines)


def has_deducible_safe_move(view: np.ndarray, num_mines: int) -> bool:
    """Return whether some unopened cell is certainly safe.

    Example:
        >>> has_deducible_safe_move(np.array([[1, -1], [-1, -1]]), num_mines=1)
        False
    """
    return bool(deduce(view, num_mines).safe)


Cell = tuple[int, int]
Constraint = tuple[tuple[Cell, ...], int]


def _constraints(view: np.ndarray) -> list[Constraint]:
    height, width = view.shape
    found = []
    for r in range(height):
        for c in range(width):
            if view[r, c] < 0:
                continue
            cells = tuple(n for n in neighbours(r, c, height, width) if view[n] < 0)
            if int(view[r, c]) > len(cells):
                raise ValueError(
                    f"The open cell ({r}, {c}) shows {int(view[r, c])} but has only "
                    f"{len(cells)} unopened neighbours: no mine layout fits this view."
                )
            if cells:
                found.append((cells, int(view[r, c])))
    return found


def _components(constraints: list[Constraint]) -> list[list[Constraint]]:
    """Group constraints that share cells (union-find over cells), in a stable order."""
    parent: dict[Cell, Cell] = {}

    def root(cell: Cell) -> Cell:
        while parent.setdefault(cell, cell) != cell:
            cell = parent[cell]
        return cell

    for cells, _ in constraints:
        for cell in cells[1:]:
            parent[root(cell)] = root(cells[0])
    groups: dict[Cell, list[Constraint]] = {}
    for constraint in constraints:
        groups.setdefault(root(constraint[0][0]), []).append(constraint)
    return list(groups.values())


@dataclass
class _Summary:
    """One component: its cells, and per mine count (can-be-mine mask, can-be-safe mask)."""

    cells: list[Cell]
    by_count: dict[int, list[int]]


def _enumerate(component: list[Constraint], budget: list[int]) -> _Summary:
    """Enumerate the component's consistent assignments by backtracking."""
    cells = list(dict.fromkeys(cell for cells, _ in component for cell in cells))
    index = {cell: i for i, cell in enumerate(cells)}
    need = [count for _, count in component]
    left = [len(group) for group, _ in component]
    touching: list[list[int]] = [[] for _ in cells]
    for k, (group, _) in enumerate(component):
        for cell in group:
            touching[index[cell]].append(k)
    summary = _Summary(cells, {})
    full = (1 << len(cells)) - 1

    def place(i: int, mask: int, mines: int) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise RuntimeError("Minesweeper deduction ran out of its max_nodes budget.")
        if i == len(cells):
            entry = summary.by_count.setdefault(mines, [0, 0])
            entry[0] |= mask
            entry[1] |= full & ~mask
            return
        for value in (0, 1):
            if all(0 <= need[k] - value <= left[k] - 1 for k in touching[i]):
                for k in touching[i]:
                    need[k] -= value
                    left[k] -= 1
                place(i + 1, mask | (value << i), mines + value)
                for k in touching[i]:
                    need[k] += value
                    left[k] += 1

    place(0, 0, 0)
    if not summary.by_count:
        raise ValueError("No mine layout fits the open numbers of this view.")
    return summary


def _sums(counts: list[set[int]]) -> set[int]:
    """All totals reachable by picking one count from each set."""
    totals = {0}
    for options in counts:
        totals = {t + k for t in totals for k in options}
    return totals


def _combine(summaries: list[_Summary], others: list[Cell], num_mines: int) -> Deduction:
    """Apply the mine total across components and unconstrained cells."""
    free = len(others)
    counts = [set(s.by_count) for s in summaries]
    totals = _sums(counts)
    if not any(0 <= num_mines - t <= free for t in totals):
        raise ValueError(f"No layout of {num_mines} mines fits this view.")
    safe, mines = set(), set()
    for i, summary in enumerate(summaries):
        rest = _sums(counts[:i] + counts[i + 1 :])
        can_mine = can_safe = 0
        for k, (mine_mask, safe_mask) in summary.by_count.items():
            if any(0 <= num_mines - k - t <= free for t in rest):
                can_mine |= mine_mask
                can_safe |= safe_mask
        for j, cell in enumerate(summary.cells):
            if not can_mine >> j & 1:
                safe.add(cell)
            if not can_safe >> j & 1:
                mines.add(cell)
    if others:
        if not any(1 <= num_mines - t <= free for t in totals):
            safe.update(others)
        if not any(0 <= num_mines - t <= free - 1 for t in totals):
            mines.update(others)
    return Deduction(frozenset(safe), frozenset(mines))

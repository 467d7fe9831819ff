"""An optimal Sokoban solver for small rooms: A* over (player cell, box cells) states.

Every move costs 1, so the solution is the shortest in *moves* (walking and pushing alike), the
figure LaMer's level range is written in. The heuristic is the sum, over boxes, of the fewest pushes
that bring each box to its nearest target in an otherwise empty room
(:func:`~mage_envs.puzzles.sokoban.push_distances`). It never overestimates and changes by at most 1
per move, so A* returns an optimal solution; with ``heuristic=False`` the search is plain
breadth-first. States with a box on a dead cell or in a frozen 2x2 square are pruned: they can never
be solved. Boxes are a bitmask and a state is one integer, which keeps a 6x6 room to about a
millisecond.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from mage_envs.puzzles.sokoban import DIRECTIONS, UNREACHABLE, SokobanLevel, push_distances

__all__ = ["Solution", "SearchLimitError", "solve", "DEFAULT_MAX_STATES"]

DEFAULT_MAX_STATES = 1_000_000
"""States the solver may store before it gives up with :class:`SearchLimitError`."""

_NAMES = tuple(DIRECTIONS)


class SearchLimitError(RuntimeError):
    """The solver stored ``max_states`` states without deciding whether the level is solvable."""


@dataclass(frozen=True)
class Solution:
    """An optimal solution.

    Attributes:
        moves: The move names, in order (``"up"``, ``"down"``, ``"left"``, ``"right"``).
        explored: States the search expanded (a measure of its effort).
    """

    moves: tuple[str, ...]
    explored: int

    def __len__(self) -> int:
        return len(self.moves)


class _Room:
    """The static part of a level, compiled into lookup tables for the search."""

    def __init__(self, level: SokobanLevel) -> None:
        self.cells = level.height * level.width
        steps = list(DIRECTIONS.values())
        self.neighbours = [
            [_cell_or_wall(level, r + dr, c + dc) for dr, dc in steps]
            for r in range(level.height)
            for c in range(level.width)
        ]
        self.distance = push_distances(level)
        self.targets = _mask(level.targets)
        self.squares = [
            [] if cell in level.walls else self._squares(level, cell) for cell in range(self.cells)
        ]

    @staticmethod
    def _squares(level: SokobanLevel, cell: int) -> list[tuple[int, ...]]:
        """The 2x2 squares holding ``cell``, as their three other cells (-1: wall or outside)."""
        r, c = level.position(cell)
        squares = []
        for top in (r - 1, r):
            for left in (c - 1, c):
                others = [(top + i, left + j) for i in (0, 1) for j in (0, 1)]
                others.remove((r, c))
                squares.append(tuple(_cell_or_wall(level, rr, cc) for rr, cc in others))
        return squares

    def frozen(self, boxes: int, cell: int) -> bool:
        """Whether the box just pushed to ``cell`` is in a 2x2 block with a box off target."""
        for square in self.squares[cell]:
            if all(o < 0 or boxes >> o & 1 for o in square):
                in_square = [cell] + [o for o in square if o >= 0]
                if any(not self.targets >> b & 1 for b in in_square):
                    return True
        return False


def _cell_or_wall(level: SokobanLevel, r: int, c: int) -> int:
    if not (0 <= r < level.height and 0 <= c < level.width):
        return -1
    cell = r * level.width + c
    return -1 if cell in level.walls else cell


def _mask(cells: frozenset[int]) -> int:
    mask = 0
    for cell in cells:
        mask |= 1 << cell
    return mask


def solve(
    level: SokobanLevel, *, max_states: int = DEFAULT_MAX_STATES, heuristic: bool = True
) -> Solution | None:
    r"""Return an optimal (fewest moves) solution, or None when the level cannot be solved.

    Args:
        level: The position to solve.
        max_states: Give up with :class:`SearchLimitError` after storing this many states.
        heuristic: Use A* with the push-distance bound (True) or breadth-first search (False);
            both return a solution of the same, optimal length.

    Raises:
        SearchLimitError: When the search needs more than ``max_states`` states.

    Example:
        >>> level = SokobanLevel.from_text("######\n#@$_.#\n######")
        >>> solve(level).moves
        ('right', 'right')
    """
    room = _Room(level)
    if any(room.distance[box] >= UNREACHABLE for box in level.boxes):
        return None
    boxes = _mask(level.boxes)
    start = boxes * room.cells + level.player
    h0 = sum(room.distance[b] for b in level.boxes) if heuristic else 0
    parents: dict[int, tuple[int, int]] = {start: (-1, -1)}
    found, explored = _search(room, start, h0, heuristic, parents, max_states)
    if found < 0:
        return None
    return Solution(_path(parents, found), explored)


def _search(
    room: _Room, start: int, h0: int, heuristic: bool, parents: dict, max_states: int
) -> tuple[int, int]:
    """Run A*; return (goal or -1, states expanded); fill ``parents`` (state: prev, move)."""
    n, goal, nbrs, dist = room.cells, room.targets, room.neighbours, room.distance
    best = {start: 0}
    heap = [(h0, 0, start)]
    closed: set[int] = set()
    while heap:
        f, neg_g, key = heapq.heappop(heap)
        if key in closed:
            continue
        closed.add(key)
        boxes, player = divmod(key, n)
        if boxes == goal:
            return key, len(closed)
        g, h = -neg_g, f + neg_g
        for d, ahead in enumerate(nbrs[player]):
            if ahead < 0:
                continue
            new_boxes, new_h = boxes, h
            if boxes >> ahead & 1:
                beyond = nbrs[ahead][d]
                if beyond < 0 or boxes >> beyond & 1 or dist[beyond] >= UNREACHABLE:
                    continue
                new_boxes = boxes ^ (1 << ahead) | (1 << beyond)
                if room.frozen(new_boxes, beyond):
                    continue
                if heuristic:
                    new_h = h - dist[ahead] + dist[beyond]
            new_key = new_boxes * n + ahead
            if new_key in closed or best.get(new_key, g + 2) <= g + 1:
                continue
            best[new_key] = g + 1
            parents[new_key] = (key, d)
            heapq.heappush(heap, (g + 1 + new_h, -(g + 1), new_key))
        if len(best) > max_states:
            raise SearchLimitError(
                f"The solver stored {len(best)} states without finishing; raise max_states "
                f"(now {max_states}) or try a smaller room."
            )
    return -1, len(closed)


def _path(parents: dict[int, tuple[int, int]], key: int) -> tuple[str, ...]:
    moves = []
    while True:
        key, d = parents[key]
        if key < 0:
            return tuple(reversed(moves))
        moves.append(_NAMES[d])

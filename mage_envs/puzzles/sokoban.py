"""Sokoban rules: a level, moves and pushes, deadlocks, and the text board. No Gymnasium here.

A level is a rectangle of cells indexed ``row * width + col``. The player walks up, down, left or
right; walking into a box pushes it one cell if the cell behind it is free (floor or target, no
box). Boxes can never be pulled. The level is solved when every box is on a target.

Levels read and write the standard XSB notation, with ``_`` for floor so that an LLM sees each cell:
``#`` wall, ``_`` floor, ``.`` target, ``$`` box, ``*`` box on target, ``@`` player, ``+`` player on
target (a space is read as floor too).

Deadlocks: a box on a *dead cell* (a non-target cell from which no sequence of pushes can bring a
box to any target, even in an empty room) can never be solved, nor can a box that is not on a target
and sits in a 2x2 square made only of walls and boxes (none of those boxes can ever move). Both
checks are sound (they never flag a solvable state); they do not find every unsolvable state.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

__all__ = [
    "DIRECTIONS",
    "LEGEND",
    "SokobanLevel",
    "Step",
    "dead_cells",
    "deadlocked_boxes",
    "push_distances",
]

DIRECTIONS: dict[str, tuple[int, int]] = {
    "up": (-1, 0),
    "down": (1, 0),
    "left": (0, -1),
    "right": (0, 1),
}
"""Move name -> (row change, column change)."""

LEGEND = "# wall, _ floor, . target, $ box, * box on a target, @ you, + you on a target"
"""The symbols of the text board, as shown to the agent."""

_READ = {
    "#": (True, False, False, False),
    "_": (False, False, False, False),
    " ": (False, False, False, False),
    "-": (False, False, False, False),
    ".": (False, True, False, False),
    "$": (False, False, True, False),
    "*": (False, True, True, False),
    "@": (False, False, False, True),
    "+": (False, True, False, True),
}
"""Symbol -> (wall, target, box, player)."""

UNREACHABLE = 10**9
"""Push distance of a cell from which no target can be reached."""


@dataclass(frozen=True)
class SokobanLevel:
    """One Sokoban position: the room, the targets, the boxes and the player.

    Attributes:
        height: Rows of the room.
        width: Columns of the room.
        walls: Cell indices that are walls (cells outside the rectangle count as walls too).
        targets: Cell indices of the targets.
        boxes: Cell indices of the boxes (as many as targets).
        player: Cell index of the player.
    """

    height: int
    width: int
    walls: frozenset[int]
    targets: frozenset[int]
    boxes: frozenset[int]
    player: int

    def __post_init__(self) -> None:
        cells = self.height * self.width
        if self.height < 1 or self.width < 1:
            raise ValueError(f"A level needs at least one cell, not {self.height}x{self.width}.")
        if len(self.boxes) != len(self.targets) or not self.boxes:
            raise ValueError(
                f"A level needs as many boxes as targets, and at least one: got "
                f"{len(self.boxes)} boxes and {len(self.targets)} targets."
            )
        things = set(self.targets) | set(self.boxes) | {self.player}
        if any(not 0 <= c < cells for c in things | set(self.walls)):
            raise ValueError("Every cell index must lie inside the room.")
        if things & set(self.walls):
            raise ValueError("Targets, boxes and the player must not be on walls.")
        if self.player in self.boxes:
            raise ValueError("The player cannot stand on a box.")

    @classmethod
    def from_text(cls, text: str) -> SokobanLevel:
        r"""Read a level in XSB notation (one line per row; short lines are padded with walls).

        Example:
            >>> level = SokobanLevel.from_text("#####\n#@$.#\n#####")
            >>> level.player, sorted(level.boxes), sorted(level.targets)
            (6, [7], [8])
        """
        lines = text.strip("\r\n").splitlines()
        width = max((len(line) for line in lines), default=0)
        walls, targets, boxes, players = set(), set(), set(), []
        for r, line in enumerate(lines):
            for c, symbol in enumerate(line.ljust(width, "#")):
                if symbol not in _READ:
                    raise ValueError(f"Unknown symbol {symbol!r} at row {r + 1}, column {c + 1}.")
                wall, target, box, player = _READ[symbol]
                cell = r * width + c
                for flag, group in ((wall, walls), (target, targets), (box, boxes)):
                    if flag:
                        group.add(cell)
                if player:
                    players.append(cell)
        if len(players) != 1:
            raise ValueError(f"A level needs exactly one player (@ or +), found {len(players)}.")
        return cls(
            len(lines), width, frozenset(walls), frozenset(targets), frozenset(boxes), players[0]
        )

    def to_text(self) -> str:
        """Write the level in XSB notation, ``_`` for floor (the inverse of :meth:`from_text`)."""
        return "\n".join("".join(row) for row in self.rows())

    def rows(self) -> list[list[str]]:
        """Return the board as rows of one-character symbols (as :meth:`symbol` gives them)."""
        cells = ["_"] * (self.height * self.width)
        for cell in self.walls:
            cells[cell] = "#"
        for cell in self.targets:
            cells[cell] = "."
        cells[self.player] = "+" if self.player in self.targets else "@"
        for cell in self.boxes:
            cells[cell] = "*" if cell in self.targets else "$"
        return [cells[r * self.width : (r + 1) * self.width] for r in range(self.height)]

    def symbol(self, cell: int) -> str:
        """Return the XSB symbol of one cell."""
        if cell in self.walls:
            return "#"
        on_target = cell in self.targets
        if cell in self.boxes:
            return "*" if on_target else "$"
        if cell == self.player:
            return "+" if on_target else "@"
        return "." if on_target else "_"

    def position(self, cell: int) -> tuple[int, int]:
        """Return the 0-indexed ``(row, col)`` of a cell index."""
        return divmod(cell, self.width)

    def neighbour(self, cell: int, direction: str) -> int | None:
        """Return the cell one step from ``cell`` in ``direction``, or None outside the room."""
        dr, dc = DIRECTIONS[direction]
        r, c = divmod(cell, self.width)
        r, c = r + dr, c + dc
        if 0 <= r < self.height and 0 <= c < self.width:
            return r * self.width + c
        return None

    @property
    def boxes_on_targets(self) -> int:
        """Number of boxes that stand on a target."""
        return len(self.boxes & self.targets)

    @property
    def solved(self) -> bool:
        """Whether every box is on a target."""
        return self.boxes == self.targets

    def step(self, direction: str) -> Step:
        r"""Try one move. A blocked move returns the same level with ``blocked`` saying why.

        Example:
            >>> level = SokobanLevel.from_text("#####\n#@$.#\n#####")
            >>> result = level.step("right")
            >>> result.pushed, result.level.solved
            (True, True)
            >>> level.step("up").blocked
            'wall'
        """
        ahead, beyond, blocked = self._look(direction)
        if blocked:
            return Step(self, None, blocked)
        if beyond is None:
            return Step(self._moved(ahead, self.boxes), None, None)
        boxes = (self.boxes - {ahead}) | {beyond}
        return Step(self._moved(ahead, boxes), (ahead, beyond), None)

    def legal_moves(self) -> list[str]:
        """Return the move names that are not blocked, in the order up, down, left, right."""
        return [d for d in DIRECTIONS if self._look(d)[2] is None]

    def _look(self, direction: str) -> tuple[int, int | None, str | None]:
        """Return the cell ahead, where a pushed box would go (None: no push), and any block."""
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {list(DIRECTIONS)}, not {direction!r}.")
        ahead = self.neighbour(self.player, direction)
        if ahead is None or ahead in self.walls:
            return -1, None, "wall"
        if ahead not in self.boxes:
            return ahead, None, None
        beyond = self.neighbour(ahead, direction)
        if beyond is None or beyond in self.walls:
            return ahead, None, "box against a wall"
        if beyond in self.boxes:
            return ahead, None, "box against another box"
        return ahead, beyond, None

    def _moved(self, player: int, boxes: frozenset[int]) -> SokobanLevel:
        return SokobanLevel(self.height, self.width, self.walls, self.targets, boxes, player)


@dataclass(frozen=True)
class Step:
    """The result of one move attempt.

    Attributes:
        level: The level after the move (the same level when blocked).
        push: ``(from_cell, to_cell)`` of the pushed box, or None when no box moved.
        blocked: None when the move happened, otherwise why it could not: ``"wall"``,
            ``"box against a wall"`` or ``"box against another box"``.
    """

    level: SokobanLevel
    push: tuple[int, int] | None
    blocked: str | None

    @property
    def pushed(self) -> bool:
        """Whether a box moved."""
        return self.push is not None


def push_distances(level: SokobanLevel) -> list[int]:
    r"""Return, for every cell, the fewest pushes that bring a box there to some target.

    Other boxes and the player's access are ignored, so this is a lower bound (0 on targets,
    :data:`UNREACHABLE` on walls and dead cells). Computed by pulling boxes back from the targets:
    a box at ``b`` can be pulled to ``b + d`` when ``b + d`` and ``b + 2d`` are not walls.

    Example:
        >>> level = SokobanLevel.from_text("######\n#@$_.#\n######")
        >>> [d if d < UNREACHABLE else None for d in push_distances(level)[7:11]]
        [None, 2, 1, 0]
    """
    distance = [UNREACHABLE] * (level.height * level.width)
    queue = deque(sorted(level.targets))
    for target in queue:
        distance[target] = 0
    while queue:
        box = queue.popleft()
        for direction in DIRECTIONS:
            to = level.neighbour(box, direction)
            stand = None if to is None else level.neighbour(to, direction)
            if stand is None or to in level.walls or stand in level.walls:
                continue
            if distance[to] == UNREACHABLE:
                distance[to] = distance[box] + 1
                queue.append(to)
    return distance


def dead_cells(level: SokobanLevel) -> frozenset[int]:
    r"""Return the non-wall cells from which a box can never reach any target.

    Example:
        >>> level = SokobanLevel.from_text("#####\n#@$.#\n#___#\n#####")
        >>> sorted(level.position(c) for c in dead_cells(level))
        [(1, 1), (2, 1), (2, 2), (2, 3)]
    """
    distance = push_distances(level)
    cells = range(level.height * level.width)
    return frozenset(c for c in cells if c not in level.walls and distance[c] == UNREACHABLE)


def deadlocked_boxes(level: SokobanLevel, dead: frozenset[int] | None = None) -> list[int]:
    """Return the boxes (not on targets) that can provably never reach a target, sorted.

    Args:
        level: The position to check.
        dead: The level's :func:`dead_cells`, if already computed (they depend only on the room).
    """
    dead = dead_cells(level) if dead is None else dead
    stuck = {box for box in level.boxes if box in dead}
    for box in level.boxes - level.targets:
        if box not in stuck and _frozen_square(level, box):
            stuck.add(box)
    return sorted(stuck)


def _frozen_square(level: SokobanLevel, box: int) -> bool:
    """Whether ``box`` lies in a 2x2 square of walls and boxes (then none of them can move)."""
    r, c = level.position(box)
    for top in (r - 1, r):
        for left in (c - 1, c):
            square = [(top + i, left + j) for i in (0, 1) for j in (0, 1)]
            if all(_blocks(level, rr, cc) for rr, cc in square):
                return True
    return False


def _blocks(level: SokobanLevel, r: int, c: int) -> bool:
    if not (0 <= r < level.height and 0 <= c < level.width):
        return True
    cell = r * level.width + c
    return cell in level.walls or cell in level.boxes

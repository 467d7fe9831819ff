"""Procedural Sokoban levels by reverse play, each verified by the optimal solver.

The recipe of the classic generator (Schrader's gym-sokoban, which LaMer used), written anew and
made exhaustive:

1. Carve a room: a random walk through the interior of a walled rectangle opens floor with small
   brushes until the room reaches its floor share; put the targets on random floor cells.
2. Play backwards from every solved position (boxes on the targets, player anywhere else):
   breadth-first over reverse moves, where the player steps to a free cell and may pull the box
   behind it. Every position reached is solvable, and its depth is its optimal solution length.
   The classic generator instead follows one depth-first reverse path and keeps the position with
   the best score; the breadth-first version is as fast on small rooms and knows exact lengths.
3. Draw one position uniformly among those whose optimal length lies in the wanted range, and solve
   it forward with :func:`~mage_envs.puzzles.sokoban_solver.solve`, an independent check that must
   agree on the length. A room with no position in range is discarded and another one carved.

A level is a pure function of ``(seed, settings)``: all draws come from ``random.Random(seed)``,
using only its ``random()`` method, whose sequence Python guarantees across versions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from mage_envs.puzzles.sokoban import DIRECTIONS, SokobanLevel
from mage_envs.puzzles.sokoban_solver import Solution, _mask, _Room, solve

__all__ = ["SokobanSettings", "GeneratedLevel", "GenerationError", "generate_level"]

_BRUSHES = (((0, 0),), ((0, 0), (0, 1)), ((0, 0), (1, 0)), ((0, 0), (0, 1), (1, 0), (1, 1)))
_STEPS = tuple(DIRECTIONS.values())
_BACK = (1, 0, 3, 2)
"""Index of the opposite direction in the order up, down, left, right."""


class GenerationError(RuntimeError):
    """No level with the wanted settings was found within the attempt budget."""


@dataclass(frozen=True)
class SokobanSettings:
    """What kind of level to generate.

    Attributes:
        height: Rows of the room, outer walls included (LaMer: 6).
        width: Columns of the room, outer walls included (LaMer: 6).
        num_boxes: Boxes and targets (LaMer: 2).
        min_solution_length: Shortest optimal solution accepted, in moves (LaMer: 5).
        max_solution_length: Longest optimal solution accepted, in moves (LaMer: 21).
        floor_share: Share of the interior (inside the outer walls) that is opened as floor.
        boxes_start_off_targets: Accept only positions where no box starts on a target (every
            box must be moved; the classic generator does not require it).
        max_attempts: Rooms tried before :class:`GenerationError`.
        max_states: State budget of the verifying solver.
    """

    height: int = 6
    width: int = 6
    num_boxes: int = 2
    min_solution_length: int = 5
    max_solution_length: int = 21
    floor_share: float = 0.75
    boxes_start_off_targets: bool = False
    max_attempts: int = 200
    max_states: int = 1_000_000

    def __post_init__(self) -> None:
        if self.height < 3 or self.width < 3:
            raise ValueError(f"A room needs at least 3x3 cells, not {self.height}x{self.width}.")
        if self.num_boxes < 1:
            raise ValueError(f"num_boxes must be >= 1, not {self.num_boxes}.")
        if not 0.0 < self.floor_share <= 1.0:
            raise ValueError(f"floor_share must be in (0, 1], not {self.floor_share}.")
        if round(self.floor_share * (self.height - 2) * (self.width - 2)) < self.num_boxes + 2:
            raise ValueError(
                f"A {self.height}x{self.width} room with floor_share {self.floor_share} has too "
                f"little floor for {self.num_boxes} boxes: enlarge the room or the floor share."
            )
        if not 1 <= self.min_solution_length <= self.max_solution_length:
            raise ValueError(
                "Need 1 <= min_solution_length <= max_solution_length, got "
                f"{self.min_solution_length} and {self.max_solution_length}."
            )
        if self.max_attempts < 1 or self.max_states < 1:
            raise ValueError("max_attempts and max_states must be positive.")


@dataclass(frozen=True)
class GeneratedLevel:
    """A generated level and its optimal solution.

    Attributes:
        level: The starting position.
        solution: An optimal solution (its length is the level's optimal length).
        seed: The seed it was generated from.
        attempts: Rooms carved before one had a position in range.
    """

    level: SokobanLevel
    solution: Solution
    seed: int
    attempts: int


def generate_level(seed: int, settings: SokobanSettings | None = None) -> GeneratedLevel:
    """Generate a solvable level whose optimal length lies in the settings' range.

    Args:
        seed: Any integer; the same seed and settings give the same level.
        settings: The kind of level (default: LaMer's 6x6 room with 2 boxes, 5 to 21 moves).

    Raises:
        GenerationError: When ``settings.max_attempts`` rooms gave no level in range.

    Example:
        >>> made = generate_level(0)
        >>> 5 <= len(made.solution) <= 21
        True
        >>> generate_level(0).level == made.level
        True
    """
    settings = settings or SokobanSettings()
    rng = random.Random(seed)
    low, high = settings.min_solution_length, settings.max_solution_length
    for attempt in range(1, settings.max_attempts + 1):
        room = _solved_room(rng, settings)
        layers = _reverse_layers(room, high)
        off = settings.boxes_start_off_targets
        n = room.height * room.width
        candidates = [
            (d, key)
            for d in range(low, high + 1)
            for key in layers[d]
            if not (off and key // n & _mask(room.targets))
        ]
        if not candidates:
            continue
        depth, key = candidates[_below(rng, len(candidates))]
        boxes, player = divmod(key, room.height * room.width)
        cells = frozenset(c for c in range(room.height * room.width) if boxes >> c & 1)
        level = SokobanLevel(room.height, room.width, room.walls, room.targets, cells, player)
        solution = solve(level, max_states=settings.max_states)
        if solution is None or len(solution) != depth:
            raise AssertionError(f"solver and reverse play disagree on seed {seed}: a bug")
        return GeneratedLevel(level, solution, seed, attempt)
    raise GenerationError(
        f"No level with an optimal length in [{low}, {high}] after {settings.max_attempts} rooms; "
        "widen the range, enlarge the room or raise max_attempts."
    )


def _below(rng: random.Random, n: int) -> int:
    """A uniform integer in [0, n), drawn only with ``random()`` (stable across Pythons)."""
    return int(rng.random() * n)


def _carve(rng: random.Random, settings: SokobanSettings) -> list[tuple[int, int]]:
    """Open floor cells by a random walk with brushes; return them in carving order."""
    inner_h, inner_w = settings.height - 2, settings.width - 2
    wanted = round(settings.floor_share * inner_h * inner_w)
    r, c = _below(rng, inner_h), _below(rng, inner_w)
    step = _STEPS[_below(rng, 4)]
    opened: dict[tuple[int, int], None] = {}
    while len(opened) < wanted:
        for dr, dc in _BRUSHES[_below(rng, len(_BRUSHES))]:
            if r + dr < inner_h and c + dc < inner_w:
                opened.setdefault((r + dr + 1, c + dc + 1), None)
        if rng.random() < 0.35:
            step = _STEPS[_below(rng, 4)]
        if 0 <= r + step[0] < inner_h and 0 <= c + step[1] < inner_w:
            r, c = r + step[0], c + step[1]
        else:
            step = _STEPS[_below(rng, 4)]
    return list(opened)


def _solved_room(rng: random.Random, settings: SokobanSettings) -> SokobanLevel:
    """A carved room with every box on its target and the player on another floor cell."""
    width = settings.width
    floor = [r * width + c for r, c in _carve(rng, settings)]
    chosen: list[int] = []
    while len(chosen) < settings.num_boxes + 1:
        cell = floor[_below(rng, len(floor))]
        if cell not in chosen:
            chosen.append(cell)
    targets = frozenset(chosen[:-1])
    walls = frozenset(range(settings.height * width)) - frozenset(floor)
    return SokobanLevel(settings.height, width, walls, targets, targets, chosen[-1])


def _reverse_layers(level: SokobanLevel, max_depth: int) -> list[list[int]]:
    """Breadth-first reverse play from every solved position of the room, ``max_depth`` deep.

    A solved position has every box on a target and the player on any other free cell. A reverse
    move walks the player to a free neighbour and may pull the box behind it along; it undoes
    exactly one forward move, so layer ``d`` holds the positions whose optimal solution is ``d``
    moves. States are ``boxes_mask * cells + player``, as in the solver.
    """
    room = _Room(level)
    n, nbrs, goal = room.cells, room.neighbours, room.targets
    frontier = [goal * n + p for p in range(n) if _free(level, p)]
    seen = set(frontier)
    layers = [frontier]
    for _ in range(max_depth):
        nxt = []
        for key in frontier:
            boxes, player = divmod(key, n)
            for d, to in enumerate(nbrs[player]):
                if to < 0 or boxes >> to & 1:
                    continue
                behind = nbrs[player][_BACK[d]]
                moves = [boxes]
                if behind >= 0 and boxes >> behind & 1:
                    moves.append(boxes ^ (1 << behind) | (1 << player))
                for new_boxes in moves:
                    new_key = new_boxes * n + to
                    if new_key not in seen:
                        seen.add(new_key)
                        nxt.append(new_key)
        layers.append(nxt)
        frontier = nxt
    return layers


def _free(level: SokobanLevel, cell: int) -> bool:
    return cell not in level.walls and cell not in level.targets

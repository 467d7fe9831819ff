"""The room layouts that the ``alfworld`` package ships (``alfworld/gen/layouts``), read as rooms.

Each ALFRED floor plan comes with ``FloorPlanN-objects.json`` (the object types present in the room)
and ``FloorPlanN-openable.json`` (every receptacle, keyed by its ALFRED id, with the pose from
which the agent interacts with it). Where objects lie is not in these files: the generator places
them. Floor plans 1-30 are kitchens, 201-230 living rooms, 301-330 bedrooms, 401-430 bathrooms;
ALFRED kept plans 1-6 of each room type out of training (its unseen scenes).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

__all__ = ["Receptacle", "Room", "ROOM_TYPES", "load_room", "floor_plans", "is_unseen_scene"]

ROOM_TYPES: dict[str, range] = {
    "kitchen": range(1, 31),
    "livingroom": range(201, 231),
    "bedroom": range(301, 331),
    "bathroom": range(401, 431),
}
"""Floor-plan numbers of each room type (ALFRED's scene numbering)."""

_LAYOUT_FILE = re.compile(r"FloorPlan(\d+)-openable\.json")
_BASIN_TYPES = ("SinkBasin", "BathtubBasin")


@dataclass(frozen=True)
class Receptacle:
    """One receptacle of a room.

    Attributes:
        alfred_id: Its ALFRED id, e.g. ``"CounterTop|+00.69|+00.95|-02.48"``.
        kind: Its ALFRED type, e.g. ``"CounterTop"`` or ``"SinkBasin"``.
        pose: Where the agent stands to use it: x, z, rotation, camera horizon.
    """

    alfred_id: str
    kind: str
    pose: tuple[float, float, int, int]


@dataclass(frozen=True)
class Room:
    """A floor plan: its receptacles (in a fixed order) and the object types present.

    Attributes:
        floor_plan: The ALFRED floor-plan number.
        receptacles: Every static receptacle, sorted by ALFRED id.
        object_types: The object types the room holds, sorted.
    """

    floor_plan: int
    receptacles: tuple[Receptacle, ...]
    object_types: tuple[str, ...]

    @property
    def room_type(self) -> str:
        """``kitchen``, ``livingroom``, ``bedroom`` or ``bathroom``."""
        return next(name for name, plans in ROOM_TYPES.items() if self.floor_plan in plans)

    def receptacle_kinds(self) -> set[str]:
        """Return the receptacle types present."""
        return {r.kind for r in self.receptacles}


def _layouts():
    return resources.files("alfworld.gen") / "layouts"


@lru_cache(maxsize=1)
def floor_plans() -> tuple[int, ...]:
    """Return the floor-plan numbers that the installed ``alfworld`` package ships, sorted."""
    numbers = (_LAYOUT_FILE.fullmatch(p.name) for p in _layouts().iterdir())
    return tuple(sorted(int(m.group(1)) for m in numbers if m))


def is_unseen_scene(floor_plan: int) -> bool:
    """Whether ALFRED held this floor plan out of training (plans 1-6 of each room type)."""
    return floor_plan % 100 <= 6


def _receptacle_kind(alfred_id: str) -> str:
    """``"Sink|-00.1|+00.8|-02.0|SinkBasin"`` -> ``SinkBasin``; ``"Cabinet|..."`` -> ``Cabinet``."""
    parts = alfred_id.split("|")
    return parts[-1] if parts[-1] in _BASIN_TYPES else parts[0]


@cache
def load_room(floor_plan: int) -> Room:
    """Read a shipped floor plan.

    Raises:
        ValueError: If the installed ``alfworld`` package has no such floor plan.
    """
    if floor_plan not in floor_plans():
        raise ValueError(f"alfworld ships no layout for FloorPlan{floor_plan}.")
    folder = _layouts()
    poses = json.loads((folder / f"FloorPlan{floor_plan}-openable.json").read_text())
    objects = json.loads((folder / f"FloorPlan{floor_plan}-objects.json").read_text())
    receptacles = tuple(
        Receptacle(rid, _receptacle_kind(rid), (float(x), float(z), int(rot), int(hor)))
        for rid, (x, z, rot, hor) in sorted(poses.items())
    )
    return Room(floor_plan, receptacles, tuple(sorted(set(objects))))

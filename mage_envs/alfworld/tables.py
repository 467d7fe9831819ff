"""ALFWorld's object tables, read from the ``alfworld`` package when first needed.

Which object types each receptacle type can hold, which receptacles are also objects, and which
objects can be heated, cooled, cleaned, toggled or sliced: ``alfworld.gen.constants``; the goal
formula and task sentences of each task type: ``alfworld.gen.goal_library``.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["constants", "goal_library", "fits", "movable", "properties"]


def constants():
    """The ``alfworld.gen.constants`` module (object tables of ALFRED)."""
    import alfworld.gen.constants as constants  # noqa: PLC0415 (the optional extra)

    return constants


def goal_library():
    """Task type -> goal PDDL and task sentences (``alfworld.gen.goal_library``)."""
    import alfworld.gen.goal_library as goal_library  # noqa: PLC0415 (the optional extra)

    return goal_library.gdict


@lru_cache(maxsize=1)
def fits() -> dict[str, frozenset[str]]:
    """Receptacle type -> the object types it can hold (ALFWorld's table, without slices)."""
    table = constants().VAL_RECEPTACLE_OBJECTS
    return {r: frozenset(o for o in objs if not o.endswith("Sliced")) for r, objs in table.items()}


@lru_cache(maxsize=1)
def movable() -> frozenset[str]:
    """Receptacles that are also objects (a mug, a pan): object types in the PDDL problem."""
    return frozenset(constants().MOVABLE_RECEPTACLES)


@lru_cache(maxsize=1)
def properties() -> dict[str, frozenset[str]]:
    """``Heatable``, ``Coolable``, ``Cleanable``, ``Toggleable``, ``Sliceable`` -> object types."""
    return {k: frozenset(v) for k, v in constants().VAL_ACTION_OBJECTS.items()}

"""ALFWorld's six task types, their short names, and the seen / unseen split LaMer used.

ALFWorld numbers its task types 1-6 (its config's ``task_types``); the game files name them by the
long ALFRED name (``traj_data.json``'s ``task_type``). Users may write any of the three spellings.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["TASK_TYPES", "SHORT_NAMES", "UNSEEN_TASK_TYPES", "SEEN_TASK_TYPES", "task_types"]

TASK_TYPES: tuple[str, ...] = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
"""The task types in ALFWorld's order (its ids 1-6)."""

SHORT_NAMES: dict[str, str] = {
    "pick": "pick_and_place_simple",
    "look": "look_at_obj_in_light",
    "clean": "pick_clean_then_place_in_recep",
    "heat": "pick_heat_then_place_in_recep",
    "cool": "pick_cool_then_place_in_recep",
    "pick_two": "pick_two_obj_and_place",
}
"""Short names accepted wherever a task type is given."""

UNSEEN_TASK_TYPES: tuple[str, ...] = (
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
"""The task types LaMer held out of training ("cool" and "pick two") to test generalisation."""

SEEN_TASK_TYPES: tuple[str, ...] = tuple(t for t in TASK_TYPES if t not in UNSEEN_TASK_TYPES)
"""The other four task types."""

_GROUPS = {"all": TASK_TYPES, "seen": SEEN_TASK_TYPES, "unseen": UNSEEN_TASK_TYPES}


def _one(item: object) -> tuple[str, ...]:
    if isinstance(item, int) and not isinstance(item, bool) and 1 <= item <= len(TASK_TYPES):
        return (TASK_TYPES[item - 1],)
    if isinstance(item, str):
        key = item.strip().lower().replace("-", "_").replace(" ", "_")
        if key in _GROUPS:
            return _GROUPS[key]
        if key.isdigit():
            return _one(int(key))
        name = SHORT_NAMES.get(key, key)
        if name in TASK_TYPES:
            return (name,)
    raise ValueError(
        f"Unknown ALFWorld task type {item!r}. Use ids 1-6, names {list(TASK_TYPES)}, short names "
        f"{list(SHORT_NAMES)}, or 'all', 'seen', 'unseen'."
    )


def task_types(selection: str | int | Iterable[str | int] | None) -> tuple[str, ...]:
    """Return the task types a selection names, in ALFWorld's order, each once.

    Args:
        selection: ``None`` or ``"all"`` (every type), ``"seen"`` / ``"unseen"``, one type or a
            list of types, each an id 1-6, a long name or a short name (``"cool"``).

    Raises:
        ValueError: If an item names no task type, or the selection is empty.

    Example:
        >>> task_types(["pick_two", 5])
        ('pick_cool_then_place_in_recep', 'pick_two_obj_and_place')
        >>> task_types("unseen") == UNSEEN_TASK_TYPES
        True
    """
    if selection is None:
        return TASK_TYPES
    items = [selection] if isinstance(selection, str | int) else list(selection)
    chosen = {name for item in items for name in _one(item)}
    if not chosen:
        raise ValueError("Select at least one ALFWorld task type.")
    return tuple(t for t in TASK_TYPES if t in chosen)

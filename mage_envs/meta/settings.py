"""The checks of :class:`~mage_envs.meta.MetaEpisodeWrapper`'s settings: a bad one fails early.

Each error names the setting, the accepted values and the value given.
"""

from __future__ import annotations

import numbers
from typing import Any

from mage_envs.meta.memory import MEMORY_MODES

__all__ = ["SEAT_ROTATIONS", "INTEGER_SETTINGS", "check_settings"]

SEAT_ROTATIONS = (None, "episode", "trial")
"""``seat_rotation=``: keep the env's seat, alternate it every episode, or draw it per trial."""

INTEGER_SETTINGS = {
    "num_episodes": 1,
    "max_reflection_chars": 0,
    "max_history_chars": 0,
    "history_steps": 0,
    "max_observation_chars": 1,
}
"""The integer settings of the wrapper and their smallest allowed values."""


def check_settings(settings: dict[str, Any]) -> None:
    """Reject bad constructor settings with a reason, before anything is built.

    Args:
        settings: The wrapper's keyword arguments by name.

    Raises:
        ValueError: If a setting has a value it does not accept.
        TypeError: If ``success_fn`` is not callable.

    Example:
        >>> check_settings({"num_episodes": 0})
        Traceback (most recent call last):
        ...
        ValueError: num_episodes must be an int >= 1, not 0.
    """
    for name, lowest in INTEGER_SETTINGS.items():
        value = settings[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lowest:
            raise ValueError(f"{name} must be an int >= {lowest}, not {value!r}.")
    if settings["memory"] not in MEMORY_MODES:
        raise ValueError(f"memory must be one of {MEMORY_MODES}, not {settings['memory']!r}.")
    if settings["seat_rotation"] not in SEAT_ROTATIONS:
        raise ValueError(
            f"seat_rotation must be one of {SEAT_ROTATIONS}, not {settings['seat_rotation']!r}."
        )
    if settings["success_fn"] is not None and not callable(settings["success_fn"]):
        raise TypeError("success_fn must be a function (episode_return, final_info) -> bool.")

"""Plug-ins: the user's modules that register names (envs, opponents, memory modes, estimators).

A plug-in is any importable module whose import registers something with the suite's registries
(``gym.register``, ``register_opponent``, ``register_memory_mode``, ``register_estimator``,
``register_strategy``, ...). The command line imports the ones it is given (``--import MODULE``)
with :func:`load_plugins`, which remembers them: every process the suite spawns (runner workers,
env workers) imports the same modules first (:func:`loaded_plugins`), so a registered name means
the same thing there.
"""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Iterable

__all__ = ["load_plugins", "loaded_plugins"]

_LOADED: list[str] = []


def load_plugins(modules: Iterable[str]) -> None:
    """Import each module (once) and remember it for the processes the suite spawns.

    Raises:
        ValueError: If a module cannot be imported (the message names it and why).
    """
    for name in modules:
        if name in _LOADED:
            continue
        try:
            importlib.import_module(name)
        except ImportError as error:
            raise ValueError(f"--import {name}: the module cannot be imported ({error}).") from None
        except Exception as error:  # the module itself failed while importing: say how, briefly
            words = error.msg if isinstance(error, SyntaxError) else str(error)
            raise ValueError(
                f"--import {name}: importing it failed{_where(error)}: "
                f"{type(error).__name__}: {words}"
            ) from None
        _LOADED.append(name)


def _where(error: Exception) -> str:
    """`` at FILE:LINE`` where the import failed (the innermost line of its traceback)."""
    if isinstance(error, SyntaxError) and error.filename:
        return f" at {error.filename}:{error.lineno}"
    frames = traceback.extract_tb(error.__traceback__)
    return f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""


def loaded_plugins() -> tuple[str, ...]:
    """The plug-in modules imported so far, in order (what a spawned process imports first)."""
    return tuple(_LOADED)

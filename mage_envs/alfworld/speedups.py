"""Caches that make TextWorld's PDDL engine several times faster, with identical output.

Profiling a kitchen game shows where the time goes:

- every step, TextWorld's text grammar re-parses (with TatSu) the same few dozen command templates,
  feedback rules and logic queries, once per admissible command;
- each symbol it derives deep-copies its context, entity descriptions included, which nothing
  ever modifies (only the context's own dictionaries are updated);
- every reset re-translates the PDDL problem with Fast Downward's translator, twice, although a
  game's problem text never changes (a same-task trial restarts the same game three times).

The parses and translations are pure functions of their text, so they are memoised: a parse is
returned as a deep copy of the cached tree (the engine writes into the symbols it derives), a
translation as the cached ``(task, sas)`` pair (the engine only reads them); contexts are copied
one level deep. The output is identical (a test compares whole episodes with and without). The
changes are process-wide, switched on by :func:`enable`; :func:`disable` restores TextWorld's
functions (the benchmark measures both). Each engine calls :func:`use` with its own setting before
it loads, resets or steps, so envs made with and without speed-ups can share a process.
"""

from __future__ import annotations

import copy
import functools
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["enable", "disable", "enabled", "use", "PARSES_KEPT", "TRANSLATIONS_KEPT"]

TRANSLATIONS_KEPT = 16
"""PDDL translations kept (least recently used dropped): a few games' worth."""

PARSES_KEPT = 4096
"""Parsed texts kept: the few hundred templates and queries every game shares, and room for the
rules that differ per game (the task sentence), which are dropped first when unused."""

_ORIGINALS: dict[str, Callable[..., Any]] = {}


def _copying(function: Callable[..., Any], maxsize: int | None) -> Callable[..., Any]:
    """Memoise ``function`` and hand out deep copies of its results."""
    cached = functools.lru_cache(maxsize=maxsize)(function)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return copy.deepcopy(cached(*args, **kwargs))

    wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return wrapper


def _argv_kept(function: Callable[..., Any]) -> Callable[..., Any]:
    """Restore ``sys.argv`` after ``function`` (Fast Downward's translator overwrites it)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        argv = list(sys.argv)
        try:
            return function(*args, **kwargs)
        finally:
            sys.argv[:] = argv

    return wrapper


def _copy_context(context: dict[str, Any]) -> dict[str, Any]:
    """TextWorld's ``copy_context`` with one-level copies of the two dictionaries it updates."""
    return {
        "state": context["state"],
        "facts": context["facts"],
        "variables": dict(context["variables"]),
        "mapping": dict(context["mapping"]),
        "entity_infos": context["entity_infos"],
    }


def _targets() -> list[tuple[Any, str]]:
    # TextWorld looks these up on their modules at each call: replacing the attributes is enough.
    import fast_downward  # noqa: PLC0415 (the optional extra)
    import textworld.logic as logic  # noqa: PLC0415
    from textworld.envs.pddl import textgen  # noqa: PLC0415

    return [
        (textgen, "_parse_and_convert"),
        (logic, "_parse_and_convert"),
        (textgen, "copy_context"),
        (fast_downward, "pddl2sas"),
    ]


def enable() -> None:
    """Switch the caches on (idempotent). ``sys.argv`` is protected either way."""
    _install(cached=True)


def disable() -> None:
    """Use TextWorld's own functions again (``sys.argv`` stays protected)."""
    _install(cached=False)


def enabled() -> bool:
    """Whether the caches are on."""
    from textworld.envs.pddl import textgen  # noqa: PLC0415 (the optional extra)

    return getattr(textgen._parse_and_convert, "_mage_cached", False)


def use(cached: bool) -> None:
    """Switch the caches on or off, doing nothing when they already are."""
    if enabled() != cached:
        _install(cached)


def _install(cached: bool) -> None:
    for module, name in _targets():
        key = f"{module.__name__}.{name}"
        original = _ORIGINALS.setdefault(key, getattr(module, name))
        if name == "_parse_and_convert":
            replacement = _copying(original, PARSES_KEPT) if cached else original
        elif name == "copy_context":
            replacement = _copy_context if cached else original
        else:
            replacement = _argv_kept(
                functools.lru_cache(maxsize=TRANSLATIONS_KEPT)(original) if cached else original
            )
        if name != "copy_context":
            replacement._mage_cached = cached  # type: ignore[attr-defined]
        setattr(module, name, replacement)

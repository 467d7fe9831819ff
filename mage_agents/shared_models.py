"""The models opponents play on, loaded once per process and shared, by spec.

Every env (and every trial) that plays against ``agent:local:PATH`` or a league snapshot
``league:PATH`` shares one loaded model: its agent factory is kept here under its spec, built
at the first call. Training drops a snapshot that leaves its league (:func:`forget_model`), so
its weights are freed once no opponent holds them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["shared_model", "forget_model"]

_SHARED: dict[str, Any] = {}


def shared_model(key: str, build: Callable[[], Any]) -> Any:
    """Return the process's agent factory under ``key``, built by ``build()`` at the first call."""
    if key not in _SHARED:
        _SHARED[key] = build()
    return _SHARED[key]


def forget_model(key: str) -> None:
    """Drop the factory under ``key`` (its model is freed once no opponent holds it)."""
    _SHARED.pop(key, None)

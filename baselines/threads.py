"""Torch's CPU threads in a command's processes: one each, unless told otherwise.

Torch starts a thread per core. On a shared CPU that is slower, not faster: three 64-token
answers of a 135M model took 131 s on one thread and 405 s on two (2 busy cores), and ``train``
uses one thread on the CPU for the same reason. ``run`` and ``arena`` take ``--threads N`` (or
``threads: N`` in a run's config); without it, ``$OMP_NUM_THREADS`` if set, else 1.

The setting reaches torch wherever it is loaded: ``OMP_NUM_THREADS`` is set for this process
(torch reads it when imported) and the worker processes it spawns (they inherit it), and
``torch.set_num_threads`` is called when torch is loaded already. A run of scripted agents never
imports torch for it.
"""

from __future__ import annotations

import os
import sys

__all__ = ["use_threads", "threads_setting"]


def threads_setting(given: int | None) -> int:
    """The threads to use: ``given``, else ``$OMP_NUM_THREADS`` if it is a positive count, else 1.

    Raises:
        ValueError: If ``given`` is not a positive integer.

    Example:
        >>> threads_setting(4)
        4
    """
    if given is None:
        told = os.environ.get("OMP_NUM_THREADS", "").strip()
        return int(told) if told.isdigit() and int(told) > 0 else 1
    if isinstance(given, bool) or not isinstance(given, int) or given < 1:
        raise ValueError(f"threads must be a positive integer, not {given!r}.")
    return given


def use_threads(threads: int) -> None:
    """Give torch ``threads`` CPU threads in this process and in the processes it starts."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)

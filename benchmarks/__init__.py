"""Benchmarks: scripts that print figures and ratios against a reference measured in the same run.

Run one with ``python -m benchmarks NAME`` from the repository root; ``python -m benchmarks`` lists
them. They are studies of the product, not part of it: the package does not install them.
"""

from __future__ import annotations

import argparse

__all__ = ["positive_int", "positive_float"]


def positive_int(text: str) -> int:
    """An argparse type: a whole number above 0 (a count of games, repeats, steps).

    Example:
        >>> positive_int("3")
        3
    """
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"give a whole number >= 1, not {text}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number above 0 (seconds of a measurement, a budget).

    Example:
        >>> positive_float("0.5")
        0.5
    """
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"give a finite number > 0, not {text}")
    return value

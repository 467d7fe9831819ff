"""The suite's one rule for child seeds: 31-bit, derived by position or drawn from a stream.

A child seed is an int in ``[0, 2**31)``, narrow enough for every consumer (Gymnasium spaces,
PettingZoo envs, OpenSpiel's C++ bots, ``np.random.RandomState``). It is made in one of two ways
(docs/architecture.md, "Seeding"):

- :func:`child_seed` derives it from a parent seed and the child's position (a task, a repeat,
  a seat) as numpy derives children: ``SeedSequence(parent, spawn_key=path)``, the sequence that
  ``SeedSequence(parent).spawn`` hands its child at ``path``. The same path gives the same seed
  in any process, different paths (of any length) give unrelated seeds, and nothing else has to
  be drawn first.
- :func:`draw_seed` takes it from a generator that is already running (a trial's
  ``random.Random``, an env's Gymnasium generator): the next 31 bits of its stream, one draw.
"""

from __future__ import annotations

import operator
import random

import numpy as np

__all__ = ["SEED_BITS", "child_seed", "draw_seed"]

SEED_BITS = 31
"""Width of every child seed: ``0 <= seed < 2**SEED_BITS``."""


def child_seed(parent: int, *path: int) -> int:
    """Return the seed of the child at ``path`` under ``parent`` (all non-negative ints).

    Example:
        >>> child_seed(7, 0) == child_seed(7, 0) != child_seed(7, 1)
        True
        >>> 0 <= child_seed(2**64 + 3, 5, 1) < 2**31
        True

    Raises:
        ValueError: If ``parent`` or an element of ``path`` is negative.
    """
    parent, key = operator.index(parent), tuple(operator.index(p) for p in path)
    if parent < 0 or any(p < 0 for p in key):
        raise ValueError(f"Seeds and seed paths must be non-negative, not {parent} and {key}.")
    # spawn_key, not more entropy words: [s] and [s, 0] are the same entropy, (s,) and (s, 0)
    # are different paths. generate_state gives 32 bits; the top 31 are the suite's width.
    state = np.random.SeedSequence(parent, spawn_key=key).generate_state(1)
    return int(state[0]) >> (32 - SEED_BITS)


def draw_seed(rng: np.random.Generator | random.Random) -> int:
    """Return the next child seed from a running generator, in one draw.

    A ``random.Random`` (or anything with ``getrandbits``) gives ``getrandbits(31)``; a numpy
    ``Generator`` gives the top 31 bits of one raw 64-bit draw (a fifth of ``integers()``'s cost).

    Example:
        >>> draw_seed(random.Random(5)) == random.Random(5).getrandbits(31)
        True
        >>> a, b = np.random.default_rng(5), np.random.default_rng(5)
        >>> draw_seed(a) == draw_seed(b) and 0 <= draw_seed(a) < 2**31
        True
    """
    if isinstance(rng, np.random.Generator):
        return int(rng.bit_generator.random_raw()) >> (64 - SEED_BITS)
    return rng.getrandbits(SEED_BITS)

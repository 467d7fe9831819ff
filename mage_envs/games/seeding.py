"""Gymnasium's seeded generator for an env, without rebuilding it at every seeded reset.

``gym.Env.reset(seed=s)`` gives the env a new ``np.random.Generator(PCG64(SeedSequence(s)))``.
The seeding convention (docs/architecture.md) fixes that stream, so it stays; what changes is the
cost. Building the generator takes longer than a whole Kuhn poker hand in OpenSpiel: most of it is
``SeedSequence.generate_state``, whose numpy scalar arithmetic (under an ``errstate`` wrapper)
costs more than the same eight 32-bit hashes in Python ints. So one generator per env is set, in
place, to the state ``PCG64(seed)`` starts from: :func:`pcg64_start` takes numpy's own entropy
pool (``SeedSequence(seed).pool``) and derives the rest in Python; a seed that comes back (a
trial replays its seed for every episode, a training group for every trial) reuses the start kept
for it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SeededGenerator", "pcg64_start"]

_MASK32 = 0xFFFF_FFFF
_MASK128 = (1 << 128) - 1
_PCG64_MULTIPLIER = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645
"""PCG64's 128-bit LCG multiplier (O'Neill's PCG, as numpy's ``PCG64`` uses it)."""


def _output_hashes() -> tuple[tuple[int, int], ...]:
    """The (xor, multiply) constants ``SeedSequence.generate_state`` hashes its 8 words with.

    numpy's constants (``INIT_B``, ``MULT_B``): the hash constant starts at ``INIT_B`` and is
    multiplied by ``MULT_B`` after each use; the pool word is xor-ed with it before, and
    multiplied by it after.
    """
    constant, hashes = 0x8B51_F9DD, []
    for _ in range(8):
        following = (constant * 0x58F3_8DED) & _MASK32
        hashes.append((constant, following))
        constant = following
    return tuple(hashes)


_OUTPUT_HASHES = _output_hashes()
_HASHES = tuple(enumerate(_OUTPUT_HASHES))


def pcg64_start(seed: int) -> tuple[int, int]:
    """Return the ``(state, increment)`` that ``np.random.PCG64(seed)`` starts from.

    numpy mixes the seed into its entropy pool; from the pool, ``generate_state(4, uint64)``
    hashes eight 32-bit words (two per 64-bit word, low half first), and PCG64 seeds with
    ``initstate = w0:w1``, ``initseq = w2:w3`` (O'Neill's ``srandom``: two LCG steps).

    Example:
        >>> state = np.random.PCG64(7).state["state"]
        >>> pcg64_start(7) == (state["state"], state["inc"])
        True
    """
    pool = np.random.SeedSequence(seed).pool.tolist()
    hashed = [((pool[i & 3] ^ xor) * multiply) & _MASK32 for i, (xor, multiply) in _HASHES]
    words = [value ^ (value >> 16) for value in hashed]
    initstate = (words[0] | words[1] << 32) << 64 | words[2] | words[3] << 32
    initseq = (words[4] | words[5] << 32) << 64 | words[6] | words[7] << 32
    increment = (initseq << 1 | 1) & _MASK128
    # srandom: state 0, one step (state = increment), add initstate, one more step.
    return ((increment + initstate) * _PCG64_MULTIPLIER + increment) & _MASK128, increment


_STARTS: dict[int, tuple[int, int]] = {}
"""Seed -> the (state, increment) ``PCG64(seed)`` starts from, for recent seeds (all envs)."""
MAX_STARTS = 4096


class SeededGenerator:
    """One env's generator, set to where ``np.random.Generator(PCG64(seed))`` starts.

    Every ``at(seed)`` sets the same generator in place, to the start :func:`pcg64_start`
    derives (kept for recent seeds). The draws after ``at(seed)`` are those of
    ``seeding.np_random(seed)``, byte for byte.

    Example:
        >>> from gymnasium.utils import seeding
        >>> seeded = SeededGenerator()
        >>> a, b = seeded.at(7).random(3), seeding.np_random(7)[0].random(3)
        >>> bool((a == b).all()), bool((seeded.at(7).random(3) == a).all())
        (True, True)
    """

    def __init__(self) -> None:
        self._generator = np.random.Generator(np.random.PCG64(0))

    def at(self, seed: int) -> np.random.Generator:
        """Return the generator, set to the start of ``seed``'s stream (an int >= 0)."""
        start = _STARTS.get(seed)
        if start is None:
            start = pcg64_start(seed)
            if len(_STARTS) >= MAX_STARTS:
                _STARTS.clear()  # bounded; cheaper than tracking which seed is oldest
            _STARTS[seed] = start
        self._generator.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": start[0], "inc": start[1]},
            "has_uint32": 0,
            "uinteger": 0,
        }
        return self._generator

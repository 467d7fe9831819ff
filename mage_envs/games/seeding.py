"""Gymnasium's seeded generator for an env, without rebuilding it at every seeded reset.

``gym.Env.reset(seed=s)`` gives the env a new ``np.random.Generator(PCG64(SeedSequence(s)))``.
The seeding convention (docs/architecture.md) fixes that stream, so it stays; what changes is the
cost. Building the generator takes longer than a whole Kuhn poker hand in OpenSpiel, and a fresh
generator's first draws are slower still; a seed also comes back often (a trial replays its seed
for every episode, a training group for every trial). So one generator per env is set to the
seed's starting state, and the starting states of recent seeds are kept.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SeededGenerator"]


_STARTS: dict[int, tuple[int, int]] = {}
"""Seed -> the (state, increment) ``PCG64(seed)`` starts from, for recent seeds (all envs)."""
MAX_STARTS = 4096


class SeededGenerator:
    """One env's generator, set to where ``np.random.Generator(PCG64(seed))`` starts.

    A new seed builds that generator as Gymnasium does and remembers where it starts; a seed
    seen before sets the current generator to that start in place (a fraction of the cost).
    Either way the draws after ``at(seed)`` are those of ``seeding.np_random(seed)``, byte for
    byte.

    Example:
        >>> from gymnasium.utils import seeding
        >>> seeded = SeededGenerator()
        >>> a, b = seeded.at(7).random(3), seeding.np_random(7)[0].random(3)
        >>> bool((a == b).all()), bool((seeded.at(7).random(3) == a).all())
        (True, True)
    """

    def __init__(self) -> None:
        self._generator: np.random.Generator | None = None

    def at(self, seed: int) -> np.random.Generator:
        """Return the generator, set to the start of ``seed``'s stream (an int >= 0)."""
        start = _STARTS.get(seed)
        if start is None or self._generator is None:
            self._generator = np.random.Generator(np.random.PCG64(seed))
            if start is None:
                state = self._generator.bit_generator.state["state"]
                if len(_STARTS) >= MAX_STARTS:
                    _STARTS.clear()  # bounded; cheaper than tracking which seed is oldest
                _STARTS[seed] = state["state"], state["inc"]
            return self._generator
        self._generator.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": start[0], "inc": start[1]},
            "has_uint32": 0,
            "uinteger": 0,
        }
        return self._generator

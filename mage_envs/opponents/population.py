"""Populations: named, weighted sets of opponents, one drawn per trial from the trial's seed.

MAGE trains against a population and evaluates on held-out opponents. A :class:`Population` holds
opponent specs (names or opponent objects) with weights; an env given a population draws one member
at each ``reset(seed=...)`` from its seeded generator, so the same seed gives the same opponent.

A population registered with :func:`~mage_envs.opponents.registry.register_population` is a
preset: its name works wherever an opponent name does. Each game's module registers its own
(MAGE's pools: ``kuhn.py``, ``tic_tac_toe.py``); :data:`mage_envs.opponents.PRESETS` holds the
suite's.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
import pyspiel

from mage_envs.opponents.base import Opponent
from mage_envs.opponents.registry import (
    POPULATIONS,
    make_opponent,
    population_names,
    registered_population,
)

__all__ = ["Population", "population_names", "populations_markdown", "as_population"]

Spec = str | Opponent


class Population:
    """A weighted set of opponents; :meth:`draw` picks one member index from a generator.

    Args:
        members: ``{spec: weight}`` or ``[(spec, weight), ...]``; a spec is an opponent name or
            an opponent object. Weights are positive and normalised to sum to 1.
        name: The population's name.

    Raises:
        ValueError: If there are no members, a member is not a (spec, weight) pair, or a weight is
            not a positive finite number.

    Example:
        >>> import numpy as np, pyspiel
        >>> pop = Population({"conservative": 0.3, "aggressive": 0.7}, name="demo")
        >>> members = pop.build(pyspiel.load_game("kuhn_poker"))
        >>> members[pop.draw(np.random.default_rng(0))].name
        'aggressive'
    """

    def __init__(
        self, members: Mapping[Spec, float] | Sequence[tuple[Spec, float]], name: str = "population"
    ) -> None:
        items = list(members.items()) if isinstance(members, Mapping) else list(members)
        if not items:
            raise ValueError(f"Population {name!r} needs at least one member.")
        if not all(isinstance(item, tuple | list) and len(item) == 2 for item in items):
            raise ValueError(
                f"Population {name!r}: members must be {{spec: weight}} or (spec, weight) pairs, "
                f"not {items!r}."
            )
        weights = [float(w) for _, w in items]
        if not all(math.isfinite(w) and w > 0 for w in weights):
            raise ValueError(
                f"Population {name!r}: weights must be positive and finite: {weights}."
            )
        total = sum(weights)
        self.name = name
        self.specs: tuple[Spec, ...] = tuple(spec for spec, _ in items)
        self.weights: tuple[float, ...] = tuple(w / total for w in weights)
        self._cumulative = list(itertools.accumulate(self.weights))

    def member_names(self) -> list[str]:
        """Return the members' names in order."""
        return [spec if isinstance(spec, str) else spec.name for spec in self.specs]

    def draw(self, rng: np.random.Generator) -> int:
        """Return the index of a member drawn by weight (a lone member uses no randomness)."""
        if len(self.specs) == 1:
            return 0
        # One uniform draw against the cumulative weights: rng.choice(p=...) costs ~20x more.
        index = bisect.bisect_right(self._cumulative, rng.random())
        return min(index, len(self.specs) - 1)

    def build(self, game: pyspiel.Game) -> list[Opponent]:
        """Build every member for ``game`` (an unknown or unfit name raises ``ValueError``)."""
        return [make_opponent(spec, game) for spec in self.specs]

    def __repr__(self) -> str:
        members = ", ".join(
            f"{n}: {w:.3g}" for n, w in zip(self.member_names(), self.weights, strict=True)
        )
        return f"Population({self.name!r}, {{{members}}})"


def as_population(spec: Spec | Population | None) -> Population:
    """Turn an ``opponent=`` value into a population.

    A :class:`Population` is returned as is, a preset name gives the preset, and anything else
    (``None``, an opponent name, an opponent object) becomes a population of one.
    """
    if isinstance(spec, Population):
        return spec
    if isinstance(spec, str) and registered_population(spec) is not None:
        return registered_population(spec)
    if spec is None:
        return Population([("random", 1.0)], "random")
    name = spec if isinstance(spec, str) else getattr(spec, "name", type(spec).__name__)
    return Population([(spec, 1.0)], str(name))


def populations_markdown() -> str:
    """Return the table of registered presets that ``docs/opponents.md`` shows, in their order."""
    rows = ["| preset | members |", "|---|---|"]
    rows += [f"| `{name}` | {_members_in_words(p)} |" for name, p in POPULATIONS.items()]
    return "\n".join(rows)


def _members_in_words(population: Population) -> str:
    """``a 0.3, b 0.7``; a weight as a fraction when that is shorter (``7/16``); a lone name."""
    if len(population.specs) == 1:
        return population.member_names()[0]
    words = []
    for name, weight in zip(population.member_names(), population.weights, strict=True):
        decimal, fraction = f"{weight:.4g}", str(Fraction(weight).limit_denominator(1000))
        words.append(f"{name} {min(decimal, fraction, key=len)}")
    return ", ".join(words)

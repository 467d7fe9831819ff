"""The opponent registry: the mechanism that makes names of opponents and population presets.

:func:`register_opponent` makes a name buildable by :func:`make_opponent` (and by
``gym.make(..., opponent=name)``); :func:`register_population` makes a preset name usable
wherever an opponent name is. The names themselves are registered beside what they play: each
game's module of :mod:`mage_envs.opponents` registers its styles and presets (``kuhn.py``,
``tic_tac_toe.py``), the general players theirs (``random_legal.py``, ``cfr.py``, ``mcts.py``),
and a layer above registers the opponents it builds (``agent:``, ``league:``) when it is
imported. Everything that lists opponents reads this registry: the error for an unknown name,
:func:`opponent_names`, the bounds table (:mod:`mage_envs.bounds`) and the table in
``docs/opponents.md`` (:func:`opponents_markdown`), so a new style appears everywhere by being
registered. The registry is one ``dict[str, OpponentEntry]`` (:data:`OPPONENTS`), as Gymnasium's
``registry: dict[str, EnvSpec]``, read at call time. A name that does not fit the game raises a
clear error: there is never a silent fallback to random play.

A *family* is a pattern of names with one builder (``mcts-N``: :func:`register_opponent_family`).
A *scheme* is a family of names with a prefix: ``script:M0.M1...``, or ``agent:SPEC``, which makes
any agent an opponent (:class:`~mage_envs.opponents.text_opponent.TextOpponent`).
:func:`register_opponent_scheme` maps a prefix to its builder, given as an object or, as
Gymnasium's ``entry_point``, a ``"module:attr"`` string imported at the first use. An agent
object (``act(observation, info)``) given where an opponent goes is wrapped the same way.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyspiel

from mage_envs.opponents.base import Opponent
from mage_envs.opponents.text_opponent import TextOpponent

__all__ = [
    "OPPONENTS",
    "OPPONENT_FAMILIES",
    "OPPONENT_SCHEMES",
    "POPULATIONS",
    "OpponentEntry",
    "OpponentFamily",
    "make_opponent",
    "opponent_entries",
    "opponent_names",
    "opponents_markdown",
    "population_names",
    "registered_population",
    "register_opponent",
    "register_opponent_family",
    "register_opponent_scheme",
    "register_population",
]

Factory = Callable[[pyspiel.Game], Opponent]


@dataclass(frozen=True)
class OpponentEntry:
    """One registered opponent.

    Attributes:
        name: The name configs and ``gym.make(..., opponent=...)`` use.
        factory: Receives the OpenSpiel game and returns a fresh opponent.
        supports: Predicate on the game (``None``: any game); other games are refused.
        games: The games it plays, in words (for the docs table).
        description: What it does, in one line (for the docs table).
        bounds: Whether the bounds table lists it (False for the reference player itself).
    """

    name: str
    factory: Factory
    supports: Callable[[pyspiel.Game], bool] | None = None
    games: str = "any"
    description: str = ""
    bounds: bool = True

    def fits(self, game: pyspiel.Game) -> bool:
        """Whether this opponent can play ``game``."""
        return self.supports is None or self.supports(game)


@dataclass(frozen=True)
class OpponentFamily:
    """Names that follow one pattern, built from the match (``mcts-N``).

    Attributes:
        pattern: The whole name must match it.
        builder: Receives the match and the OpenSpiel game; returns the opponent.
        words: The family in words, for the unknown-name error (``mcts-N for any N >= 1``).
    """

    pattern: re.Pattern[str]
    builder: Callable[[re.Match[str], pyspiel.Game], Opponent]
    words: str


OPPONENTS: dict[str, OpponentEntry] = {}
"""Opponent name -> entry, in registration order (the order of every list). Read at call time,
as Gymnasium's ``registry``: what :func:`register_opponent` adds is a name everywhere."""

OPPONENT_FAMILIES: dict[str, OpponentFamily] = {}
"""Pattern -> family of names (:func:`register_opponent_family`)."""

OPPONENT_SCHEMES: dict[str, str | Callable[[str, pyspiel.Game], Opponent]] = {}
"""Prefix -> builder of ``PREFIX:REST`` names: ``builder(REST, game)``, or a ``"module:attr"``
string naming it (imported at the first use)."""

POPULATIONS: dict[str, Any] = {}
"""Preset name -> :class:`~mage_envs.opponents.Population` (:func:`register_population`)."""

_REGISTERED_ABOVE = dict.fromkeys(("agent", "agent-memory", "league"), "import baselines")
"""Scheme -> the statement that registers it, in a layer above mage_envs (never run from here):
what the error for such a name, used before that import, tells the user to run."""


def register_opponent(
    name: str,
    factory: Factory,
    supports: Callable[[pyspiel.Game], bool] | None = None,
    *,
    games: str = "any",
    description: str = "",
    bounds: bool = True,
) -> OpponentEntry:
    """Make ``name`` buildable by :func:`make_opponent` (the fields of :class:`OpponentEntry`)."""
    entry = OpponentEntry(name, factory, supports, games, description, bounds)
    OPPONENTS[name] = entry
    return entry


def register_opponent_family(
    pattern: str, builder: Callable[[re.Match[str], pyspiel.Game], Opponent], words: str
) -> None:
    """Make every name that matches ``pattern`` buildable: ``builder(match, game)``.

    Args:
        pattern: A regular expression the whole name must match, e.g. ``mcts-([1-9][0-9]*)``.
        builder: Receives the match and the OpenSpiel game; returns the opponent.
        words: The family in words, listed in the unknown-name error.
    """
    OPPONENT_FAMILIES[pattern] = OpponentFamily(re.compile(pattern), builder, words)


def register_opponent_scheme(
    prefix: str, builder: str | Callable[[str, pyspiel.Game], Opponent]
) -> None:
    """Make every name ``prefix:REST`` buildable: ``builder(REST, game)`` returns the opponent.

    Args:
        prefix: The scheme's prefix (no colon), e.g. ``"agent"``.
        builder: The builder, or ``"module:attr"`` naming it (imported when first needed).
    """
    if not prefix or ":" in prefix:
        raise ValueError(f"A scheme prefix is a word without ':', not {prefix!r}.")
    OPPONENT_SCHEMES[prefix] = builder


def register_population(population: Any) -> None:
    """Make a population's ``name`` usable wherever an opponent name is (a preset)."""
    POPULATIONS[population.name] = population


def registered_population(name: str) -> Any | None:
    """Return the preset population called ``name``, or ``None``."""
    return POPULATIONS.get(name)


def population_names() -> list[str]:
    """Return the preset population names, sorted."""
    return sorted(POPULATIONS)


def opponent_entries(game: pyspiel.Game | None = None) -> list[OpponentEntry]:
    """Return the registered opponents (those that fit ``game`` if given), in registration order."""
    return [e for e in OPPONENTS.values() if game is None or e.fits(game)]


def opponent_names(game: pyspiel.Game | None = None) -> list[str]:
    """Return the names :func:`make_opponent` accepts (for ``game`` if given), sorted.

    A family's names are not listed one by one (``mcts-N`` is accepted for any N): only those
    registered as names too (``mcts-100`` and ``mcts-1000``).

    Example:
        >>> import pyspiel
        >>> opponent_names(pyspiel.load_game("kuhn_poker"))[:3]
        ['aggressive', 'always-bet', 'always-pass']
    """
    return sorted(entry.name for entry in opponent_entries(game))


def make_opponent(spec: str | Opponent | None, game: pyspiel.Game) -> Opponent:
    """Turn an opponent spec into an opponent for ``game``.

    Args:
        spec: ``None`` (uniform random legal play: the name ``random``), a registered name, a
            family's or a scheme's name (``mcts-50``, ``agent:random``, ...), an object that
            already follows the :class:`~mage_envs.opponents.base.Opponent` protocol, or an agent
            (``name``, ``reset(seed)``, ``act(observation, info)``), which plays as a
            :class:`~mage_envs.opponents.text_opponent.TextOpponent`.
        game: The OpenSpiel game the opponent will play.

    Raises:
        ValueError: If ``spec`` is an unknown name (the message lists the valid names), a name
            of a scheme nothing registered (the message says what to import) or a name that
            cannot play ``game`` (the message says why). There is no silent fallback.
        TypeError: If ``spec`` is neither a name nor an opponent.
    """
    if spec is None:
        return _build("random", game)
    if isinstance(spec, str):
        return _build(spec, game)
    if _answers_text(spec):
        return TextOpponent(spec)
    if isinstance(spec, Opponent):
        return spec
    raise TypeError(
        f"opponent must be a name, an Opponent (with name, reset and act) or None, "
        f"not {type(spec).__name__}."
    )


def _answers_text(obj: object) -> bool:
    """Whether ``obj`` is an agent (``act(observation, info)``) rather than an opponent."""
    act = getattr(obj, "act", None)
    if not (callable(act) and callable(getattr(obj, "reset", None))):
        return False
    try:
        inspect.signature(act).bind("", {})
    except (TypeError, ValueError):
        return False
    return True


def _scheme_builder(prefix: str) -> Callable[[str, pyspiel.Game], Opponent]:
    builder = OPPONENT_SCHEMES[prefix]
    if isinstance(builder, str):
        module_name, _, attr = builder.partition(":")
        try:
            builder = getattr(importlib.import_module(module_name), attr)
        except ImportError as error:
            raise ValueError(
                f"Opponents '{prefix}:...' are built by {module_name}, which could not be "
                f"imported ({error}); is the package installed in full?"
            ) from None
        OPPONENT_SCHEMES[prefix] = builder
    return builder


def _build(name: str, game: pyspiel.Game) -> Opponent:
    prefix, colon, rest = name.partition(":")
    if colon and prefix in OPPONENT_SCHEMES:
        return _scheme_builder(prefix)(rest, game)
    for family in OPPONENT_FAMILIES.values():
        match = family.pattern.fullmatch(name)
        if match:
            return family.builder(match, game)
    entry = OPPONENTS.get(name)
    if entry is None and colon and prefix in _REGISTERED_ABOVE:
        raise ValueError(
            f"Opponent {name!r}: the scheme '{prefix}:' is registered by "
            f"`{_REGISTERED_ABOVE[prefix]}`, which has not run here; run it first (python -m "
            "baselines.run does)."
        )
    if entry is None:
        raise ValueError(
            f"Unknown opponent {name!r}. Valid names: {', '.join(opponent_names())}"
            f"{_families_in_words()}; {_schemes_in_words()}populations: "
            f"{', '.join(population_names())}."
        )
    if not entry.fits(game):
        raise ValueError(
            f"Opponent {name!r} cannot play {game}. Names for this game: "
            f"{', '.join(opponent_names(game))}."
        )
    return entry.factory(game)


def _families_in_words() -> str:
    words = "; ".join(family.words for family in OPPONENT_FAMILIES.values())
    return f" ({words})" if words else ""


def _schemes_in_words() -> str:
    """``schemes: a:..., b:...; `` (sorted, so the order of imports does not show), or nothing."""
    names = ", ".join(f"{prefix}:..." for prefix in sorted(OPPONENT_SCHEMES))
    return f"schemes: {names}; " if names else ""


def opponents_markdown() -> str:
    """Return the table of registered opponents that ``docs/opponents.md`` shows."""
    rows = ["| name | games | what it does |", "|---|---|---|"]
    rows += [f"| `{e.name}` | {e.games} | {e.description} |" for e in opponent_entries()]
    return "\n".join(rows)

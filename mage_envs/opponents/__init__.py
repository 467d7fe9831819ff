"""Opponents for two-player games: a small protocol, scripted styles, search and equilibrium bots.

- :class:`Opponent` is the protocol (``name``, ``reset(seed, player)``, ``act(view)``); a
  :class:`PolicyOpponent` also states its ``action_probabilities``, so exact tools can read it.
- :func:`make_opponent` builds one from a name (:func:`opponent_names` lists them); a name that
  does not exist or does not fit the game raises, never falling back to random play. Every name
  and preset lives in one registry (:mod:`mage_envs.opponents.registry`), registered beside what
  it plays: each game's module here registers its styles and presets (``kuhn.py``,
  ``tic_tac_toe.py``), so a style registered with :func:`register_opponent` appears in the
  lists, the bounds table and the docs. Every module of this package is imported with it: a new
  game's opponents are one new module here and no other edit (docs/architecture.md).
- :class:`Population` draws one member per trial; :data:`PRESETS` holds the suite's pools.
- :class:`TextOpponent` makes any text agent an opponent (``agent:SPEC`` names build one): it
  reads its own seat's page; its backend faults are :class:`OpponentFault`, never a result.
- :class:`ScriptedOpponent` (``script:M0.M1...``) plays a given move in each game of a trial.
- :func:`play_match` is a referee: K seeded games, mean payoff and a 95% confidence interval.
"""

# isort: off
# The suite's opponents register as their modules are imported, in the order of every list (the
# docs table, the bounds): random play, each game's styles and presets, then the solvers.
from mage_envs.opponents.random_legal import RandomLegal, RandomOpponent
from mage_envs.opponents.kuhn import KUHN_STYLES, KuhnStyle
from mage_envs.opponents.tic_tac_toe import (
    TIC_TAC_TOE_STYLES,
    PerfectPlayOpponent,
    PreferredOrderOpponent,
    WeightedRandomOpponent,
)
from mage_envs.opponents.cfr import CFROpponent, equilibrium_policy
from mage_envs.opponents.mcts import MCTSOpponent
from mage_envs.opponents.scripted import ScriptedOpponent

# isort: on
import importlib
import pkgutil
from types import MappingProxyType

from mage_envs.opponents.base import (
    Opponent,
    PolicyOpponent,
    SeatView,
    is_perfect_information,
)
from mage_envs.opponents.population import Population, as_population, populations_markdown
from mage_envs.opponents.referee import MatchResult, play_match
from mage_envs.opponents.registry import (
    OPPONENT_FAMILIES,
    OPPONENT_SCHEMES,
    OPPONENTS,
    POPULATIONS,
    OpponentEntry,
    make_opponent,
    opponent_entries,
    opponent_names,
    opponents_markdown,
    population_names,
    register_opponent,
    register_opponent_family,
    register_opponent_scheme,
    register_population,
)
from mage_envs.opponents.text_opponent import (
    OpponentFault,
    OpponentForfeit,
    PageReader,
    TextOpponent,
)

for _module in pkgutil.iter_modules(__path__):  # a game's own module registers its opponents
    if not _module.name.startswith("_"):  # not __main__, the tables' command line
        importlib.import_module(f"{__name__}.{_module.name}")

PRESETS = MappingProxyType(dict(POPULATIONS))
"""The suite's population presets (those its modules register), name -> :class:`Population`:
MAGE's pools (``mage-kuhn-train``, ``mage-ttt-train``, ...). Presets registered later are in
:func:`population_names` but not here."""

__all__ = [
    "OPPONENT_FAMILIES",
    "OPPONENT_SCHEMES",
    "OPPONENTS",
    "POPULATIONS",
    "OpponentFault",
    "OpponentForfeit",
    "PageReader",
    "TextOpponent",
    "CFROpponent",
    "KUHN_STYLES",
    "KuhnStyle",
    "MCTSOpponent",
    "MatchResult",
    "Opponent",
    "OpponentEntry",
    "PRESETS",
    "PerfectPlayOpponent",
    "PolicyOpponent",
    "Population",
    "PreferredOrderOpponent",
    "RandomLegal",
    "RandomOpponent",
    "ScriptedOpponent",
    "SeatView",
    "TIC_TAC_TOE_STYLES",
    "WeightedRandomOpponent",
    "as_population",
    "equilibrium_policy",
    "is_perfect_information",
    "make_opponent",
    "opponent_entries",
    "opponent_names",
    "opponents_markdown",
    "play_match",
    "population_names",
    "populations_markdown",
    "register_opponent",
    "register_opponent_family",
    "register_opponent_scheme",
    "register_population",
]

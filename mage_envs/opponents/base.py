"""The opponent protocol: what an opponent sees, and how it is seeded and asked for a move.

An opponent controls one seat of an OpenSpiel game. It is told its seat and a seed at the start of
every game, and at each of its turns it receives a :class:`SeatView`: the legal actions and the
information state of its own seat. Only in perfect-information games does the view also carry the
full game state (search bots such as MCTS need it, and nothing in it is hidden), and only for an
opponent that reads it: one whose class sets ``reads_state = False`` is spared a copy of the state
at every move.
"""

from __future__ import annotations

import operator
import random
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import pyspiel

_seed_generator = random.Random.__mro__[1].seed
"""``_random.Random.seed``: what ``random.Random.seed(int)`` calls, without its type checks."""

__all__ = [
    "SeatView",
    "Opponent",
    "PolicyOpponent",
    "is_perfect_information",
]


def is_perfect_information(game: pyspiel.Game) -> bool:
    """Return True if every player of ``game`` sees the whole state."""
    information = game.get_type().information
    return information == pyspiel.GameType.Information.PERFECT_INFORMATION


@dataclass(frozen=True)
class SeatView:
    """What one seat may see when it must act.

    Attributes:
        game: The OpenSpiel game being played.
        player: The seat that must act (0 or 1).
        legal_actions: The OpenSpiel ids of the legal actions.
        information_state: The seat's own information state string (no hidden information).
        state: A copy of the full state, only for perfect-information games; ``None`` otherwise.
        page: The seat's own text page (a :class:`mage_envs.games.views.View`: ``text``,
            ``names``, ``ids``, ``aliases``), rendered only for opponents that read text
            (:class:`~mage_envs.opponents.text_opponent.PageReader`); ``None`` otherwise.
    """

    game: pyspiel.Game
    player: int
    legal_actions: tuple[int, ...]
    information_state: str
    state: pyspiel.State | None = None
    page: Any = None

    @classmethod
    def from_state(
        cls,
        state: pyspiel.State,
        player: int,
        game: pyspiel.Game | None = None,
        page: Any = None,
        with_state: bool = True,
    ) -> SeatView:
        """Build the view of ``player`` at ``state``, withholding hidden information.

        Args:
            state: The current state (not modified).
            player: The seat that must act.
            game: ``state``'s game, when the caller has it at hand (saves a lookup per move).
            page: The seat's text page, for an opponent that reads one.
            with_state: ``False`` leaves ``state`` out even in a perfect-information game, for
                an opponent that never reads it (copying the state costs more than its move).
        """
        game = game or state.get_game()
        uses_info_state, perfect = _view_kind(game)
        if uses_info_state:
            info = state.information_state_string(player)
        else:
            info = state.observation_string(player)
        full = state.clone() if perfect and with_state else None
        return cls(game, player, tuple(state.legal_actions(player)), info, full, page)


_VIEW_KINDS: dict[int, tuple[pyspiel.Game, bool, bool]] = {}
"""id(game) -> (the game, kept alive so its id is not reused; its two view kinds)."""


def _view_kind(game: pyspiel.Game) -> tuple[bool, bool]:
    """Return (uses the information state string, is perfect information), cached per game.

    Keyed by the game object, not ``str(game)``: a game's string is rebuilt at every call, and
    this runs at every opponent move.
    """
    kind = _VIEW_KINDS.get(id(game))
    if kind is None or kind[0] is not game:
        game_type = game.get_type()
        kind = game, game_type.provides_information_state_string, is_perfect_information(game)
        if len(_VIEW_KINDS) >= 256:
            _VIEW_KINDS.clear()  # bounded: a program that loads game after game
        _VIEW_KINDS[id(game)] = kind
    return kind[1], kind[2]


@runtime_checkable
class Opponent(Protocol):
    """A policy for one seat: seeded per game, told its seat, returns a legal action id."""

    name: str

    def reset(self, seed: int | None, player: int) -> None:
        """Start a new game in seat ``player`` with randomness drawn from ``seed``."""

    def act(self, view: SeatView) -> int:
        """Return one of ``view.legal_actions``."""


class PolicyOpponent:
    """An opponent given by its action probabilities; it samples its move with a seeded generator.

    Subclasses implement :meth:`action_probabilities`. Because the policy is explicit, exact tools
    (best response, exploitability, the bounds in :mod:`mage_envs.bounds`) can read it.
    """

    name = "policy"
    reads_state: bool = True
    """Whether :meth:`act` may read ``view.state``; a subclass that never does sets ``False``, and
    the env then spares a copy of the state at each of its moves."""

    def __init__(self) -> None:
        self._rng = random.Random()

    def reset(self, seed: int | None, player: int) -> None:
        """Reseed the generator for a new game (``seed`` may be a numpy integer)."""
        # The stdlib generator: seeding it costs a few microseconds, numpy's about twenty, and
        # opponents are reseeded every game, in place (no new object: the same stream as
        # random.Random(seed)). It refuses numpy integers, so convert them. For an int, the
        # C seeding under random.Random.seed is all that method does, bar resetting gauss_next.
        if seed is None:
            self._rng.seed(None)
        else:
            _seed_generator(self._rng, operator.index(seed))
            self._rng.gauss_next = None

    def action_probabilities(self, view: SeatView) -> dict[int, float]:
        """Return ``{action id: probability}`` over ``view.legal_actions`` (summing to 1)."""
        raise NotImplementedError

    def act(self, view: SeatView) -> int:
        """Sample an action from :meth:`action_probabilities`.

        Raises:
            ValueError: If no action has a positive probability.
        """
        probs = {a: p for a, p in self.action_probabilities(view).items() if p > 0}
        if not probs:
            raise ValueError(
                f"{self.name!r} gave no action a positive probability at "
                f"{view.information_state!r}; its action_probabilities must sum to 1."
            )
        u = self._rng.random() * sum(probs.values())
        for action, prob in probs.items():
            u -= prob
            if u < 0:
                return int(action)
        return int(action)  # rounding left u a hair above zero: the last positive action

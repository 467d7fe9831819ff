"""The one random-legal policy: a uniformly random legal move, for whichever side asks.

:class:`RandomLegal` is the suite's only random-legal player. It is an OpenSpiel
:class:`~mage_envs.opponents.Opponent` (``reset(seed, player)``, ``act(view)``, and, as a
:class:`~mage_envs.opponents.PolicyOpponent`, its explicit uniform ``action_probabilities``), a
PettingZoo seat's ``AgentPolicy`` (``choose(observation, info, action_space)``), and, through the
thin adapter ``mage_agents.RandomLegalAgent``, the learner's seat (:meth:`RandomLegal.pick`).
Every side draws from the same generator, seeded the same way: ``random.Random(seed)``
(docs/architecture.md, "Seeding").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
from gymnasium import spaces

from mage_envs.opponents.base import PolicyOpponent, SeatView
from mage_envs.opponents.registry import register_opponent
from mage_envs.seeds import draw_seed

__all__ = ["RandomLegal", "RandomLegalPolicy", "RandomOpponent", "legal_mask"]

T = TypeVar("T")


def legal_mask(observation: Any, info: dict | None) -> np.ndarray | None:
    """Return the action mask from ``info["action_mask"]`` or ``observation["action_mask"]``."""
    if info and info.get("action_mask") is not None:
        return np.asarray(info["action_mask"])
    if isinstance(observation, dict) and "action_mask" in observation:
        return np.asarray(observation["action_mask"])
    return None


class RandomLegal(PolicyOpponent):
    """Plays a uniformly random legal move, as an opponent, a PettingZoo seat or the learner.

    Example:
        >>> import pyspiel
        >>> state = pyspiel.load_game("tic_tac_toe").new_initial_state()
        >>> bot = RandomLegal()
        >>> bot.reset(seed=0, player=0)
        >>> bot.act(SeatView.from_state(state, 0)) in range(9)
        True
        >>> bot.choose({"action_mask": np.array([0, 0, 1])}, {}, spaces.Discrete(3))
        2
    """

    name = "random"
    reads_state = False

    def reset(
        self, seed: int | None, player: int | str | None = None, agent: str | None = None
    ) -> None:
        """Reseed for a new game; which seat it plays does not change a uniform choice.

        Args:
            seed: Any int (a numpy integer too), or ``None`` for fresh entropy.
            player: The OpenSpiel seat (the ``Opponent`` protocol's name for it).
            agent: The PettingZoo agent (the ``AgentPolicy`` protocol's name for it).
        """
        super().reset(seed, 0)

    def pick(self, legal: Sequence[T]) -> T:
        """Return a uniformly random element of the non-empty ``legal``."""
        return self._rng.choice(legal)

    def action_probabilities(self, view: SeatView) -> dict[int, float]:
        """Return the uniform distribution over the legal actions."""
        return {a: 1.0 / len(view.legal_actions) for a in view.legal_actions}

    def act(self, view: SeatView) -> int:
        """Return a uniformly random legal action id (the OpenSpiel opponent's move)."""
        return self.pick(view.legal_actions)

    def choose(self, observation: Any, info: dict, action_space: spaces.Space) -> Any:
        """Return a random legal action of a PettingZoo seat.

        The legal moves are ``info["legal_action_ids"]``, else the action mask; without either,
        a ``Discrete`` space is sampled uniformly and any other space is seeded from this
        generator and sampled.
        """
        if info and info.get("legal_action_ids"):
            return int(self.pick(info["legal_action_ids"]))
        mask = legal_mask(observation, info)
        if isinstance(action_space, spaces.Discrete):
            start = int(action_space.start)
            if mask is not None and mask.any():
                return start + int(self.pick(np.flatnonzero(mask)))
            return start + self._rng.randrange(int(action_space.n))
        action_space.seed(draw_seed(self._rng))
        return action_space.sample()


RandomOpponent = RandomLegal
"""The same class, under the name the opponent lists and existing code use."""
RandomLegalPolicy = RandomLegal
"""The same class, under the name the PettingZoo seat policies use."""

register_opponent("random", lambda game: RandomLegal(), description="uniform over legal moves")

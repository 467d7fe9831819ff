"""Scripted agents: reference points that need no model.

- :class:`RandomLegalAgent` picks a uniformly random legal move (any env with ``legal_actions``).
- :class:`PolicyAgent` plays the learner's seat with one of the suite's opponent policies (the Kuhn
  styles, CFR, MCTS, ...), so "CFR vs balanced" or "MCTS-1000 vs MCTS-100" sit in the same table
  as the language agents.
- :class:`BestResponseAgent` plays OpenSpiel's exact best response to the env's opponent, when that
  opponent is an explicit policy (the ceiling a perfectly exploiting agent reaches).

Policy and best-response agents read the game state of an OpenSpiel text env, so the runner hands
them the env with :meth:`bind` before each trial. Scripted agents do not reflect: in the reflect
phase they answer a fixed sentence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyspiel
from open_spiel.python.algorithms.best_response import BestResponsePolicy

from mage_envs.opponents import SeatView, make_opponent
from mage_envs.opponents.openspiel_policy import OpponentPolicy
from mage_envs.opponents.random_legal import RandomLegal

__all__ = ["RandomLegalAgent", "PolicyAgent", "BestResponseAgent", "NO_REFLECTION"]

NO_REFLECTION = "No reflection: this agent is scripted."


class RandomLegalAgent:
    """Chooses a uniformly random move from ``info["legal_actions"]``.

    A thin adapter: the choice is the suite's one random-legal policy
    (:class:`mage_envs.opponents.random_legal.RandomLegal`), seeded with the trial seed, so the
    learner's seat and the opponents' seats play "random" the same way.

    Example:
        >>> agent = RandomLegalAgent()
        >>> agent.reset(seed=0)
        >>> agent.act("...", {"legal_actions": ["check", "bet"]}) in ("check", "bet")
        True
    """

    name = "random-legal"

    def __init__(self) -> None:
        self.policy = RandomLegal()

    def reset(self, seed: int | None = None) -> None:
        """Reseed for a new trial."""
        self.policy.reset(seed)

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        """Return a random legal move (or the fixed reflection in the reflect phase)."""
        if info.get("phase") == "reflect":
            return NO_REFLECTION
        legal = info.get("legal_actions") or []
        if not legal:
            return ""
        return str(self.policy.pick(legal))


class _SeatAgent:
    """Shared plumbing: find the OpenSpiel state of the bound env and answer with a move name."""

    name = "seat-agent"

    def __init__(self) -> None:
        self._env: Any = None
        self._seed: int | None = None
        self._game_index: int | None = None

    def bind(self, env: Any) -> None:
        """Attach the env of the coming trial (an OpenSpiel text env, possibly wrapped)."""
        base = getattr(env, "unwrapped", env)
        if not hasattr(base, "game") or not isinstance(base.game, pyspiel.Game):
            raise TypeError(
                f"{self.name} plays OpenSpiel text envs (mage/KuhnPoker-v0, mage/TicTacToe-v0, "
                f"mage/OpenSpiel-v0); {type(base).__name__} is not one."
            )
        self._env = base

    def reset(self, seed: int | None = None) -> None:
        """Start a new trial."""
        self._seed = seed
        self._game_index = None

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        """Return the chosen move's name (or the fixed reflection in the reflect phase)."""
        if info.get("phase") == "reflect":
            return NO_REFLECTION
        if self._env is None:
            raise RuntimeError(f"{self.name} must be bound to its env (agent.bind(env)).")
        state = _learner_state(self._env)
        player = int(info["player"])
        if self._env.game_index != self._game_index:  # the env was reset: a new game
            self._game_index = self._env.game_index
            self._new_game(player)
        action = self._choose(state, player)
        names = dict(zip(info["legal_action_ids"], info["legal_actions"], strict=True))
        return names[action]

    def _new_game(self, player: int) -> None:
        """Hook: a new game starts with the learner in seat ``player``."""

    def _choose(self, state: pyspiel.State, player: int) -> int:
        raise NotImplementedError


def _learner_state(env: Any) -> pyspiel.State:
    """A copy of the env's current OpenSpiel state (``OpenSpielTextEnv.state``)."""
    state = env.state
    if not isinstance(state, pyspiel.State):
        raise RuntimeError("The env has no OpenSpiel state yet: call reset() first.")
    return state


class PolicyAgent(_SeatAgent):
    """Plays the learner's seat with a registered opponent policy (``conservative``, ``cfr``, ...).

    Args:
        policy: A name from :func:`mage_envs.opponents.opponent_names`.
    """

    def __init__(self, policy: str) -> None:
        super().__init__()
        self.policy_name = policy
        self.name = f"policy:{policy}"
        self._policy: Any = None
        self._games = 0

    def bind(self, env: Any) -> None:
        """Attach the env and build the policy for its game (a clear error if it cannot play it)."""
        super().bind(env)
        self._policy = make_opponent(self.policy_name, self._env.game)

    def reset(self, seed: int | None = None) -> None:
        """Start a new trial; each game of the trial reseeds the policy from ``seed``."""
        super().reset(seed)
        self._games = 0

    def _new_game(self, player: int) -> None:
        seed = None if self._seed is None else self._seed * 1000 + self._games
        self._games += 1
        self._policy.reset(seed, player)

    def _choose(self, state: pyspiel.State, player: int) -> int:
        return int(self._policy.act(SeatView.from_state(state, player)))


class BestResponseAgent(_SeatAgent):
    """Plays OpenSpiel's exact best response to the env's opponent policy.

    The opponent must publish ``action_probabilities(view)`` (the suite's policy opponents do: the
    Kuhn styles, CFR, random); search bots such as MCTS do not, and are rejected with an error.
    The game tree is walked once per (opponent name, seat), so keep to small games such as Kuhn
    poker. Population opponents work: the response follows the member drawn for each trial.
    """

    name = "best-response"

    def __init__(self) -> None:
        super().__init__()
        self._responses: dict[tuple[str, int], BestResponsePolicy] = {}

    def _choose(self, state: pyspiel.State, player: int) -> int:
        opponent = self._env.opponent
        if not callable(getattr(opponent, "action_probabilities", None)):
            raise TypeError(
                f"best-response needs an opponent with explicit action probabilities; "
                f"{getattr(opponent, 'name', type(opponent).__name__)!r} has none."
            )
        key = (str(getattr(opponent, "name", type(opponent).__name__)), player)
        if key not in self._responses:
            opp_policy = OpponentPolicy(self._env.game, opponent, [1 - player])
            self._responses[key] = BestResponsePolicy(self._env.game, player, opp_policy)
        probs = self._responses[key].action_probabilities(state, player)
        return int(max(probs, key=lambda a: (probs[a], -a)))

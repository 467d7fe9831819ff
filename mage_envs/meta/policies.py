"""Who plays the other seats of a PettingZoo env: one policy protocol, and the adapters into it.

Every other seat is played by an :class:`AgentPolicy` (``name``, ``reset(seed, agent)``,
``choose(observation, info, action_space)``). :func:`as_policy` turns each accepted form into one,
once, when the env builds its policies: ``None`` becomes the suite's one random-legal policy
(:class:`~mage_envs.opponents.random_legal.RandomLegal`, also named ``RandomLegalPolicy``), a
function becomes a :class:`FunctionPolicy`, and an OpenSpiel
:class:`~mage_envs.opponents.Opponent` (the suite's scripted styles, CFR, MCTS, RandomLegal)
becomes an :class:`OpponentSeat`, which shows it only its seat's
:class:`~mage_envs.opponents.SeatView`. The play loop then calls ``choose`` and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from gymnasium import spaces

from mage_envs.opponents import Opponent, SeatView
from mage_envs.opponents.random_legal import RandomLegalPolicy
from mage_envs.opponents.text_opponent import reads_page

__all__ = ["AgentPolicy", "FunctionPolicy", "OpponentSeat", "RandomLegalPolicy", "as_policy"]


@runtime_checkable
class AgentPolicy(Protocol):
    """A policy for one agent of a PettingZoo env."""

    name: str

    def reset(self, seed: int | None, agent: str) -> None:
        """Start a new game as ``agent``, with randomness drawn from ``seed``."""

    def choose(self, observation: Any, info: dict, action_space: spaces.Space) -> Any:
        """Return a legal action for the current observation."""


class FunctionPolicy:
    """Wraps a function ``f(observation, info, action_space) -> action`` as an AgentPolicy."""

    def __init__(self, function: Callable[[Any, dict, spaces.Space], Any], name: str = "") -> None:
        self.function = function
        self.name = name or getattr(function, "__name__", "function")

    def reset(self, seed: int | None, agent: str) -> None:
        """Functions keep no state."""

    def choose(self, observation: Any, info: dict, action_space: spaces.Space) -> Any:
        """Call the function."""
        return self.function(observation, info, action_space)


class OpponentSeat:
    """An OpenSpiel opponent playing a seat of a PettingZoo env whose state is a ``pyspiel.State``.

    Args:
        opponent: The opponent (``name``, ``reset(seed, player)``, ``act(view)``).
        env: The env it plays in: its ``aec`` (a PettingZoo AEC env, whose agent index is the
            OpenSpiel seat) and its ``state`` (the ``pyspiel.State``, or ``None`` if it has none).
    """

    def __init__(self, opponent: Opponent, env: Any) -> None:
        self.opponent = opponent
        self.name = opponent.name
        self._env = env

    def reset(self, seed: int | None, agent: str) -> None:
        """Seat the opponent as ``agent`` for a new game."""
        self.opponent.reset(seed, self._env.aec.possible_agents.index(agent))

    def choose(self, observation: Any, info: dict, action_space: spaces.Space) -> int:
        """Ask the opponent, showing it the acting seat's view only.

        Raises:
            TypeError: If the env has no OpenSpiel state to build the view from.
        """
        state = self._env.state
        if state is None:
            raise TypeError(
                f"Opponent {self.name!r} is an OpenSpiel Opponent, but this env exposes no "
                f"pyspiel state: give an AgentPolicy or a function instead."
            )
        aec = self._env.aec
        seat = aec.possible_agents.index(aec.agent_selection)
        seat_page = getattr(aec.unwrapped, "seat_page", None)
        page = seat_page(seat) if reads_page(self.opponent) and callable(seat_page) else None
        return self.opponent.act(SeatView.from_state(state, seat, page=page))


def as_policy(spec: Any, env: Any = None) -> AgentPolicy:
    """Return the :class:`AgentPolicy` for an opponent spec (see the module docstring).

    Args:
        spec: ``None``, an AgentPolicy, an OpenSpiel Opponent or a function.
        env: The env the policy plays in (an OpenSpiel Opponent needs it: see
            :class:`OpponentSeat`).

    Raises:
        TypeError: If ``spec`` is none of the accepted forms.
    """
    if spec is None:
        return RandomLegalPolicy()
    # An Opponent first: RandomLegal is both an Opponent and an AgentPolicy, and one given as an
    # opponent plays as one (it sees only its SeatView), whatever else it can do.
    if isinstance(spec, Opponent) and env is not None:
        return OpponentSeat(spec, env)
    if isinstance(spec, AgentPolicy):
        return spec
    if callable(spec):
        return FunctionPolicy(spec)
    raise TypeError(
        f"An opponent must be None, an AgentPolicy (name, reset, choose), an OpenSpiel Opponent "
        f"(name, reset, act) or a function (observation, info, action_space) -> action, "
        f"not {type(spec).__name__}."
    )

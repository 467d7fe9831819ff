"""``agent:SPEC`` opponents: any agent of :mod:`baselines.agents` playing the other seat.

``import baselines`` registers this module as the builder of the ``agent`` and ``agent-memory``
schemes of the opponent registry (mage_envs never imports it: agents live above the envs).
``SPEC`` is an agent spec as ``--agent`` takes it: ``agent:random``, ``agent:local:PATH``,
``agent:openai:MODEL@URL``, ``agent:tiny``, ``agent:python:MODULE:ATTR``.
``agent-memory:SPEC`` is the same agent shown its earlier games of the trial
(:class:`~mage_envs.opponents.text_opponent.TextOpponent`).

Each spec's agent factory is built once per process, so every env (and every trial) that plays
against ``agent:local:PATH`` shares one loaded model.
"""

from __future__ import annotations

from collections.abc import Callable

import pyspiel

from baselines.agents import AgentFactory, build_agent_factory
from mage_agents.shared_models import forget_model, shared_model
from mage_envs.opponents.text_opponent import TextOpponent

__all__ = [
    "agent_opponent",
    "agent_opponent_with_memory",
    "forget_opponent",
    "opponent_factory",
    "shared_factory",
]

_NOT_OPPONENTS = {
    "policy": "a scripted policy is an opponent by its own name (agent:policy:cfr is cfr).",
    "best-response": "a best response reads the game state behind the learner's env, which an "
    "opponent's seat may not see; it plays the learner's seat only.",
}
"""Agent kinds that cannot be an opponent, and why."""


def opponent_factory(spec: str) -> AgentFactory:
    """Return the (shared) agent factory of an agent spec; a bad spec raises ``ValueError``."""
    if not spec:
        raise ValueError(
            "agent: needs an agent spec, e.g. agent:random, agent:local:PATH or "
            "agent:openai:MODEL@URL."
        )
    kind = spec.partition(":")[0]
    if kind in _NOT_OPPONENTS:
        raise ValueError(f"agent:{spec}: {_NOT_OPPONENTS[kind]}")
    return shared_factory(spec, lambda: build_agent_factory(spec))


def shared_factory(key: str, build: Callable[[], AgentFactory]) -> AgentFactory:
    """Return the process's factory under ``key`` (:func:`mage_agents.shared_models.shared_model`).

    Other schemes that play a model (``league:PATH``) share their loaded models this way too.
    """
    return shared_model(key, build)


def forget_opponent(key: str) -> None:
    """Drop the shared factory under ``key`` (its model is freed once no opponent holds it)."""
    forget_model(key)


def agent_opponent(spec: str, game: pyspiel.Game) -> TextOpponent:
    """Build the opponent ``agent:SPEC`` for ``game`` (a fresh agent on the shared backend)."""
    factory = opponent_factory(spec)
    return TextOpponent(factory.new_agent(), name=f"agent:{spec}")


def agent_opponent_with_memory(spec: str, game: pyspiel.Game) -> TextOpponent:
    """Build ``agent-memory:SPEC``: the agent also reads its earlier games of the trial."""
    factory = opponent_factory(spec)
    return TextOpponent(factory.new_agent(), name=f"agent-memory:{spec}", memory=True)

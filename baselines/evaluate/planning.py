"""Planning a run of ``python -m baselines.run``: which (env, opponent) pairs can be played.

Each pair is checked before anything runs, by building its env (with the opponent) and binding a
fresh agent to it: a pair that cannot be played is skipped with one line, so one bad pair never
ends a run. The trials of the playable pairs are then planned, one
:class:`~mage_agents.rollout.TrialPlanner` each (:func:`~baselines.evaluate.runner.trial_planners`),
as one :class:`~mage_agents.rollout.TrialPlans`: a lazy plan, each trial made when it is played, so
that planning costs nothing whatever ``--tasks`` says.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import gymnasium as gym
from rich.console import Console

from baselines.agents import AgentFactory, agent_settings
from baselines.errors import print_warning
from baselines.evaluate.runner import trial_planners
from baselines.settings import RunSettings
from mage_agents.rollout import TrialPlans
from mage_envs.games.openspiel_env import SELF_PLAY

__all__ = ["accepts_opponent", "plan_run", "env_kwargs_of"]


def accepts_opponent(env_id: str) -> bool:
    """Return True if the env's constructor takes an ``opponent`` argument."""
    entry = gym.spec(env_id).entry_point
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module), attr)
    try:
        return "opponent" in inspect.signature(entry).parameters
    except (TypeError, ValueError):
        return False


def env_kwargs_of(settings: RunSettings) -> dict[str, dict[str, Any]]:
    """Per env id, its keyword arguments: the ``"*"`` ones, then its own (which win)."""
    given = settings.env_kwargs or {}
    shared = given.get("*", {})
    return {e: {**shared, **given.get(e, {})} for e in settings.envs}


def _playable(
    env_id: str, kwargs: dict[str, Any], factory: AgentFactory, opponent: str | None = None
) -> str | None:
    """Return why ``factory``'s agent cannot play ``env_id`` against ``opponent``, or ``None``."""
    if opponent == SELF_PLAY:
        return (
            "'self' is self-play, a training mode (train with self_play: true); the runner "
            "scores an agent against an opponent, and a game against itself has no such score"
        )
    if opponent is not None:
        kwargs = {**kwargs, "opponent": opponent}
    try:
        env = gym.make(env_id, **kwargs)
    except Exception as error:  # one broken pair must not hide the others' results
        return f"it cannot be built ({str(error).rstrip('.')})"
    try:
        agent = factory.new_agent()
        if callable(getattr(agent, "bind", None)):
            agent.bind(env)  # scripted agents check here that they can play this game
    except (ValueError, TypeError) as error:
        return f"{factory.name} cannot play it ({str(error).rstrip('.')})"
    finally:
        env.close()
    return None


def plan_run(settings: RunSettings, factory: AgentFactory, console: Console) -> TrialPlans:
    """Plan the trials of every (env, opponent) pair that can be played; skip the others."""
    env_kwargs = env_kwargs_of(settings)
    given = [o for o in settings.opponents if o is not None]
    alone = [e for e in settings.envs if not accepts_opponent(e)]
    if given and alone:
        print_warning(
            f"The opponent {', '.join(given)} does not apply to {', '.join(alone)} "
            "(no opponent): played alone."
        )
    pairs = []
    for env_id in settings.envs:
        for opponent in [None] if env_id in alone else settings.opponents:
            reason = _playable(env_id, env_kwargs[env_id], factory, opponent)
            if reason:
                against = f" against {opponent}" if opponent is not None else ""
                print_warning(f"Skipping {env_id}{against}: {reason}.")
            else:
                pairs.append((env_id, opponent))
    planners = trial_planners(
        factory.name, pairs, env_kwargs, settings.trial, agent_settings(factory.config)
    )
    return TrialPlans(planners, settings.seed, settings.tasks, settings.repeats)

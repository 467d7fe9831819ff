"""baselines: the ``python -m baselines.run`` CLI, configs, reports and benchmarks.

Importing it registers the opponent schemes this layer builds (mage_envs never imports it):
``agent:SPEC`` and ``agent-memory:SPEC`` (any agent of :mod:`baselines.agents` in the other seat)
and ``league:PATH`` (a training run's snapshot). Their builders are imported at the first name
that uses them, so the import stays light.
"""

from mage_envs.opponents import register_opponent_scheme

register_opponent_scheme("agent", "baselines.agent_opponents:agent_opponent")
register_opponent_scheme("agent-memory", "baselines.agent_opponents:agent_opponent_with_memory")
register_opponent_scheme("league", "baselines.league_opponents:league_opponent")

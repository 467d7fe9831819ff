"""baselines: the ``python -m baselines.run`` CLI, one room (subpackage) per command.

``run.py`` dispatches the commands: ``run`` (``evaluate/``), ``train`` (``train/``), ``arena``
(``arena/``), ``bounds`` (``bounds/``), ``report`` (``report/``, which also holds what a run's
records become) and ``serve-env`` (``serve/``); ``opponents/`` builds the ``agent:`` and
``league:`` opponents. The modules at this top are shared by the rooms and import none of them;
``configs/`` holds the ready configs (docs/architecture.md draws the rooms).

Importing it registers the opponent schemes this layer builds (mage_envs never imports it):
``agent:SPEC`` and ``agent-memory:SPEC`` (any agent of :mod:`baselines.agents` in the other seat)
and ``league:PATH`` (a training run's snapshot). Their builders are imported at the first name
that uses them, so the import stays light.
"""

from mage_envs.opponents import register_opponent_scheme

register_opponent_scheme("agent", "baselines.opponents.agent:agent_opponent")
register_opponent_scheme("agent-memory", "baselines.opponents.agent:agent_opponent_with_memory")
register_opponent_scheme("league", "baselines.opponents.league:league_opponent")

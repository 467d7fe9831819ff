"""Agents as opponents: the builders of the ``agent:``, ``agent-memory:`` and ``league:`` schemes.

``agent`` plays any agent spec (``--agent``'s) in the other seat, ``league`` a training run's
snapshot. The opponent registry of ``mage_envs`` names them as ``"module:attr"`` strings and
imports them at their first use, so that ``mage_envs`` never imports the agents.

It may import ``baselines.agents``, ``mage_agents`` and ``mage_envs``; no room of ``baselines``.
The commands reach it only through the registry.
"""

"""The ``serve-env`` command of ``python -m baselines.run``: env ids and trials served over OpenEnv.

``command`` starts the server (``mage_agents.interop`` holds the environment it serves).

It may import the shared modules at the top of ``baselines``, ``mage_agents`` and ``mage_envs``;
no other room of ``baselines``.
"""

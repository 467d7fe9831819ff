"""The ``run`` command of ``python -m baselines.run``: trials planned, played and shown.

``planning`` says which (env, opponent, settings) a run plays and plans their trials,
``runner`` plays them (in this process or over a pool, resuming what ``results.jsonl`` holds),
``run_agents`` does both for every agent of a run's settings, and ``run_report`` prints the
table and writes the output folder's reports. The command line itself is ``baselines/run.py``.

It may import the shared modules at the top of ``baselines``, the ``report`` room, ``mage_agents``
and ``mage_envs``; no other room of ``baselines``.
"""

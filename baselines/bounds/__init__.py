"""The ``bounds`` command of ``python -m baselines.run``: the exact bounds of the opponents.

``command`` prints the table of exact "% of achievable" bounds per opponent and seat (computed by
``mage_envs.bounds``), and ``mage_oracle`` the share of Kuhn deals the MAGE paper's oracle counts
as winnable, to compare with them.

It may import the shared modules at the top of ``baselines`` and ``mage_envs``; no other room of
``baselines``.
"""

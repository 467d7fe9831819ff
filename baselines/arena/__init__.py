"""The ``arena`` command of ``python -m baselines.run``: agents against agents, rated.

``command`` is the command (play, resume, write the tables), ``games`` schedules the matches and
plays one (both seats, duplicate deals), ``ratings`` turns results into head-to-head figures and
ratings, ``exact`` adds the exact values of scripted players, and ``plot`` draws the ratings.

It may import the shared modules at the top of ``baselines``, the ``report`` room (its table
cells), ``mage_agents`` and ``mage_envs``; no other room of ``baselines``.
"""

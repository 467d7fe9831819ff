"""What a run's records become, and the ``report`` command that rebuilds them.

The statistics (``summary``, ``achievable``), the tables, CSV and plots (``tables``), the failure
lines (``failures``), the pages (``summary_html`` for a run, ``train_index`` for a training folder,
drawn by ``html_page`` from ``page/``) and ``python -m baselines.run report DIR`` (``command``).

It may import the shared modules at the top of ``baselines`` (errors, output folders, results,
settings, flags), ``mage_agents`` and ``mage_envs``; no other room of ``baselines``. The rooms of
the other commands import it.
"""

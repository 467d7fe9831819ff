"""baselines: the ``python -m baselines.run`` CLI, one room (subpackage) per command.

``run.py`` dispatches the commands: ``run`` (``evaluate/``), ``train`` (``train/``), ``arena``
(``arena/``), ``bounds`` (``bounds/``), ``report`` (``report/``, which also holds what a run's
records become) and ``serve-env`` (``serve/``); ``opponents/`` builds the ``agent:`` and
``league:`` opponents. The modules at this top are shared by the rooms and import none of them;
``configs/`` holds the ready configs (docs/architecture.md draws the rooms).
"""

"""Collect this package's doctests only where the ``openenv`` extra is installed."""

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("openenv") else ["openenv_*.py", "trl_*.py"]

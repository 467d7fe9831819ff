"""Collect this package's doctests only where the extras its modules import are installed."""

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("openenv") else ["openenv_*.py", "trl_*.py"]
if importlib.util.find_spec("verifiers") is None:
    collect_ignore_glob.append("verifiers_*.py")

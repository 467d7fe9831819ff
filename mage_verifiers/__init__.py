"""Our trials for ``verifiers``: the environment id ``mage-verifiers`` (``vf-eval mage-verifiers``).

verifiers finds a taskset, its environment and its harness by importing a top-level package of
the id's name and reading its ``__all__``; the classes live in
:mod:`mage_agents.interop.verifiers_env`. Needs the ``verifiers`` extra; see docs/interop.md.
"""

from mage_agents.interop import verifiers_env
from mage_agents.interop.verifiers_env import *  # noqa: F403  (the names verifiers looks up)

__all__ = list(verifiers_env.__all__)

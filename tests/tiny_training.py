"""The settings of the tests' tiny training runs, written once.

:func:`tiny_run` gives what every tiny run sets of TRL's ``GRPOConfig`` (and so of
``MetaRLConfig``): the CPU, no checkpoints, no reports, a log every step, and a learning rate high
enough that one step shows. :func:`tiny_config` is the ``MetaRLConfig`` of a tiny Kuhn poker run
over these: single games in the first seat, four trials a task, terse prompts. A test names what
its question needs as keywords, which replace these (a whole ``trial`` or ``env_kwargs`` mapping
included).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

TINY_RUN: dict[str, Any] = {
    "learning_rate": 1e-2,
    "use_cpu": True,
    "gradient_checkpointing": False,
    "report_to": [],
    "logging_steps": 1,
    "save_strategy": "no",
    "seed": 0,
}
"""``GRPOConfig`` settings of every tiny run."""

TINY_KUHN: dict[str, Any] = {
    "env_kwargs": {"seat": "first", "max_invalid_actions": 1},
    "trial": {"num_episodes": 1, "reflection": False},
    "strategy": "terse",
    "num_generations": 4,
    "per_device_train_batch_size": 8,
    "max_completion_length": 8,
    "max_steps": 1,
}
"""``MetaRLConfig`` settings of a tiny Kuhn poker run (the env is ``MetaRLConfig``'s default)."""

LEGAL_CHOICE: dict[str, Any] = {
    "action_choice": "legal",
    "exploration_floor": 0.2,
    "scale_advantages": "batch",
}
"""Moves chosen among the legal ones (a fifth of the probability spread evenly over them),
advantages divided by the batch std."""


def tiny_run(output_dir: str | Path, **settings: Any) -> dict[str, Any]:
    """Return :data:`TINY_RUN` writing to ``output_dir``, ``settings`` set over it (a fresh copy).

    Example:
        >>> tiny_run("out", seed=3)["seed"], tiny_run("out")["report_to"]
        (3, [])
    """
    return {"output_dir": str(output_dir), **copy.deepcopy(TINY_RUN), **settings}


def tiny_config(output_dir: str | Path, **settings: Any) -> Any:
    """Return the ``MetaRLConfig`` of a tiny Kuhn run (:data:`TINY_KUHN`), ``settings`` over it."""
    from mage_agents.training import MetaRLConfig

    return MetaRLConfig(**tiny_run(output_dir, **(copy.deepcopy(TINY_KUHN) | settings)))

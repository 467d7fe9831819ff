"""The random streams of a training run: each consumer draws from its own seeded generator.

A step's rollouts, an evaluation and any scoring outside training each run inside
:func:`random_stream`, which forks torch's global generator (CPU, and the current CUDA device)
and seeds the fork with a child seed of the run's seed (:func:`mage_envs.seeds.child_seed`,
by position: the purpose and, for rollouts, the step and the process). Sampling (``generate``,
the legal-move draws) reads the fork; when the block ends, the global generator is exactly as it
was. So what a step samples depends only on the seed, the step and the weights, never on what
was drawn before: the trained weights do not depend on the evaluation cadence, the logging, the
plots or the step a run was resumed from. TRL's own draws (the batch shuffle) stay on the global
generator, whose state ``transformers`` saves in every checkpoint and restores on resume.

vLLM samples on its own server or engine, with its own seeds: these streams cover generation
through ``transformers`` and the legal-move choice.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from mage_envs.seeds import child_seed

__all__ = ["PURPOSES", "stream_seed", "random_stream"]

PURPOSES = {"rollout": 1, "evaluation": 2, "scoring": 3, "league": 4}
"""What a stream is for: the first element of its child-seed path (never reorder)."""


def stream_seed(seed: int, purpose: str, *path: int) -> int:
    """Return the seed of the ``purpose`` stream at ``path`` (e.g. the step) of run ``seed``.

    Example:
        >>> stream_seed(0, "rollout", 5) == stream_seed(0, "rollout", 5)
        True
        >>> stream_seed(0, "rollout", 5) != stream_seed(0, "rollout", 6)
        True
        >>> stream_seed(0, "rollout", 5) != stream_seed(0, "evaluation", 5)
        True
    """
    if purpose not in PURPOSES:
        raise ValueError(f"Unknown stream {purpose!r}: one of {', '.join(PURPOSES)}.")
    return child_seed(seed, PURPOSES[purpose], *path)


@contextmanager
def random_stream(seed: int) -> Iterator[None]:
    """Draw torch's random numbers from a generator seeded with ``seed`` inside the block.

    The global generators are restored when the block ends, whatever it drew.

    Example:
        >>> before = torch.random.get_rng_state()
        >>> with random_stream(3):
        ...     first = torch.rand(2)
        >>> with random_stream(3):
        ...     again = torch.rand(2)
        >>> torch.equal(first, again) and torch.equal(torch.random.get_rng_state(), before)
        True
    """
    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        torch.default_generator.manual_seed(seed)
        if devices:
            torch.cuda.manual_seed(seed)  # the current device only: the others are not forked
        yield

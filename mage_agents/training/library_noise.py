"""What the libraries under the trainer print that a run's reader should not have to read.

A save draws transformers' "Writing model shards" bar between the run's own progress lines, and
TRL calls transformers' ``gradient_checkpointing_*`` methods, which transformers 5.18 renamed and
warns about at every call: neither says anything about the run.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["library_bars_off", "ignore_checkpointing_renames"]

RENAME_WARNING = r"`(is_)?gradient_checkpointing\w*` is deprecated"
"""The message of transformers' warnings about the ``activation_checkpointing`` renames."""


@contextmanager
def library_bars_off() -> Iterator[None]:
    """Turn transformers' progress bars off inside the block, then back to what they were."""
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


def ignore_checkpointing_renames() -> None:
    """Ignore, for this process, transformers' warnings about TRL's checkpointing calls.

    For command-line entry points only: a library does not change its caller's filters.
    """
    warnings.filterwarnings("ignore", message=RENAME_WARNING, category=FutureWarning)

"""The output folder of a run: one run at a time, and one summary per config.

- :class:`FolderLock` holds an exclusive ``flock`` on ``DIR/results.jsonl`` for the whole run, so
  a second run writing the same folder is refused at once with a clear message. The operating
  system drops the lock when its holder exits, even on ``kill -9``: no stale lock to clean up, and
  no file of its own. (POSIX only: without ``fcntl``, on Windows, runs are not locked.)
- A *config* is the set of trial-id prefixes a run plans (agent and the settings in its trial
  ids, env, opponent, episodes and the hash of the env and trial settings; not the task or
  repeat). Trials of different configs never mix up (their ids differ), but ``summary.md`` only
  shows the latest run. So when ``results.jsonl`` also holds trials of other configs,
  :func:`keep_summaries` keeps the previous ``summary.md`` as ``summary-<its config>.md``, and the
  run writes its own ``summary-<config>.md`` next to ``summary.md``. Each ``summary.md`` ends with
  a comment naming its config.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mage_agents.atomic_file import write_atomic

try:
    import fcntl
except ImportError:  # Windows: no flock; runs are not locked there
    fcntl = None

__all__ = [
    "FolderLock",
    "config_id",
    "trial_prefix",
    "config_marker",
    "keep_summaries",
    "TRANSCRIPTS_FILE",
]

TRANSCRIPTS_FILE = "transcripts.jsonl.gz"
"""A run folder's transcripts (one gzip member per finished trial), beside ``results.jsonl``."""

_MARKER = re.compile(r"<!-- mage config ([0-9a-f]{10}) -->")


class FolderLock:
    """An exclusive lock on an output folder's ``results.jsonl``, as a context manager.

    Args:
        folder: The output folder (created if missing).

    Raises:
        ValueError: On entering, if another process holds the lock.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._handle: Any = None

    def __enter__(self) -> FolderLock:
        self.folder.mkdir(parents=True, exist_ok=True)
        handle = open(self.folder / "results.jsonl", "ab")  # noqa: SIM115 (held until __exit__)
        if fcntl is None:
            handle.close()
            return self
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise ValueError(
                f"Another run is writing to {self.folder} (its results.jsonl is locked); wait "
                "for it to end, or give this run another --out."
            ) from None
        self._handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None and fcntl is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


def trial_prefix(trial_id: str) -> str:
    """The config part of a trial id: everything but the task and the repeat.

    Example:
        >>> trial_prefix("random-legal|mage/KuhnPoker-v0|None|n3|ab12|task4|r0")
        'random-legal|mage/KuhnPoker-v0|None|n3|ab12'
    """
    return trial_id.rsplit("|", 2)[0]


def config_id(prefixes: Iterable[str]) -> str:
    """A short, stable id of the config made of these trial-id prefixes."""
    text = "\n".join(sorted(set(prefixes)))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def config_marker(config: str) -> str:
    """The comment that ends a ``summary.md`` of config ``config``."""
    return f"<!-- mage config {config} -->"


def keep_summaries(folder: str | Path, config: str) -> None:
    """Keep the folder's ``summary.md`` (``.csv``, ``.html``) under its own config id, if another's.

    Call it before writing the summary of ``config``, when the folder holds several configs.
    """
    folder = Path(folder)
    summary = folder / "summary.md"
    if not summary.exists():
        return
    found = _MARKER.search(summary.read_text(errors="replace"))
    if found is None or found.group(1) == config:
        return
    for name in ("summary.md", "summary.csv", "summary.html"):
        kept = folder / name.replace("summary", f"summary-{found.group(1)}")
        if (folder / name).exists() and not kept.exists():
            write_atomic(kept, (folder / name).read_bytes())  # whole, or not there at all

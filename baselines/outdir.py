"""The output folder of a run: one run at a time, and one summary per config.

- :class:`~baselines.folder_lock.FolderLock` (re-exported here) locks the folder for the whole
  run, so a second writer is refused at once, naming the one writing it.
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

from baselines.folder_lock import FolderLock
from mage_agents.atomic_file import write_atomic

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

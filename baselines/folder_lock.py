"""One writer per output folder, and each folder written by one command.

``run``, ``arena`` and ``train`` hold :class:`FolderLock` on their ``--out`` for as long as they
write it: an exclusive ``flock`` on ``DIR/.mage-lock``, so a second writer is refused at once,
with one line naming the holder (its command, pid, host and start). The operating system drops
the lock when its holder exits, even on ``kill -9``: there is never a stale lock to clean up.
(POSIX only: without ``fcntl``, on Windows, folders are not locked.)

The lock file keeps naming its last writer after it ends, and that is how a folder says which
command wrote it: an evaluation folder given to ``train`` or ``arena`` (or a training folder to
``run``) is refused, since their files would mix (``results.jsonl`` of trials and of games, a
``--restart`` removing what is not a training run). Folders of earlier versions, without the
file, are recognised by what they hold (:func:`folder_writer`).
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from baselines.errors import folder_error

try:
    import fcntl
except ImportError:  # Windows: no flock; folders are not locked there
    fcntl = None

__all__ = ["FolderLock", "LOCK_FILE", "WRITTEN_BY", "folder_writer"]

LOCK_FILE = ".mage-lock"
"""In every output folder: locked while a command writes it; names its last writer (JSON)."""

WRITTEN_BY = {"run": "an evaluation", "arena": "an arena", "train": "a training run"}
"""What each writing command leaves in its folder, in words."""


class FolderLock:
    """An exclusive lock on an output folder for command ``command``, as a context manager.

    Args:
        folder: The output folder (created if missing).
        command: The command that writes it: ``run``, ``arena`` or ``train``.

    Raises:
        ValueError: On entering: another process holds the lock (it is named), the folder was
            written by another command, or it cannot be made (the flag ``--out`` is named).
    """

    def __init__(self, folder: str | Path, command: str = "run") -> None:
        if command not in WRITTEN_BY:
            raise ValueError(f"command must be one of {', '.join(WRITTEN_BY)}, not {command!r}.")
        self.folder = Path(folder)
        self.command = command
        self._handle: Any = None

    def __enter__(self) -> FolderLock:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle = open(self.folder / LOCK_FILE, "a+")  # noqa: SIM115 (held until __exit__)
        except OSError as error:
            raise folder_error("--out", self.folder, error) from None
        try:
            self._lock(handle)
            self._check_writer(handle)
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps(_holder(self.command)) + "\n")
            handle.flush()
        except BaseException:
            handle.close()  # closing drops the lock
            raise
        self._handle = handle
        return self

    def _lock(self, handle: Any) -> None:
        if fcntl is None:
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(handle)
            who = holder.get("command") if holder.get("command") in WRITTEN_BY else "command"
            raise ValueError(
                f"Another {who} is writing to {self.folder} ({_describe(holder)}); wait for it "
                f"to end, or give this {self.command} another --out."
            ) from None

    def _check_writer(self, handle: Any) -> None:
        writer = _read_holder(handle).get("command") or folder_writer(self.folder)
        if writer in WRITTEN_BY and writer != self.command:
            raise ValueError(
                f"{self.folder} holds {WRITTEN_BY[writer]} (written by {writer}); {self.command} "
                f"writes a folder of its own: give it another --out."
            )

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            if fcntl is not None:
                fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


def folder_writer(folder: str | Path) -> str | None:
    """The command that wrote ``folder``, from its lock file or, failing that, what it holds.

    Returns:
        ``run``, ``arena``, ``train``, or ``None`` for a folder none of them wrote.
    """
    folder = Path(folder)
    try:
        recorded = json.loads((folder / LOCK_FILE).read_text()).get("command")
    except (OSError, ValueError, AttributeError):
        recorded = None
    if recorded in WRITTEN_BY:
        return recorded
    if (folder / "config.yaml").is_file() and any(
        (folder / name).exists() for name in ("metrics.jsonl", "resolved.yaml", "final")
    ):
        return "train"
    if any(folder.glob("checkpoint-*")):
        return "train"
    if (folder / "arena.md").is_file():
        return "arena"
    first = _first_record(folder / "results.jsonl")
    if first is not None:
        return "arena" if "deal" in first and "first" in first else "run"
    return None


def _first_record(path: Path) -> dict[str, Any] | None:
    """The first line of a results file, read as a record (a bounded read)."""
    try:
        with open(path, "rb") as handle:
            line = handle.readline(1 << 20)
        record = json.loads(line)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _holder(command: str) -> dict[str, Any]:
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return {
        "command": command,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": started,
    }


def _read_holder(handle: Any) -> dict[str, Any]:
    try:
        handle.seek(0)
        holder = json.loads(handle.read(4096) or "{}")
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _describe(holder: dict[str, Any]) -> str:
    """The lock's holder in words: ``pid 12 on host, since ...`` (what is known of it)."""
    if "pid" not in holder:
        return "its holder has not said who it is yet"
    return f"pid {holder['pid']} on {holder.get('host', '?')}, since {holder.get('started', '?')}"

"""The output folder of a run: one run at a time, and one summary per config.

- :class:`FolderLock` holds an exclusive ``flock`` on ``DIR/.lock`` for the whole run, so a second
  run writing the same folder is refused at once with a clear message (the operating system drops
  the lock when the holder exits, even on ``kill -9``: no stale lock to clean up).
- :func:`register_config` keeps ``DIR/configs.json``: every config (the settings that decide what
  the trials are) whose results the folder holds. Their trials never mix (a changed setting
  changes the trial ids), but ``summary.md`` only shows the latest run; so with more than one
  config each also gets its own ``summary-<config id>.md`` and ``.csv``, and the run says which
  summary is whose. Settings that never change a result (workers, batch size, title, plots, where
  answers come from) are not part of a config.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["FolderLock", "register_config", "ConfigEntry", "CONFIG_FILE"]

CONFIG_FILE = "configs.json"


class FolderLock:
    """An exclusive lock on an output folder, as a context manager.

    Args:
        folder: The output folder (created if missing).

    Raises:
        ValueError: On entering, if another process holds the lock (its pid is named).
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._handle: Any = None

    def __enter__(self) -> FolderLock:
        self.folder.mkdir(parents=True, exist_ok=True)
        handle = open(self.folder / ".lock", "a+")  # noqa: SIM115 (held until __exit__)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise ValueError(
                f"Another run (pid {holder}) is writing to {self.folder}; wait for it to end, "
                "or give this run another --out."
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


def register_config(folder: str | Path, config: dict[str, Any]) -> ConfigEntry:
    """Record ``config`` among the configs whose results ``folder`` holds.

    When a second config arrives, the summary of the previous one is kept as
    ``summary-<its id>.md`` (and ``.csv``) before this run overwrites ``summary.md``.

    Args:
        folder: The output folder.
        config: The settings that decide what the trials are (JSON-serialisable).

    Returns:
        This config's id and how many configs the folder now holds.
    """
    folder = Path(folder)
    config = json.loads(json.dumps(config, sort_keys=True, default=str))
    config_id = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:10]
    path = folder / CONFIG_FILE
    known = _read_configs(path)
    latest = known.get("latest")
    configs = known.get("configs", {})
    if latest and latest != config_id:
        for name in ("summary.md", "summary.csv"):
            kept = folder / name.replace("summary", f"summary-{latest}")
            if (folder / name).exists() and not kept.exists():
                shutil.copyfile(folder / name, kept)
    configs[config_id] = config
    text = json.dumps({"latest": config_id, "configs": configs}, sort_keys=True, indent=1)
    path.write_text(text + "\n")
    return ConfigEntry(config_id, len(configs))


@dataclass(frozen=True)
class ConfigEntry:
    """A config's place in its output folder.

    Attributes:
        config_id: A short hash of the config (names ``summary-<id>.md``).
        configs: How many configs the folder's results come from.
    """

    config_id: str
    configs: int


def _read_configs(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        known = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}  # unreadable: rebuilt from this run on
    if not isinstance(known, dict) or not isinstance(known.get("configs"), dict):
        return {}
    return known

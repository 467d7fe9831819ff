"""The results file: one JSON line per finished trial, appended at once and fsync'd.

A line is fsync'd as it is appended, or later with others (``append(..., sync=False)``, then
:meth:`ResultsFile.sync`: the runner's group commit); either way it is written at once, so a
killed process loses no line it appended.

A run can be killed at any moment (``kill -9`` included) and rerun with the same command: the file
is read back, a torn last line (a write cut short) is dropped, the file is cut back to its last
complete line, and only the trials whose ``trial_id`` is missing are played. A trial is never
counted twice: the first complete record of an id wins.

A record with ``"incomplete": true`` is a trial that could not be played to its end because the
backend failed (connection refused, timeouts, server errors after the retries): it is kept, with
its reasons, so that the report can say what failed, but it does not count as finished. The next
run plays that trial again, and the first complete record of the id then replaces it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["ResultsFile", "missing_fields", "RECORD_FIELDS", "TRIAL_FIELDS"]

RECORD_FIELDS = ("trial_id", "agent", "env_id", "opponent", "task", "trial", "play_steps")
"""Fields of a trial record the reports read (older formats may lack some)."""

TRIAL_FIELDS = ("num_episodes", "returns", "final_return", "pass_at_k", "successes")
"""Fields of a record's ``trial`` the reports read."""


def missing_fields(record: dict[str, Any]) -> list[str]:
    """Return the fields the reports need that ``record`` lacks (``trial.x`` for nested ones).

    Example:
        >>> missing_fields({"trial_id": "a", "trial": {"returns": [1.0]}})[:2]
        ['agent', 'env_id']
    """
    missing = [k for k in RECORD_FIELDS if k not in record]
    trial = record.get("trial")
    if isinstance(trial, dict):
        missing += [f"trial.{k}" for k in TRIAL_FIELDS if k not in trial]
    elif "trial" in record and not record.get("incomplete"):
        missing.append("trial (not a mapping)")
    return missing


class ResultsFile:
    """Append-only JSONL store of trial records, keyed by ``record["trial_id"]``.

    Args:
        path: The ``results.jsonl`` file (created with its folder if missing), or ``None`` to keep
            the records in memory only.
        repair: Cut a torn last line off the file (a run resuming). ``False`` leaves the file as
            it is (a report read while a run may be writing) and only skips the torn line.

    Example:
        >>> import tempfile, pathlib
        >>> store = ResultsFile(pathlib.Path(tempfile.mkdtemp()) / "results.jsonl")
        >>> store.append({"trial_id": "a", "x": 1})
        >>> store.append({"trial_id": "a", "x": 2})  # a duplicate id is ignored
        >>> [r["x"] for r in store.records()]
        [1]
    """

    def __init__(self, path: str | Path | None, repair: bool = True) -> None:
        self.path = None if path is None else Path(path)
        self._records: dict[str, dict[str, Any]] = {}
        self._incomplete: dict[str, dict[str, Any]] = {}
        self.dropped_lines = 0
        self.damaged: list[int] = []
        """The numbers (from 1) of complete lines that are no trial record: skipped."""
        if self.path is not None:
            if repair:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._load(repair)

    def _load(self, repair: bool) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        complete = data.rfind(b"\n") + 1
        if complete < len(data):  # a torn last line: cut the file back to its last newline
            self.dropped_lines += 1
        if complete < len(data) and repair:
            with open(self.path, "r+b") as handle:
                handle.truncate(complete)
                handle.flush()
                os.fsync(handle.fileno())
        for number, line in enumerate(data[:complete].split(b"\n")[:-1], start=1):
            record = _decode(line)
            if record is None:
                self.dropped_lines += 1
                self.damaged.append(number)
            else:
                self._keep(record)

    def damage_note(self) -> str | None:
        """One line naming the damaged lines (``None`` if there are none).

        Example:
            >>> store = ResultsFile(None)
            >>> store.damaged = [3, 17]
            >>> store.damage_note()
            'results.jsonl: lines 3, 17 are damaged (not a JSON trial record); they are skipped'
        """
        if not self.damaged:
            return None
        one = len(self.damaged) == 1
        shown = ", ".join(map(str, self.damaged[:10]))
        more = f" and {len(self.damaged) - 10} more" if len(self.damaged) > 10 else ""
        lines = f"line {shown} is" if one else f"lines {shown}{more} are"
        skipped = "it is" if one else "they are"
        where = self.path or "results.jsonl"
        return f"{where}: {lines} damaged (not a JSON trial record); {skipped} skipped"

    def _keep(self, record: dict[str, Any]) -> None:
        trial_id = record["trial_id"]
        if trial_id in self._records:
            return
        if record.get("incomplete"):
            self._incomplete[trial_id] = record  # the latest failure says why it failed now
        else:
            self._incomplete.pop(trial_id, None)
            self._records[trial_id] = record

    def __contains__(self, trial_id: object) -> bool:
        return trial_id in self._records

    def __len__(self) -> int:
        return len(self._records)

    def finished(self) -> set[str]:
        """Return the ids of the trials already recorded (complete ones only)."""
        return set(self._records)

    def failed(self, trial_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Return the latest incomplete record of each trial that has no complete one yet.

        Args:
            trial_ids: Only these trials (default: all).
        """
        if trial_ids is None:
            return list(self._incomplete.values())
        wanted = set(trial_ids)
        return [r for tid, r in self._incomplete.items() if tid in wanted]

    def records(self, trial_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Return the records, in file order, optionally only those whose id is in ``trial_ids``."""
        if trial_ids is None:
            return list(self._records.values())
        wanted = set(trial_ids)
        return [r for tid, r in self._records.items() if tid in wanted]

    def append(self, record: dict[str, Any], sync: bool = True) -> None:
        """Write one record as a line and fsync it; a ``trial_id`` already complete is ignored.

        ``sync=False`` writes the line without waiting for the disk (a killed process loses
        nothing; a machine that loses power may): for many small records, then :meth:`sync`.
        """
        trial_id = record.get("trial_id")
        if not isinstance(trial_id, str):
            raise ValueError("A trial record needs a string 'trial_id'.")
        if trial_id in self._records:
            return
        line = json.dumps(record, sort_keys=True) + "\n"
        if self.path is not None:
            with open(self.path, "ab") as handle:
                handle.write(line.encode())
                handle.flush()
                if sync:
                    os.fsync(handle.fileno())
        self._keep(json.loads(line))  # exactly what a rerun will read back

    def sync(self) -> None:
        """Make every line written so far durable (after appends with ``sync=False``)."""
        if self.path is not None and self.path.exists():
            with open(self.path, "ab") as handle:
                os.fsync(handle.fileno())


def _decode(line: bytes) -> dict[str, Any] | None:
    """Parse one line; anything that is not a record with a string ``trial_id`` is skipped."""
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):  # nested past reading
        return None
    if isinstance(record, dict) and isinstance(record.get("trial_id"), str):
        return record
    return None

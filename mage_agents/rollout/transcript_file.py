"""The transcripts file: one gzip member per trial, each appended whole in one write.

``transcripts.jsonl.gz`` is a valid gzip file of JSON lines (``zcat`` reads it, and so does
:func:`gzip.open`), made of one gzip member per trial: a trial is appended whole, in one write
(fsync'd at once, or later with the results: :meth:`TranscriptFile.sync`). A run killed at any
moment (``kill -9`` included) leaves at most a torn last member, which the next open cuts off, as
the results file cuts a torn last line.

The results file is the record of what finished. The runner writes a trial's transcript just
before its results line, so a kill between the two leaves a transcript whose trial is not
finished; given the finished trial ids (``keep``), opening the file drops such transcripts, and
the trial's replay writes its own. Every finished trial then has exactly one transcript.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from collections.abc import Container, Iterable, Iterator
from pathlib import Path
from typing import Any

from mage_agents.atomic_file import atomic_writer

__all__ = ["TranscriptFile", "write_transcripts", "read_transcripts", "gzip_member"]

_MAGIC = b"\x1f\x8b\x08"  # a gzip member's first bytes (deflate)
_CHUNK = 1 << 16


def gzip_member(record: dict[str, Any]) -> bytes:
    r"""Return one record as a gzip member holding one JSON line (the same bytes every time).

    Example:
        >>> import gzip
        >>> gzip.decompress(gzip_member({"trial_id": "a"}))
        b'{"trial_id": "a"}\n'
    """
    # ASCII escapes: agent text may hold anything, lone surrogates included, and reads back as is
    line = json.dumps(record) + "\n"
    return gzip.compress(line.encode("ascii"), compresslevel=6, mtime=0)


def _read_member(data: memoryview, offset: int) -> tuple[int, bytes] | None:
    """Decompress the member at ``offset``; return its end and text, or ``None`` if torn/bad."""
    if bytes(data[offset : offset + 3]) != _MAGIC:
        return None
    inflater = zlib.decompressobj(wbits=31)  # one gzip member, header and checksum checked
    parts, position = [], offset
    try:
        while not inflater.eof:
            if position >= len(data):
                return None  # cut short: a torn write
            chunk = data[position : position + _CHUNK]
            position += len(chunk)
            parts.append(inflater.decompress(chunk))
    except zlib.error:
        return None
    return position - len(inflater.unused_data), b"".join(parts)


def _decode(text: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if isinstance(record, dict) and isinstance(record.get("trial_id"), str):
        return record
    return None


def _counts(record: dict[str, Any] | None, keep: Container[str] | None) -> bool:
    return record is not None and (keep is None or record["trial_id"] in keep)


_TRIAL_ID = re.compile(rb'"trial_id": "((?:[^"\\]|\\.)*)"')


def _damaged(data: bytes, start: int, end: int) -> str:
    """Name a damaged member: its trial (read from what inflates before the damage) and bytes.

    Example:
        >>> member = bytearray(gzip_member({"trial_id": "a|b", "turns": list(range(3000))}))
        >>> member[2000:2008] = bytes(8)
        >>> _damaged(bytes(member), 0, len(member))
        'trial a|b (bytes 0-6577)'
    """
    inflater, text = zlib.decompressobj(wbits=31), b""
    try:
        for offset in range(start, end, 64):  # in small pieces: keep what comes before the damage
            text += inflater.decompress(data[offset : min(offset + 64, end)])
    except zlib.error:
        pass
    found = _TRIAL_ID.search(text)
    where = f"bytes {start}-{end}"
    if found is None:
        return where
    try:
        trial_id = json.loads(b'"' + found.group(1) + b'"')
    except ValueError:
        return where
    return f"trial {trial_id} ({where})"


def _scan(data: bytes) -> Iterator[tuple[int, int, dict[str, Any] | None]]:
    """Yield ``(start, end, record)`` for each complete member (``None``: not a transcript).

    Bytes that are no member are skipped up to the next member that decodes; a stretch that
    never reaches one is yielded as ``(start, len(data), None)``.
    """
    view, offset = memoryview(data), 0
    while offset < len(data):
        read = _read_member(view, offset)
        if read is not None:
            end, text = read
            yield offset, end, _decode(text)
            offset = end
            continue
        start, found = offset, None
        while found is None:
            offset = data.find(_MAGIC, offset + 1)
            if offset < 0:
                yield start, len(data), None
                return
            found = _read_member(view, offset)
        yield start, offset, None


class TranscriptFile:
    """Append-only store of transcripts, one gzip member each, keyed by ``trial_id``.

    Args:
        path: The ``transcripts.jsonl.gz`` file (created with its folder if missing).
        keep: The trial ids whose transcripts count (the finished trials of the results file);
            ``None`` keeps every one. A transcript of another trial is dropped, and cut from the
            file when it is at its end (a kill between a transcript and its results line).
        repair: Cut what does not count off the end of the file (a run resuming). ``False``
            leaves the file as it is (a report read while a run may be writing).

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "transcripts.jsonl.gz"
        >>> store = TranscriptFile(path)
        >>> store.append({"trial_id": "a", "turns": []}), store.append({"trial_id": "a"})
        (True, False)
        >>> TranscriptFile(path).read("a")
        {'trial_id': 'a', 'turns': []}
    """

    def __init__(
        self, path: str | Path, keep: Container[str] | None = None, repair: bool = True
    ) -> None:
        self.path = Path(path)
        self._where: dict[str, tuple[int, int]] = {}
        self.dropped = 0
        """Members dropped when the file was opened: torn, unreadable or of unfinished trials."""
        self.damaged: list[str] = []
        """The unreadable members amid readable ones: ``trial ID (bytes S-E)`` each."""
        if repair:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            self._load(keep, repair)

    def _load(self, keep: Container[str] | None, repair: bool) -> None:
        data = self.path.read_bytes()
        spans = list(_scan(data))
        counts = [_counts(record, keep) for _, _, record in spans]
        self.dropped = counts.count(False)
        tail = len(spans)  # the members after the last that counts: torn, or not finished
        while tail and not counts[tail - 1]:
            tail -= 1
        if repair:
            data, spans = self._repair(data, spans[:tail], tail < len(spans), keep)
        for start, end, record in spans[:tail]:
            if record is None:
                self.damaged.append(_damaged(data, start, end))
            elif _counts(record, keep):
                self._where[record["trial_id"]] = (start, end)  # the last one wins

    def _repair(
        self, data: bytes, spans: list, torn: bool, keep: Container[str] | None
    ) -> tuple[bytes, list]:
        """Cut the trailing members that do not count, and drop those of unfinished trials.

        A complete transcript of an unfinished trial amid the others is one whose results line
        was damaged after it was written: the trial is played again, and its replay leaves it
        one transcript. Damaged members stay as they are (named, not destroyed).
        """
        kept = [span for span in spans if span[2] is None or _counts(span[2], keep)]
        if len(kept) < len(spans):  # rare: rewritten whole, at once
            data = b"".join(data[start:end] for start, end, _ in kept)
            with atomic_writer(self.path, "wb") as handle:
                handle.write(data)
            return data, list(_scan(data))
        if torn:
            with open(self.path, "r+b") as handle:
                handle.truncate(spans[-1][1] if spans else 0)
                handle.flush()
                os.fsync(handle.fileno())
        return data, spans

    def damage_note(self) -> str | None:
        """One line naming the transcripts that cannot be read (``None`` if there are none)."""
        if not self.damaged:
            return None
        shown = "; ".join(self.damaged[:5])
        more = f"; and {len(self.damaged) - 5} more" if len(self.damaged) > 5 else ""
        return (
            f"{self.path}: {len(self.damaged)} damaged transcript(s) cannot be read ({shown}"
            f"{more}); their trials' results are intact in results.jsonl, only these "
            "transcripts are lost"
        )

    def __contains__(self, trial_id: object) -> bool:
        return trial_id in self._where

    def __len__(self) -> int:
        return len(self._where)

    def ids(self) -> list[str]:
        """Return the trial ids that have a transcript."""
        return list(self._where)

    @property
    def size_bytes(self) -> int:
        """The file's size on disk, in bytes (0 if it was never written)."""
        return self.path.stat().st_size if self.path.exists() else 0

    def stored_bytes(self, trial_id: str) -> int:
        """The bytes a trial's transcript takes in the file (its gzip member)."""
        start, end = self._where[trial_id]
        return end - start

    def append(self, record: dict[str, Any], sync: bool = True) -> bool:
        """Write one transcript and fsync it; return False (and write nothing) if its id is in.

        ``sync=False`` writes it without waiting for the disk (a killed process loses nothing;
        a machine that loses power may): the runner syncs a group of trials at once
        (:meth:`sync`).
        """
        trial_id = record.get("trial_id")
        if not isinstance(trial_id, str):
            raise ValueError("A transcript needs a string 'trial_id'.")
        if trial_id in self._where:
            return False
        member = gzip_member(record)
        with open(self.path, "ab") as handle:
            start = handle.tell()
            handle.write(member)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        self._where[trial_id] = (start, start + len(member))
        return True

    def sync(self) -> None:
        """Make every transcript written so far durable (after appends with ``sync=False``)."""
        if self.path.exists():
            with open(self.path, "ab") as handle:
                os.fsync(handle.fileno())

    def member(self, trial_id: str) -> bytes:
        """Return the gzip member of a trial's transcript, as stored.

        Raises:
            KeyError: If the trial has no transcript.
        """
        start, end = self._where[trial_id]
        with open(self.path, "rb") as handle:
            handle.seek(start)
            return handle.read(end - start)

    def read(self, trial_id: str) -> dict[str, Any]:
        """Return a trial's transcript.

        Raises:
            KeyError: If the trial has no transcript.
        """
        return json.loads(gzip.decompress(self.member(trial_id)))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for trial_id in self._where:
            yield self.read(trial_id)


def write_transcripts(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write a whole transcripts file at once (replaced atomically); return how many it holds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with atomic_writer(path, "wb") as handle:
        for record in records:
            handle.write(gzip_member(record))
            count += 1
    return count


def read_transcripts(path: str | Path) -> list[dict[str, Any]]:
    """Read every transcript of a file, in file order (torn or unreadable members skipped)."""
    return [r for _, _, r in _scan(Path(path).read_bytes()) if r is not None]

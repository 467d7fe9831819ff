"""Files replaced whole: a reader, a crash or a failed write sees the old file or the new one.

A report (``summary.md``, ``summary.csv``, a page, a plot, the metrics files) is rewritten at
every run; writing it in place would empty it the moment the write starts, and a write that
fails halfway (a full disk, text that cannot be encoded) would leave it empty or cut. Each is
written to a fresh file beside it, synced, then renamed over it (``os.replace``, atomic on
POSIX and Windows); on failure the fresh file is removed and the old one is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_writer", "write_atomic"]


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w", **options: Any) -> Iterator[IO[Any]]:
    """Open a fresh file to write ``path`` with; it replaces ``path`` once the block ends.

    Args:
        path: The file to replace (or create).
        mode: ``"w"`` (text) or ``"wb"`` (bytes).
        **options: Given to :func:`open` (``encoding``, ``newline``); text is UTF-8 by default.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "a.txt"
        >>> with atomic_writer(path) as out:
        ...     _ = out.write("whole")
        >>> path.read_text()
        'whole'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_writer writes a new file: mode 'w' or 'wb', not {mode!r}.")
    path = Path(path)
    if mode == "w":
        options.setdefault("encoding", "utf-8")
    # a name of its own per writer: two processes writing one report never share a partial file
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.partial")
    try:
        with open(partial, mode, **options) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Replace ``path`` with ``data`` (text as UTF-8) at once; return the path.

    Raises:
        UnicodeEncodeError: If the text cannot be written as UTF-8 (``path`` is left as it was).
    """
    with atomic_writer(path, "wb" if isinstance(data, bytes) else "w") as handle:
        handle.write(data)
    return Path(path)

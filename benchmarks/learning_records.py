"""The committed run records of docs/learning.md: where they live, and how a run's record is kept.

A run writes its record under ``runs/`` (``--out``, git-ignored: a run's folder also holds its
trainer's output). The records the page's tables are computed from are committed beside the page,
one small JSON a run, at ``docs/learning/records/PART/NAME/seedN.json`` (the same layout as a run
folder's): ``learning keep`` copies a run folder's records there in compact form (keys sorted,
no indentation), and ``learning report`` reads them by default, so anyone can recompute the
page's tables from a clean clone (``tests/test_learning_records.py`` does, and compares them with
the page). Runs that share names with others keep a set of their own
(``docs/learning-150/records``); :func:`record_sets` lists them all.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["RECORDS", "NoRecords", "compact", "keep", "record_sets"]

RECORDS = Path("docs/learning/records")
"""The committed records of most runs, relative to the repository root (``keep``'s default)."""


def record_sets(root: Path = Path(".")) -> list[Path]:
    """Every committed record set under ``root``: ``docs/learning*/records``, sorted.

    Runs of the same name and other settings keep apart in a folder of their own
    (``docs/learning-150/records``: the 150-step runs); a set's figures go in its parent folder.
    """
    return sorted(path.relative_to(root) for path in root.glob("docs/learning*/records"))


class NoRecords(Exception):
    """A report was asked of a folder that holds no run records."""


def compact(record: dict) -> str:
    """A record as the committed file holds it: one line of JSON, keys sorted, a newline.

    Example:
        >>> compact({"seed": 0, "part": "robustness", "curve": [{"step": 0, "value": -0.5}]})
        '{"curve":[{"step":0,"value":-0.5}],"part":"robustness","seed":0}'
    """
    return json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False)


def keep(source: Path, records: Path = RECORDS) -> list[Path]:
    """Copy every run record under ``source`` (``PART/NAME/seedN.json``) into ``records``.

    Returns:
        The files written, in order.

    Raises:
        NoRecords: If ``source`` holds no run record.
        ValueError: If a file is not a run record (JSON with ``part`` and ``seed``), naming it.
    """
    paths = sorted(source.glob("*/*/seed*.json"))
    if not paths:
        raise NoRecords(f"No run records under {source} (PART/NAME/seedN.json): nothing to keep.")
    written = []
    for path in paths:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{path}: not a run record ({error}).") from None
        if not isinstance(record, dict) or not {"part", "seed"} <= record.keys():
            raise ValueError(f"{path}: not a run record (it needs part and seed).")
        target = records / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(compact(record) + "\n", encoding="utf-8")
        written.append(target)
    return written

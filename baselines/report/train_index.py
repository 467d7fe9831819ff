"""``index.html`` of a training folder: the curves, the evaluations, and their sampled trials.

Written next to ``curves.png`` at the end of ``python -m baselines.run train`` and rebuilt by
``python -m baselines.run report OUT``. It is the run page of :mod:`baselines.report.html_page`: a
table of every evaluation's figures (from ``metrics.jsonl``), ``curves.png``, and a trial browser
over the transcripts each evaluation kept (``transcripts/eval-step-N.jsonl.gz``, the first trials
per opponent: :mod:`mage_agents.training.eval_transcripts`), filtered by step and opponent.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

from baselines.report.html_page import png_data_uri, write_page
from mage_agents.rollout import TranscriptFile
from mage_agents.training.eval_transcripts import TRANSCRIPTS_DIR

__all__ = ["write_training_index", "training_page", "evaluation_table"]

_STEP = re.compile(r"eval-step-(\d+)\.jsonl\.gz$")

TRIAL_COLUMNS = ["trial", "step", "opponent", "seat", "task", "attempts", "returns", "solved at"]
TRIAL_COLUMNS.append("invalid")


def _history(folder: Path) -> list[dict[str, Any]]:
    path = folder / "metrics.jsonl"
    if not path.exists():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line being written
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def _number(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


LEADING_FIGURES = (
    "eval/exact/mean_value",
    "eval/exact/exploitability",
    "eval/trial/final_return",
    "eval/trial/pass@1",
    "eval/trial/invalid_rate",
)
"""The evaluation figures a reader looks for first: leftmost, ahead of the per-card details,
so that a 1400 px screen shows them without scrolling."""


def evaluation_table(history: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The table of every logged evaluation: its step, the leading figures, each other one."""
    rows = [e for e in history if any(k.startswith("eval/") for k in e)]
    if not rows:
        return None
    logged = {k for e in rows for k in e if k.startswith("eval/")}
    names = [n for n in LEADING_FIGURES if n in logged]
    names += sorted(logged.difference(LEADING_FIGURES))
    cells = [[str(e.get("step", "-"))] + [_number(e.get(n, "-")) for n in names] for e in rows]
    columns = ["step"] + [n.removeprefix("eval/") for n in names]
    return {"title": "Evaluations", "columns": columns, "rows": cells, "note": ""}


def _trial_row(step: int, record: dict[str, Any]) -> dict[str, Any]:
    result = record.get("result") or {}
    seats = [s for s in result.get("seats") or [] if s is not None]
    opponents = [o for o in result.get("opponents") or [] if o is not None]
    opponent = str(opponents[0]) if opponents else str(record.get("opponent") or "default")
    at = result.get("solved_at")
    solved_at = "not solved" if at is None else f"attempt {at + 1}"
    returns = ", ".join(f"{r:+g}" for r in result.get("returns") or [])
    played = f"{len(result.get('returns') or [])}/{result.get('num_episodes', '-')}"
    cells = [record["trial_id"], str(step), opponent, seats[0] if seats else "-"]
    cells += [str(record.get("task_seed", "-")), played, returns, solved_at]
    cells.append(str(result.get("invalid_actions", 0)))
    filters = {"step": str(step), "opponent": opponent, "seat": seats[0] if seats else "-"}
    filters |= {"solved": "no" if at is None else "yes", "solved at": solved_at}
    return {"id": record["trial_id"], "cells": cells, "filters": filters}


def _sampled_trials(folder: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    rows, embedded = [], {}
    files = sorted((folder / TRANSCRIPTS_DIR).glob("eval-step-*.jsonl.gz"))
    for path in files:
        found = _STEP.search(path.name)
        if found is None:
            continue
        store = TranscriptFile(path, repair=False)
        for trial_id in store.ids():
            rows.append(_trial_row(int(found.group(1)), store.read(trial_id)))
            embedded[trial_id] = base64.b64encode(store.member(trial_id)).decode("ascii")
    return rows, embedded


def training_page(folder: str | Path, title: str | None = None) -> dict[str, Any]:
    """Return the data of a training folder's ``index.html``."""
    folder = Path(folder)
    history = _history(folder)
    rows, embedded = _sampled_trials(folder)
    steps = sorted({int(r["filters"]["step"]) for r in rows})
    notes = [f"{len(history)} logged entries in metrics.jsonl."]
    notes.append(
        f"{len(rows)} sampled evaluation trials at {len(steps)} evaluations "
        f"(the first trials per opponent, from {TRANSCRIPTS_DIR}/)."
        if rows
        else "No evaluation transcripts (evaluation_steps=0 or evaluation_transcripts=0)."
    )
    table = evaluation_table(history)
    curves = folder / "curves.png"
    images = []
    if curves.exists():
        src = png_data_uri(curves.read_bytes())
        images.append({"title": "Learning curves", "src": src, "wide": True})
    filters = ["step", "opponent", "seat", "solved", "solved at"]
    trials = {"columns": TRIAL_COLUMNS, "filters": filters, "rows": rows}
    trials["text_columns"] = [0, 2, 3, 7]
    files = ["curves.png", "metrics.csv", "metrics.jsonl", "config.yaml"]
    links = [{"title": name, "href": name} for name in files if (folder / name).exists()]
    for path in sorted((folder / TRANSCRIPTS_DIR).glob("eval-step-*.jsonl.gz")):
        href = f"{TRANSCRIPTS_DIR}/{path.name}"
        links.append({"title": href, "href": href})
    return {
        "title": title or f"Training: {folder}",
        "notes": notes,
        "links": links,
        "tables": [table] if table else [],
        "images": images,
        "trials": trials,
        "transcripts": embedded,
        "transcripts_note": "Click a trial to read it; filter by evaluation step and opponent.",
    }


def write_training_index(folder: str | Path, title: str | None = None) -> Path:
    """Write ``index.html`` into a training output folder; return its path."""
    return write_page(Path(folder) / "index.html", training_page(folder, title))

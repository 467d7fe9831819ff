"""``summary.html``: a run's tables, plots and every trial's transcript, in one static page.

The tables are those of ``summary.md`` (the main one, per opponent played, per seat of the final
attempt, diversity, failed trials), sortable by any column; the plots are ``summary.md``'s; the
trial browser lists every finished trial with filters (agent, env, opponent, seat, solved or
not, the attempt that solved it) and opens its transcript: the attempts side by side, the
reflections highlighted, invalid answers marked with the env's reason, the reward of every step,
and apart, what the agent was not shown. See :mod:`baselines.report.html_page` for the page itself.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from baselines.report.achievable import achievable_interval
from baselines.report.failures import reason_counts
from baselines.report.html_page import png_data_uri, write_page
from baselines.report.summary import GroupSummary, summarize
from baselines.report.tables import BREAKDOWNS, table_cells
from mage_agents.rollout import TranscriptFile

__all__ = [
    "MAX_EMBEDDED_BYTES",
    "summary_page",
    "write_summary_html",
    "trial_rows",
    "transcripts_note",
    "embed_transcripts",
]

MAX_EMBEDDED_BYTES = 64 * 2**20
"""Compressed transcripts one page carries at most; the trials after that are listed without."""

TRIAL_COLUMNS = ["trial", "agent", "env", "opponent", "seat", "task", "repeat", "attempts"]
TRIAL_COLUMNS += ["returns", "solved at", "invalid", "tokens"]

TEXT = [0, 1, 2, 3, 4, 9]  # the columns of words (left-aligned, sorted as text)

TRIAL_FILTERS = ["agent", "env", "opponent", "seat", "solved", "solved at"]
"""The trial browser's filters (each a field of a row's ``filters``)."""


def _solved_at(trial: dict[str, Any]) -> str:
    at = trial.get("solved_at")
    return "not solved" if at is None else f"attempt {at + 1}"


def _opponent(record: dict[str, Any]) -> str:
    played = [o for o in (record["trial"].get("opponents") or []) if o is not None]
    if played:
        return " / ".join(dict.fromkeys(str(o) for o in played))  # a population: who was drawn
    return "default" if record.get("opponent") is None else str(record["opponent"])


def trial_rows(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Return the trial browser's rows of finished records (:mod:`baselines.report.html_page`)."""
    rows = []
    for record in records:
        trial = record["trial"]
        returns = ", ".join(f"{r:+g}" for r in trial["returns"])
        tokens = record.get("prompt_tokens", 0) + record.get("completion_tokens", 0)
        opponent = _opponent(record)
        seats = [s for s in trial.get("seats") or [] if s is not None]
        seat = " / ".join(dict.fromkeys(seats)) if seats else "-"  # a rotation: both
        cells = [record["trial_id"], str(record["agent"]), record["env_id"], opponent, seat]
        cells += [str(record.get("task_seed", "-")), str(record.get("repeat", "-"))]
        cells += [f"{len(trial['returns'])}/{trial['num_episodes']}", returns, _solved_at(trial)]
        cells += [str(record.get("invalid_steps", 0)), f"{tokens:,}"]
        filters = {"agent": str(record["agent"]), "env": record["env_id"], "opponent": opponent}
        filters["seat"] = seat
        filters["solved"] = "yes" if trial.get("solved_at") is not None else "no"
        filters["solved at"] = _solved_at(trial)
        rows.append({"id": record["trial_id"], "cells": cells, "filters": filters})
    return {"columns": TRIAL_COLUMNS, "filters": TRIAL_FILTERS, "rows": rows, "text_columns": TEXT}


def _table(title: str, summaries: Sequence[GroupSummary], note: str = "") -> dict[str, Any]:
    columns, rows = table_cells(summaries)
    keys = len(summaries[0].key) if summaries else 0
    return {
        "title": title,
        "columns": columns,
        "rows": rows,
        "note": note,
        "text_columns": list(range(keys)),
    }


def _diversity_table(summaries: Sequence[GroupSummary]) -> dict[str, Any] | None:
    shown = [s for s in summaries if s.diversity]
    if not shown:
        return None
    keys = list(shown[0].key)
    rows = []
    for s in shown:
        d = s.diversity
        figures = [d["distinct_share"], d["sequence_entropy"], d["action_entropy"]]
        key = [str(v) if v is not None else "default" for v in s.key.values()]
        rows.append([*key, str(d["tasks"]), *(f"{v:.2f}" for v in figures)])
    columns = [*keys, "tasks", "distinct sequences", "sequence entropy (bits)"]
    columns.append("action entropy (bits)")
    title = "Diversity across trials of the same task"
    return {
        "title": title,
        "columns": columns,
        "rows": rows,
        "text_columns": list(range(len(keys))),
    }


def _failed_table(failed: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    if not failed:
        return None
    groups: dict[tuple[str, str, str], int] = {}
    for r in failed:
        key = (str(r.get("agent")), str(r.get("env_id")), str(r.get("opponent") or "default"))
        groups[key] = groups.get(key, 0) + 1
    reasons = "; ".join(f"{why} ({n}x)" for why, n in reason_counts(failed).most_common(3))
    return {
        "title": "Failed trials (not in the figures)",
        "columns": ["agent", "env", "opponent", "failed trials"],
        "rows": [[*key, str(n)] for key, n in groups.items()],
        "note": f"The backend gave no answer; the same command plays them again. {reasons}",
        "text_columns": [0, 1, 2],
    }


NOTE = (
    "Rates: value [95% Wilson interval]. Means: value ± 95% Student-t half-width over trials. "
    "pass@k: solved in any of the first k attempts; W/D/L: sign of the final attempt."
)


def summary_tables(
    summaries: Sequence[GroupSummary],
    records: Sequence[dict[str, Any]],
    failed: Sequence[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """Return the page's tables: ``summary.md``'s, each sortable."""
    tables = [_table("Results", summaries, NOTE)]
    for heading, key in BREAKDOWNS.items():
        tables.append(_table(heading.capitalize(), summarize(records, key, achievable_interval)))
    extra = [_diversity_table(summaries), _failed_table(failed)]
    return tables + [t for t in extra if t is not None]


def _kilobytes(size: int) -> str:
    return f"{size / 1024:,.1f} KB" if size < 2**20 else f"{size / 2**20:,.1f} MB"


def transcripts_note(store: TranscriptFile | None, records: Sequence[dict[str, Any]]) -> str:
    """One line on the transcripts of ``records``: how many, and the bytes they take on disk."""
    kept = [r["trial_id"] for r in records if store is not None and r["trial_id"] in store]
    if not kept:
        return "Transcripts: none (--no-transcripts, or trials of an older version)."
    size = sum(store.stored_bytes(trial_id) for trial_id in kept)
    damaged = ""
    if store.damaged:  # named in full on stderr; here the first few
        damaged = f" {len(store.damaged)} damaged: {'; '.join(store.damaged[:3])}."
    return (
        f"Transcripts: {len(kept)} of {len(records)} trials in {store.path.name} "
        f"({_kilobytes(size)}, {_kilobytes(size // len(kept))} per trial).{damaged}"
    )


def embed_transcripts(
    store: TranscriptFile | None, ids: Sequence[str], budget: int = MAX_EMBEDDED_BYTES
) -> tuple[dict[str, str], int]:
    """Return trial id -> base64 gzip member for ``ids`` in order, within ``budget`` bytes.

    Returns:
        The embedded transcripts and how many of ``ids`` with a transcript were left out.
    """
    embedded: dict[str, str] = {}
    left_out, used = 0, 0
    for trial_id in ids:
        if store is None or trial_id not in store:
            continue
        member = store.member(trial_id)
        if used + len(member) > budget:
            left_out += 1
            continue
        used += len(member)
        embedded[trial_id] = base64.b64encode(member).decode("ascii")
    return embedded, left_out


def summary_page(
    title: str,
    summaries: Sequence[GroupSummary],
    records: Sequence[dict[str, Any]],
    failed: Sequence[dict[str, Any]] = (),
    transcripts: TranscriptFile | None = None,
    images: Sequence[tuple[str, str, bytes]] = (),
) -> dict[str, Any]:
    """Return the data of a run's ``summary.html`` (see :mod:`baselines.report.html_page`)."""
    ids = [r["trial_id"] for r in records]
    embedded, left_out = embed_transcripts(transcripts, ids)
    notes = [f"{len(records)} finished trials.", transcripts_note(transcripts, records)]
    if failed:
        notes.append(f"{len(failed)} failed trials are not in the figures (see below).")
    if left_out:
        notes.append(
            f"{left_out} transcripts are not in this page (over {_kilobytes(MAX_EMBEDDED_BYTES)}"
            "); read them from transcripts.jsonl.gz."
        )
    files = ["results.jsonl", "summary.md", "summary.csv"]
    if transcripts is not None:
        files.insert(1, transcripts.path.name)
    return {
        "title": title,
        "notes": notes,
        "links": [{"title": name, "href": name} for name in files],
        "tables": summary_tables(summaries, records, failed),
        "images": [{"title": t, "src": png_data_uri(png)} for _, t, png in images],
        "trials": trial_rows(records),
        "transcripts": embedded,
        "transcripts_note": "Click a trial to read it.",
        "no_transcript_note": "no transcript in this page: the run kept none for it "
        "(--no-transcripts, an older version, or the page's size bound).",
    }


def write_summary_html(path: str | Path, data: dict[str, Any]) -> Path:
    """Write ``summary.html`` from :func:`summary_page`'s data; return its path."""
    return write_page(path, data)

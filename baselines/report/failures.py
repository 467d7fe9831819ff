"""How trials that could not be played are reported: counted per group, with their reasons.

A failed trial is an incomplete record (``"incomplete": true``): the backend gave no answer to one
of its steps. It is never part of the figures; the same command again plays it again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from baselines.report.tables import markdown_cell

__all__ = ["failure_lines", "failure_markdown", "reason_counts"]

REASONS_SHOWN = 3
"""Distinct reasons listed in a report (the most frequent first)."""


def reason_counts(failed: Sequence[dict[str, Any]]) -> Counter[str]:
    """Count the trials per failure reason: the last error of each trial.

    Example:
        >>> reason_counts([{"errors": ["HTTP 500 after 5 attempts"]}, {"errors": []}])
        Counter({'HTTP 500 after 5 attempts': 1, 'unknown': 1})
    """
    return Counter((record.get("errors") or ["unknown"])[-1] for record in failed)


def _reasons_text(failed: Sequence[dict[str, Any]]) -> str:
    counts = reason_counts(failed).most_common()
    shown = [f"{reason} ({n}x)" for reason, n in counts[:REASONS_SHOWN]]
    if len(counts) > REASONS_SHOWN:
        shown.append(f"{len(counts) - REASONS_SHOWN} other reasons")
    return "; ".join(shown)


def _groups(failed: Sequence[dict[str, Any]]) -> Counter[tuple[str, str, str]]:
    return Counter(
        (str(r.get("agent")), str(r.get("env_id")), str(r.get("opponent") or "default"))
        for r in failed
    )


def failure_lines(failed: Sequence[dict[str, Any]], unplayed: int = 0) -> list[str]:
    """Return the console lines about failed (and, after a stop, unplayed) trials.

    Args:
        failed: The incomplete records of this run's plan.
        unplayed: Trials not started because the run stopped on repeated failures.
    """
    if not failed and not unplayed:
        return []
    faults = sum(r.get("faults", 0) for r in failed)
    lines = [
        f"{len(failed)} trials failed: the backend gave no answer ({faults} failed requests); "
        "they are not in the figures."
    ]
    lines += [
        f"  {n} x {agent} on {env} vs {opp}" for (agent, env, opp), n in _groups(failed).items()
    ]
    if failed:
        lines.append(f"  reasons: {_reasons_text(failed)}")
    if unplayed:
        lines.append(f"{unplayed} trials were not started: the run stopped on repeated failures.")
    lines.append("They are saved as incomplete: run the same command again to play them.")
    return lines


def failure_markdown(failed: Sequence[dict[str, Any]]) -> str:
    """Return the ``summary.md`` section listing the failed trials (empty if none)."""
    if not failed:
        return ""
    rows = [
        f"| {' | '.join(map(markdown_cell, key))} | {n} |" for key, n in _groups(failed).items()
    ]
    return "\n".join(
        [
            "## Failed trials (not in the figures)",
            "",
            "The backend gave no answer to a step of these trials (connection, timeout or server "
            "errors after the retries). They are in `results.jsonl` marked `incomplete` and are "
            "played again by the same command.",
            "",
            "| agent | env | opponent | failed trials |",
            "|---|---|---|---|",
            *rows,
            "",
            f"Reasons: {_reasons_text(failed)}.",
        ]
    )

"""What a run shows and writes: the console table, and the output folder's reports.

:func:`report` prints the table of :mod:`baselines.report.summary` (and what failed) and, with
``out``, writes ``summary.md``, ``summary.csv``, the plots and ``summary.html`` (one per config, see
:mod:`baselines.outdir`). The run itself is :mod:`baselines.run`.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from baselines.errors import print_warning
from baselines.outdir import TRANSCRIPTS_FILE, config_marker, keep_summaries
from baselines.report.achievable import achievable_interval
from baselines.report.failures import failure_lines, failure_markdown
from baselines.report.summary import summarize
from baselines.report.summary_html import summary_page, transcripts_note, write_summary_html
from baselines.report.tables import console_table, markdown_report, plot_images, write_csv
from baselines.settings import RunSettings
from mage_agents.atomic_file import write_atomic
from mage_agents.rollout import TranscriptFile

__all__ = ["Outcome", "report", "print_failures", "backend_notes"]


@dataclass
class Outcome:
    """What a run played.

    Attributes:
        records: The finished trials (old and new), the figures' input.
        failed: The trials the backend failed (incomplete records, replayed by the next run).
        unplayed: Trials not started because the run stopped on repeated failures.
        prefixes: The trial-id prefixes planned (see :mod:`baselines.outdir`).
        config: The id of this run's config (its prefixes).
        other_configs: Whether the results file also holds trials of other configs.
        transcripts: The run folder's transcripts (``None`` without ``out`` or without any).
    """

    records: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    unplayed: int = 0
    prefixes: set[str] = field(default_factory=set)
    config: str = ""
    other_configs: bool = False
    transcripts: TranscriptFile | None = None


def report(settings: RunSettings, outcome: Outcome, console: Console) -> None:
    """Print the table and, with ``out``, write the summaries, plots and ``summary.html``."""
    records = outcome.records
    summaries = summarize(records, achievable=achievable_interval)
    console.print(console_table(summaries, settings.title))
    failed = sum(s.failed_steps for s in summaries)
    if failed:
        errors = next(r["errors"][0] for r in records if r["errors"])
        console.print(
            f"[yellow]{failed} failed steps (e.g. {escape(errors)}); see results.jsonl.[/]",
            highlight=False,
        )
    retried = sum(r.get("faults", 0) for r in records)
    if retried:
        console.print(
            f"[yellow]{retried} backend requests failed and were retried in finished trials "
            "(count per trial: faults in results.jsonl).[/]",
            highlight=False,
        )
    print_failures(outcome, console)
    for line in backend_notes(records):
        console.print(f"[yellow]{escape(line)}[/]", highlight=False)
    if settings.out:
        _write_folder(settings, outcome, summaries, console)


def _write_folder(
    settings: RunSettings, outcome: Outcome, summaries: list, console: Console
) -> None:
    """Write summary.md, summary.csv, the plots and summary.html into the output folder."""
    out, records = Path(settings.out), outcome.records
    text = markdown_report(summaries, records, settings.title).rstrip("\n") + "\n"
    notes = backend_notes(records)
    if notes:
        text += "\n## Backend notes\n\n" + "\n".join(f"- {line}" for line in notes) + "\n"
    if outcome.failed:
        text += "\n" + failure_markdown(outcome.failed) + "\n"
    note = transcripts_note(outcome.transcripts, records)
    text += f"\n{note} Open summary.html in a browser to read them.\n"
    text += "\n" + config_marker(outcome.config) + "\n"
    names = ["summary.md", "summary.csv", "summary.html"]
    if outcome.other_configs:  # one summary per config: keep the last one's before overwriting
        keep_summaries(out, outcome.config)
        names += [f"summary-{outcome.config}.{kind}" for kind in ("md", "csv", "html")]
        console.print(
            f"{out}/results.jsonl also holds trials of other configs: summary.md and "
            f"summary-{outcome.config}.md are this run's (config {outcome.config}); the others' "
            "are kept as summary-<config>.md.",
            highlight=False,
        )
    for name in names[::3]:
        write_atomic(out / name, text)
    for name in names[1::3]:
        write_csv(summaries, out / name)
    images = _plots(settings, summaries, records, console)
    for name, _, png in images:
        write_atomic(out / name, png)
    page = summary_page(
        settings.title, summaries, records, outcome.failed, outcome.transcripts, images
    )
    for name in names[2::3]:
        write_summary_html(out / name, page)
    kept = [TRANSCRIPTS_FILE] if outcome.transcripts is not None else []
    written = ["results.jsonl", *kept, *names, *(n for n, _, _ in images)]
    console.print(f"Wrote {', '.join(written)} to {out}.")
    console.print(f"{note} Open {out / 'summary.html'} in a browser to read them.", highlight=False)


def _plots(
    settings: RunSettings, summaries: list, records: list, console: Console
) -> list[tuple[str, str, bytes]]:
    """The plots as ``(file name, title, PNG)``; none without matplotlib or with --no-plots."""
    if not settings.plots:
        return []
    if importlib.util.find_spec("matplotlib") is None:
        console.print("No plots: matplotlib is missing (pip install 'mage-metarl[plots]').")
        return []
    return plot_images(summaries, records)


def backend_notes(records: list[dict[str, Any]]) -> list[str]:
    """One line per agent and note: what a backend could not do as asked, and did instead."""
    seen: dict[tuple[str, str], None] = {}
    for record in records:
        for note in record.get("backend_notes") or []:
            seen[(str(record.get("agent")), str(note))] = None
    return [f"{agent}: {note}" for agent, note in seen]


def print_failures(outcome: Outcome, console: Console) -> None:
    """Print the lines about the trials the backend failed (and those not started)."""
    for line in failure_lines(outcome.failed, outcome.unplayed):
        print_warning(line, "red")  # on stderr, with the errors

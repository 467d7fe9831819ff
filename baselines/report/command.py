"""``python -m baselines.run report DIR``: rebuild a folder's report page from its files.

- A run folder (``results.jsonl``): ``summary.html`` from ``results.jsonl`` and, where present,
  ``transcripts.jsonl.gz`` (a run made before transcripts existed, or with ``--no-transcripts``,
  gets the tables and plots alone). The page covers every trial of the folder: when trials of
  several configs share an agent, env and opponent, the agent is named with its config (the
  settings part of its trial ids), so that no figure mixes two configs.
- A training folder (``metrics.jsonl``): ``index.html`` (:mod:`baselines.report.train_index`).

The files are only read (a run may still be writing them): a torn last line or member is
skipped, not repaired.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections import defaultdict
from pathlib import Path
from typing import Any

from baselines.errors import (
    EXIT_OK,
    EXIT_SETTINGS,
    SETTINGS_ERRORS,
    print_error,
    print_warning,
    settings_error,
)
from baselines.outdir import TRANSCRIPTS_FILE, trial_prefix
from baselines.report.achievable import achievable_interval
from baselines.report.summary import summarize
from baselines.report.summary_html import summary_page, write_summary_html
from baselines.report.tables import plot_images
from baselines.results import ResultsFile, missing_fields
from baselines.run_flags import add_import_option
from baselines.settings import text_setting
from mage_agents.rollout import TranscriptFile

__all__ = ["main", "rebuild_run_page", "config_labelled"]


def describe(parser: argparse.ArgumentParser) -> None:
    """Give ``report``'s parser the page its ``--help`` shows."""
    parser.description = __doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``report`` to ``parser``."""
    parser.add_argument("folder", type=Path, help="a run folder (--out) or a training folder")
    parser.add_argument("--title", help="the page's title (default: summary.md's, or the folder)")
    parser.add_argument("--no-plots", action="store_false", dest="plots", help="skip the plots")
    add_import_option(parser.add_argument)


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``report``."""
    parser = argparse.ArgumentParser(
        prog="python -m baselines.run report", formatter_class=argparse.RawDescriptionHelpFormatter
    )
    describe(parser)
    add_arguments(parser)
    return parser


def config_labelled(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the records, each agent named with its config where configs would share a row.

    Example:
        >>> recs = [{"trial_id": f"a|e|None|n{n}|h{n}|task0|r0", "agent": "a", "env_id": "e",
        ...          "opponent": None} for n in (2, 3)]
        >>> [r["agent"] for r in config_labelled(recs)]
        ['a (n2|h2)', 'a (n3|h3)']
    """
    configs: dict[tuple, set[str]] = defaultdict(set)
    for r in records:
        configs[(r["agent"], r["env_id"], r["opponent"])].add(trial_prefix(r["trial_id"]))
    labelled = []
    for r in records:
        if len(configs[(r["agent"], r["env_id"], r["opponent"])]) > 1:
            settings = "|".join(trial_prefix(r["trial_id"]).split("|")[-2:])
            r = {**r, "agent": f"{r['agent']} ({settings})"}
        labelled.append(r)
    return labelled


def _title(folder: Path) -> str:
    summary = folder / "summary.md"
    if summary.exists():
        first = summary.read_text(errors="replace").split("\n", 1)[0]
        if first.startswith("# "):
            return first[2:].strip()
    return f"Evaluation: {folder}"


def rebuild_run_page(folder: str | Path, title: str | None = None, plots: bool = True) -> Path:
    """Write ``summary.html`` of a run folder from its files; return its path.

    Raises:
        ValueError: If a record lacks fields the reports read (an older format).
    """
    folder = Path(folder)
    results = ResultsFile(folder / "results.jsonl", repair=False)
    if not results.records() and not results.failed():
        lines = len(results.damaged)
        damaged = f" ({lines} line{'s' * (lines != 1)}, none a trial record)" if lines else ""
        raise ValueError(
            f"{results.path} holds no trial{damaged}: nothing to report. A run writes it "
            "(python -m baselines.run --out FOLDER); a damaged file is read line by line."
        )
    damage = results.damage_note()
    if damage:
        print_warning(f"{damage}; the page leaves out the trials recorded only there.")
    for record in results.records():
        missing = missing_fields(record)
        if missing:
            raise ValueError(
                f"{results.path}: the record of trial {record['trial_id']!r} lacks "
                f"{', '.join(missing)} (written by an older version?)."
            )
    records = config_labelled(results.records())
    transcripts = None
    if (folder / TRANSCRIPTS_FILE).exists():
        keep = results.finished()
        transcripts = TranscriptFile(folder / TRANSCRIPTS_FILE, keep, repair=False)
        damage = transcripts.damage_note()
        if damage:
            print_warning(f"{damage}.")
    summaries = summarize(records, achievable=achievable_interval)
    images = []
    if plots and records and importlib.util.find_spec("matplotlib") is not None:
        images = plot_images(summaries, records)
    page = summary_page(
        title or _title(folder), summaries, records, results.failed(), transcripts, images
    )
    return write_summary_html(folder / "summary.html", page)


def command(args: argparse.Namespace, argv: list[str] | None = None) -> int:
    """Run ``report``; return the exit code (2 when the folder is none of the two kinds)."""
    folder: Path = args.folder
    try:
        if args.title is not None:
            text_setting("--title", args.title)
        if (folder / "results.jsonl").is_file():
            path = rebuild_run_page(folder, args.title, args.plots)
        elif (folder / "metrics.jsonl").is_file():
            from baselines.report.train_index import write_training_index

            path = write_training_index(folder, args.title)
        else:
            print_error(
                f"{folder} is neither a run folder (no results.jsonl) nor a training folder "
                "(no metrics.jsonl)."
            )
            return EXIT_SETTINGS
    except SETTINGS_ERRORS as error:
        return settings_error(error)
    print(f"Wrote {path}; open it in a browser.")
    return EXIT_OK


def main(argv: list[str]) -> int:
    """Run ``report`` from its own arguments (``python -m baselines.run report`` is the way)."""
    return command(build_parser().parse_args(argv), argv)

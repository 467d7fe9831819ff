"""docs/learning.md against its committed run records: every table they make is the page's.

``learning report`` recomputes the tables from ``docs/learning/records`` and any other
``docs/learning*/records`` folder (one compact JSON a run); each must appear on the page as it
is, so the page cannot drift from its records. Every
other table of the page sits in a section that says it is not yet backed by committed records
(with the command that makes them), or holds no measured figure; and no section whose tables the
records make still says it is not backed (a section backed since must lose its mark).
"""

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from benchmarks.learning_records import RECORDS, compact  # noqa: E402
from benchmarks.learning_report import report  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "learning.md"
RECORD_SETS = sorted(ROOT.glob("docs/learning*/records"))
UNBACKED = "Not yet backed by committed records"
NO_FIGURES = {"| setting | value | why |"}
"""Header rows of the page's tables that hold settings, not measured figures."""


def tables(markdown):
    """Each Markdown table of ``markdown`` (its lines, joined), with the line it starts at."""
    found, lines = [], markdown.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("|") and (number == 0 or not lines[number - 1].startswith("|")):
            end = number
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            found.append((number, "\n".join(lines[number:end])))
    return found


def section_before(lines, number):
    """The page's text from the heading above line ``number`` down to it (a ``#`` comment in
    a fenced code block is no heading)."""
    start, fenced = 0, False
    for i in range(number):
        fenced ^= lines[i].startswith("```")
        if not fenced and re.match(r"#{1,4} ", lines[i]):
            start = i
    return "\n".join(lines[start:number])


def made_tables(tmp_path):
    """Every table the committed records make (the figures drawn under ``tmp_path``)."""
    made = []
    for records in RECORD_SETS:
        made += [t for _, t in tables(report(records, tmp_path / records.parent.name))]
    return made


def test_the_committed_records_are_compact_json_one_small_file_a_run():
    assert ROOT / RECORDS in RECORD_SETS
    paths = sorted(p for records in RECORD_SETS for p in records.glob("*/*/seed*.json"))
    assert paths, f"no committed records under {RECORDS}"
    for path in paths:
        text = path.read_text(encoding="utf-8")
        record = json.loads(text)
        assert text == compact(record) + "\n" and len(text) < 16_000, path
        assert path.stem == f"seed{record['seed']}" and path.parts[-3] == record["part"]


def test_every_table_the_records_make_is_on_the_page_as_it_is(tmp_path):
    page = PAGE.read_text(encoding="utf-8")
    on_page = {table for _, table in tables(page)}
    made = made_tables(tmp_path)
    assert made, "the committed records make no table"
    for table in made:
        assert table in on_page, f"the records make a table the page does not show:\n{table}"


def test_every_other_table_of_the_page_says_it_is_not_yet_backed(tmp_path):
    page = PAGE.read_text(encoding="utf-8")
    lines = page.splitlines()
    made = set(made_tables(tmp_path))
    for number, table in tables(page):
        if table in made or table.splitlines()[0] in NO_FIGURES:
            continue
        assert UNBACKED in section_before(lines, number), (
            f"docs/learning.md line {number + 1}: a table neither made by the committed records "
            f"nor in a section marked '{UNBACKED}'"
        )


def test_no_table_the_records_make_sits_under_a_not_yet_backed_mark(tmp_path):
    page = PAGE.read_text(encoding="utf-8")
    lines = page.splitlines()
    made = set(made_tables(tmp_path))
    for number, table in tables(page):
        if table in made:
            assert UNBACKED not in section_before(lines, number), (
                f"docs/learning.md line {number + 1}: a table the committed records make, in a "
                f"section still marked '{UNBACKED}'"
            )

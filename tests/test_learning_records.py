"""docs/learning.md against its committed run records: every figure it reports, they make.

``learning report`` recomputes the tables from every committed record set
(``docs/learning*/records``, one compact JSON a run); each must appear on the page as it is, so
the page cannot drift from its records, and so must every interval the page quotes
("+0.233 ± 0.184"), in its text or in the hand-written summary table. A table of the page is
made by the records, a summary quoting their intervals, or a table of settings; there is no
other kind: a run without committed records is not reported.
"""

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from benchmarks.learning_records import RECORDS, compact, record_sets  # noqa: E402
from benchmarks.learning_report import report  # noqa: E402
from tests.markdown_tables import tables  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "learning.md"
RECORD_SETS = [ROOT / records for records in record_sets(ROOT)]
NO_FIGURES = {"| setting | value | why |"}
"""Header rows of the page's tables that hold settings, not measured figures."""
INTERVAL = re.compile(r"[+-]?\d+(?:\.\d+)?%? ± \d+(?:\.\d+)?%?")
"""A figure with its 95% interval, as the reports print it ("+0.233 ± 0.184", "0.42 ± 0.30")."""
MAX_RECORD = 64_000
"""Characters of a committed record: a 150-step part 2 run scored every 5 steps is ~40,000."""


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The report of each committed record set (its figures drawn in a temporary folder)."""
    figures = tmp_path_factory.mktemp("figures")
    return [report(records, figures / records.parent.name) for records in RECORD_SETS]


def made_tables(reports):
    """Every table the committed records make."""
    return [t for made in reports for _, t in tables(made)]


def test_the_committed_records_are_compact_json_one_small_file_a_run():
    assert ROOT / RECORDS in RECORD_SETS
    paths = sorted(p for records in RECORD_SETS for p in records.glob("*/*/seed*.json"))
    assert paths, f"no committed records under {RECORDS}"
    for path in paths:
        text = path.read_text(encoding="utf-8")
        record = json.loads(text)
        assert text == compact(record) + "\n" and len(text) < MAX_RECORD, path
        assert path.stem == f"seed{record['seed']}" and path.parts[-3] == record["part"]


def test_every_table_the_records_make_is_on_the_page_as_it_is(reports):
    page = PAGE.read_text(encoding="utf-8")
    on_page = {table for _, table in tables(page)}
    made = made_tables(reports)
    assert made, "the committed records make no table"
    for table in made:
        assert table in on_page, f"the records make a table the page does not show:\n{table}"


def test_every_other_table_of_the_page_is_a_summary_of_their_figures_or_of_settings(reports):
    page = PAGE.read_text(encoding="utf-8")
    made = set(made_tables(reports))
    for number, table in tables(page):
        if table in made or table.splitlines()[0] in NO_FIGURES:
            continue
        assert INTERVAL.search(table), (
            f"docs/learning.md line {number + 1}: a table neither made by the committed records "
            "nor quoting their intervals (a run without records is not reported)"
        )


def test_every_interval_the_prose_quotes_is_one_the_records_make(reports):
    page = PAGE.read_text(encoding="utf-8")
    lines = page.splitlines()
    made = "\n".join(reports)
    quoted = set()
    for number, line in enumerate(lines):
        for figure in INTERVAL.findall(line):
            quoted.add(figure)
            assert figure in made, (
                f"docs/learning.md line {number + 1}: {figure} is no figure of the committed "
                "records' reports"
            )
    assert quoted, "the page quotes no interval: the pattern no longer matches the reports'"

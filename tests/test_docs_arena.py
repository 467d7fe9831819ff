"""docs/arena.md against the commands it shows: each run's tables are the page's, as they are.

The arena is deterministic for a seed (scripted players, seeded deals, a seeded bootstrap), so
its figures need no committed records: the page's own command, rerun into a temporary folder,
must write the tables the page shows (about 25 CPU seconds for the three runs). Each runs in a
fresh process, as a user runs it: inside the full test session the `tiny` model's games came
out otherwise (state an earlier test leaves behind; not torch's global seed nor its thread
count, which were checked).
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from tests.markdown_tables import tables  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "arena.md"
COMMANDS = re.findall(
    r"^`python -m baselines\.run (arena [^`]*--out \S+)`", PAGE.read_text(), re.MULTILINE
)


def test_the_page_shows_its_three_runs():
    assert len(COMMANDS) == 3, COMMANDS


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.split("--out ")[-1])
def test_a_run_of_the_pages_command_makes_the_pages_tables(command, tmp_path):
    argv = command.split()
    argv[argv.index("--out") + 1] = str(tmp_path / "run")
    run = subprocess.run(
        [sys.executable, "-m", "baselines.run", *argv], cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    made = [table for _, table in tables((tmp_path / "run" / "arena.md").read_text())]
    on_page = {table for _, table in tables(PAGE.read_text())}
    assert len(made) == 2
    for table in made:
        assert table in on_page, f"`{command}` makes a table the page does not show:\n{table}"

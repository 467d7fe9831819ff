"""docs/arena.md against the commands it shows: each run's tables are the page's, as they are.

The arena is deterministic for a seed (scripted players, seeded deals, a seeded bootstrap), so
its figures need no committed records: the page's own command, rerun into a temporary folder,
must write the tables the page shows (about 25 CPU seconds for the three runs).
"""

import re
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from baselines.run import main  # noqa: E402
from tests.markdown_tables import tables  # noqa: E402

PAGE = Path(__file__).resolve().parents[1] / "docs" / "arena.md"
COMMANDS = re.findall(
    r"^`python -m baselines\.run (arena [^`]*--out \S+)`", PAGE.read_text(), re.MULTILINE
)


def test_the_page_shows_its_three_runs():
    assert len(COMMANDS) == 3, COMMANDS


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.split("--out ")[-1])
def test_a_run_of_the_pages_command_makes_the_pages_tables(command, tmp_path, capsys):
    argv = command.split()
    argv[argv.index("--out") + 1] = str(tmp_path / "run")
    assert main(argv) == 0
    capsys.readouterr()
    made = [table for _, table in tables((tmp_path / "run" / "arena.md").read_text())]
    on_page = {table for _, table in tables(PAGE.read_text())}
    assert len(made) == 2
    for table in made:
        assert table in on_page, f"`{command}` makes a table the page does not show:\n{table}"

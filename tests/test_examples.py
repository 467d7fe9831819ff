"""Every example script runs to the end."""

import pathlib
import runpy

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, capsys, tmp_path, monkeypatch):
    if "mage_agents.interop" in path.read_text():  # the openenv extra (in dev)
        pytest.importorskip("openenv.core")
    monkeypatch.chdir(tmp_path)  # what an example writes (runs/...) stays out of the repository
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out

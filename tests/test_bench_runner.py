"""``python -m benchmarks runner``: this checkout against a reference, taking turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.__main__ import main as bench_main

ROOT = Path(__file__).resolve().parents[1]


def test_runner_times_both_trees_in_turn_and_prints_the_ratio(capsys):
    bench_main(["runner", "--reference", str(ROOT), "--repeats", "2", "--tasks", "2"])
    out = capsys.readouterr().out
    rounds = [line.split()[:2] for line in out.splitlines()[1:5]]
    assert rounds == [["1", "reference"], ["1", "this"], ["2", "this"], ["2", "reference"]]
    ratio = out.splitlines()[-1]
    assert ratio.startswith("this / reference: wall ") and ", CPU " in ratio


def test_runner_refuses_a_reference_that_is_no_checkout(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        bench_main(["runner", "--reference", str(tmp_path)])
    assert stopped.value.code == 2
    assert "is not a checkout of this repository" in capsys.readouterr().err

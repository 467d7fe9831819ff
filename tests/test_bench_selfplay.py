"""The self-play benchmark: its table by hand, and one tiny run's curve of exact exploitability."""

import pytest

from benchmarks.selfplay import VARIANTS, table


def record(variant, seed, start, end, greedy):
    curve = [
        {"step": 0, "cpu_s": 0.0, "exploitability": start, "greedy_exploitability": start},
        {"step": 10, "cpu_s": 8.0, "exploitability": end, "greedy_exploitability": greedy},
    ]
    return {"variant": variant, "seed": seed, "steps": 10, "curve": curve}


def test_the_table_gives_each_variants_start_end_and_ratio_over_seeds():
    records = [record("self-play-rae", 0, 0.5, 0.25, 0.3)]
    records += [record("self-play-rae", 1, 0.4, 0.3, 0.5)]
    records += [record("population-grpo", 0, 0.5, 0.5, 0.5)]
    lines = table(records).splitlines()
    assert len(lines) == 4  # header, rule, two variants (self-play-grpo has no record)
    assert lines[2] == (
        "| self-play-rae | 2 | 10 | 0.450 [0.400, 0.500] | 0.275 [0.250, 0.300] | "
        "0.400 [0.300, 0.500] | 0.625 [0.500, 0.750] | 8 |"
    )
    assert lines[3].startswith("| population-grpo | 1 | 10 | 0.500")


def test_one_tiny_run_records_the_exact_exploitability_before_and_after_its_step(tmp_path):
    pytest.importorskip("trl")
    from benchmarks.selfplay import run_one

    run = run_one("self-play-rae", 0, steps=1, every=1, out=tmp_path)
    assert [p["step"] for p in run["curve"]] == [0, 1]
    assert all(0 <= p["exploitability"] <= 1 for p in run["curve"])
    assert run["curve"][0]["exploitability"] != run["curve"][1]["exploitability"]  # it trained
    assert set(VARIANTS) == {"self-play-rae", "self-play-grpo", "population-grpo"}

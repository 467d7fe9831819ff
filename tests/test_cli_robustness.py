"""The command line when things go wrong: bad pairs, locked folders, bad input, interrupts."""

import json

from baselines import run


def _lines(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_one_bad_env_opponent_pair_is_skipped_not_the_end_of_the_run(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["--opponent", "cfr", "--tasks", "2", "--out", str(out), "--no-plots"]
    argv += ["--env", "mage/KuhnPoker-v0", "--env", "mage/TicTacToe-v0", "--env", "mage/Sokoban-v0"]
    assert run.main(argv) == 0
    text = capsys.readouterr().out
    assert "Skipping mage/TicTacToe-v0 against cfr: it cannot be built" in text
    assert "The opponent cfr does not apply to mage/Sokoban-v0 (no opponent)" in text
    envs = {r["env_id"] for r in _lines(out)}
    assert envs == {"mage/KuhnPoker-v0", "mage/Sokoban-v0"}
    assert (out / "summary.md").exists()

import sys

import pytest

from benchmarks import envs


def test_the_envs_benchmark_prints_every_env_and_seeding(capsys):
    envs.main(["--seconds", "0.02", "--repeats", "1"])
    out = capsys.readouterr().out
    for env_id in envs.GAMES:
        assert out.count(env_id) == 2
    assert out.count(" seeded ") == 2 and out.count(" unseeded ") == 2


def test_without_textarena_its_columns_are_skipped_with_a_message(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "textarena", None)  # makes `import textarena` fail
    assert envs.textarena_random("kuhn_poker", 0.01) is None
    envs.main(["--seconds", "0.01", "--repeats", "1"])
    out = capsys.readouterr().out
    assert "TextArena is not installed" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("mage/")]
    assert len(rows) == 4 and all(row[3] == "-" and row[-1] == "-" for row in rows)


def test_textarena_plays_whole_games_when_installed():
    pytest.importorskip("textarena")  # optional reference: the `bench` extra installs it
    games, decisions = envs.textarena_random("tic_tac_toe", 0.02)
    assert games > 0 and decisions >= 5 * games  # a tic-tac-toe game takes 5 to 9 moves
    games, decisions = envs.textarena_random("kuhn_poker", 0.02, seed_every_game=False)
    assert games > 0 and 2 * games <= decisions <= 3 * games  # one hand: 2 or 3 bets

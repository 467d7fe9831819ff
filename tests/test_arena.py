"""The arena: ratings that agree with exact values, resume, faults never scored, Wilson by hand."""

import dataclasses
import json
import math

import pytest
from scipy.stats import binomtest

from baselines import run
from baselines.arena.command import markdown, play_arena
from baselines.arena.exact import pair_value
from baselines.arena.games import Players, schedule
from baselines.arena.ratings import duplicate_matches, head_to_head, ratings, wilson_interval
from mage_agents import RandomLegalAgent, Reply
from mage_envs.opponents import OPPONENT_SCHEMES, TextOpponent, make_opponent

KUHN, TTT = "mage/KuhnPoker-v0", "mage/TicTacToe-v0"


def test_wilson_interval_by_hand_and_as_scipy_computes_it():
    # 8 of 10, z = 1.96: centre (0.8 + 1.96^2/20) / (1 + 1.96^2/10) = 0.716745...,
    # half-width 1.96 sqrt(0.8 * 0.2 / 10 + 1.96^2 / 400) / (1 + 1.96^2/10) = 0.226582...
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.716745 - 0.226582, abs=1e-5)
    assert high == pytest.approx(0.716745 + 0.226582, abs=1e-5)
    for k, n in [(0, 7), (3, 7), (7, 7), (50, 200)]:
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert wilson_interval(k, n, z=1.959963984540054) == pytest.approx((ci.low, ci.high))


def test_every_pair_meets_on_the_same_deals_in_both_seats():
    games = schedule(["a", "b", "c"], 3, seed=7)
    assert len(games) == 3 * 3 * 2
    for deal in range(3):
        mine = [g for g in games if g.deal == deal]
        assert len({g.streams()[1:] for g in mine}) == 1  # one stream per deal
        assert len({g.streams()[0].random() for g in mine}) == 1
        assert {(g.first, g.second) for g in mine} == {
            ("a", "b"),
            ("b", "a"),
            ("a", "c"),
            ("c", "a"),
            ("b", "c"),
            ("c", "b"),
        }
    players = Players(KUHN, ["cfr", "random"])
    cards = []
    for game in schedule(["cfr", "random"], 4, seed=0):
        played = players.play(game)
        assert "payoffs" in played
        cards.append(tuple(played["chance"]))
    assert cards[0::2] == cards[1::2]  # the same cards in both orders
    assert len(set(cards)) > 1


def test_kuhn_ratings_order_agrees_with_the_exact_values():
    names = ["cfr", "aggressive", "random"]
    report = play_arena(KUHN, names, games=300, seed=0, bootstrap=50)
    rated = {r.name: r for r in report.ratings}
    assert rated["random"].rating == 0.0  # the anchor
    assert rated["cfr"].low > 0 and rated["aggressive"].low > 0  # both beat random, surely
    game = Players(KUHN, names).game
    for pair in report.pairs:
        exact = pair_value(make_opponent(pair.player, game), make_opponent(pair.other, game), game)
        assert report.exact[(pair.player, pair.other)] == pytest.approx(exact)
        # the sampled mean payoff agrees with the exact expectation (4 standard errors)
        assert abs(pair.mean_payoff - exact) < 2 * pair.payoff_ci95
    assert report.exact[("cfr", "random")] > 0 and report.exact[("aggressive", "random")] > 0


def test_kuhn_exact_value_of_a_pair_is_known_maths():
    game = Players(KUHN, ["cfr", "random"]).game
    bet, fold = make_opponent("always-bet", game), make_opponent("always-pass", game)
    assert pair_value(bet, fold, game) == pytest.approx(1.0)  # every pot, one chip
    cfr = make_opponent("cfr", game)
    # CFR's average policy is near Nash: against itself the seats average to zero.
    assert pair_value(cfr, cfr, game) == pytest.approx(0.0, abs=1e-12)


def test_mcts_1000_rates_above_random_in_tic_tac_toe_with_few_games():
    report = play_arena(TTT, ["mcts-1000", "random"], games=6, seed=0, bootstrap=50)
    (top, bottom) = report.ratings
    assert (top.name, bottom.name) == ("mcts-1000", "random") and top.rating > 0
    (pair,) = report.pairs
    assert pair.losses == 0 and pair.wins >= 8 and not report.exact  # not Kuhn: no exact column


def test_a_killed_arena_resumes_with_the_same_games(tmp_path):
    names = ["cfr-argmax", "balanced", "random"]
    whole = play_arena(KUHN, names, games=20, seed=3, bootstrap=0)

    class Stop(Exception):
        pass

    count = [0]

    def kill_after_25(game):
        count[0] += 1
        if count[0] == 25:
            raise Stop

    with pytest.raises(Stop):
        play_arena(KUHN, names, 20, 3, tmp_path, bootstrap=0, progress=kill_after_25)
    assert len((tmp_path / "results.jsonl").read_text().splitlines()) == 25
    again = play_arena(KUHN, names, 20, 3, tmp_path, bootstrap=0)
    assert again.resumed == 25 and len(again.records) == len(whole.records) == 120
    key = sorted
    assert key(json.dumps(r, sort_keys=True) for r in again.records) == key(
        json.dumps(r, sort_keys=True) for r in whole.records
    )
    assert [r.rating for r in again.ratings] == [r.rating for r in whole.ratings]
    more = play_arena(KUHN, [*names, "cfr"], 20, 3, tmp_path, bootstrap=0)
    assert more.resumed == 120 and len(more.records) == 240  # only the new player's games


BACKEND = {"down": True}


class _Flaky(RandomLegalAgent):
    """Random play, whose backend gives no answer while ``BACKEND["down"]``."""

    name = "flaky"

    def act(self, observation, info):
        if BACKEND["down"]:
            return Reply("", error="HTTP 500 after 4 attempts", faults=4)
        return super().act(observation, info)


class _Junk:
    name = "junk"

    def reset(self, seed=None):
        pass

    def act(self, observation, info):
        return "no idea"


@pytest.fixture
def test_schemes():
    made = []

    def flaky(rest, game):
        made.append(_Flaky())
        return TextOpponent(made[-1], name=f"flaky:{rest}")

    OPPONENT_SCHEMES["flaky"] = flaky
    OPPONENT_SCHEMES["junk"] = lambda rest, game: TextOpponent(_Junk(), name="junk:")
    yield made
    del OPPONENT_SCHEMES["flaky"], OPPONENT_SCHEMES["junk"]


def test_a_players_backend_fault_scores_no_game_and_the_rerun_plays_it(tmp_path, test_schemes):
    BACKEND["down"] = True
    report = play_arena(KUHN, ["flaky:1", "random"], 3, 0, tmp_path, bootstrap=0)
    assert len(report.failed) == 6 and not report.records and not report.ratings
    assert all("opponent flaky:1: HTTP 500" in r["errors"][0] for r in report.failed)
    assert not report.pairs  # no game scored: neither a loss nor a win
    BACKEND["down"] = False  # the backend is back: the rerun plays the failed games
    report = play_arena(KUHN, ["flaky:1", "random"], 3, 0, tmp_path, bootstrap=0)
    assert not report.failed and report.resumed == 0 and len(report.records) == 6
    assert len(report.ratings) == 2


def test_a_player_that_names_no_legal_move_forfeits_every_game(test_schemes):
    report = play_arena(KUHN, ["junk:", "random"], 5, 0, bootstrap=0)
    (pair,) = report.pairs
    assert (pair.player, pair.wins, pair.losses) == ("junk:", 0, 10)
    assert all(r["forfeit"] == "junk:" and len(r["chance"]) == 2 for r in report.records)
    assert {tuple(r["payoffs"]) for r in report.records} == {(-2.0, 2.0), (2.0, -2.0)}


def test_an_agent_plays_in_the_arena_from_its_own_page():
    report = play_arena(KUHN, ["agent:random", "cfr"], 10, 0, bootstrap=0)
    assert len(report.records) == 20 and not report.failed
    assert {r["first"] for r in report.records} == {"agent:random", "cfr"}


def test_duplicate_matches_total_both_orders_of_a_deal():
    games = [("a", "b", 0, 1.0, -1.0), ("b", "a", 0, 2.0, -2.0), ("a", "b", 1, 1.0, -1.0)]
    assert duplicate_matches(games) == [("a", "b", 0, -1.0, 1.0)]  # deal 1 is half played
    table = ratings(["a", "b"], [("a", "b", d, 1.0, -1.0) for d in range(20)], "b", 20)
    assert table[0].name == "a" and table[0].rating > 0 and table[1].rating == 0.0
    with pytest.raises(ValueError, match="--anchor 'c' is not one of the players"):
        ratings(["a", "b"], games, "c")
    # a player without a completed match is not rated (it would get the prior's rating)
    assert sorted(r.name for r in ratings(["a", "b", "c"], games[:2], "b", 0)) == ["a", "b"]
    with pytest.raises(ValueError, match="anchor 'c' has no completed match"):
        ratings(["a", "b", "c"], games[:2], "c", 0)
    (pair,) = head_to_head(["a", "b"], games)
    assert (pair.wins, pair.losses, pair.mean_payoff) == (2, 1, 0.0)  # 1 - 2 + 1
    assert math.isfinite(pair.payoff_ci95)


def test_the_arena_command_writes_its_tables_and_plot(tmp_path, capsys):
    out = tmp_path / "arena"
    argv = ["arena", "--agents", "cfr", "conservative", "random", "--games", "10"]
    assert run.main([*argv, "--out", str(out), "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    assert "Ratings" in printed and "Head to head" in printed and "exact" in printed
    assert "60 games (0 resumed, 60 played)" in printed
    text = (out / "arena.md").read_text()
    assert "| cfr | conservative |" in text and "exact expected payoff" in text
    assert (out / "ratings.png").read_bytes()[:4] == b"\x89PNG"
    assert run.main([*argv, "--out", str(out), "--bootstrap", "20"]) == 0
    assert "60 games (60 resumed, 0 played)" in capsys.readouterr().out


def test_the_arena_command_refuses_bad_settings_in_one_line(capsys):
    assert run.main(["arena", "--agents", "cfr", "--games", "2"]) == run.EXIT_SETTINGS
    assert "two or more different players" in capsys.readouterr().err
    argv = ["arena", "--agents", "cfr", "random", "--anchor", "nobody"]
    assert run.main(argv) == run.EXIT_SETTINGS
    assert "--anchor 'nobody' is not one of the players" in capsys.readouterr().err
    argv = ["arena", "--agents", "cfr", "order-center", "--games", "2"]
    assert run.main(argv) == run.EXIT_SETTINGS
    assert "cannot play" in capsys.readouterr().err
    argv = ["arena", "--agents", "cfr", "random", "--env", "mage/Sokoban-v0"]
    assert run.main(argv) == run.EXIT_SETTINGS
    assert "two-player games of the suite" in capsys.readouterr().err


def test_the_arena_command_says_backend_failures_on_stderr(tmp_path, test_schemes, capsys):
    BACKEND["down"] = True
    argv = ["arena", "--agents", "flaky:1", "random", "--games", "2", "--out", str(tmp_path)]
    assert run.main(argv) == run.EXIT_FAILED_TRIALS
    printed = capsys.readouterr()
    assert "4 games failed" in printed.err and "games failed" not in printed.out
    BACKEND["down"] = False


def test_arena_md_escapes_the_players_names(tmp_path):
    report = play_arena(KUHN, ["cfr", "random"], 2, 0, tmp_path, bootstrap=0)
    report.pairs[0] = dataclasses.replace(report.pairs[0], player="a|b\nc")
    assert "| a\\|b c | random |" in markdown(report, "random")


def test_a_damaged_arena_line_is_named_and_its_game_played_again_once(tmp_path, capsys):
    argv = ["arena", "--agents", "cfr", "random", "--games", "3", "--bootstrap", "20"]
    argv += ["--out", str(tmp_path), "--no-plots"]
    assert run.main(argv) == 0
    lines = (tmp_path / "results.jsonl").read_bytes().split(b"\n")
    lines[2] = b"\x00" * 10
    (tmp_path / "results.jsonl").write_bytes(b"\n".join(lines))
    capsys.readouterr()
    assert run.main(argv) == 0
    printed = capsys.readouterr()
    assert "line 3 is damaged (not a JSON trial record)" in printed.err
    assert "6 games (5 resumed, 1 played)" in printed.out
    assert run.main(argv) == 0
    assert "6 games (6 resumed, 0 played)" in capsys.readouterr().out

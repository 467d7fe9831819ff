"""A game cut off by invalid answers never scores above playing and losing, in every preset."""

import csv
import json

import gymnasium as gym
import pytest

import mage_envs  # noqa: F401  (registers the ids)
from baselines import run
from baselines.report.summary import published_final_return, summarize

JUNK = "I am not sure."


def _play_junk(env, seed=0):
    env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        _, reward, terminated, truncated, info = env.step(JUNK)
        total, steps = total + reward, steps + 1
        if terminated or truncated:
            return total, steps, truncated, info


@pytest.mark.parametrize(
    ("env_id", "scale", "worst"),
    [
        ("mage/KuhnPoker-v0", 5.0, -2.0),
        ("mage/TicTacToe-v0", 10.0, -1.0),
    ],
)
def test_max_turns_spent_on_junk_is_a_forfeit_scored_lost(env_id, scale, worst):
    env = gym.make(
        env_id, answer_rules="mage", max_turns=6, max_invalid_actions=None, reward_scale=scale
    )
    total, steps, truncated, info = _play_junk(env)
    assert steps == 6 and truncated
    assert info["forfeit"] and info["payoff"] == worst and not info["success"]
    assert total == worst * scale  # MAGE's invalid answers earn 0; the cut-off game is lost


def test_the_published_scoring_is_one_setting_away():
    env = gym.make(
        "mage/KuhnPoker-v0",
        answer_rules="mage",
        max_turns=6,
        max_invalid_actions=None,
        reward_scale=5.0,
        forfeit_payoff=0.0,
    )
    total, _, truncated, info = _play_junk(env)
    assert truncated and info["forfeit"] and total == 0.0


def test_the_invalid_streak_still_ends_a_game_before_its_turns_are_spent():
    env = gym.make("mage/KuhnPoker-v0", max_turns=6, max_invalid_actions=2)
    _, steps, truncated, info = _play_junk(env)
    assert steps == 2 and truncated and info["forfeit"]


def test_a_valid_move_that_spends_the_last_turn_of_an_unfinished_game_is_a_forfeit():
    env = gym.make("mage/TicTacToe-v0", max_turns=2, max_invalid_actions=None)
    _, info = env.reset(seed=0)
    env.step(JUNK)
    _, reward, terminated, truncated, info = env.step(info["legal_actions"][0])
    assert truncated and not terminated and not info["invalid_action"]
    assert info["forfeit"] and reward == -1.0
    with pytest.raises(RuntimeError, match="game is over"):
        env.step(info["legal_actions"][0])


@pytest.mark.parametrize("bad", [0, -1, 2.5, "6"])
def test_max_turns_is_checked(bad):
    with pytest.raises(ValueError, match="max_turns"):
        gym.make("mage/KuhnPoker-v0", max_turns=bad)


def test_a_forfeit_scored_zero_is_still_a_loss_and_the_published_figure_shows_it():
    record = {
        "agent": "junk",
        "env_id": "mage/KuhnPoker-v0",
        "opponent": "cfr",
        "env_kwargs": {"answer_rules": "mage", "reward_scale": 5, "forfeit_payoff": 0},
        "trial": {
            "num_episodes": 1,
            "pass_at_k": [0],
            "successes": [False],
            "returns": [0.0],
            "final_return": 0.0,
            "opponents": ["cfr"],
            "forfeits": [True],
        },
        "final_payoff": 0.0,
        "final_forfeit": True,
        "play_steps": 6,
        "actions": [[]],
    }
    (summary,) = summarize([record], ("agent",))
    assert summary.loss.value == 1.0 and summary.draw.value == 0.0
    assert summary.published_final_return.value == 0.0
    assert published_final_return({**record, "env_kwargs": {}}) is None  # our own rules


def test_mage_kuhn_junk_scores_below_random_legal_with_the_published_figure_beside(
    tmp_path, monkeypatch
):
    (tmp_path / "junk.py").write_text(f"def act(observation, info):\n    return {JUNK!r}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    argv = ["--config", "mage_kuhn", "--agent", "python:junk:act", "--agent", "random"]
    assert run.main([*argv, "--tasks", "8", "--out", str(out), "--no-plots"]) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    junk = [r for r in records if r["agent"] != "random-legal"]
    assert junk and all(r["final_forfeit"] and r["trial"]["forfeits"][-1] for r in junk)
    rows = {row["agent"]: row for row in csv.DictReader((out / "summary.csv").open())}
    random_row = rows.pop("random-legal")
    ((_, junk_row),) = rows.items()
    assert float(junk_row["final_return"]) == -10.0  # lost, 5 x -2 chips
    assert float(junk_row["final_return"]) < float(random_row["final_return"])
    assert float(junk_row["final_return_published"]) == 0.0  # MAGE's env: junk scored 0
    assert float(junk_row["forfeit_rate"]) == 1.0 and float(junk_row["loss"]) == 1.0
    assert float(junk_row["wall_s_per_trial"]) * 8 == pytest.approx(float(junk_row["wall_s"]))
    header = (out / "summary.md").read_text().splitlines()[2]
    assert "final return, published scoring" in header and "wall s/trial" in header

"""Self-play training: the policy plays both seats, and both seats' turns become training rows."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import MetaRLTrainer  # noqa: E402
from tests.tiny_training import tiny_config  # noqa: E402


def self_play_config(tmp_path, **overrides):
    settings = dict(
        estimator="rae",
        self_play=True,
        env_kwargs={"max_invalid_actions": 1, "reward_scale": 5},
        trial={},  # self-play's own: single games
        action_choice="legal",
        num_tasks=8,
    )
    return tiny_config(tmp_path, **settings | overrides)


def test_self_play_is_a_config_switch_or_the_opponent_self_with_single_game_trials(tmp_path):
    config = self_play_config(tmp_path)
    assert config.opponent == "self" and config.trial.num_episodes == 1
    spec = self_play_config(tmp_path, self_play=False, opponent="self")
    assert spec.self_play and spec.trial.num_episodes == 1
    with pytest.raises(ValueError, match="leave opponent unset"):
        self_play_config(tmp_path, opponent="cfr")
    with pytest.raises(ValueError, match="single games"):
        self_play_config(tmp_path, trial={"num_episodes": 3})


def test_a_self_play_step_trains_on_both_seats_rows_with_their_own_rewards(tmp_path):
    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(seed=0, init_std=0.125)
    trainer = MetaRLTrainer(model, self_play_config(tmp_path), processing_class=tokenizer)
    played, rows = [], []
    play, generate = trainer.play, trainer._generate_and_score_completions

    def recorded_play(plans):
        played.append(play(plans))
        return played[-1]

    def recorded_generate(inputs):
        batch = generate(inputs)
        rows.append(int(batch["completion_mask"].any(dim=1).sum()))
        return batch

    trainer.play, trainer._generate_and_score_completions = recorded_play, recorded_generate
    before = [p.detach().clone() for p in trainer.model.parameters()]
    trainer.train()
    (games,) = played
    assert len(games) == 8 and all({t.seat for t in g.turns} == {"first", "second"} for g in games)
    trajectories = trainer.by_seat(games)
    seats = [t.turns[0].seat for t in trajectories]
    assert seats == ["first", "second"] * 8  # 8 games, each split into its two seats
    for first, second in zip(trajectories[::2], trajectories[1::2], strict=True):
        assert first.trial_id.rsplit("|", 1)[0] == second.trial_id.rsplit("|", 1)[0]
        assert first.result.final_return == -second.result.final_return  # zero-sum, legal moves
    assert rows == [sum(len(t.turns) for t in trajectories)]  # every turn of both seats a row
    assert set(trainer.estimator_state) == {"first", "second"}
    after = list(trainer.model.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))


def test_self_play_evaluation_logs_the_exact_exploitability_and_keeps_the_least_exploitable(
    tmp_path,
):
    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(seed=0, init_std=0.125)
    config = self_play_config(tmp_path, evaluation_steps=1, evaluation_tasks=4, max_steps=2)
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    trainer.train()
    logged = [e for e in trainer.state.log_history if "eval/exact/exploitability" in e]
    assert len(logged) == 2
    for entry in logged:
        assert 0 <= entry["eval/exact/exploitability"] == entry["eval/exact/nash_conv"] / 2
        assert "eval/exact/aggressive/second/value" in entry  # the styles, from both seats
    best = min(logged, key=lambda e: (e["eval/exact/exploitability"], -e["step"]))
    assert trainer.best == {
        "metric": "eval/exact/exploitability",
        "value": best["eval/exact/exploitability"],
        "step": best["step"],
    }
    assert (tmp_path / "best" / "best.json").is_file()
    assert (tmp_path / "transcripts").is_dir()  # whole games, both seats, as transcripts


def test_the_ready_self_play_config_trains_from_the_command_line(tmp_path, capsys):
    import json

    from baselines.run import main

    out = tmp_path / "run"
    argv = ["train", "--config", "selfplay_kuhn_tiny", "--max-steps", "1", "--out", str(out)]
    argv += ["--set", "evaluation_steps=1", "--set", "evaluation_tasks=2"]
    argv += ["--set", "per_device_train_batch_size=8", "--set", "save_steps=1"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "exploitability" in printed and "vs aggressive, second seat" in printed
    best = json.loads((out / "best" / "best.json").read_text())
    assert best["metric"] == "eval/exact/exploitability" and best["step"] == 1
    assert (out / "checkpoint-1" / "estimator_state_0.json").is_file()

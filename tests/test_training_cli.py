"""python -m baselines.run train: help, a tiny config in-process, its output folder and resume."""

import json
import shutil
from pathlib import Path

import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("trl")

from baselines.run import main  # noqa: E402
from mage_agents.rollout import read_transcripts  # noqa: E402

TINY = [
    "--config",
    "tiny_kuhn_grpo",
    "--max-steps",
    "2",
    *("--set", "logging_steps=1", "--set", "save_steps=1", "--set", "num_generations=2"),
    *("--set", "per_device_train_batch_size=4", "--set", "max_completion_length=4"),
    *("--set", "evaluation_steps=2", "--set", "evaluation_tasks=2"),
]
TIMING = {"step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second"}


def train_entries(out):
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return {r["step"]: {k: v for k, v in r.items() if k not in TIMING} for r in rows if "loss" in r}


def sampled_trials(out):
    path = out / "transcripts" / "eval-step-000002.jsonl.gz"
    return [{k: v for k, v in r.items() if k != "timing"} for r in read_transcripts(path)]


def test_train_help_lists_the_options_and_the_ready_configs(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["train", "--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    assert "--config" in text and "tiny_kuhn_grpo" in text and "mage_kuhn_qwen3_4b" in text


def test_a_tiny_config_trains_writes_its_folder_and_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--out", str(out)]) == 0
    for name in ("config.yaml", "metrics.jsonl", "metrics.csv", "curves.png", "best/best.json"):
        assert (out / name).is_file(), name
    assert (out / "checkpoint-1").is_dir() and (out / "checkpoint-2").is_dir()
    entries = train_entries(out)
    assert sorted(entries) == [1, 2] and "trial/final_return" in entries[2]
    evaluation = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    (exact,) = [e for e in evaluation if "eval/exact/aggressive/first/value" in e]
    assert exact["eval/exact/aggressive/first/best_response"] == pytest.approx(1 / 3)
    cards = [
        exact[f"eval/exact/aggressive/first/{kind}/{c}"] for kind in ("bet", "call") for c in "JQK"
    ]
    assert all(0.0 <= p <= 1.0 for p in cards)
    printed = capsys.readouterr().out
    assert "step 2/2" in printed
    assert (
        "vs aggressive, first seat: exact value" in printed and "(best response +0.333)" in printed
    )
    assert "P(bet) J" in printed and "P(call) J" in printed and "policy loss" in printed
    sampled = sampled_trials(out)
    assert [r["trial_id"] for r in sampled] == ["eval2|row0", "eval2|row1"]
    assert "eval2|row0" in (out / "index.html").read_text()

    # interrupted after step 1 (killed: no final model): the rerun resumes there and repeats
    # step 2 exactly
    shutil.rmtree(out / "checkpoint-2")
    shutil.rmtree(out / "final")
    assert main(["train", *TINY, "--out", str(out)]) == 0
    assert "Resuming from" in capsys.readouterr().out
    assert train_entries(out) == entries
    assert sampled_trials(out) == sampled  # the replayed evaluation kept the same trials


def test_bad_settings_are_refused_with_the_reason(tmp_path, capsys):
    assert main(["train", "--config", "tiny_kuhn_grpo", "--set", "learning_rat=1"]) == 2
    assert "Did you mean learning_rate" in capsys.readouterr().err
    assert main(["train", "--config", "no_such_config"]) == 2
    assert "Ready configs" in capsys.readouterr().err
    assert main(["train", "--config", "tiny_kuhn_grpo", "--set", "traj_gamma=2"]) == 2
    assert "traj_gamma is a discount" in capsys.readouterr().err
    assert main(["train", "--model", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "is not a local model" in capsys.readouterr().err


def test_every_ready_config_is_a_valid_metarl_config(tmp_path):
    from baselines.train.command import TRAIN_CONFIG_DIR, _read_config, build_config

    names = sorted(TRAIN_CONFIG_DIR.glob("*.yaml"))
    assert len(names) >= 20
    for path in names:
        settings = _read_config(path) | {"out": str(tmp_path)}
        if settings.get("use_vllm"):  # a GPU config: check it as it would run, minus the GPU
            settings |= {"use_vllm": False, "bf16": False}
        config = build_config(settings)
        # a ready config is named by its estimator, its tiny size or its way of playing
        named = config.estimator in path.stem or path.stem.startswith(("tiny", "selfplay"))
        assert named or (path.stem.startswith("league") and config.league_every > 0), path
        if config.self_play:
            assert config.opponent == "self" and config.trial.num_episodes == 1, path


def test_numbers_written_without_a_dot_are_read_as_floats(tmp_path):
    from baselines.train.command import build_config

    config = build_config({"out": str(tmp_path), "learning_rate": "1e-2", "use_cpu": True})
    assert config.learning_rate == 0.01
    with pytest.raises(ValueError, match="learning_rate takes a number, not 'abc'"):
        build_config({"out": str(tmp_path), "learning_rate": "abc", "use_cpu": True})


def test_resolved_yaml_shows_what_the_small_model_defaults_came_to(tmp_path):
    from baselines.train.command import _read_config, build_config
    from baselines.train.output import write_resolved

    settings = _read_config(Path("tiny_kuhn_robust")) | {"out": str(tmp_path)}
    assert settings["defaults"] == "small-model"
    assert not {"strategy", "action_choice", "move_entropy_bonus"} & set(settings)
    write_resolved(tmp_path, build_config(settings))
    resolved = yaml.safe_load((tmp_path / "resolved.yaml").read_text())
    assert (resolved["strategy"], resolved["action_choice"]) == ("terse", "legal")
    assert resolved["move_entropy_bonus"] == 0.3 and resolved["lr_scheduler_type"] == "constant"
    assert resolved["trial"]["num_episodes"] == 1
    assert "beta" not in resolved and "output_dir" not in resolved  # defaults and the folder


def test_small_model_defaults_fill_what_a_config_leaves_out(tmp_path):
    from baselines.train.command import _read_config, build_config, load_model
    from mage_agents.training import MetaRLConfig
    from mage_agents.training.small_model import SMALL_MODEL_DEFAULTS

    settings = _read_config(Path("tiny_kuhn_robust")) | {"out": str(tmp_path)}
    config = build_config(settings)
    assert (config.action_choice, config.exploration_floor, config.move_entropy_bonus) == (
        "legal",
        0.1,
        0.3,
    )
    assert (config.scale_advantages, config.strategy) == ("batch", "terse")
    assert config.entropy_coef == 0.0 and config.lr_scheduler_type.value == "constant"
    model, _ = load_model(settings)
    assert float(model.lm_head.weight.std()) == pytest.approx(0.125, rel=0.05)
    narrow, _ = load_model(settings | {"tiny_model": {"hidden": 32, "seed": 0}})
    assert float(narrow.lm_head.weight.std()) == pytest.approx(32**-0.5, rel=0.05)
    published = build_config(settings | {"defaults": "published", "learning_rate": 3e-3})
    assert (published.action_choice, published.move_entropy_bonus) == ("generate", 0.0)
    assert float(load_model(settings | {"defaults": "published"})[0].lm_head.weight.std()) < 0.05
    with pytest.raises(ValueError, match="defaults must be one of published, small-model"):
        build_config(settings | {"defaults": "tiny"})
    direct = MetaRLConfig.for_small_model(
        output_dir=str(tmp_path), use_cpu=True, move_entropy_bonus=0.1
    )
    assert direct.move_entropy_bonus == 0.1
    assert direct.learning_rate == SMALL_MODEL_DEFAULTS["learning_rate"]


def test_an_old_config_with_entropy_coef_for_the_move_bonus_is_refused_not_reread(tmp_path, capsys):
    # configs written before the rename set the legal-move bonus as entropy_coef, which is also
    # TRL's whole-vocabulary bonus: it must not silently become TRL's
    old = tmp_path / "old.yaml"
    old.write_text("base: tiny_kuhn_robust\nentropy_coef: 0.3\n")
    assert main(["train", "--config", str(old), "--out", str(tmp_path / "o")]) == 2
    text = capsys.readouterr().err
    assert "move_entropy_bonus" in text and "whole vocabulary" in text
    assert not (tmp_path / "o").exists()  # refused before anything is written

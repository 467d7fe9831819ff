"""Evaluation during training plays the held-out split: ``evaluation_env_kwargs``.

A seed far from the training seeds is not a held-out task where an env has a finite set of them
(ALFWorld plays game ``s % n`` of its split), so evaluation can set the env's keyword arguments
over the training ones, as the published trainers' validation envs do.
"""

from pathlib import Path

import pytest

pytest.importorskip("trl")

from baselines.train.command import _read_config, build_config  # noqa: E402
from mage_agents.training import MetaRLConfig  # noqa: E402
from mage_agents.training.trials import check_trials, env_kwargs_of, trial_planner  # noqa: E402

# config -> the split training plays, the split evaluation plays (the published validation envs)
HELD_OUT = {
    "lamer_webshop_qwen3_4b": ("train_and_eval", "test"),
    "mage_webshop_qwen3_4b": ("train_and_eval", "test"),
    "gigpo_webshop_qwen3_4b": ("train_and_eval", "test"),
    "grpo_webshop_qwen3_4b": ("train_and_eval", "test"),
    "lamer_alfworld_qwen3_4b": ("train", "eval_in_distribution"),
    "mage_alfworld_qwen3_4b": ("train", "eval_in_distribution"),
    "gigpo_alfworld_qwen3_4b": ("train", "eval_in_distribution"),
    "grpo_alfworld_qwen3_4b": ("train", "eval_in_distribution"),
}


def kuhn_config(tmp_path, **overrides):
    settings = dict(
        output_dir=str(tmp_path),
        env_kwargs={"seat": "first", "reward_scale": 1.0},
        opponent="always-pass",
        use_cpu=True,
        report_to=[],
    )
    return MetaRLConfig(**settings | overrides)


def test_evaluation_trials_take_the_evaluation_kwargs_over_the_trainings(tmp_path):
    config = kuhn_config(tmp_path, evaluation_env_kwargs={"reward_scale": 5.0})
    training = trial_planner(config).plan(0, 0)
    evaluation = trial_planner(config, evaluation=True).plan(0, 0)
    assert training.env_kwargs == {"seat": "first", "reward_scale": 1.0}
    assert evaluation.env_kwargs == {"seat": "first", "reward_scale": 5.0}
    assert env_kwargs_of(config, evaluation=True)["reward_scale"] == 5.0


def test_without_evaluation_kwargs_evaluation_plays_the_training_env(tmp_path):
    config = kuhn_config(tmp_path)
    assert trial_planner(config, evaluation=True).plan(3, 0) == trial_planner(config).plan(3, 0)


def test_a_bad_evaluation_kwarg_fails_before_training_naming_the_evaluation(tmp_path):
    config = kuhn_config(tmp_path, evaluation_env_kwargs={"no_such_setting": 1})
    with pytest.raises(ValueError, match="evaluation trials"):
        check_trials(config)


def test_the_training_evaluation_plays_on_the_evaluation_env(tmp_path, monkeypatch):
    import torch

    from mage_agents.tiny_model import build_tiny_model
    from mage_agents.training import MetaRLTrainer, evaluation

    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(seed=0)
    config = kuhn_config(
        tmp_path,
        evaluation_env_kwargs={"reward_scale": 5.0},
        evaluation_tasks=2,
        trial={"num_episodes": 1, "reflection": False},
        num_generations=2,
        per_device_train_batch_size=2,
        max_completion_length=4,
        gradient_checkpointing=False,
    )
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    planned, exact = [], []
    play = trainer.play
    trainer.play = lambda plans: planned.extend(plans) or play(plans)
    monkeypatch.setattr(evaluation, "kuhn_exact_evaluation", lambda *a, **k: exact.append(k) or {})
    evaluation.evaluate_policy(trainer)
    assert [p.env_kwargs["reward_scale"] for p in planned] == [5.0, 5.0]
    assert exact[0]["reward_scale"] == 5.0  # the exact values are of the same env


@pytest.mark.parametrize("name", sorted(HELD_OUT))
def test_the_webshop_and_alfworld_paper_configs_evaluate_on_the_held_out_split(name, tmp_path):
    settings = _read_config(Path(name)) | {"out": str(tmp_path)}
    settings |= {"use_vllm": False, "bf16": False}  # a GPU config, checked minus the GPU
    config = build_config(settings)
    training, held_out = HELD_OUT[name]
    assert config.env_kwargs["split"] == training
    assert env_kwargs_of(config, evaluation=True)["split"] == held_out
    if "alfworld" in name:  # the validation games of all six task types (LaMer's eval_all)
        assert env_kwargs_of(config, evaluation=True)["task_types"] == "all"

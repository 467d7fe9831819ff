"""The WebShop and ALFWorld training configs: the published numbers, and the tiny ones train.

The paper-size configs (``*_webshop_qwen3_4b``, ``*_alfworld_qwen3_4b``) must load, validate as
``MetaRLConfig`` and hold the numbers of the published scripts (LaMer's ``examples/webshop`` and
``examples/alfworld``, MAGE's ``examples/*/mage.sh``), inherited through ``base:`` where they say
so. The tiny ones (``tiny_shopsim_*``, ``tiny_alfworld_generated_*``) train two steps on CPU.
"""

import importlib.util
import json

import gymnasium as gym
import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

import mage_envs  # noqa: E402, F401  (registers the ids)
from baselines.run import main  # noqa: E402
from baselines.train.command import _read_config, build_config  # noqa: E402

HAS_ALFWORLD = importlib.util.find_spec("alfworld") is not None

# config: estimator, attempts, group, trials a step, turns an attempt, model turns a trial,
# thinking, history steps
PUBLISHED = {
    "lamer_webshop_qwen3_4b": ("lamer", 3, 8, 64, 12, 38, False, 5),
    "mage_webshop_qwen3_4b": ("mage", 3, 8, 64, 12, 38, True, 5),
    "gigpo_webshop_qwen3_4b": ("gigpo", 1, 24, 192, 12, 12, False, 5),
    "grpo_webshop_qwen3_4b": ("grpo", 1, 24, 192, 12, 12, False, 5),
    "lamer_alfworld_qwen3_4b": ("lamer", 3, 8, 64, 10, 32, False, 15),
    "mage_alfworld_qwen3_4b": ("mage", 3, 8, 64, 10, 32, True, 15),
    "gigpo_alfworld_qwen3_4b": ("gigpo", 1, 24, 192, 10, 10, False, 15),
    "grpo_alfworld_qwen3_4b": ("grpo", 1, 24, 192, 10, 10, False, 15),
}
TINY = [
    "tiny_shopsim_lamer",
    "tiny_shopsim_grpo",
    "tiny_alfworld_generated_lamer",
    "tiny_alfworld_generated_grpo",
]


def _config(name, tmp_path):
    from pathlib import Path

    settings = _read_config(Path(name)) | {"out": str(tmp_path)}
    if settings.get("use_vllm"):  # a GPU config: checked as it would run, minus the GPU
        settings |= {"use_vllm": False, "bf16": False}
    return settings, build_config(settings)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_the_paper_configs_hold_the_published_numbers(name, tmp_path):
    settings, config = _config(name, tmp_path)
    estimator, attempts, group, trials, turns, model_turns, thinking, history = PUBLISHED[name]
    trial = config.trial
    assert (config.estimator, trial.num_episodes, config.num_generations) == (
        estimator,
        attempts,
        group,
    )
    assert config.per_device_train_batch_size * config.steps_per_generation == trials
    assert config.env_kwargs["max_steps"] == turns and config.max_turns == model_turns
    assert config.max_turns == attempts * turns + (attempts - 1) * trial.reflection
    assert config.chat_template_kwargs == {"enable_thinking": thinking}
    assert trial.history_steps == history and trial.max_reflection_chars == 2000
    assert (config.step_gamma, config.traj_gamma, config.omega) == (0.95, 0.6, 1.0)
    assert (config.learning_rate, config.beta, config.max_completion_length) == (1e-6, 0.0, 1024)
    assert trial.reflection == (attempts > 1) and trial.memory == "reflection_only"
    assert trial.same_task and trial.stop_on_success
    if estimator == "mage":  # single-player: no opponents to normalise by
        assert config.differential_reward and not config.opponent_normalization
    assert settings["model"] == "models/Qwen3-4B" and config.strategy == "paper"
    assert trial.templates == ("mage" if estimator == "mage" else "lamer")


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_the_invalid_answer_costs_the_published_half_point(name, tmp_path):
    # LaMer and MAGE subtract 0.5 per invalid answer from the 0/10 reward (on both envs); ShopSim
    # stands in for WebShop's data here, with the same reward settings
    _, config = _config(name, tmp_path)
    kwargs = dict(config.env_kwargs, invalid_action_penalty=config.invalid_action_penalty)
    if "webshop" in name:
        assert (config.env_id, kwargs["split"], kwargs["goals"]) == (
            "mage/WebShop-v0",
            "train_and_eval",
            "synthetic",
        )
        shop = {k: v for k, v in kwargs.items() if k not in ("catalogue", "goals", "split")}
        env = gym.make("mage/ShopSim-v0", num_products=20, **shop)
        assert env.unwrapped.reward_scale == 10.0 and env.unwrapped.reward_mode == "success"
    else:
        assert config.env_id == "mage/ALFWorld-v0" and kwargs["split"] == "train"
        assert kwargs["task_types"] == ("all" if "mage" in name else "seen")
        if not HAS_ALFWORLD:
            pytest.skip("needs the alfworld extra")
        game = {k: v for k, v in kwargs.items() if k != "split"}
        env = gym.make("mage/ALFWorld-Generated-v0", **game)
        assert env.unwrapped.success_reward == 10.0
    assert env.unwrapped.invalid_rule.reward == -0.5


@pytest.mark.parametrize("name", TINY)
def test_the_tiny_configs_train_two_steps(name, tmp_path):
    if "alfworld" in name and not HAS_ALFWORLD:
        pytest.skip("needs the alfworld extra")
    out = tmp_path / "run"
    assert main(["train", "--config", name, "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = {r["step"]: r for r in rows if "loss" in r}
    assert sorted(steps) == [1, 2]
    for entry in steps.values():
        assert entry["rows"] > 0 and entry["grad_norm"] >= 0.0
        assert "trial/final_return" in entry and "trial/invalid_rate" in entry
    assert any("eval/trial/final_return" in r for r in rows)
    assert (out / "final").is_dir()


def test_the_step_sizes_are_measured_on_the_stand_in_without_data(monkeypatch):
    from benchmarks.trial_sizes import measure, measured_env

    monkeypatch.delenv("MAGE_WEBSHOP_DATA", raising=False)
    env_id, kwargs = measured_env("mage/WebShop-v0", {"split": "train", "max_steps": 12})
    assert (env_id, kwargs) == ("mage/ShopSim-v0", {"max_steps": 12})
    sizes = measure("tiny_shopsim_lamer", trials=2)
    mean_turns, most = sizes["turns"]
    assert sizes["env"] == "mage/ShopSim-v0" and 1 <= most <= 11  # the config's max_turns
    assert sizes["rows"] == 4 * mean_turns  # 4 trials a step
    low, p95, high = sizes["chars"]
    assert 0 < low <= p95 <= high

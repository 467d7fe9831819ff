"""Each vocabulary is spelled once: the four defects its copies caused, and one registry each.

The defects (issue 26), each reproduced before it was fixed:

1. ``MetaEpisodeWrapper(env, config=TrialConfig(num_episodes=5), memory=...)`` played 3 episodes;
2. a memory mode added with ``register_memory_mode`` was refused by ``MetaRLConfig``;
3. an estimator added to the registry passed ``MetaRLConfig``, then training failed;
4. ``make_trial("mage/SokobanLarge-v0", templates="lamer")`` found no preset for the variant.
"""

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import mage_envs
from mage_envs import MetaEpisodeWrapper, make_trial
from mage_envs.meta import TrialConfig
from mage_envs.meta.memory import MEMORY_MODES, register_memory_mode
from tests.module_imports import imported_modules

ROOT = Path(__file__).resolve().parents[1]


def _play_out(env, answer="left"):
    obs, info = env.reset(seed=0)
    while True:
        obs, _, terminated, truncated, info = env.step(answer)
        if terminated or truncated:
            return info["trial"]


def test_a_keyword_beside_a_ready_config_changes_that_setting_only():
    config = TrialConfig(num_episodes=5, reflection=False)
    env = MetaEpisodeWrapper(gym.make("FrozenLake-v1"), config=config, memory="history_only")
    assert (env.num_episodes, env.config.memory) == (5, "history_only")
    assert not env.config.reflection
    assert len(_play_out(env)["returns"]) == 5  # it used to play 3
    trial = make_trial("mage/KuhnPoker-v0", config=config, memory="history_only")
    assert trial.num_episodes == 5
    # a keyword given is kept even when it is the default value
    assert (
        MetaEpisodeWrapper(gym.make("FrozenLake-v1"), num_episodes=3, config=config).num_episodes
        == 3
    )


def test_the_wrapper_keywords_are_the_settings_of_its_two_configs():
    import inspect
    import re

    from mage_envs.meta import TextConversion

    # spelled once: the signature names only the configs; the fields come from the dataclasses
    assert list(inspect.signature(MetaEpisodeWrapper).parameters) == [
        "env",
        "config",
        "conversion",
        "settings",
    ]
    with pytest.raises(TypeError) as error:
        MetaEpisodeWrapper(gym.make("FrozenLake-v1"), episodes=3)
    trial, text = re.search(
        r"fields: (.*) \(TrialConfig\); (.*) \(TextConversion\)", str(error.value)
    ).groups()
    assert set(trial.split(", ")) == TrialConfig.field_names()
    assert set(text.split(", ")) == TextConversion.field_names()


def outcomes_only(attempt):
    """Only the outcome of each earlier attempt."""
    return [f"Attempt {attempt.number}: {attempt.outcome}."]


def test_a_registered_memory_mode_is_a_training_setting_too(tmp_path, scratch_registries):
    pytest.importorskip("trl")
    from mage_agents.training import MetaRLConfig

    register_memory_mode("outcomes_only", outcomes_only)
    config = MetaRLConfig(
        output_dir=str(tmp_path), use_cpu=True, report_to=[], trial={"memory": "outcomes_only"}
    )
    assert config.trial.memory == "outcomes_only"  # it used to be "Unknown memory"
    with pytest.raises(ValueError, match="memory must be one of .*outcomes_only"):
        MetaRLConfig(output_dir=str(tmp_path), use_cpu=True, trial={"memory": "everything"})


def sign(trajectories, *, scale=1.0):
    """Each turn's advantage: the sign of its trial's return, times ``scale``."""
    return [np.full(len(t.turns), scale * np.sign(t.result.final_return)) for t in trajectories]


def test_a_registered_estimator_trains(tmp_path, scratch_registries):
    torch = pytest.importorskip("torch")
    pytest.importorskip("trl")
    from mage_agents.advantages import register_estimator
    from mage_agents.tiny_model import build_tiny_model
    from mage_agents.training import MetaRLConfig, MetaRLTrainer

    torch.set_num_threads(1)
    calls = []

    def counted(trajectories, **settings):
        calls.append(settings)
        return sign(trajectories, **settings)

    register_estimator("sign", counted, lambda config: {"scale": config.omega})
    config = MetaRLConfig(
        output_dir=str(tmp_path),
        estimator="sign",
        omega=2.0,
        opponent="always-pass",
        env_kwargs={"seat": "first", "max_invalid_actions": 1},
        trial={"num_episodes": 1, "reflection": False},
        num_generations=2,
        per_device_train_batch_size=2,
        max_completion_length=4,
        max_steps=1,
        use_cpu=True,
        gradient_checkpointing=False,
        report_to=[],
        save_strategy="no",
    )
    model, tokenizer = build_tiny_model(seed=0)
    MetaRLTrainer(model, config, processing_class=tokenizer).train()  # it used to raise
    assert calls == [{"scale": 2.0}]  # the config's fields, mapped by the registration


def test_no_estimator_is_looked_up_by_its_module_name():
    assert not (ROOT / "mage_agents" / "training" / "estimate.py").exists()
    trainer = (ROOT / "mage_agents" / "training" / "trainer.py").read_text()
    assert "import_module" not in trainer and "estimate(" in trainer


def test_an_env_variant_has_its_base_class_presets():
    level = "######\n#@_$.#\n#_*__#\n#____#\n######"
    pages = []
    for env_id in ("mage/Sokoban-v0", "mage/SokobanLarge-v0", "mage/SokobanMoreBoxes-v0"):
        env = make_trial(env_id, templates="lamer")  # SokobanLarge used to have no preset
        obs, _ = env.reset(seed=0, options={"level": level})
        pages.append(obs)
    assert pages[0] == pages[1] == pages[2] and "The initial state of the game is:" in pages[0]


ENV_PACKAGES = ("games", "puzzles", "webshop", "alfworld", "shopsim")


def test_the_trial_layer_imports_no_env():
    for path in sorted((ROOT / "mage_envs" / "meta").rglob("*.py")):
        for _, module in imported_modules(path):
            parts = module.split(".")
            inside = parts[0] == "mage_envs" and len(parts) > 1
            assert not (inside and parts[1] in ENV_PACKAGES), (path, module)


def test_the_registries_are_read_when_they_are_asked():
    # no copy of a name list is kept where a registry exists: the training config reads them
    config = (ROOT / "mage_agents" / "training" / "config.py").read_text()
    for copy in ("MEMORY_MODES =", "STRATEGIES =", "ESTIMATORS ="):
        assert copy not in config
    assert set(MEMORY_MODES) >= {"reflection_only", "history_only", "history_and_reflection"}
    assert mage_envs.meta.memory.MEMORY_MODES is MEMORY_MODES

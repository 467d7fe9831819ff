"""Template presets are trial settings like any other: named in a TrialConfig, resolved per env."""

import pickle

import gymnasium as gym
import pytest

import mage_envs
from mage_envs.meta import MetaEpisodeWrapper, TrialConfig, memory


def test_a_preset_name_is_checked_when_the_config_is_made():
    with pytest.raises(ValueError, match="templates must be a Templates or one of"):
        TrialConfig(templates="bogus")
    assert TrialConfig(templates="default").templates == TrialConfig().templates


def test_the_wrapper_resolves_a_preset_for_its_env():
    config = TrialConfig(num_episodes=2, templates="mage")
    assert config.templates == "mage"  # a name until an env picks the prompt file
    env = MetaEpisodeWrapper(gym.make("mage/KuhnPoker-v0"), config=config)
    assert env.config.templates.page is not None and env.templates.reflection_tag == "remark"
    obs, info = env.reset(seed=0)
    assert "Your Card: " in obs and info["phase"] == "play"


def test_a_preset_for_another_env_is_refused_clearly():
    with pytest.raises(ValueError, match="No 'lamer' template preset for KuhnPokerEnv"):
        mage_envs.make_trial("mage/KuhnPoker-v0", templates="lamer")


def test_the_page_state_is_per_trial():
    env = mage_envs.make_trial("mage/TicTacToe-v0", templates="mage", num_episodes=2)
    first, _ = env.reset(seed=1)
    env.step("<action>(2, 2)</action>")
    again, _ = env.reset(seed=1)
    assert again == first  # a new trial starts a fresh page: no steps of the last one


def test_a_memory_mode_without_a_page_layout_is_refused_under_a_preset(monkeypatch):
    monkeypatch.setitem(memory.MEMORY_MODES, "outcomes_only_test", lambda *args: ["done"])
    with pytest.raises(ValueError, match="has no page layout"):
        mage_envs.make_trial("mage/KuhnPoker-v0", templates="mage", memory="outcomes_only_test")
    mage_envs.make_trial("mage/KuhnPoker-v0", memory="outcomes_only_test")  # ours lays it out


def test_a_preset_trial_copies_and_pickles_whole():
    env = mage_envs.make_trial("mage/Sokoban-v0", templates="lamer", num_episodes=2)
    env.reset(seed=0)
    twin = pickle.loads(pickle.dumps(env))
    assert twin.step("<action>up</action>")[0] == env.step("<action>up</action>")[0]

"""Trial settings as a frozen, validated dataclass; conversion settings on the converter."""

import dataclasses

import gymnasium as gym
import pytest
from pettingzoo.classic import rps_v2

import mage_envs  # noqa: F401  (registers the ids)
from mage_envs import MetaEpisodeWrapper, make_trial
from mage_envs.meta import TextConversion, TrialConfig


def _transcript(env, seed):
    """Every observation, reward and info of one trial, answering the first legal move."""
    obs, info = env.reset(seed=seed)
    steps, done = [(obs, 0.0, info)], False
    while not done:
        answer = "a short lesson" if info["phase"] == "reflect" else info["legal_actions"][0]
        obs, reward, terminated, truncated, info = env.step(answer)
        steps.append((obs, reward, info))
        done = terminated or truncated
    return steps


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_episodes": 0}, ValueError, "num_episodes must be an int >= 1, not 0"),
        ({"num_episodes": 2.5}, ValueError, "num_episodes must be an int"),
        ({"history_steps": -1}, ValueError, "history_steps must be an int >= 0"),
        ({"memory": "all"}, ValueError, "memory must be one of"),
        ({"seat_rotation": "hand"}, ValueError, "seat_rotation must be one of"),
        ({"success_fn": 1}, TypeError, "success_fn must be a function"),
        ({"reflection_prompt": "{nonsense}"}, ValueError, "reflection_prompt"),
    ],
)
def test_bad_trial_settings_fail_when_the_config_is_made(kwargs, error, message):
    with pytest.raises(error, match=message):
        TrialConfig(**kwargs)


def test_a_config_is_frozen_and_cleans_its_templates_once():
    config = TrialConfig(reflection_prompt="Attempt {attempt}: {trajectory} \u2014 reflect.")
    assert config.templates.reflection_prompt == "Attempt {attempt}: {trajectory} - reflect."
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.num_episodes = 5


def test_the_wrapper_takes_a_ready_config_or_the_same_settings_one_by_one():
    config = TrialConfig(num_episodes=2, memory="history_only", same_task=False)
    ready = MetaEpisodeWrapper(gym.make("FrozenLake-v1"), config=config)
    loose = MetaEpisodeWrapper(
        gym.make("FrozenLake-v1"), num_episodes=2, memory="history_only", same_task=False
    )
    assert ready.config == loose.config and ready.num_episodes == 2
    assert ready.reset(seed=4) == loose.reset(seed=4)


def test_a_config_and_its_fields_as_keywords_make_the_same_trial():
    config = TrialConfig(
        num_episodes=2,
        same_task=False,
        stop_on_success=True,
        memory="history_and_reflection",
        max_reflection_chars=50,
        max_history_chars=300,
        history_steps=2,
        seat_rotation="episode",
        success_fn=lambda episode_return, info: episode_return >= 0,
        reflection_prompt="Attempt {attempt} is over: {trajectory} Say what to change.",
        pass_options=True,
        max_observation_chars=3000,
    )
    # every field, generated from the dataclass: a field the wrapper dropped would differ here
    keywords = {f.name: getattr(config, f.name) for f in dataclasses.fields(TrialConfig)}
    ready = MetaEpisodeWrapper(gym.make("mage/KuhnPoker-v0"), config=config)
    loose = MetaEpisodeWrapper(gym.make("mage/KuhnPoker-v0"), **keywords)
    assert ready.config == loose.config
    assert _transcript(ready, seed=7) == _transcript(loose, seed=7)


def test_a_ready_config_is_used_as_it_is_and_a_keyword_beside_it_wins():
    config, conversion = TrialConfig(num_episodes=2), TextConversion(max_invalid_actions=1)
    env = MetaEpisodeWrapper(gym.make("FrozenLake-v1"), config=config, conversion=conversion)
    assert env.config is config  # not rebuilt on its way in
    beside = MetaEpisodeWrapper(
        gym.make("FrozenLake-v1"), config=config, num_episodes=4, max_invalid_actions=2
    )
    assert (beside.num_episodes, config.num_episodes) == (4, 2)  # the given config is unchanged
    assert beside.config == dataclasses.replace(config, num_episodes=4)
    beside.reset(seed=0)
    assert not beside.step("fly")[3] and beside.step("fly")[-1]["episode_truncated"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"config": {"num_episodes": 2}}, "config must be a TrialConfig, not dict"),
        ({"conversion": TrialConfig()}, "conversion must be a TextConversion, not TrialConfig"),
        ({"config": TrialConfig(), "episodes": 2, "memroy": "x"}, "arguments 'episodes', 'memroy'"),
    ],
)
def test_the_wrapper_refuses_what_is_no_setting(kwargs, message):
    with pytest.raises(TypeError, match=message):
        MetaEpisodeWrapper(gym.make("FrozenLake-v1"), **kwargs)
    with pytest.raises(TypeError, match="positional"):
        MetaEpisodeWrapper(gym.make("FrozenLake-v1"), 3)  # the settings are keywords


def test_bad_values_given_as_keywords_get_the_configs_messages():
    with pytest.raises(ValueError, match="^num_episodes must be an int >= 1, not 0.$"):
        MetaEpisodeWrapper(gym.make("FrozenLake-v1"), num_episodes=0)
    with pytest.raises(ValueError, match="^memory must be one of"):
        make_trial("mage/KuhnPoker-v0", config=TrialConfig(), memory="all")


def test_a_misspelt_setting_is_an_error_that_names_it():
    with pytest.raises(
        TypeError, match="unexpected keyword argument 'num_episode'; .*num_episodes"
    ):
        MetaEpisodeWrapper(gym.make("FrozenLake-v1"), num_episode=2)
    with pytest.raises(ValueError, match="unknown trial setting 'num_episode'; .*same_task"):
        TrialConfig.from_mapping({"num_episode": 2})


def test_conversion_settings_belong_to_the_converter():
    conversion = TextConversion(max_invalid_actions=1)
    env = MetaEpisodeWrapper(gym.make("FrozenLake-v1"), num_episodes=2, conversion=conversion)
    env.reset(seed=0)
    _, _, _, _, info = env.step("fly")
    assert info["episode_truncated"] and info["phase"] == "reflect"
    with pytest.raises(TypeError, match="PettingZoo"):
        TextConversion(learner="player_0").apply(gym.make("FrozenLake-v1"))


def test_envs_declare_the_reset_options_the_wrapper_passes():
    kuhn = gym.make("mage/KuhnPoker-v0")
    assert {"seat", "keep_opponent"} <= set(kuhn.unwrapped.metadata["reset_options"])
    assert MetaEpisodeWrapper(kuhn, seat_rotation="episode").pass_options
    assert MetaEpisodeWrapper(rps_v2.parallel_env(), learner="player_0").pass_options
    assert not MetaEpisodeWrapper(gym.make("FrozenLake-v1")).pass_options


def test_each_reset_starts_from_fresh_trial_state():
    env = make_trial("mage/KuhnPoker-v0", num_episodes=2, opponent="always-bet")
    first = env.reset(seed=3)
    env.step("call")
    env.step("<reflection>call more</reflection>")
    assert env.reset(seed=3) == first  # no memory or record of the previous trial survives
    with pytest.raises(RuntimeError, match="No episode"):
        env.result()


def test_a_pettingzoo_trial_with_openspiel_opponents_copies_whole():
    import copy
    import pickle

    from mage_envs.pettingzoo import kuhn_poker_v0

    def trial():
        env = MetaEpisodeWrapper(kuhn_poker_v0.env(), opponents="mage-kuhn-train", num_episodes=2)
        env.reset(seed=5)
        return env

    env, fresh = trial(), trial()
    twin = copy.deepcopy(env)
    env.step("bet")  # the original moves on; the copy's opponent must read the copy's game
    assert twin.step("check")[:4] == fresh.step("check")[:4]
    assert pickle.loads(pickle.dumps(twin)).step("bet")[0] == twin.step("bet")[0]


def test_every_info_carries_the_inner_observation_without_header_or_memory():
    env = make_trial("mage/KuhnPoker-v0", num_episodes=2, opponent="always-bet")
    obs, info = env.reset(seed=0)
    assert obs.endswith(info["inner_observation"]) and not info["inner_observation"].startswith(
        "Attempt"
    )


def test_gym_make_rebuilds_a_trial_from_its_spec_with_the_same_settings():
    trial = make_trial("mage/KuhnPoker-v0", num_episodes=2, memory="history_only")
    again = gym.make(trial.spec)  # the wrapper's keywords are recorded in the spec
    assert again.config == trial.config and again.reset(seed=1) == trial.reset(seed=1)

"""Non-text and PettingZoo envs as text trials; checkers, garbage input, seeds, vector envs."""

from __future__ import annotations

import random
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.classic import connect_four_v3, rps_v2, tictactoe_v3

import mage_envs  # noqa: F401  (registers the ids)
from mage_envs import MetaEpisodeWrapper, TextAdapter, make_trial
from mage_envs.meta import PettingZooTextEnv, TextWrapper
from mage_envs.pettingzoo import tic_tac_toe_v0


def random_text_trial(env, seed, garbage=0.2):
    """Play a trial with random legal names, garbage and reflections; return the last info."""
    rng = random.Random(seed)
    obs, info = env.reset(seed=seed)
    for _ in range(10_000):
        assert env.observation_space.contains(obs)
        if info["phase"] == "reflect":
            action = "<reflection>" + "r" * rng.randint(0, 50) + "</reflection>"
        elif rng.random() < garbage or not info["legal_actions"]:
            action = rng.choice(["", "??", "0.5 0.5", "LEFT RIGHT", "\x00\n", "a" * 3000])
        else:
            action = rng.choice(info["legal_actions"])
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(reward, float)
        if terminated or truncated:
            return info
    raise AssertionError("the trial did not end")


GYM_IDS = ["FrozenLake-v1", "Blackjack-v1", "CliffWalking-v1", "Taxi-v4"]


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_toy_text_envs_become_text_trials(env_id):
    kwargs = {"max_episode_steps": 30} if env_id != "Blackjack-v1" else {}
    env = MetaEpisodeWrapper(gym.make(env_id, **kwargs), num_episodes=3)
    for seed in range(3):
        trial = random_text_trial(env, seed)["trial"]
        assert trial["num_episodes"] == 3 and len(trial["returns"]) == 3
        assert trial["invalid_actions"] > 0


def test_frozen_lake_names_its_actions_and_the_goal_is_a_success():
    env = MetaEpisodeWrapper(gym.make("FrozenLake-v1", is_slippery=False), num_episodes=1)
    obs, info = env.reset(seed=0)
    assert info["legal_actions"] == ["left", "down", "right", "up"]
    for move in ["down", "down", "right", "right", "down", "right"]:
        obs, reward, terminated, _, info = env.step(f"<action>{move}</action>")
    assert terminated and reward == 1.0 and info["trial"]["successes"] == [True]


def test_blackjack_hides_the_dealers_second_card():
    env = MetaEpisodeWrapper(gym.make("Blackjack-v1"), num_episodes=1)
    obs, info = env.reset(seed=5)
    player, shown, ace = env.unwrapped._get_obs()
    # The whole observation: player sum, dealer's shown card, usable ace; nothing else.
    body = f"Observation: ({player}, {shown}, {int(ace)})\nLegal actions: stick, hit."
    assert obs == f"Attempt 1 of 1.\n\nEnvironment: Blackjack-v1.\n{body}"


@pytest.mark.parametrize(
    "make", [tictactoe_v3.env, connect_four_v3.env, lambda: rps_v2.parallel_env(max_cycles=3)]
)
def test_pettingzoo_classic_games_become_text_trials(make):
    env = MetaEpisodeWrapper(make(), num_episodes=2, learner=None)
    for seed in range(3):
        trial = random_text_trial(env, seed)["trial"]
        assert len(trial["returns"]) == 2 and trial["opponents"] == ["random", "random"]


def test_pettingzoo_opponents_can_be_functions_and_dicts():
    always_rock = lambda obs, info, space: 0  # noqa: E731
    env = PettingZooTextEnv(rps_v2.parallel_env(max_cycles=4), opponents={"player_1": always_rock})
    obs, info = env.reset(seed=0)
    total = 0.0
    for _ in range(4):
        obs, reward, terminated, truncated, info = env.step("paper")
        total += reward
    assert truncated and total == 4.0 and info["payoff"] == 4.0 and info["success"]
    with pytest.raises(ValueError, match="no policy"):
        PettingZooTextEnv(rps_v2.parallel_env(), opponents={}).reset(seed=0)
    with pytest.raises(ValueError, match="learner"):
        PettingZooTextEnv(rps_v2.parallel_env(), learner="nobody")


def test_an_openspiel_opponent_needs_an_openspiel_env():
    from mage_envs.opponents import RandomOpponent

    env = PettingZooTextEnv(connect_four_v3.env(), opponents=RandomOpponent())
    env.reset(seed=0)
    with pytest.raises(TypeError, match="pyspiel state"):
        for _ in range(3):
            env.step("3")


def test_learner_and_opponents_are_for_pettingzoo_only():
    with pytest.raises(TypeError, match="PettingZoo"):
        MetaEpisodeWrapper(gym.make("FrozenLake-v1"), learner="player_0")


WRAPPED = {
    "frozen_lake": lambda: MetaEpisodeWrapper(gym.make("FrozenLake-v1"), num_episodes=2),
    "blackjack": lambda: MetaEpisodeWrapper(gym.make("Blackjack-v1"), num_episodes=2),
    "taxi": lambda: MetaEpisodeWrapper(gym.make("Taxi-v4", max_episode_steps=20), num_episodes=2),
    "kuhn": lambda: make_trial("mage/KuhnPoker-v0", num_episodes=2),
    "tic_tac_toe_pz": lambda: MetaEpisodeWrapper(tictactoe_v3.env(), num_episodes=2),
    "suite_tic_tac_toe_pz": lambda: MetaEpisodeWrapper(tic_tac_toe_v0.env(), num_episodes=2),
}


@pytest.mark.parametrize("name", sorted(WRAPPED))
def test_check_env_passes_on_wrapped_envs(name):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*different from the unwrapped")
        check_env(WRAPPED[name](), skip_render_check=True)


@pytest.mark.parametrize("name", sorted(WRAPPED))
def test_a_seed_fixes_the_whole_trial_seed_zero_included(name):
    env = WRAPPED[name]()
    for seed in (0, 1):
        first = _trace(env, seed)
        assert _trace(env, seed) == first
        assert _trace(WRAPPED[name](), seed) == first
    distinct = {repr(_trace(env, seed)) for seed in (0, 12345, 7, 99, 2024)}
    assert len(distinct) > 1 or name == "frozen_lake"


def _trace(env, seed):
    rng = random.Random(7)
    obs, info = env.reset(seed=seed)
    trace = [obs]
    while True:
        legal = info["legal_actions"] if info["phase"] == "play" else []
        obs, reward, terminated, truncated, info = env.step(rng.choice(legal or ["x"]))
        trace.append((obs, reward))
        if terminated or truncated:
            return trace + [info["trial"]]


@settings(max_examples=60, deadline=None)
@given(text=st.one_of(st.text(max_size=300), st.none(), st.integers(), st.binary(max_size=20)))
def test_garbage_actions_never_raise(text):
    for make in (WRAPPED["blackjack"], WRAPPED["tic_tac_toe_pz"], WRAPPED["kuhn"]):
        env = make()
        obs, info = env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step(text)
        assert env.observation_space.contains(obs)


def test_the_invalid_answer_cap_truncates_the_episode_and_the_trial_goes_on():
    env = MetaEpisodeWrapper(gym.make("FrozenLake-v1"), num_episodes=2, max_invalid_actions=2)
    env.reset(seed=0)
    env.step("jump")
    obs, _, terminated, _, info = env.step("jump")
    assert not terminated and info["phase"] == "reflect" and info["episode_truncated"]
    obs, _, _, _, info = env.step("<reflection>move, do not jump</reflection>")
    assert info["episode_index"] == 1 and "move, do not jump" in obs


def test_text_adapter_spaces():
    box = spaces.Box(-1.0, 1.0, (2,), np.float32)
    adapter = TextAdapter(
        spaces.Dict({"pos": box, "k": spaces.Discrete(3)}),
        spaces.Tuple((spaces.Discrete(2), spaces.MultiDiscrete([3, 3]), box)),
    )
    text = adapter.observation_text({"pos": np.array([0.5, -0.25]), "k": 2})
    assert text == "k: 2\npos: [ 0.5 , -0.25]"  # Dict spaces sort their keys
    assert adapter.legal_actions() == [] and "5 numbers" in adapter.answer_format()
    action = adapter.parse("<action>1 2 0 0.5 -1</action>", [])
    assert action[0] == 1 and list(action[1]) == [2, 0] and list(action[2]) == [0.5, -1.0]
    assert adapter.parse("1 2 0 0.5", []) is None  # too few numbers
    assert adapter.parse("1 3 0 0.5 0", []) is None  # 3 is out of MultiDiscrete([3, 3])
    assert adapter.parse("1 2 0 0.5 7", []) is None  # 7 is out of the box
    assert adapter.parse("1.5 2 0 0 0", []) is None  # not an integer


@pytest.mark.parametrize(
    ("space", "answer"),
    [
        (spaces.MultiDiscrete([3, 3]), "1e999 1"),  # infinity
        (spaces.MultiDiscrete([3, 3]), "99999999999999999999 1"),  # beyond int64
        (spaces.Tuple((spaces.Discrete(3),)), "1e999"),
        (spaces.Tuple((spaces.Discrete(3),)), "99999999999999999999"),
        (spaces.MultiBinary(2), "257 0"),  # would wrap around to 1 in int8
        (spaces.Box(-np.inf, np.inf, (1,), np.float32), "1e39"),  # inf in float32
        (spaces.Box(-np.inf, np.inf, (1,), np.float64), "-1e999"),
        (spaces.Box(0, 10, (2,), np.int64), "1.5 2"),  # not an integer
    ],
)
def test_numbers_no_action_can_take_are_invalid_answers_not_errors(space, answer):
    adapter = TextAdapter(spaces.Discrete(2), space)
    assert adapter.parse(answer, []) is None
    assert adapter.parse(f"<action>{answer}</action>", []) is None


def test_numeric_answers_in_range_still_parse():
    box = TextAdapter(spaces.Discrete(2), spaces.Box(-np.inf, np.inf, (1,), np.float32))
    assert box.parse("1e38", []) == pytest.approx([1e38])
    assert list(TextAdapter(spaces.Discrete(2), spaces.MultiBinary(2)).parse("1 0", [])) == [1, 0]
    integer_box = TextAdapter(spaces.Discrete(2), spaces.Box(0, 10, (2,), np.int64))
    assert list(integer_box.parse("3 4.0", [])) == [3, 4]


def test_text_adapter_rejects_what_it_cannot_write():
    with pytest.raises(TypeError, match="max_elements"):
        TextAdapter(spaces.Box(0, 255, (64, 64, 3), np.uint8), spaces.Discrete(2))
    with pytest.raises(TypeError, match="Graph"):
        TextAdapter(spaces.Graph(spaces.Discrete(2), None), spaces.Discrete(2))
    custom = TextAdapter(
        spaces.Box(0, 255, (64, 64, 3), np.uint8),
        spaces.Discrete(2),
        observation_text=lambda o: "img",
    )
    assert custom.observation_text(None) == "img"
    with pytest.raises(ValueError, match="distinct"):
        TextAdapter(spaces.Discrete(3), spaces.Discrete(2), action_names=["a", "a"])


def test_text_wrapper_uses_the_action_mask_of_the_info():
    class Masked(gym.Env):
        observation_space = spaces.Discrete(2)
        action_space = spaces.Discrete(3)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return 0, {"action_mask": np.array([1, 0, 1], dtype=np.int8)}

        def step(self, action):
            assert action != 1
            return 1, 1.0, True, False, {}

    env = TextWrapper(Masked())
    obs, info = env.reset(seed=0)
    assert info["legal_actions"] == ["0", "2"] and info["legal_action_ids"] == [0, 2]
    _, _, _, _, info = env.step("1")
    assert info["invalid_action"]
    _, reward, terminated, _, _ = env.step("2")
    assert terminated and reward == 1.0


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_vector_envs_run_trials(kind):
    fns = [lambda: make_trial("mage/KuhnPoker-v0", num_episodes=2)] * 2
    if kind == "sync":
        envs = gym.vector.SyncVectorEnv(fns)
    else:  # gymnasium 1.4's shared memory garbles Text observations: pass them by pipe
        envs = gym.vector.AsyncVectorEnv(fns, shared_memory=False)
    try:
        obs, infos = envs.reset(seed=[0, 1])
        assert all(o.startswith("Attempt 1 of 2.") for o in obs)
        single = make_trial("mage/KuhnPoker-v0", num_episodes=2)
        assert obs[1] == single.reset(seed=1)[0]
        ended = []
        for _ in range(12):
            actions = tuple(
                "<reflection>ok</reflection>" if phase == "reflect" else "check"
                for phase in infos["phase"]
            )
            obs, rewards, terminated, truncated, infos = envs.step(actions)
            for i in np.flatnonzero(terminated):
                assert infos["_trial"][i]
                ended.append(infos["trial"]["returns"][i])
        assert ended and all(len(returns) == 2 for returns in ended)
    finally:
        envs.close()

"""Trial bookkeeping of MetaEpisodeWrapper against hand-written trials (scripted outcomes)."""

from __future__ import annotations

import json
import time

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st

from mage_envs import MetaEpisodeWrapper, TrialResult
from mage_envs.meta import differential_returns, mean_pass_at_k, pass_at_k
from mage_envs.text import MAX_TEXT_CHARS, TEXT_CHARSET


class ScriptedEnv(gym.Env[str, str]):
    """Episode k (counted over resets) lasts `length` steps and pays returns[k] at its end."""

    metadata = {"render_modes": []}

    def __init__(self, returns, successes=None, length=1, options_log=None):
        self.returns = list(returns)
        self.successes = successes
        self.length = length
        self.observation_space = spaces.Text(MAX_TEXT_CHARS, charset=TEXT_CHARSET)
        self.action_space = spaces.Text(MAX_TEXT_CHARS, charset=TEXT_CHARSET)
        self.resets = 0
        self.seeds = []
        self.options_log = options_log

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if self.options_log is not None:
            self.options_log.append(options)
        self.seeds.append(seed)
        self.episode, self.t = self.resets, 0
        self.resets += 1
        return "start", {"legal_actions": ["go"]}

    def step(self, action):
        self.t += 1
        done = self.t >= self.length
        info = {"legal_actions": [] if done else ["go"], "invalid_action": action != "go"}
        reward = 0.0
        if done:
            reward = self.returns[self.episode % len(self.returns)]
            if self.successes is not None:
                info["success"] = self.successes[self.episode % len(self.successes)]
        return f"episode {self.episode} step {self.t}", reward, done, False, info


def play(env, seed=0, action="go", reflection="<reflection>try again</reflection>"):
    """Play a whole trial; return the list of (obs, reward, info) and the last info."""
    obs, info = env.reset(seed=seed)
    steps = [(obs, 0.0, info)]
    while True:
        answer = reflection if info["phase"] == "reflect" else action
        obs, reward, terminated, truncated, info = env.step(answer)
        steps.append((obs, reward, info))
        if terminated or truncated:
            return steps, info


def test_pass_at_k_and_differential_returns_by_hand():
    assert pass_at_k([False, False, True], 3) == [0.0, 0.0, 1.0]
    assert pass_at_k([True], 3) == [1.0, 1.0, 1.0]
    assert differential_returns([2.0, -1.0, 3.0]) == [2.0, -3.0, 4.0]
    with pytest.raises(ValueError, match="successes"):
        pass_at_k([True, True], 1)


def test_trial_info_matches_a_hand_written_trial():
    env = MetaEpisodeWrapper(ScriptedEnv([-1.0, 0.0, 2.0]), num_episodes=3)
    _, info = play(env)
    trial = info["trial"]
    assert trial["returns"] == [-1.0, 0.0, 2.0]
    assert trial["successes"] == [False, False, True]
    assert trial["pass_at_k"] == [0.0, 0.0, 1.0]
    assert trial["final_return"] == 2.0
    assert trial["differential_returns"] == [-1.0, 1.0, 2.0]
    assert trial["solved_at"] == 2
    assert trial["reflections"] == ["try again", "try again"]
    assert trial["invalid_actions"] == 0
    assert trial["opponents"] == [None, None, None] and trial["seats"] == [None, None, None]
    json.dumps(trial)  # the runner stores it as JSON
    assert TrialResult.from_info(info).to_dict() == trial


def test_the_envs_success_flag_wins_over_the_return():
    env = MetaEpisodeWrapper(ScriptedEnv([5.0, -1.0], successes=[False, True]), num_episodes=2)
    _, info = play(env)
    assert info["trial"]["successes"] == [False, True]
    assert info["trial"]["pass_at_k"] == [0.0, 1.0]


def test_custom_success_predicate():
    env = MetaEpisodeWrapper(
        ScriptedEnv([1.0, 3.0]), num_episodes=2, success_fn=lambda ret, info: ret >= 3
    )
    _, info = play(env)
    assert info["trial"]["successes"] == [False, True]


def test_phases_rewards_and_info_keys_step_by_step():
    env = MetaEpisodeWrapper(ScriptedEnv([1.0, 2.0], length=2), num_episodes=2)
    steps, _ = play(env)
    phases = [(i["phase"], i["episode_index"], i["step_in_episode"]) for _, _, i in steps]
    assert phases == [
        ("play", 0, 0),
        ("play", 0, 1),
        ("reflect", 0, 2),
        ("play", 1, 0),
        ("play", 1, 1),
        ("play", 1, 2),
    ]
    rewards = [r for _, r, _ in steps]
    assert rewards == [0.0, 0.0, 1.0, 0.0, 0.0, 2.0]  # the reflection step (index 3) pays 0
    assert steps[2][2]["episode_return"] == 1.0 and steps[2][2]["episode_success"] is True
    assert "episode_return" not in steps[1][2]
    assert all("legal_actions" in i for _, _, i in steps)  # the inner info is passed on


def test_stop_on_success_ends_early_and_later_k_count_as_solved():
    env = MetaEpisodeWrapper(ScriptedEnv([0.0, 1.0, -5.0]), num_episodes=3, stop_on_success=True)
    steps, info = play(env)
    trial = info["trial"]
    assert trial["returns"] == [0.0, 1.0] and trial["solved_at"] == 1
    assert trial["pass_at_k"] == [0.0, 1.0, 1.0] and trial["stopped_early"] is True
    assert trial["final_return"] == 1.0 and trial["differential_returns"] == [0.0, 1.0]
    assert env.env.resets == 2


def test_without_reflection_the_next_episode_starts_in_the_same_step():
    inner = ScriptedEnv([1.0, 0.0])
    env = MetaEpisodeWrapper(inner, num_episodes=2, reflection=False)
    obs, info = env.reset(seed=3)
    obs, reward, terminated, _, info = env.step("go")
    assert not terminated and reward == 1.0
    assert info["phase"] == "play" and info["episode_index"] == 1
    assert info["episode_return"] == 1.0 and obs.startswith("Attempt 2 of 2.")
    assert info["episode_truncated"] is False
    obs, reward, terminated, _, info = env.step("go")
    assert terminated and info["trial"]["reflections"] == []


def test_invalid_actions_are_counted():
    env = MetaEpisodeWrapper(ScriptedEnv([1.0], length=1), num_episodes=2)
    obs, info = env.reset(seed=0)
    _, _, _, _, info = env.step("nonsense")
    env.step("<reflection>x</reflection>")
    _, _, terminated, _, info = env.step("go")
    assert terminated and info["trial"]["invalid_actions"] == 1


def test_stepping_a_finished_trial_raises_a_clear_error():
    env = MetaEpisodeWrapper(ScriptedEnv([1.0]), num_episodes=1)
    play(env)
    with pytest.raises(RuntimeError, match="reset"):
        env.step("go")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_episodes": 0}, "num_episodes"),
        ({"memory": "everything"}, "memory"),
        ({"history_steps": -1}, "history_steps"),
        ({"seat_rotation": "hand"}, "seat_rotation"),
        ({"seat_rotation": "episode"}, "pass_options"),
        ({"num_episodes": True}, "num_episodes"),
        ({"max_reflection_chars": None}, "max_reflection_chars"),
        ({"max_history_chars": -1}, "max_history_chars"),
        ({"max_observation_chars": 0}, "max_observation_chars"),
        ({"invalid_action_penalty": 0.5}, "already text"),  # the env applies its own rules
        ({"max_invalid_actions": 2}, "already text"),
    ],
)
def test_bad_settings_are_rejected_with_a_reason(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MetaEpisodeWrapper(ScriptedEnv([1.0]), **kwargs)


def test_settings_of_the_right_kind_are_accepted():
    env = MetaEpisodeWrapper(ScriptedEnv([1.0]), num_episodes=np.int64(2))
    assert env.num_episodes == 2 and len(play(env)[1]["trial"]["pass_at_k"]) == 2
    with pytest.raises(TypeError, match="success_fn"):
        MetaEpisodeWrapper(ScriptedEnv([1.0]), success_fn=True)


def test_a_mid_trial_result_has_not_stopped_early():
    env = MetaEpisodeWrapper(ScriptedEnv([0.0, 1.0]), num_episodes=3)
    env.reset(seed=0)
    env.step("go")
    result = env.result()
    assert result.returns == [0.0] and result.pass_at_k == [0.0, 0.0, 0.0]
    assert result.stopped_early is False


def test_a_huge_reflection_is_read_in_linear_time():
    env = MetaEpisodeWrapper(ScriptedEnv([0.0]), num_episodes=2)
    env.reset(seed=0)
    env.step("go")
    start = time.perf_counter()
    env.step("<reflection>" * 20_000)  # no closing tag: a lazy regex rescans to the end each time
    assert time.perf_counter() - start < 1.0  # the quadratic search took about 20 s
    assert len(env.result().reflections[0]) == 2000


def test_same_task_replays_the_seed_and_fresh_tasks_do_not():
    same = MetaEpisodeWrapper(ScriptedEnv([0.0]), num_episodes=3, same_task=True)
    play(same, seed=0)
    assert len(set(same.env.seeds)) == 1 and same.env.seeds[0] is not None
    fresh = MetaEpisodeWrapper(ScriptedEnv([0.0]), num_episodes=3, same_task=False)
    play(fresh, seed=0)
    assert len(set(fresh.env.seeds)) == 3


def test_keep_opponent_and_seat_options_reach_an_env_that_takes_them():
    log = []
    env = MetaEpisodeWrapper(
        ScriptedEnv([0.0], options_log=log),
        num_episodes=3,
        seat_rotation="episode",
        pass_options=True,
        same_task=False,
    )
    play(env, seed=1)
    assert [o.get("keep_opponent", False) for o in log] == [False, True, True]
    seats = [o["seat"] for o in log]
    assert seats[0] != seats[1] and seats[0] == seats[2]


def test_plain_envs_get_no_options():
    log = []
    play(MetaEpisodeWrapper(ScriptedEnv([0.0], options_log=log), num_episodes=2))
    assert log == [None, None]


@settings(max_examples=60, deadline=None)
@given(
    outcomes=st.lists(st.integers(-3, 3), min_size=1, max_size=5),
    stop=st.booleans(),
)
def test_trial_figures_follow_their_definitions(outcomes, stop):
    n = len(outcomes)
    env = MetaEpisodeWrapper(ScriptedEnv(outcomes), num_episodes=n, stop_on_success=stop)
    _, info = play(env)
    result = TrialResult.from_info(info)
    played = outcomes
    if stop and any(o > 0 for o in outcomes):
        played = outcomes[: next(i for i, o in enumerate(outcomes) if o > 0) + 1]
    assert result.returns == [float(o) for o in played]
    for k in range(1, n + 1):
        assert result.pass_at_k[k - 1] == float(any(o > 0 for o in outcomes[:k]))
    assert sum(result.differential_returns) == pytest.approx(result.final_return)
    assert len(result.reflections) == len(played) - 1


def test_mean_pass_at_k_over_trials():
    trials = [
        TrialResult.from_episodes([0.0, 1.0], [False, True], num_episodes=2),
        TrialResult.from_episodes([1.0], [True], num_episodes=2),
        TrialResult.from_episodes([0.0, 0.0], [False, False], num_episodes=2),
    ]
    assert mean_pass_at_k(trials) == pytest.approx([1 / 3, 2 / 3])
    with pytest.raises(ValueError, match="different numbers"):
        mean_pass_at_k([trials[0], TrialResult.from_episodes([1.0], [True], num_episodes=1)])


def test_a_reset_that_ignores_the_seed_is_reported():
    class Drifting(ScriptedEnv):
        def reset(self, *, seed=None, options=None):
            _, info = super().reset(seed=seed, options=options)
            return f"start {self.resets}", info

    with pytest.warns(UserWarning, match="not determined by the seed"):
        play(MetaEpisodeWrapper(Drifting([0.0]), num_episodes=2))


def test_a_broken_template_fails_when_the_wrapper_is_made():
    from mage_envs.meta import Templates

    with pytest.raises(ValueError, match="attempt"):
        MetaEpisodeWrapper(ScriptedEnv([1.0]), templates=Templates(attempt="Try {tries}"))

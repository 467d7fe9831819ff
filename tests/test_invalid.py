"""The one invalid-answer rule: its settings, its wording, and every text env applying it."""

import gymnasium as gym
import pytest
from pettingzoo.classic import rps_v2

import mage_envs  # noqa: F401  (registers the ids)
from mage_envs.invalid import InvalidAnswerRule, InvalidStreak, did_not_name
from mage_envs.meta import PettingZooTextEnv, TextWrapper


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"penalty": -1.0}, "invalid_action_penalty must be a finite number >= 0"),
        ({"penalty": float("inf")}, "invalid_action_penalty"),
        ({"max_in_a_row": 0}, "max_invalid_actions must be >= 1, not 0"),
    ],
)
def test_bad_rule_settings_fail_with_the_setting_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        InvalidAnswerRule(**kwargs)


def test_rule_reward_is_never_negative_zero_and_the_streak_resets():
    assert str(InvalidAnswerRule().reward) == "0.0"
    streak = InvalidStreak(InvalidAnswerRule(max_in_a_row=2))
    assert streak.invalid() is False
    streak.clear()
    assert streak.invalid() is False and streak.invalid() is True
    assert InvalidStreak(InvalidAnswerRule(max_in_a_row=None)).invalid() is False


def _two_invalid(env, seed=0):
    env.reset(seed=seed)
    first = env.step("no such move")
    second = env.step("no such move")
    return first, second


@pytest.mark.parametrize(
    ("make", "forfeit"),
    [
        # a game cut off is a forfeit: its worst payoff (Kuhn poker -2) on top of the penalty
        (
            lambda: gym.make(
                "mage/KuhnPoker-v0", invalid_action_penalty=0.5, max_invalid_actions=2
            ),
            -2.0,
        ),
        (lambda: TextWrapper(gym.make("FrozenLake-v1"), None, 0.5, 2), None),  # no opponent
        (  # a game without an OpenSpiel state: its worst payoff is unknown, 0 unless given
            lambda: PettingZooTextEnv(
                rps_v2.parallel_env(max_cycles=3), invalid_action_penalty=0.5, max_invalid_actions=2
            ),
            0.0,
        ),
    ],
    ids=["openspiel", "converted", "pettingzoo"],
)
def test_every_converted_or_game_env_words_and_scores_invalid_answers_alike(make, forfeit):
    env = make()
    (obs1, r1, _, t1, info1), (obs2, r2, _, t2, info2) = _two_invalid(env)
    legal = info1["legal_actions"]
    expected = InvalidAnswerRule(0.5, 2).feedback(did_not_name(legal))
    assert obs1.startswith(expected) and r1 == -0.5 and not t1 and info1["invalid_action"]
    stopped = InvalidAnswerRule(0.5, 2).feedback(did_not_name(legal), stopped=True)
    assert obs2.startswith(stopped) and r2 == -0.5 + (forfeit or 0.0) and t2
    assert info2["invalid_action"] and info2.get("forfeit", False) == (forfeit is not None)
    assert stopped.endswith("2 invalid moves in a row: the game is stopped.")


@pytest.mark.parametrize(
    ("env_id", "unit"), [("mage/Sokoban-v0", "answer"), ("mage/Minesweeper-v0", "move")]
)
def test_puzzles_use_the_rule_without_a_streak_limit(env_id, unit):
    env = gym.make(env_id, invalid_action_penalty=0.25, max_steps=10)
    env.reset(seed=3)
    for _ in range(6):  # more than the default streak of 5: the turn budget alone ends puzzles
        obs, reward, _, truncated, info = env.step("no such move")
        assert obs.startswith(f"Invalid {unit}: ") and reward == -0.25 and not truncated
    assert env.unwrapped.invalid_rule == InvalidAnswerRule(0.25, None, unit)


def test_make_trial_builds_the_env_once_with_its_invalid_answer_rules(monkeypatch):
    from mage_envs import make_trial

    built = []
    make = gym.make
    monkeypatch.setattr(gym, "make", lambda *a, **k: built.append(a) or make(*a, **k))
    env = make_trial("mage/KuhnPoker-v0", max_invalid_actions=2, invalid_action_penalty=0.5)
    assert len(built) == 1
    assert env.unwrapped.invalid_rule == InvalidAnswerRule(0.5, 2)
    again = make_trial("mage/KuhnPoker-v0")  # the id was checked once: no checker layer now
    assert "PassiveEnvChecker" not in str(again.env)


@pytest.mark.parametrize("env_id", sorted(mage_envs.ENV_IDS))
def test_each_env_declares_exactly_the_rule_settings_its_constructor_takes(env_id):
    from mage_envs.invalid import INVALID_ANSWER_SETTINGS

    env = gym.make(env_id, disable_env_checker=True)
    declared = env.unwrapped.metadata["invalid_answer_settings"]
    for name in INVALID_ANSWER_SETTINGS:
        if name in declared:
            gym.make(env_id, disable_env_checker=True, **{name: 1})
        else:
            with pytest.raises(TypeError, match=name):
                gym.make(env_id, disable_env_checker=True, **{name: 1})


class _PlainTextEnv(gym.Env):
    """A text env that takes a penalty but does not declare it."""

    metadata = {"render_modes": []}

    def __init__(self, invalid_action_penalty: float = 0.0):
        from mage_envs.text import text_space

        self.observation_space = self.action_space = text_space()


def test_make_trial_gives_the_rule_settings_to_an_env_only_where_it_declares_them():
    from mage_envs import make_trial

    gym.register(id="test/PlainText-v0", entry_point=_PlainTextEnv)
    try:
        with pytest.raises(
            ValueError, match=r"already text.*metadata\['invalid_answer_settings'\]"
        ):
            make_trial("test/PlainText-v0", invalid_action_penalty=0.5)
    finally:
        del gym.registry["test/PlainText-v0"]

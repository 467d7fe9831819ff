"""Every registered id: Gymnasium's checker, determinism, garbage text, fresh import."""

import itertools
import subprocess
import sys
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import mage_envs

GAME_KWARGS = [
    dict(seat=seat, reward_scale=scale, invalid_action_penalty=penalty)
    for seat, scale, penalty in itertools.product(
        ("first", "second", "random"), (1.0, 5.0), (0.0, 0.5)
    )
]
COMBOS = (
    [(env_id, {}) for env_id in mage_envs.ENV_IDS]
    + [
        (env_id, kwargs)
        for env_id in ("mage/KuhnPoker-v0", "mage/TicTacToe-v0", "mage/OpenSpiel-v0")
        for kwargs in GAME_KWARGS
    ]
    + [
        ("mage/OpenSpiel-v0", dict(game=game))
        for game in ("leduc_poker", "liars_dice", "breakthrough", "kuhn_poker", "chess")
    ]
)


def _id(value):
    return (
        str(value)
        if not isinstance(value, dict)
        else ",".join(f"{k}={v}" for k, v in value.items())
    )


@pytest.mark.parametrize(("env_id", "kwargs"), COMBOS, ids=_id)
def test_check_env(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def _rollout(env_id, seed, steps=40):
    env = gym.make(env_id)
    obs, info = env.reset(seed=seed)
    trace = [(obs, repr(info))]
    for i in range(steps):
        legal = info.get("legal_actions") or ["garbage"]
        action = legal[(seed + i) % len(legal)] if i % 3 else "not a move"
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs, reward, terminated, truncated, repr(info)))
        if terminated or truncated:
            obs, info = env.reset()
            trace.append((obs, repr(info)))
    return trace


@pytest.mark.parametrize("env_id", list(mage_envs.ENV_IDS))
@pytest.mark.parametrize("seed", [0, 42])
def test_same_seed_same_trial(env_id, seed):
    assert _rollout(env_id, seed) == _rollout(env_id, seed)


@pytest.mark.parametrize("env_id", list(mage_envs.ENV_IDS))
def test_different_seeds_differ_somewhere(env_id):
    traces = {repr(_rollout(env_id, seed, steps=10)) for seed in range(6)}
    assert len(traces) > 1


@pytest.mark.parametrize("env_id", list(mage_envs.ENV_IDS))
@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(max_size=200), min_size=1, max_size=8))
def test_garbage_text_never_raises(env_id, texts):
    env = gym.make(env_id)
    obs, info = env.reset(seed=0)
    for text in texts:
        legal_before = info["legal_actions"]
        obs, reward, terminated, truncated, info = env.step(text)
        assert env.observation_space.contains(obs)
        if info.get("invalid_action"):
            assert info["legal_actions"] == legal_before
        if terminated or truncated:
            obs, info = env.reset(seed=1)


@pytest.mark.parametrize("env_id", list(mage_envs.ENV_IDS))
def test_fresh_interpreter_with_module_prefix(env_id):
    code = (
        "import gymnasium as gym\n"
        f"env = gym.make('mage_envs:{env_id}')\n"
        "obs, info = env.reset(seed=0)\n"
        "assert isinstance(obs, str) and info['legal_actions']\n"
        "import sys; assert 'torch' not in sys.modules, 'mage_envs must not import torch'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("env_id", ["mage/KuhnPoker-v0", "mage/TicTacToe-v0", "mage/OpenSpiel-v0"])
@pytest.mark.parametrize("render_mode", ["ansi", "human"])
def test_check_env_with_rendering_warns_about_nothing(env_id, render_mode, capsys):
    env = gym.make(env_id, render_mode=render_mode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []

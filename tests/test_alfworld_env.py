"""The ALFWorld envs on the real engine, over small generated games (no download needed).

The engine is slow (a game loads in a few tenths of a second even when small), so the games are
small (6 receptacles, 6 objects), generated once per module into a temporary cache, and shared.
"""

import importlib.util
import subprocess
import sys
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# find_spec, not importorskip: importing alfworld creates $ALFWORLD_DATA, which the tests point
# at a temporary folder only once they run.
if importlib.util.find_spec("alfworld") is None:
    pytest.skip("needs the alfworld extra", allow_module_level=True)

import mage_envs  # noqa: E402
from mage_envs import MetaEpisodeWrapper  # noqa: E402
from mage_envs.alfworld import (  # noqa: E402
    TASK_TYPES,
    UNSEEN_TASK_TYPES,
    MissingDataError,
    speedups,  # noqa: E402
)

SMALL = {"max_receptacles": 6, "max_objects": 6}
POOL = {**SMALL, "num_games": len(TASK_TYPES)}  # seeds beyond the pool reuse its games


@pytest.fixture(scope="module")
def homes(tmp_path_factory):
    """ALFWorld's data folder and our cache, both temporary (never the user's or the repo's)."""
    with pytest.MonkeyPatch.context() as patch:
        data = tmp_path_factory.mktemp("alfworld-data")
        cache = tmp_path_factory.mktemp("mage-cache")
        patch.setenv("ALFWORLD_DATA", str(data))
        patch.setenv("MAGE_CACHE", str(cache))
        yield data, cache


@pytest.fixture(scope="module")
def games(homes):
    """The generated env with one game of each task type ready (seeds 0-5, in TASK_TYPES order)."""
    env = gym.make("mage/ALFWorld-Generated-v0", **POOL)
    for seed in range(len(TASK_TYPES)):
        env.reset(seed=seed)
    yield env
    env.close()


def _walkthrough(info):
    import json
    from pathlib import Path

    return json.loads(Path(info["game_file"]).read_text())["walkthrough"]


@pytest.mark.parametrize("seed", range(len(TASK_TYPES)))
def test_expert_walkthrough_wins_every_task_type_on_the_engine(games, seed):
    obs, info = games.reset(seed=seed)
    assert TASK_TYPES[seed] in info["game_file"]
    assert info["task"] and info["task"] in obs
    commands = _walkthrough(info)
    assert 1 <= len(commands) <= 150
    for i, command in enumerate(commands[: games.unwrapped.max_steps]):  # noqa: B007
        assert command in info["legal_actions"] or command == "look"
        obs, reward, terminated, truncated, info = games.step(command)
        if terminated:
            break
    if len(commands) <= games.unwrapped.max_steps:
        assert terminated and info["success"] and reward == 10.0 and i == len(commands) - 1
        assert "Task complete" in obs and info["legal_actions"] == []


def test_invalid_text_changes_nothing_and_costs_the_penalty(games):
    obs, info = games.reset(seed=0)
    before = info["legal_actions"]
    for text in ("", "fly to the moon", "go to", "<action></action>", "x" * 50_000):
        obs, reward, terminated, truncated, info = games.step(text)
        assert info["invalid_action"] and reward == -0.1 and not terminated
        assert info["legal_actions"] == before
        assert obs.startswith("Invalid move: ") and "Admissible actions: go to" in obs


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(st.text(max_size=80), min_size=1, max_size=4))
def test_garbage_text_never_raises(games, texts):
    obs, info = games.reset(seed=1)
    for text in texts:
        obs, reward, terminated, truncated, info = games.step(text)
        assert games.observation_space.contains(obs)


def test_tags_and_put_spelling_are_understood(games):
    obs, info = games.reset(seed=0)
    go = next(a for a in info["legal_actions"] if a.startswith("go to"))
    obs, _, _, _, info = games.step(f"I will go there. <action>{go.upper()}</action>")
    assert not info["invalid_action"] and info["command"] == go
    take = next((a for a in info["legal_actions"] if a.startswith("take ")), None)
    if take:
        games.step(take)
        obs, _, _, _, info = games.step("look")
    moves = [a for a in info["legal_actions"] if a.startswith("move ")]
    if moves:
        thing, place = moves[0].removeprefix("move ").split(" to ")
        assert info["action_aliases"][f"put {thing} in {place}"] == moves[0]  # for agents too
        obs, _, _, _, info = games.step(f"put {thing} in/on {place}")
        assert info["command"] == moves[0]


def _trace(env, seed, steps=12):
    obs, info = env.reset(seed=seed)
    trace = [obs]
    for i in range(steps):
        legal = info["legal_actions"]
        obs, reward, terminated, truncated, info = env.step(legal[(i * 7) % len(legal)])
        trace.append((obs, reward, terminated))
        if terminated or truncated:
            break
    return trace


def test_same_seed_same_episode_and_speedups_change_nothing(homes, games):
    cached = _trace(games, 2)
    assert cached == _trace(games, 2)
    plain = gym.make("mage/ALFWorld-Generated-v0", speedups=False, **POOL)
    try:
        assert _trace(plain, 2) == cached
        assert not speedups.enabled()
        fast = _trace(games, 5)  # each engine switches to its own setting
        assert speedups.enabled()
        assert _trace(plain, 5) == fast
    finally:
        plain.close()


def test_generated_games_are_the_same_bytes_in_another_cache(homes, games, tmp_path):
    other = gym.make("mage/ALFWorld-Generated-v0", cache_dir=tmp_path, **POOL)
    try:
        _, mine = games.reset(seed=4)
        _, theirs = other.reset(seed=4)
        assert mine["game_file"] != theirs["game_file"]
        with open(mine["game_file"], "rb") as a, open(theirs["game_file"], "rb") as b:
            assert a.read() == b.read()
    finally:
        other.close()


def test_official_env_plays_a_folder_of_games_with_task_type_selection(homes, games):
    folder = games.unwrapped.store.root
    env = gym.make("mage/ALFWorld-v0", data_path=folder, task_types="unseen", max_steps=5)
    try:
        assert len(env.unwrapped.games) >= 2
        assert all(any(t in str(g) for t in UNSEEN_TASK_TYPES) for g in env.unwrapped.games)
        obs, info = env.reset(seed=0)
        assert info["legal_actions"] and "Your task is to:" in obs
        for _ in range(5):
            obs, reward, terminated, truncated, info = env.step("inventory")
        assert truncated and not terminated and "Out of turns" in obs
    finally:
        env.close()


def test_missing_data_error_names_the_files_and_the_fix(homes, tmp_path):
    for make in (
        lambda: gym.make("mage/ALFWorld-v0"),  # $ALFWORLD_DATA is an empty folder here
        lambda: gym.make("mage/ALFWorld-v0", data_path=tmp_path, split="eval_out_of_distribution"),
    ):
        with pytest.raises(MissingDataError) as caught:
            make()
        message = str(caught.value)
        for words in ("traj_data.json", "game.tw-pddl", "alfworld-download", "json_2.1.1"):
            assert words in message
        assert "mage/ALFWorld-Generated-v0" in message
    with pytest.raises(ValueError, match="split"):
        gym.make("mage/ALFWorld-v0", data_path=tmp_path, split="test")


def test_loading_games_leaves_sys_argv_alone(homes, games):
    before = list(sys.argv)
    games.reset(seed=3)
    games.reset(seed=5)
    assert sys.argv == before


@pytest.mark.parametrize("env_id", list(mage_envs.registration.ALFWORLD_ENV_IDS))
def test_check_env(homes, games, env_id):
    # the generated ids play a pool of games that their resets have made already
    kwargs = {
        "mage/ALFWorld-v0": {"data_path": games.unwrapped.store.root},
        "mage/ALFWorld-Generated-v0": POOL,
        "mage/ALFWorld-Generated-Unseen-v0": {**SMALL, "num_games": 2},
    }[env_id]
    env = gym.make(env_id, **kwargs)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["mage/ALFWorld-Generated-v0", "mage/ALFWorld-v0"])
def test_same_task_trial_replays_the_same_game(homes, games, env_id):
    if env_id == "mage/ALFWorld-v0":
        env = gym.make(env_id, data_path=games.unwrapped.store.root, max_steps=2)
    else:
        env = gym.make(env_id, max_steps=2, **POOL)
    trial = MetaEpisodeWrapper(env, num_episodes=3, same_task=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the wrapper warns if a replay differs
        obs, info = trial.reset(seed=1)
        first, games_seen, done = obs, set(), False
        while not done:
            games_seen.add(info.get("game_file"))
            obs, reward, terminated, truncated, info = trial.step("inventory")
            done = terminated or truncated
    games_seen.discard(None)
    assert len(games_seen) == 1 and info["trial"]["num_episodes"] == 3
    assert "Your task is to:" in first
    trial.close()


def test_fresh_interpreter_with_module_prefix(homes):
    code = (
        "import gymnasium as gym, sys\n"
        "env = gym.make('mage_envs:mage/ALFWorld-Generated-v0', max_receptacles=6, max_objects=6,"
        " num_games=6)\n"
        "obs, info = env.reset(seed=0)\n"
        "assert isinstance(obs, str) and info['legal_actions']\n"
        "assert 'torch' not in sys.modules, 'mage_envs must not import torch'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_runner_plays_generated_games_and_explains_missing_data(homes, games, capsys):
    from baselines import run

    argv_before = list(sys.argv)
    kwargs = '{"max_receptacles": 6, "max_objects": 6, "num_games": 6, "max_steps": 3}'
    argv = ["--env", "mage/ALFWorld-Generated-v0", "--tasks", "2", "--env-kwargs", kwargs]
    assert run.main(argv + ["--episodes", "2"]) == 0
    assert "mage/ALFWorld-Generated-v0" in capsys.readouterr().out
    assert sys.argv == argv_before
    assert run.main(["--config", "lamer_alfworld", "--tasks", "2"]) == 2
    err = capsys.readouterr().err
    assert "Skipping mage/ALFWorld-v0" in err and "alfworld-download" in err


def test_a_room_where_the_packaged_expert_crashes_gets_another_attempt(homes):
    # whole rooms, look-at-in-light, seed 13: the alfworld package's hand-coded expert draws from
    # an empty list of objects of interest (IndexError); that attempt counts as not winnable and
    # the store makes the next one, so the seed still gives a game the expert wins
    env = gym.make("mage/ALFWorld-Generated-v0", task_types="seen")
    obs, info = env.reset(seed=13)
    assert info["task"].startswith(("look at", "examine")) and info["legal_actions"]
    env.close()

"""Under the paper presets every page is the published page, byte for byte, for fixed states.

``tests/data/published_pages/scenarios.json`` fixes each trial: the env, its level, board, deal or
game, and every answer in order (play answers, then a reflection, ...). The folder of a scenario
holds the pages the published code showed for it (``NN_play.txt``, ``NN_reflect.txt``, UTF-8) and,
in ``published.json``, the reward of every play step. They were obtained once by running the
published prompt, memory, projection and env code on the same states and answers (how: see
docs/published_settings.md); nothing here imports that code.

The scenarios cover every page kind: the first play page (empty memory), later play pages with
older observations elided, reflection pages, pages with one and two memories, in the three memory
modes where the paper's prompt has them.
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import mage_envs
from mage_envs.meta.presets import PAPER_TRIAL_SETTINGS

DATA = Path(__file__).parent / "data" / "published_pages"
SCENARIOS = json.loads((DATA / "scenarios.json").read_text(encoding="utf-8"))
MAGE_OPPONENTS = {"aggressive": "aggressive", "conservative": "conservative"}
CENTRE_FIRST = ((1, 1), (0, 0), (0, 2), (2, 0), (2, 2), (0, 1), (1, 0), (1, 2), (2, 1))
MAGE_ORDERS = {CENTRE_FIRST: "order-center"}  # MAGE's ["preferred", [...]] pool entries


def expected(name):
    published = json.loads((DATA / name / "published.json").read_text(encoding="utf-8"))
    pages = [(DATA / name / p["file"]).read_bytes().decode("utf-8") for p in published["pages"]]
    return pages, [step["reward"] for step in published["steps"]]


def trial(spec):
    """Our trial of a scenario under the paper config's settings, and its reset arguments."""
    kind, memory = spec["env"], spec.get("memory", "reflection_only")
    if kind == "sokoban":
        settings = {**PAPER_TRIAL_SETTINGS["lamer"], "memory": memory}
        # the env's rewards: LaMer's trainer adds its format penalty, the env charges none
        penalty = {"invalid_action_penalty": 0}
        env = mage_envs.make_trial("mage/Sokoban-v0", turn_rules="lamer", **penalty, **settings)
        return env, {"seed": 0, "options": {"level": spec["level"]}}
    if kind == "minesweeper":
        settings = {**PAPER_TRIAL_SETTINGS["lamer"], "memory": memory}
        env = mage_envs.make_trial(
            "mage/Minesweeper-v0", answer_rules="lamer", max_steps=7, mine_reward=-0.1, **settings
        )
        mines = np.zeros((6, 6), dtype=bool)
        for row, col in spec["mines"]:
            mines[row - 1, col - 1] = True
        return env, {"seed": 0, "options": {"mines": mines, "first_click": spec["first_click"]}}
    if kind == "kuhn":
        kwargs = {"opponent": MAGE_OPPONENTS[spec["opponent"]], "seat": spec["seat"]}
        kwargs |= {"reward_scale": 5, "max_episode_steps": 6, "max_invalid_actions": None}
        settings = {**PAPER_TRIAL_SETTINGS["mage"], "memory": memory}
        env = mage_envs.make_trial("mage/KuhnPoker-v0", answer_rules="mage", **kwargs, **settings)
        return env, {"seed": deal_seed(kwargs, spec["deal"])}
    if kind == "tictactoe":
        order = tuple(tuple(cell) for cell in spec["opponent"][1])
        kwargs = {"opponent": MAGE_ORDERS[order], "seat": spec["seat"], "reward_scale": 10}
        kwargs |= {"max_episode_steps": spec["max_turns"], "max_invalid_actions": None}
        settings = {**PAPER_TRIAL_SETTINGS["mage"], "memory": memory}
        env = mage_envs.make_trial("mage/TicTacToe-v0", answer_rules="mage", **kwargs, **settings)
        return env, {"seed": 0}
    if kind == "alfworld":
        kwargs = {"answer_rules": "lamer", "max_steps": spec["max_turns"]}
        kwargs["invalid_action_penalty"] = 0
        settings = {**PAPER_TRIAL_SETTINGS["lamer"], "memory": memory}
        return mage_envs.make_trial(spec["env_id"], **kwargs, **settings), {"seed": spec["seed"]}
    if kind == "webshop":
        kwargs = {"answer_rules": "lamer", "max_steps": spec["max_turns"], "reward_scale": 10}
        kwargs |= {"reward_mode": "success", "invalid_action_penalty": 0}
        settings = {**PAPER_TRIAL_SETTINGS["lamer"], "memory": memory}
        return mage_envs.make_trial(spec["env_id"], **kwargs, **settings), {"seed": spec["seed"]}
    raise KeyError(kind)


def deal_seed(kwargs, deal):
    """The first seed that deals ``deal`` (player 0's card, then player 1's: 0 J, 1 Q, 2 K)."""
    import gymnasium as gym

    env = gym.make("mage/KuhnPoker-v0", **kwargs)
    for seed in range(200):
        env.reset(seed=seed)
        if env.unwrapped.state.history()[:2] == deal:
            return seed
    raise AssertionError(f"no seed below 200 deals {deal}")


def play(env, reset, answers):
    """Every page the agent reads (the reset page, then one after each answer) and the rewards."""
    obs, info = env.reset(**reset)
    pages, rewards, answers = [obs], [], list(answers)
    while answers:
        phase = info["phase"]
        obs, reward, terminated, truncated, info = env.step(answers.pop(0))
        if phase == "play":
            rewards.append(reward)
        if terminated or truncated:
            break
        pages.append(obs)
    assert not answers, f"the trial ended with {len(answers)} answers left"
    return pages, rewards


def names(kind):
    return [name for name, spec in SCENARIOS.items() if spec["env"] == kind]


def check(name):
    pages, rewards = play(*trial(SCENARIOS[name]), SCENARIOS[name]["answers"])
    published_pages, published_rewards = expected(name)
    assert len(pages) == len(published_pages)
    for k, (ours, theirs) in enumerate(zip(pages, published_pages, strict=True)):
        assert ours == theirs, f"page {k} differs"
    assert rewards == pytest.approx(published_rewards)


@pytest.mark.parametrize("name", names("sokoban"))
def test_sokoban_pages_and_rewards_are_lamers(name):
    check(name)


@pytest.mark.parametrize("name", names("minesweeper"))
def test_minesweeper_pages_and_rewards_are_lamers(name):
    check(name)


@pytest.mark.parametrize("name", names("kuhn"))
def test_kuhn_pages_and_rewards_are_mages(name):
    check(name)


@pytest.mark.parametrize("name", names("tictactoe"))
def test_tictactoe_pages_and_rewards_are_mages(name):
    check(name)


@pytest.mark.parametrize("name", names("webshop"))
def test_webshop_pages_and_rewards_are_the_papers(name):
    check(name)


@pytest.fixture
def alfworld_homes(tmp_path, monkeypatch):
    """ALFWorld's data folder and our cache of generated games, both temporary."""
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path / "alfworld-data"))
    monkeypatch.setenv("MAGE_CACHE", str(tmp_path / "mage-cache"))


@pytest.mark.skipif(importlib.util.find_spec("alfworld") is None, reason="needs the alfworld extra")
@pytest.mark.parametrize("name", names("alfworld"))
def test_alfworld_pages_and_rewards_are_the_papers(name, alfworld_homes):
    check(name)

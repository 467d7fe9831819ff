"""The template presets render the published pages of LaMer and MAGE for known states.

The expected texts are written from the published code: LaMer's ``sokoban/prompt.py``,
``minesweeper/prompt.py`` and their env managers (memory lines, "Action k" steps with older
observations elided), MAGE's ``kuhnpoker/prompt.py`` and ``TicTacToe/prompt.py``.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest

import mage_envs
from mage_envs.meta import MetaEpisodeWrapper
from mage_envs.meta.presets import template_preset

LEVEL = "#######\n#@$__.#\n#######"
BOARD = "0: # # # # # # #\n1: # P X _ _ O #\n2: # # # # # # #"


def sokoban_trial(**kwargs):
    env = mage_envs.make_trial("mage/Sokoban-v0", templates="lamer", **kwargs)
    obs, info = env.reset(seed=0, options={"level": LEVEL})
    return env, obs


def test_lamer_sokoban_first_page():
    _, obs = sokoban_trial()
    assert obs.startswith("You are an expert agent operating in the Sokoban environment.\n\n")
    assert "- Walls (`#`): These block movement." in obs
    # an empty memory is a newline, and the first turn shows no steps
    assert (
        f"# Observations\nThe initial state of the game is:\n{BOARD}\n\n"
        "Now it's your turn to make moves (choose the next THREE actions)." in obs
    )
    assert obs.endswith("present them within <action> </action> tags (separated by comma).")


def test_lamer_sokoban_steps_elide_older_observations():
    env, _ = sokoban_trial()
    obs, *_ = env.step("<action>right</action>")
    after_one = "0: # # # # # # #\n1: # _ P X _ O #\n2: # # # # # # #"
    assert (
        f"{BOARD}\n\nYou have already taken the following actions:\nAction 1: ['right']\n"
        f"Observation 1:\n{after_one}\n\nNow it's your turn" in obs
    )
    env.step("I walk <action>left</action>")
    obs, *_ = env.step("<action>nothing</action>")
    # the last 2 observations are shown in play, older ones elided; unreadable is ['still']
    assert "Action 1: ['right']\nObservation 1: ...\nAction 2: ['left']\nObservation 2:\n" in obs
    assert "Action 3: ['still']\nObservation 3:\n" in obs


def test_lamer_memory_line_and_missing_remark_stored_empty():
    env, _ = sokoban_trial()
    for _ in range(7):
        obs, reward, terminated, truncated, info = env.step("<action>left</action>")
    assert info["phase"] == "reflect"
    assert "Finally, end the response with your reflection and improved plan inside <remark>" in obs
    assert obs.count("Observation") == 7  # a reflection page shows all 7 observations
    assert f"{BOARD}\n\nYou have already taken the following actions:\nAction 1:" in obs
    assert "\nThe task is NOT successfully completed.\n\nNow it's your turn to reflect" in obs
    obs, *_ = env.step("I will push right. <remark>Push right three times.</remark>")
    assert (
        "On trial #1, the task is NOT successfully completed. Your reflection is: \n"
        "Push right three times.\n\nCurrently you're on trial #2, starting from the initial "
        "state.\nNow it's your turn" in obs
    )
    for _ in range(7):
        env.step("<action>left</action>")
    obs, *_ = env.step("no tag at all")
    assert env.result().reflections == ["Push right three times.", ""]
    assert "On trial #2, the task is NOT successfully completed. Your reflection is: \n\n" in obs


def test_lamer_minesweeper_page_and_mine():
    mines = np.zeros((6, 6), dtype=bool)
    mines[0:3, 2] = True
    env = mage_envs.make_trial("mage/Minesweeper-v0", templates="lamer")
    obs, _ = env.reset(seed=0, options={"mines": mines, "first_click": (1, 2)})
    assert obs.startswith(
        "You are an expert agent operating in the Minesweeper game.\nYou will be given a two "
        "dimensional 6 by 6 board, with 3 hidden mines. \nThe rows and columns are indexed from "
        "1 to 6.\n"
    )
    assert "The initial state of the game is:\nRow 1: ? 2 ? ? ? ?\nRow 2: ? ? ? ? ? ?" in obs
    obs, *_ = env.step("<action>(1, 3)</action>")
    assert "Action 1: (1, 3)\nObservation 1:\nRow 1: ? 2 * ? ? ?\n" in obs


def test_mage_kuhn_pages():
    env = mage_envs.make_trial(
        "mage/KuhnPoker-v0", templates="mage", opponent="always-pass", seat="second"
    )
    seed = next(s for s in range(50) if "Your Card: Jack" in env.reset(seed=s)[0])
    obs, _ = env.reset(seed=seed)
    assert obs.startswith("You are an expert Kuhn Poker agent.\n\n# Game Rules\n")
    assert "- You are playing as Player 1, opponent is Player 0." in obs
    assert (
        "The initial state of the game is:\nYour Card: Jack | Actions: Player 0: Pass\n\n\n"
        "Now it's your turn to make a move." in obs
    )
    obs, reward, _, _, info = env.step("<action>PASS</action>")  # check-check with a Jack loses
    assert info["phase"] == "reflect" and reward < 0
    assert (
        "You have already taken the following moves:\nStep 1 - Action: PASS\nObservation:\n"
        "Your Card: Jack | Actions: Player 0: Pass -> Player 1: Pass\n" in obs
    )
    assert "\nThe task is NOT successfully completed.\n\nNow reflect and propose" in obs
    obs, *_ = env.step("<remark>Bet with a King.</remark>")
    assert (
        "On trial #1, the task is NOT successfully completed. Your reflection is:\n"
        "Bet with a King.\n\nCurrently on trial #2, starting from the initial board state.\n" in obs
    )


def test_mage_kuhn_reflection_after_a_win_uses_the_won_prompt():
    env = mage_envs.make_trial(
        "mage/KuhnPoker-v0", templates="mage", opponent="always-pass", seat="second"
    )
    for seed in range(20):
        env.reset(seed=seed)
        obs, reward, _, _, info = env.step("<action>PASS</action>")
        if reward > 0:
            assert "The task is successfully completed.\n\nNow reflect on why the strategy" in obs
            obs, *_ = env.step("<remark>keep it</remark>")
            assert "On trial #1, the task is successfully completed. Your reflection is:\n" in obs
            return
    pytest.fail("no winning deal in 20 seeds")


def test_mage_tictactoe_agent_is_x_in_either_seat():
    env = mage_envs.make_trial(
        "mage/TicTacToe-v0", templates="mage", opponent="order-center", seat="second"
    )
    obs, _ = env.reset(seed=0)
    assert obs.startswith("You are an expert agent playing Tic-Tac-Toe on a 3 by 3 board.\n")
    assert "You play as X and your opponent plays as O." in obs
    assert "The initial state of the game is:\n. . .\n. O .\n. . .\n" in obs
    obs, *_ = env.step("<action>(1,1)</action>")
    assert "Step 1 - Action: (1, 1)\nObservation:\nX . O\n. O .\n. . .\n" in obs
    obs, *_ = env.step("<action>(1,1)</action>")
    assert "Step 2 - Action: (1, 1), but it is invalid\n" in obs


def test_preset_names_are_checked():
    import gymnasium as gym

    with pytest.raises(ValueError, match="No 'lamer' template preset for KuhnPokerEnv"):
        MetaEpisodeWrapper(gym.make("mage/KuhnPoker-v0"), templates="lamer")
    with pytest.raises(ValueError, match="one of"):
        template_preset("bogus", gym.make("mage/Sokoban-v0"))
    assert template_preset("default", None).page is None


def test_paper_trial_settings_stop_at_the_first_win_and_match_the_configs():
    import yaml

    from baselines.settings import CONFIG_DIR
    from mage_envs.meta.presets import PAPER_TRIAL_SETTINGS

    settings = PAPER_TRIAL_SETTINGS["lamer"]
    env = mage_envs.make_trial("mage/Sokoban-v0", **settings)
    env.reset(seed=0, options={"level": LEVEL})
    obs, reward, terminated, truncated, info = env.step("<action>right, right, right</action>")
    assert terminated and info["episode_success"]  # no reflection, no attempt 2
    assert info["trial"]["pass_at_k"] == [True, True, True]
    assert len(info["trial"]["returns"]) == 1
    configs = ["lamer_sokoban", "lamer_minesweeper", "mage_kuhn", "mage_tictactoe"]
    for name in configs:
        paper = name.split("_")[0]
        config = yaml.safe_load((CONFIG_DIR / f"{name}.yaml").read_text())
        expected = PAPER_TRIAL_SETTINGS[paper]
        assert {k: config["trial"][k] for k in expected} == expected


def test_lamer_history_memory_lists_the_earlier_actions():
    env, _ = sokoban_trial(memory="history_and_reflection")
    for _ in range(7):
        env.step("<action>left</action>")
    obs, *_ = env.step("<remark>Push right.</remark>")
    assert "On trial #1, you take the following actions: \nAction 1: ['still']\n" in obs
    assert "Observation 5: ...\nAction 6: ['still']\nObservation 6:\n" in obs  # last 2 in full
    assert (
        "The task is NOT successfully completed. Your reflection and improved plan is: \n"
        "Push right.\n\nCurrently you're on trial #2" in obs
    )


def test_every_character_of_the_published_wording_is_in_the_page_charset():
    import tomllib

    import gymnasium as gym
    from gymnasium.envs.registration import load_env_creator

    from mage_envs.page_presets import page_presets_of
    from mage_envs.text import PAGE_CHARSET

    root = Path(mage_envs.__file__).parent
    files = sorted(root.glob("*/prompts/*.toml"))
    declared = set()
    for env_id in mage_envs.ENV_IDS | mage_envs.DATA_ENV_IDS | mage_envs.ALFWORLD_ENV_IDS:
        creator = load_env_creator(gym.spec(env_id).entry_point)
        declared |= {preset.wording for preset in page_presets_of(creator).values()}
    assert sorted(declared) == files  # every wording file is an env's, every preset has one
    unusual = set()
    for file in files:
        text = "".join(tomllib.loads(file.read_text(encoding="utf-8")).values())
        assert set(text) <= set(PAGE_CHARSET), file.name
        unusual |= {c for c in text if not c.isascii()}
    assert unusual == set("\u221a\u2014\u2013\u2019\u201c\u201d\u2011")  # √ — – ’ “ ” ‑


def test_preset_pages_keep_the_published_characters_and_pass_the_env_checker():
    from gymnasium.utils.env_checker import check_env

    from mage_envs.text import PAGE_CHARSET, TEXT_CHARSET

    env = mage_envs.make_trial("mage/Sokoban-v0", templates="lamer", turn_rules="lamer")
    obs, _ = env.reset(seed=0, options={"level": "######\n#@_$.#\n#_*__#\n#____#\n######"})
    assert "Box on Target (`\u221a`)" in obs and "2: # _ \u221a _ _ #" in obs
    assert "situation \u2014 observe" in obs
    assert env.observation_space.contains(obs)
    assert env.observation_space.character_set == frozenset(PAGE_CHARSET)
    with warnings.catch_warnings():  # the trial is itself a wrapper: that is what is checked
        warnings.filterwarnings("ignore", message=".*different from the unwrapped")
        check_env(env, skip_render_check=True)
    ours = mage_envs.make_trial("mage/Sokoban-v0")
    assert ours.observation_space.character_set == frozenset(TEXT_CHARSET)  # ours stay ASCII


def test_a_reflection_keeps_its_typography_under_a_preset_and_loses_what_no_page_holds():
    env, _ = sokoban_trial()
    for _ in range(7):
        env.step("<action>left</action>")
    obs, *_ = env.step("<remark>Don\u2019t push \u2014 ever \U0001f600</remark>")
    assert "Your reflection is: \nDon\u2019t push \u2014 ever ?\n" in obs
    assert env.result().reflections == ["Don\u2019t push \u2014 ever ?"]


@pytest.mark.parametrize(
    ("env_id", "preset"),
    [
        ("mage/SokobanMoreBoxes-v0", "lamer"),
        ("mage/SokobanLarge-v0", "lamer"),
        ("mage/MinesweeperMoreMines-v0", "lamer"),
        ("mage/MinesweeperLarge-v0", "lamer"),
        ("mage/ShopSim-v0", "lamer"),
        ("mage/ShopSimOOD-v0", "mage"),
    ],
)
def test_the_variants_of_an_env_have_its_presets(env_id, preset):
    env = mage_envs.make_trial(env_id, templates=preset)
    obs, info = env.reset(seed=0)
    assert obs.startswith(("You are an expert", "\nYou are an expert")) and info["phase"] == "play"


def test_the_alfworld_envs_declare_the_papers_presets():
    from mage_envs.alfworld.env import ALFWorldEnv, ALFWorldGeneratedEnv
    from mage_envs.alfworld.pages import ALFWORLD_PAGE
    from mage_envs.meta.presets import page_presets

    for cls in (ALFWorldEnv, ALFWorldGeneratedEnv):
        assert page_presets(cls) == {"lamer": ALFWORLD_PAGE, "mage": ALFWORLD_PAGE}


def test_a_memory_mode_the_paper_has_no_layout_for_is_refused():
    with pytest.raises(ValueError, match="lays out \\['reflection_only', 'history_only'\\]"):
        mage_envs.make_trial("mage/ShopSim-v0", templates="lamer", memory="history_and_reflection")


def test_a_webshop_page_over_20000_characters_is_made_short_as_webshop_does():
    from dataclasses import replace
    from types import SimpleNamespace

    from mage_envs.meta.memory import EpisodeRecord, render_memory
    from mage_envs.meta.page import PageLayout, play_page
    from mage_envs.meta.presets import preset_templates
    from mage_envs.webshop.pages import WEBSHOP_PAGE, webshop_shorten

    page = replace(preset_templates(WEBSHOP_PAGE).page, short_page=600)
    steps = [("click[a]", "'x' [SEP] " * 20 + "'y'"), ("click[b]", "'last page'")]
    facts = {"task_description": "find x", "admissible_actions": "'click[b]',"}

    def memory(page, mode, reflections):
        templates = SimpleNamespace(page=page)
        layout = PageLayout(SimpleNamespace(templates=templates, memory=mode), env=None)
        layout.histories = [steps]  # attempt 1 played these
        return render_memory([EpisodeRecord(success=False)], reflections, mode, layout)

    long = play_page(
        page,
        "",
        memory(page, "history_only", ["r"]),
        1,
        steps,
        facts,
        lambda: memory(page, "reflection_only", ["r"]),
    )
    full = replace(page, short_page=0)
    full = play_page(full, "", memory(full, "history_only", []), 1, steps, facts)
    assert len(full) > 600 >= len(long) or "... (" in full
    # the short page: the memory as reflections only, the current steps cut to their last line
    assert "the task is NOT successfully completed. Your reflection is: \nr" in long
    assert "observations: \nObservation 2: 'last page'\n" in long
    assert webshop_shorten("a [SEP] b", "current") == "a [SEP] b"


def test_lamer_minesweeper_page_refuses_a_board_it_would_misdescribe():
    # LaMer's page says "a two dimensional N by N board", "indexed from 1 to N": square only
    env = mage_envs.make_trial("mage/Minesweeper-v0", templates="lamer", height=4, width=7)
    with pytest.raises(ValueError, match="square board.*4x7.*templates='default'"):
        env.reset(seed=0)
    square = mage_envs.make_trial("mage/Minesweeper-v0", templates="lamer", height=5, width=5)
    assert "a two dimensional 5 by 5 board" in square.reset(seed=0)[0]


def test_a_long_page_is_sent_whole_up_to_the_observation_bound():
    # WebShop's own bound is 20000 characters (then its short page); ours must not cut earlier
    env = mage_envs.make_trial(
        "mage/ShopSim-v0", templates="lamer", num_products=30, max_steps=1,
        max_reflection_chars=8000,
    )  # fmt: skip
    obs, info = env.reset(seed=0)
    for _ in range(2):
        obs, *_ = env.step("<action>click[next >]</action>")
        obs, *_ = env.step(f"<remark>{'plan ' * 1600}</remark>")
    assert 16_384 < len(obs) < 20_000
    assert obs.endswith("present it within <action> </action> tags.\n")
    assert env.observation_space.contains(obs)

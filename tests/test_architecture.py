"""The recipes of docs/architecture.md work as written, and do what the page says they do."""

import pathlib
import re
import shutil
import subprocess
import sys

import gymnasium as gym
import pyspiel
import pytest
from gymnasium.utils.env_checker import check_env

import mage_envs
from mage_envs import make_trial
from mage_envs.opponents import (
    make_opponent,
    opponent_names,
    opponents_markdown,
    populations_markdown,
)
from tests.module_imports import imported_modules

PAGE = pathlib.Path(__file__).parent.parent / "docs" / "architecture.md"


@pytest.fixture(autouse=True)
def _forget_recipe_ids():
    """Unregister the ids a recipe registers, so the page runs again as it did the first time."""
    yield
    for env_id in ("my/Nim-v0", "my/Guess-v0"):
        gym.registry.pop(env_id, None)


def snippet(title: str) -> str:
    """The first Python snippet under ``### title``."""
    section = PAGE.read_text().split(f"### {title}\n", 1)[1].split("\n### ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def recipe(title: str) -> dict:
    """Run the snippet under ``### title`` as a reader would; return its namespace."""
    code = snippet(title)
    namespace: dict = {}
    exec(compile(code, str(PAGE), "exec"), namespace)
    return namespace


def test_a_new_game_is_a_full_env_of_the_suite():
    recipe("Add a two-player game")
    env = gym.make("my/Nim-v0", invalid_action_penalty=0.5, seat="random")
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert "Nim. Piles: " in obs and info["legal_actions"][0].startswith("take ")
    assert env.step("take 9 from pile 9")[1] == -0.5
    trial = make_trial("my/Nim-v0", num_episodes=2, opponent="mcts-100", seat_rotation="episode")
    obs, info = trial.reset(seed=0)
    assert obs.startswith("Attempt 1 of 2.") and info["legal_actions"]


def test_a_new_games_opponents_play_it_and_are_listed(scratch_registries):
    recipe("Add a two-player game")
    recipe("Add a game's opponents")
    nim, kuhn = pyspiel.load_game("nim"), pyspiel.load_game("kuhn_poker")
    assert "nim-greedy" in opponent_names(nim) and "nim-greedy" not in opponent_names(kuhn)
    assert "conservative" not in opponent_names(nim)
    assert "| `nim-greedy` | Nim | empties the largest pile |" in opponents_markdown()
    assert "| `nim-mix` | nim-greedy 0.5, mcts-100 0.5 |" in populations_markdown()
    with pytest.raises(ValueError, match="'nim-greedy' cannot play kuhn_poker"):
        make_opponent("nim-greedy", kuhn)
    env = gym.make("my/Nim-v0", opponent="nim-greedy", seat="second")
    obs, info = env.reset(seed=0)
    assert "Piles: 1, 3, 5, 0." in obs  # it emptied the largest pile, the fourth (7 stones)
    met = set()
    for seed in range(8):
        trial = make_trial("my/Nim-v0", num_episodes=1, opponent="nim-mix")
        met.add(trial.reset(seed=seed)[1]["opponent"])
    assert met == {"nim-greedy", "mcts-100"}


def test_a_new_games_opponents_are_one_file_and_no_other_edit(tmp_path):
    # A copy of the package with the recipe's file added, and nothing else changed: its names
    # are everywhere the registry's are (the lists, the presets, the generated docs tables).
    package = pathlib.Path(mage_envs.__file__).parent
    copy = tmp_path / "mage_envs"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "opponents" / "nim.py").write_text(snippet("Add a game's opponents"))
    code = (
        "import gymnasium as gym, pyspiel, mage_envs\n"
        "from mage_envs.opponents import PRESETS, opponent_names\n"
        f"assert mage_envs.__file__.startswith({str(tmp_path)!r})\n"
        "print(opponent_names(pyspiel.load_game('nim')), sorted(PRESETS))\n"
        "env = gym.make('mage/OpenSpiel-v0', game='nim', opponent='nim-mix')\n"
        "print(env.reset(seed=1)[1]['opponent'])\n"
    )
    run = [sys.executable, "-c", code], [sys.executable, "-m", "mage_envs.opponents"]
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "MAGE_CACHE_DIR": "off"}
    names, table = (
        subprocess.run(c, capture_output=True, text=True, check=True, cwd=tmp_path, env=env)
        for c in run
    )
    assert "'nim-greedy', 'random']" in names.stdout and "'nim-mix'" in names.stdout
    assert names.stdout.split()[-1] in ("nim-greedy", "mcts-100")
    assert "| `nim-greedy` | Nim | empties the largest pile |" in table.stdout
    assert "| `nim-mix` | nim-greedy 0.5, mcts-100 0.5 |" in table.stdout
    ruff = pytest.importorskip("ruff")  # the file passes the suite's lint and layout as it is
    config = ("--config", str(PAGE.parents[1] / "pyproject.toml"), "--no-cache")
    for command in (["check"], ["format", "--check"]):
        file = str(copy / "opponents" / "nim.py")
        subprocess.run([ruff.find_ruff_bin(), *command, *config, file], check=True)


def test_a_new_opponent_appears_wherever_opponents_are_listed():
    recipe("Add an opponent")
    assert "check-call" in opponent_names()
    assert "| `check-call` | Kuhn | checks when it can, calls every bet |" in opponents_markdown()
    env = gym.make("mage/KuhnPoker-v0", opponent="check-call", seat="second")
    obs, info = env.reset(seed=0)
    assert info["legal_actions"] == ["check", "bet"]  # it checked first, as promised


def test_a_new_env_is_checked_and_plays_trials():
    recipe("Add an env")
    env = gym.make("my/Guess-v0", max_invalid_actions=2)
    check_env(env.unwrapped, skip_render_check=True)
    env.reset(seed=0)
    obs, reward, _, truncated, info = env.step("nine")
    assert obs.startswith("Invalid move: ") and info["invalid_action"] and not truncated
    assert env.step("nine")[3] is True  # the second invalid answer in a row stops the game


def test_a_new_memory_mode_is_accepted_everywhere_memory_is():
    from baselines.run import load_settings

    recipe("Add a memory mode")
    trial = make_trial("mage/KuhnPoker-v0", num_episodes=2, memory="outcomes_only")
    trial.reset(seed=0)
    assert load_settings(["--memory", "outcomes_only"]).trial.memory == "outcomes_only"
    with pytest.raises(ValueError, match="memory must be one of"):
        make_trial("mage/KuhnPoker-v0", memory="no-such-mode")


def test_a_new_estimator_is_a_choice_of_the_config_and_of_train(tmp_path, scratch_registries):
    pytest.importorskip("trl")
    from baselines.train.command import build_parser
    from mage_agents.training import MetaRLConfig

    recipe("Add an estimator")
    config = MetaRLConfig(output_dir=str(tmp_path), estimator="sign", omega=3.0, use_cpu=True)
    from mage_agents.advantages import config_settings

    assert config_settings("sign", config) == {"scale": 3.0}
    assert build_parser().parse_args(["--estimator", "sign"]).estimator == "sign"


def test_a_new_strategy_is_a_choice_of_the_cli_and_of_agents(scratch_registries):
    from baselines.agents import build_agent_factory
    from baselines.run import build_parser

    recipe("Add a prompting strategy")
    assert build_parser().parse_args(["--strategy", "blunt"]).strategy == "blunt"
    agent = build_agent_factory({"kind": "tiny", "strategy": "blunt"}).new_agent()
    assert agent.strategy.name == "blunt"


def test_new_templates_are_a_trial_setting_of_configs(scratch_registries):
    from mage_envs.meta import TrialConfig

    recipe("Add templates")
    assert TrialConfig.from_mapping({"templates": "short-memory"}).templates.memory_header == (
        "Before:"
    )


def test_a_page_preset_declared_by_an_env_class_is_inherited(scratch_registries):
    namespace = recipe("Give an env the papers' pages")
    variant = type("PlainKuhnVariant", (namespace["PlainKuhnEnv"],), {})
    from mage_envs.page_presets import page_presets_of

    assert sorted(page_presets_of(variant)) == ["mage", "plain"]
    with pytest.raises(ValueError, match="No 'plain' template preset for KuhnPokerEnv"):
        make_trial("mage/KuhnPoker-v0", templates="plain")


@pytest.fixture
def _forget_count_command():
    """Take the recipe's command out of the CLI again."""
    from baselines.run import COMMANDS

    yield
    COMMANDS.pop("count", None)
    sys.modules.pop("my_count_command", None)


def test_a_new_command_is_listed_and_runs_with_its_options(_forget_count_command, capsys):
    from baselines.run import commands_help, main

    recipe("Add a command of the CLI")
    assert "mage/KuhnPoker-v0: 2 legal moves" in capsys.readouterr().out
    assert "count the legal moves of an env's first page" in commands_help()
    with pytest.raises(SystemExit):
        main(["count", "--help"])
    assert "--env" in capsys.readouterr().out
    assert main(["count", "--env", "mage/TicTacToe-v0", "--import", "json"]) == 0
    assert "mage/TicTacToe-v0: " in capsys.readouterr().out


ROOMS = {  # a room of baselines -> the rooms it may import (docs/architecture.md, its __init__)
    "report": set(),
    "evaluate": {"report"},
    "train": {"report"},
    "arena": {"report"},
    "bounds": set(),
    "serve": set(),
    "opponents": set(),
}


def _baselines_imports(path: pathlib.Path) -> set[str]:
    """The second names of every ``baselines.X`` module that ``path`` imports (at any depth)."""
    return {m.split(".")[1] for _, m in imported_modules(path) if m.startswith("baselines.")}


def test_the_rooms_of_baselines_import_only_what_their_docstrings_allow():
    root = PAGE.parent.parent / "baselines"
    rooms = {p.name for p in root.iterdir() if (p / "__init__.py").exists()}
    assert rooms == set(ROOMS), "a room was added or removed: give it its line in ROOMS"
    top = {p.stem for p in root.glob("*.py")}
    assert len(top) <= 12, f"baselines/ holds {len(top)} files at its top: put them in rooms"
    for path in root.glob("*.py"):
        if path.stem != "run":  # the dispatcher names the commands' modules, imported when asked
            assert not _baselines_imports(path) & rooms, f"{path.name} imports a room"
    for room, allowed in ROOMS.items():
        for path in (root / room).glob("*.py"):
            used = _baselines_imports(path) & rooms - {room}
            assert used <= allowed, f"{room}/{path.name} imports {used - allowed}"


def test_a_new_run_setting_is_a_flag_a_config_key_and_a_check(tmp_path):
    from baselines import run

    cls = recipe("Add a run setting")["MyRunSettings"]
    page = " ".join(run.build_parser(cls).format_help().split())  # argparse's wraps undone
    flags, keys = page.split("config file keys", 1)
    assert "--stop-after-failures" in flags and "failed trials in a row (default: never)" in flags
    assert "stop_after_failures" in keys
    config = tmp_path / "run.yaml"
    config.write_text("stop_after_failures: 3\ntasks: 2\n")
    assert run.load_settings(["--config", str(config)], cls).stop_after_failures == 3
    given = ["--config", str(config), "--stop-after-failures", "5"]
    assert run.load_settings(given, cls).stop_after_failures == 5  # the flag wins
    assert run.load_settings([], cls).stop_after_failures is None
    config.write_text("stop_after_failures: 0\n")
    with pytest.raises(ValueError, match=r"^stop_after_failures must be a positive integer, not 0"):
        run.load_settings(["--config", str(config)], cls)
    with pytest.raises(ValueError, match="stop_after_failures must be a positive integer"):
        cls(stop_after_failures=True)
    assert "--stop-after-failures" not in run.build_parser().format_help()  # the subclass's own

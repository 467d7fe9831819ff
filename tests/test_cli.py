"""``python -m baselines.run``, in-process: --help, the default table, configs, outputs, errors."""

import csv
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

import mage_envs
from baselines import run
from mage_agents.fake_endpoint import FakeChatServer

CONFIGS = sorted((Path(run.__file__).parent / "configs").glob("*.yaml"))


def test_help_documents_every_option(capsys):
    with pytest.raises(SystemExit) as exit_info:
        run.main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for action in run.build_parser()._actions:
        if action.help != "==SUPPRESS==":
            for option in action.option_strings:
                assert option in text
    assert "bounds" in text and "results.jsonl" in text
    for key in fields(run.RunSettings):  # every config key is named too
        assert key.name in text


WITHOUT_LLM_PACKAGES = """
import importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] in ("torch", "transformers", "trl", "peft"):
            raise ImportError(f"No module named {name!r} (the core install)")
sys.meta_path.insert(0, Absent())
from baselines import run
sys.exit(run.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("argv", [["--help"], ["--env", "mage/KuhnPoker-v0", "--tasks", "2"]])
def test_run_works_on_the_core_install_without_torch_or_transformers(argv, tmp_path):
    argv = [*argv, "--out", str(tmp_path)] if len(argv) > 1 else argv
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_LLM_PACKAGES, *argv], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "--stop-on-success" in done.stdout or (tmp_path / "results.jsonl").is_file()


def test_default_prints_a_table_for_every_registered_env(capsys):
    assert run.main([]) == 0
    out = capsys.readouterr().out
    for env_id in mage_envs.ENV_IDS:
        assert env_id in out
    assert "pass@3" in out and "random-legal" in out


def test_config_outputs_and_resume(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text(
        "agents: [random, 'policy:cfr-argmax']\n"
        "envs: [mage/KuhnPoker-v0]\n"
        "opponents: [balanced, aggressive]\n"
        "tasks: 6\nrepeats: 2\n"
        "env_kwargs: {mage/KuhnPoker-v0: {seat: second, reward_scale: 5}}\n"
        "trial: {num_episodes: 2, stop_on_success: true}\n"
    )
    out = tmp_path / "out"
    argv = ["--config", str(config), "--out", str(out)]
    assert run.main(argv) == 0
    names = {p.name for p in out.iterdir()}
    assert {
        "results.jsonl",
        "summary.md",
        "summary.csv",
        "pass_at_k.png",
        "per_opponent.png",
    } <= names
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 2 * 2 * 6 * 2
    rows = list(csv.DictReader(open(out / "summary.csv")))
    assert {(r["agent"], r["opponent"]) for r in rows} == {
        (a, o) for a in ("random-legal", "policy:cfr-argmax") for o in ("balanced", "aggressive")
    }
    assert all(
        float(r["pass@1_low"]) <= float(r["pass@1"]) <= float(r["pass@1_high"]) for r in rows
    )
    summary = (out / "summary.md").read_text()
    assert "Per opponent played" in summary and "Per seat" in summary and "Diversity" in summary
    lines_md = summary.splitlines()
    for i, line in enumerate(lines_md):
        if line.startswith("|---"):  # every table's rule has as many columns as its header
            assert line.count("|") == lines_md[i - 1].count("|")
    first = capsys.readouterr().out
    assert run.main(argv) == 0  # the same command again: nothing new is played
    assert (out / "results.jsonl").read_text().splitlines() == lines
    assert (out / "summary.md").read_text() == summary
    second = capsys.readouterr().out
    assert "48 trials" in second and "48 trials" in first
    assert "resumed" not in first
    assert "random-legal: 24 of 24 trials resumed" in second and "0 to play" in second


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tasks", "0"], "tasks must be a positive integer"),
        (["--env", "mage/Nope-v0"], "Unknown env id"),
        (["--agent", "gpt:4"], "Unknown agent kind"),
        (["--agent", "openai:m"], "base URL"),
        (["--agent-option", "oops"], "KEY=VALUE"),
        (["--seed", "-1"], "seed must be a non-negative integer"),
    ],
)
def test_bad_settings_exit_2_with_the_reason(argv, message, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert run.main(argv + ["--env", "mage/KuhnPoker-v0"] if "--env" not in argv else argv) == 2
    printed = capsys.readouterr()
    assert message in printed.err and not printed.out  # errors go to stderr, alone


def test_unknown_config_keys_are_rejected(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("agentz: [random]\n")
    assert run.main(["--config", str(config)]) == 2
    assert "unknown settings" in capsys.readouterr().err


def test_endpoint_agent_from_the_command_line(capsys):
    with FakeChatServer() as server:
        argv = ["--agent", "openai:fake", "--base-url", server.base_url, "--strategy", "react"]
        argv += ["--env", "mage/TicTacToe-v0", "--tasks", "3", "--agent-option", "max_tokens=64"]
        argv += ["--batch-size", "3"]
        assert run.main(argv) == 0
    out = capsys.readouterr().out
    assert "openai:fake/react" in out
    assert server.bodies[0]["max_tokens"] == 64
    assert "<think>" in server.bodies[0]["messages"][-1]["content"]


@pytest.mark.parametrize("config", CONFIGS, ids=[c.stem for c in CONFIGS])
def test_ready_configs_load(config):
    settings = run.load_settings(["--config", str(config)])
    assert settings.trial.num_episodes == 3 and settings.agents


def test_bounds_subcommand_prints_the_bounds_report(capsys):
    assert run.main(["bounds", "--games", "2"]) == 0
    assert "cfr-argmax" in capsys.readouterr().out


def test_agents_skip_envs_they_cannot_play(capsys):
    argv = [
        "--agent",
        "policy:mcts-100",
        "--env",
        "mage/KuhnPoker-v0",
        "--env",
        "mage/TicTacToe-v0",
    ]
    assert run.main(argv + ["--tasks", "2"]) == 0
    err = capsys.readouterr().err
    assert "Skipping mage/KuhnPoker-v0: policy:mcts-100 cannot play it" in err
    assert run.main(argv[:4] + ["--tasks", "2"]) == 2
    assert "no trial could be played" in capsys.readouterr().err


def test_ready_configs_are_found_by_name(capsys):
    settings = run.load_settings(["--config", "mage_kuhn", "--tasks", "2"])
    assert settings.opponents == ["mage-kuhn-eval"]
    kuhn = settings.env_kwargs["mage/KuhnPoker-v0"]
    assert kuhn["seat"] == "second" and kuhn["reward_scale"] == 5 and kuhn["answer_rules"] == "mage"
    assert run.main(["--config", "no_such_config"]) == 2
    assert "Ready configs" in capsys.readouterr().err


def test_an_agent_given_twice_is_an_error_not_a_double_count(capsys):
    argv = ["--agent", "random", "--agent", "random-legal", "--env", "mage/KuhnPoker-v0"]
    assert run.main(argv + ["--tasks", "3"]) == 2
    assert "Two agents are named 'random-legal'" in capsys.readouterr().err


def test_a_changed_agent_option_is_played_again_not_resumed(tmp_path):
    out = tmp_path / "out"
    with FakeChatServer() as server:
        argv = ["--agent", "openai:fake", "--base-url", server.base_url, "--out", str(out)]
        argv += ["--env", "mage/KuhnPoker-v0", "--tasks", "2", "--no-plots"]
        assert run.main(argv + ["--agent-option", "temperature=0.1"]) == 0
        assert run.main(argv + ["--agent-option", "temperature=0.9"]) == 0
        # where the answers come from is not a setting of the trial: this one resumes
        assert (
            run.main(
                argv + ["--agent-option", "temperature=0.9", "--agent-option", "max_retries=1"]
            )
            == 0
        )
    temperatures = [body["temperature"] for body in server.bodies]
    assert 0.1 in temperatures and 0.9 in temperatures
    assert len((out / "results.jsonl").read_text().splitlines()) == 4


def test_config_lists_may_be_given_as_one_item(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("agents: random\nenvs: mage/KuhnPoker-v0\nopponents: balanced\n")
    settings = run.load_settings(["--config", str(config)])
    assert settings.agents == ["random"]
    assert settings.envs == ["mage/KuhnPoker-v0"]
    assert settings.opponents == ["balanced"]


def test_env_kwargs_flag_is_merged_into_the_configs_and_wins():
    settings = run.load_settings(["--config", "mage_kuhn", "--env-kwargs", '{"reward_scale": 1}'])
    kuhn = settings.env_kwargs["mage/KuhnPoker-v0"]
    assert kuhn["seat"] == "second" and kuhn["reward_scale"] == 1
    assert settings.env_kwargs["*"] == {"reward_scale": 1}


def test_help_lists_every_command_from_the_table(capsys):
    with pytest.raises(SystemExit):
        run.main(["--help"])
    text = capsys.readouterr().out
    width = max(len(name) for name in run.COMMANDS)
    for name, command in run.COMMANDS.items():
        assert f"  {name:<{width}} {command.help}" in text
    with pytest.raises(SystemExit):
        run.main(["run", "--help"])  # the default command, named
    assert capsys.readouterr().out == text

"""The command line when things go wrong: bad pairs, locked folders, bad input, interrupts."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from baselines import run
from baselines.evaluate import run_report


def _lines(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_one_bad_env_opponent_pair_is_skipped_not_the_end_of_the_run(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["--opponent", "cfr", "--tasks", "2", "--out", str(out), "--no-plots"]
    argv += ["--env", "mage/KuhnPoker-v0", "--env", "mage/TicTacToe-v0", "--env", "mage/Sokoban-v0"]
    assert run.main(argv) == 0
    text = capsys.readouterr().err  # warnings a user must see, with stdout in a file too
    assert "Skipping mage/TicTacToe-v0 against cfr: it cannot be built" in text
    assert "The opponent cfr does not apply to mage/Sokoban-v0 (no opponent)" in text
    envs = {r["env_id"] for r in _lines(out)}
    assert envs == {"mage/KuhnPoker-v0", "mage/Sokoban-v0"}
    assert (out / "summary.md").exists()


SLOW_AGENT = """
import time
from mage_agents.scripted import RandomLegalAgent

class SlowRandom(RandomLegalAgent):
    name = "slow-random"

    def act(self, observation, info):
        time.sleep(0.01)
        return super().act(observation, info)
"""


def _children(pid):
    """Pids of ``pid``'s child processes (Linux /proc)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(c) for c in (task / "children").read_text().split()}
    return found


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has ended; only its exit status is left


def _start_slow_run(tmp_path, *extra):
    (tmp_path / "slow_agent.py").write_text(SLOW_AGENT)
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "baselines.run", "--agent", "python:slow_agent:SlowRandom",
        "--env", "mage/KuhnPoker-v0", "--tasks", "400", "--out", str(out), "--no-plots", *extra,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if results.exists() and results.read_text().count("\n") >= 4:
            break
        time.sleep(0.02)
    assert process.poll() is None, process.communicate()
    return process, command, env, out


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_killing_the_runner_ends_its_worker_processes(tmp_path):
    process, *_ = _start_slow_run(tmp_path, "--workers", "2")
    children = _children(process.pid)
    assert len(children) >= 2  # the two workers (and multiprocessing's resource tracker)
    process.send_signal(signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(c) for c in children):
        time.sleep(0.05)
    assert not [c for c in children if _alive(c)], "workers outlived the runner"


def test_a_second_run_on_the_same_folder_is_refused(tmp_path, capsys):
    process, command, env, out = _start_slow_run(tmp_path)
    try:
        second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    finally:
        process.send_signal(signal.SIGINT)
        stdout, _ = process.communicate(timeout=30)
    assert second.returncode == 2
    assert f"Another run is writing to {out}" in second.stderr and not second.stdout
    # Ctrl-C: one line, the results are saved, the same command resumes
    assert process.returncode == run.EXIT_INTERRUPTED
    assert "Interrupted: every finished trial is saved" in stdout
    assert "Traceback" not in stdout
    ids = [r["trial_id"] for r in _lines(out)]
    assert len(ids) == len(set(ids))


def test_each_config_in_one_folder_keeps_its_own_summary(tmp_path, capsys):
    out = tmp_path / "out"
    base = ["--env", "mage/KuhnPoker-v0", "--tasks", "3", "--out", str(out), "--no-plots"]
    assert run.main(base + ["--episodes", "1"]) == 0
    first = (out / "summary.md").read_text()
    capsys.readouterr()
    assert run.main(base + ["--episodes", "2"]) == 0
    text = capsys.readouterr().out
    assert "also holds trials of other configs" in text and "are this run's" in text
    kept = sorted(p.name for p in out.glob("summary-*.md"))
    assert len(kept) == 2 and len(list(out.glob("summary-*.csv"))) == 2
    assert first in [(out / name).read_text() for name in kept]
    latest = (out / "summary.md").read_text()
    assert latest != first and latest in [(out / name).read_text() for name in kept]
    capsys.readouterr()
    assert run.main(base + ["--episodes", "1"]) == 0  # the first config again: its own summary
    assert (out / "summary.md").read_text() == first


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_ctrl_c_with_workers_stops_promptly_and_ends_them(tmp_path):
    process, _, _, out = _start_slow_run(tmp_path, "--workers", "2")
    children = _children(process.pid)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == run.EXIT_INTERRUPTED, stderr
    assert "Interrupted: every finished trial is saved" in stdout
    assert "Traceback" not in stdout + stderr
    assert len(_lines(out)) < 400  # it stopped: the pending trials were dropped, not played
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(c) for c in children):
        time.sleep(0.05)
    assert not [c for c in children if _alive(c)]


KUHN = ["--env", "mage/KuhnPoker-v0", "--tasks", "2", "--no-plots"]


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (OSError(28, "No space left on device"), "the disk is full"),
        (PermissionError(13, "Permission denied", "summary.csv"), "no permission to write"),
    ],
)
def test_a_full_or_read_only_folder_in_the_report_phase_is_one_clear_line(
    error, words, tmp_path, capsys, monkeypatch
):
    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(run_report, "write_csv", fail)
    out = tmp_path / "out"
    assert run.main([*KUHN, "--out", str(out)]) == 2
    text = capsys.readouterr().err
    assert "the report could not be written" in text and words in text and "Errno" not in text
    assert "saved in results.jsonl" in text and "Traceback" not in text
    assert len(_lines(out)) == 2


def test_a_record_of_an_older_format_is_a_clear_error(tmp_path, capsys):
    out = tmp_path / "out"
    assert run.main([*KUHN, "--out", str(out)]) == 0
    records = _lines(out)
    for record in records:
        del record["play_steps"], record["trial"]["returns"]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    capsys.readouterr()
    assert run.main([*KUHN, "--out", str(out)]) == 2
    text = capsys.readouterr().err
    assert "lacks play_steps, trial.returns" in text and "older version" in text


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("python:no_such_module_14:X", "no module named 'no_such_module_14'"),
        ("python:os:no_such_attr", "module os has no attribute 'no_such_attr'"),
    ],
)
def test_python_agents_that_cannot_be_imported_say_what_is_missing(agent, message, capsys):
    assert run.main(["--agent", agent, *KUHN]) == 2
    text = capsys.readouterr().err
    assert message in text and "Traceback" not in text


def test_an_agent_whose_reset_raises_is_contained_like_act(tmp_path, capsys, monkeypatch):
    (tmp_path / "reset_agent_14.py").write_text(
        "from mage_agents.scripted import RandomLegalAgent\n\n"
        "class BadReset(RandomLegalAgent):\n"
        "    name = 'bad-reset'\n\n"
        "    def reset(self, seed=None):\n"
        "        raise RuntimeError('cannot reset')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    assert run.main(["--agent", "python:reset_agent_14:BadReset", *KUHN, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "reset: RuntimeError: cannot reset" in text
    assert all(r["errors"] == ["reset: RuntimeError: cannot reset"] for r in _lines(out))


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("max_retries=abc", "Agent option max_retries must be an integer"),
        ("timeout_s=soon", "Agent option timeout_s must be a number"),
        ("max_retries=true", "Agent option max_retries must be an integer"),
        ("max_retrys=2", "Unknown option 'max_retrys' for openai agents"),
    ],
)
def test_a_wrong_agent_option_names_the_option_and_its_type(option, message, capsys):
    argv = ["--agent", "openai:m", "--base-url", "http://127.0.0.1:9/v1", *KUHN]
    assert run.main([*argv, "--agent-option", option]) == 2
    assert message in capsys.readouterr().err


def test_malformed_yaml_names_the_file(tmp_path, capsys):
    config = tmp_path / "broken.yaml"
    config.write_text("agents: [random\ntasks: 2\n")
    assert run.main(["--config", str(config)]) == 2
    text = capsys.readouterr().err
    assert f"{config}: not valid YAML at line" in text


def test_the_resume_line_of_a_long_command_is_not_broken_by_line_wraps(
    tmp_path, monkeypatch, capsys
):
    def interrupted(settings, console):
        raise KeyboardInterrupt

    monkeypatch.setattr(run, "run", interrupted)
    out = str(tmp_path / ("x" * 200))
    argv = ["--env", "mage/KuhnPoker-v0", "--tasks", "3", "--out", out]
    assert run.main(argv) == run.EXIT_INTERRUPTED
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    # one line: a copied command cut at the console's width would run without its --out folder
    assert len(lines) == 1 and lines[0].endswith(f"--out {out}")

"""One writer per output folder, each folder written by one command: run, arena and train alike."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from baselines import run
from baselines.folder_lock import LOCK_FILE, FolderLock, folder_writer

ARENA = ["arena", "--agents", "random", "cfr", "--games", "2", "--no-plots"]
RUN = ["--env", "mage/KuhnPoker-v0", "--tasks", "2", "--no-plots"]
TRAIN = ["train", "--config", "tiny_kuhn_grpo", "--no-plots", "--set", "num_generations=2"]
TRAIN += ["--set", "per_device_train_batch_size=4", "--set", "max_completion_length=4"]


def _env():
    return {**os.environ, "PYTHONPATH": os.getcwd()}


def _holder(out):
    try:
        return json.loads((out / LOCK_FILE).read_text())
    except (OSError, ValueError):
        return {}


def _wait_for_holder(process, out, seconds=180):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        if _holder(out).get("pid") == process.pid:
            return _holder(out)
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"no lock taken: {process.communicate()}")


def _hold(out, command):
    """A process of its own that holds ``out``'s lock for ``command`` until killed."""
    code = (
        "import sys, time; from baselines.folder_lock import FolderLock\n"
        f"with FolderLock({str(out)!r}, {command!r}):\n    time.sleep(600)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], env=_env())
    _wait_for_holder(process, out)
    return process


def _one_error_line(text):
    """The one error line of ``text`` (library warnings aside), with no traceback."""
    lines = [line for line in text.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


@pytest.mark.skipif(sys.platform == "win32", reason="flock (POSIX)")
def test_a_second_train_is_refused_naming_the_first_and_a_killed_one_leaves_no_lock(tmp_path):
    pytest.importorskip("trl")
    out = tmp_path / "run"
    first = subprocess.Popen(
        [sys.executable, "-m", "baselines.run", *TRAIN, "--max-steps", "100000", "--out", str(out)],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        holder = _wait_for_holder(first, out)
        assert holder["command"] == "train"
        # the audit's case: the same folder, --restart and another seed, while the first trains
        second = [*TRAIN, "--max-steps", "24", "--restart", "--set", "seed=1", "--out", str(out)]
        refused = subprocess.run(
            [sys.executable, "-m", "baselines.run", *second],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert refused.returncode == 2
        line = _one_error_line(refused.stderr)
        assert f"Another train is writing to {out} (pid {first.pid} on " in line
        assert "give this train another --out" in line
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert "seed: 1" not in (out / "config.yaml").read_text()  # the second wrote nothing
    with FolderLock(out, "train"):  # kill -9 left no stale lock
        assert _holder(out)["pid"] == os.getpid()


@pytest.mark.skipif(sys.platform == "win32", reason="flock (POSIX)")
@pytest.mark.parametrize("holder", ["run", "arena", "train"])
def test_every_command_is_refused_a_folder_another_process_writes(tmp_path, capsys, holder):
    out = tmp_path / "out"
    process = _hold(out, holder)
    try:
        assert run.main([*ARENA, "--out", str(out)]) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert f"Another {holder} is writing to {out} (pid {process.pid} on " in line
        assert run.main([*RUN, "--out", str(out)]) == 2
        assert f"Another {holder} is writing to {out}" in _one_error_line(capsys.readouterr().err)
    finally:
        process.kill()
        process.wait()
    assert not (out / "results.jsonl").exists()


def test_a_folder_written_by_another_command_is_refused_by_each(tmp_path, capsys):
    pytest.importorskip("trl")
    evaluation, arena = tmp_path / "evaluation", tmp_path / "arena"
    assert run.main([*RUN, "--out", str(evaluation)]) == 0
    assert run.main([*ARENA, "--out", str(arena)]) == 0
    assert (folder_writer(evaluation), folder_writer(arena)) == ("run", "arena")
    capsys.readouterr()
    kept = (evaluation / "results.jsonl").read_bytes()
    for argv, folder, words in [
        (ARENA, evaluation, "holds an evaluation (written by run); arena writes"),
        ([*TRAIN, "--max-steps", "1"], evaluation, "holds an evaluation (written by run); train"),
        ([*TRAIN, "--max-steps", "1", "--restart"], evaluation, "holds an evaluation"),
        (RUN, arena, "holds an arena (written by arena); run writes a folder of its own"),
        ([*TRAIN, "--max-steps", "1"], arena, "holds an arena (written by arena); train"),
    ]:
        assert run.main([*argv, "--out", str(folder)]) == 2
        assert words in _one_error_line(capsys.readouterr().err)
    assert (evaluation / "results.jsonl").read_bytes() == kept
    assert not (evaluation / "config.yaml").exists()
    # the same command goes on writing its own folder
    assert run.main([*RUN, "--tasks", "3", "--out", str(evaluation)]) == 0


def test_folders_of_earlier_versions_are_known_by_what_they_hold(tmp_path, capsys):
    evaluation = tmp_path / "evaluation"
    assert run.main([*RUN, "--out", str(evaluation)]) == 0
    (evaluation / LOCK_FILE).unlink()  # as an earlier version left it
    assert folder_writer(evaluation) == "run"
    assert run.main([*ARENA, "--out", str(evaluation)]) == 2
    assert "holds an evaluation" in capsys.readouterr().err
    training = tmp_path / "training"
    (training / "checkpoint-2").mkdir(parents=True)
    (training / "config.yaml").write_text("seed: 0\n")
    assert folder_writer(training) == "train"
    for argv in (RUN, ARENA):
        assert run.main([*argv, "--out", str(training)]) == 2
        assert "holds a training run (written by train)" in capsys.readouterr().err
    assert folder_writer(tmp_path / "nothing") is None
    unrelated = tmp_path / "notes"
    unrelated.mkdir()
    (unrelated / "readme.txt").write_text("mine")
    assert run.main([*RUN, "--out", str(unrelated)]) == 0  # a folder no command wrote is taken


def test_a_train_folder_takes_its_lock_and_names_its_writer(tmp_path):
    pytest.importorskip("trl")
    out = tmp_path / "run"
    assert run.main([*TRAIN, "--max-steps", "1", "--set", "save_steps=1", "--out", str(out)]) == 0
    assert _holder(out)["command"] == "train" and folder_writer(out) == "train"
    assert run.main([*TRAIN, "--max-steps", "1", "--restart", "--out", str(out)]) == 0
    assert (out / LOCK_FILE).exists()  # --restart keeps the lock file: it is not the run's


def test_a_folder_that_cannot_be_made_is_one_line_naming_out(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert run.main([*ARENA, "--out", str(tmp_path / "file" / "out")]) == 2
    assert "--out " in _one_error_line(capsys.readouterr().err)
    with pytest.raises(ValueError, match="command must be one of"):
        FolderLock(tmp_path, "report")


def test_the_lock_file_is_a_hidden_file_of_the_folder(tmp_path):
    with FolderLock(tmp_path / "x", "arena"):
        names = [p.name for p in (tmp_path / "x").iterdir()]
    assert names == [LOCK_FILE] and LOCK_FILE.startswith(".")
    assert Path(tmp_path / "x" / LOCK_FILE).read_text().count("\n") == 1

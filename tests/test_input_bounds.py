"""Every input bounded: endpoint answers, arena plans and YAML files cost what they should."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from baselines import run
from mage_agents.endpoint_http import MAX_RESPONSE_BYTES, EndpointError, read_body
from mage_agents.fake_endpoint import FakeChatServer
from mage_agents.yaml_bounds import MAX_DEPTH, YAMLBoundError, load_yaml

KUHN = "mage/KuhnPoker-v0"
LINUX = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")

CLIENT = """
import json, resource, sys
from mage_agents.openai_client import OpenAIChatBackend
backend = OpenAIChatBackend(sys.argv[1], "fake", max_retries=0)
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
before = peak()
(reply,) = backend.generate([[{"role": "user", "content": "Legal moves: check, bet."}]])
print(json.dumps({"error": reply.error, "text": reply.text, "grew_mb": peak() - before}))
"""


def _env():
    return {**os.environ, "PYTHONPATH": os.getcwd()}


def _one_error_line(text):
    lines = [line for line in text.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


def test_a_300_mb_answer_is_a_malformed_response_read_in_bounded_memory():
    # the audit: a 300 MB answer took the runner to 2.2 GB; the peak RSS is measured in a
    # process of its own, the server streaming the answer from this one
    with FakeChatServer(faults=["huge"], huge_bytes=300 * 2**20) as server:
        done = subprocess.run(
            [sys.executable, "-c", CLIENT, server.base_url],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
    report = json.loads(done.stdout)
    assert report["text"] == "" and "malformed response" in report["error"]
    assert f"larger than {MAX_RESPONSE_BYTES // 2**20} MiB" in report["error"]
    assert report["grew_mb"] < 100, report  # 16 MiB read at most, never the 300 MB


def test_an_oversized_answer_fails_its_trial_and_is_no_loss(tmp_path):
    out = tmp_path / "out"
    with FakeChatServer(faults=["huge"] * 2, huge_bytes=20 * 2**20) as server:
        argv = ["--agent", f"openai:fake@{server.base_url}", "--agent-option", "max_retries=1"]
        argv += ["--agent-option", "backoff_s=0", "--env", KUHN, "--tasks", "1", "--no-plots"]
        assert run.main([*argv, "--out", str(out)]) == run.EXIT_FAILED_TRIALS
    (record,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert record["incomplete"] and "malformed response" in record["errors"][0]
    assert "trial" not in record or not record["trial"]  # nothing scored: replayed next run


class _Response:
    """A response whose headers declare ``length`` and whose reads are counted."""

    def __init__(self, length, body=b""):
        self.length, self.body, self.reads = length, body, 0

    def getheader(self, name):
        return None if self.length is None else str(self.length)

    def read(self, amount):
        self.reads += 1
        chunk, self.body = self.body[:amount], self.body[amount:]
        return chunk


def test_a_declared_oversized_body_is_refused_before_a_byte_is_read():
    response = _Response(MAX_RESPONSE_BYTES + 1)
    with pytest.raises(EndpointError, match="malformed response") as error:
        read_body(response)
    assert error.value.retryable and response.reads == 0
    assert read_body(_Response(None, b"x" * 1000), limit=1000) == b"x" * 1000
    with pytest.raises(EndpointError, match="larger than"):
        read_body(_Response(None, b"x" * 1001), limit=1000)


def _rss_kb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _lines(path):
    return path.read_text().count("\n") if path.exists() else 0


def _start(command, results, at_least):
    process = subprocess.Popen(
        command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None and _lines(results) < at_least:
        time.sleep(0.05)
    return process


@LINUX
def test_a_trillion_arena_games_play_at_once_in_bounded_memory_and_resume(tmp_path):
    # the audit: --games 1000000000000 planned every game first (2 GB after 64 s, 0 played)
    out = tmp_path / "arena"
    results = out / "results.jsonl"
    command = [sys.executable, "-m", "baselines.run", "arena", "--agents", "random", "cfr"]
    command += ["--games", "1000000000000", "--out", str(out), "--no-plots"]
    process = _start(command, results, at_least=50)
    try:
        assert process.poll() is None and _lines(results) >= 50  # playing, not planning
        rss = _rss_kb(process.pid)
        assert rss < 600_000, f"{rss} kB"
    finally:
        process.send_signal(signal.SIGINT)
        stdout, _ = process.communicate(timeout=60)
    assert process.returncode == 130 and "every finished game is saved" in stdout
    done = _lines(results)
    again = _start(command, results, at_least=done + 20)
    try:
        assert again.poll() is None and _lines(results) >= done + 20  # resumed, not replanned
    finally:
        again.send_signal(signal.SIGINT)
        again.communicate(timeout=60)
    games = [json.loads(line) for line in results.read_text().splitlines()]
    ids = [g["trial_id"] for g in games]
    assert len(ids) == len(set(ids)) and games[0]["deal"] == 0


def test_the_arena_schedule_knows_its_length_and_any_game_without_making_the_others():
    from baselines.arena.games import schedule

    games = schedule(["a", "b", "c"], 10**12, seed=3)
    assert len(games) == 6 * 10**12
    last = games[-1]
    assert (last.first, last.second, last.deal, last.seed) == ("c", "b", 10**12 - 1, 3)
    assert list(schedule(["a", "b"], 2, 0)) == [schedule(["a", "b"], 2, 0)[i] for i in range(4)]
    with pytest.raises(IndexError):
        games[6 * 10**12]


def _laughs(levels=9, indent="  "):
    """A "billion laughs": each level's list holds nine aliases of the one before (~1 KB)."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(indent + line for line in lines)


def test_a_billion_laughs_under_env_kwargs_is_one_line_and_exit_2(tmp_path, capsys):
    config = tmp_path / "laughs.yaml"
    config.write_text(f"envs: [{KUHN}]\nenv_kwargs:\n  '*':\n{_laughs(indent='    ')}\n")
    assert len(config.read_bytes()) < 1200
    assert run.main(["--config", str(config)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"{config}: not valid YAML" in line and "more than 100,000 values" in line


def test_a_50000_deep_yaml_is_one_line_and_exit_2_for_run_and_train(tmp_path, capsys):
    deep = tmp_path / "deep.yaml"
    deep.write_text("tasks: " + "[" * 50_000 + "]" * 50_000 + "\n")
    assert run.main(["--config", str(deep)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"nested deeper than {MAX_DEPTH} levels" in line and str(deep) in line
    laughs = tmp_path / "train.yaml"
    laughs.write_text(f"env_kwargs:\n{_laughs()}\n")
    for config in (deep, laughs):
        assert run.main(["train", "--config", str(config), "--out", str(tmp_path / "t")]) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert f"{config}: not valid YAML: " in line
    assert not (tmp_path / "t").exists()


def test_yaml_bounds_by_hand():
    assert load_yaml("a: &x {k: [1, 2]}\nb: *x\nc: {<<: *x, j: 3}") == {
        "a": {"k": [1, 2]},
        "b": {"k": [1, 2]},
        "c": {"k": [1, 2], "j": 3},
    }
    assert load_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None  # the deepest allowed
    with pytest.raises(YAMLBoundError, match="nested deeper"):
        load_yaml("- " * 50_000 + "x")
    with pytest.raises(YAMLBoundError, match="inside its own anchor"):
        load_yaml("a: &a [1, *a]")
    with pytest.raises(YAMLBoundError, match="billion laughs"):
        load_yaml(f"root:\n{_laughs(levels=7)}")
    assert str(YAMLBoundError(problem="p", problem_mark=None)) == "p"

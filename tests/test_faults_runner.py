"""Fault injection, runner side: backend faults are never scored as the agent's answers.

The servers are the tests' own, on 127.0.0.1 only, and every timeout is a fraction of a second.
"""

import json
import socket

from baselines import run
from baselines.agents import build_agent_factory
from baselines.evaluate.run_agents import STOP_AFTER_FAILURES
from baselines.evaluate.runner import evaluate, plan_trials
from baselines.results import ResultsFile
from mage_agents.fake_endpoint import FakeChatServer
from mage_envs.meta import TrialConfig

FAST = ["--agent-option", "max_retries=1", "--agent-option", "backoff_s=0.01"]
FAST += ["--agent-option", "timeout_s=0.5"]


def _closed_port_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _argv(url, out, tasks=3):
    argv = ["--agent", "openai:m", "--base-url", url, "--env", "mage/KuhnPoker-v0"]
    return argv + ["--tasks", str(tasks), "--out", str(out), "--no-plots", *FAST]


def _lines(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_a_dead_endpoint_fails_the_run_and_the_rerun_plays_every_trial(tmp_path, capsys):
    out = tmp_path / "out"
    assert run.main(_argv(_closed_port_url(), out)) == run.EXIT_FAILED_TRIALS
    printed = capsys.readouterr()
    assert "3 trials failed" in printed.err and "connection failed" in printed.err
    assert "no trial could be played" in printed.err and "W/D/L" not in printed.out
    saved = _lines(out)
    assert len(saved) == 3 and all(r["incomplete"] and r["faults"] == 2 for r in saved)
    with FakeChatServer() as server:
        assert run.main(_argv(server.base_url, out)) == 0
    text = capsys.readouterr().out
    assert "resumed" not in text and "3 trials in" in text
    assert server.requests > 0  # all three trials were played again, not resumed
    assert [r["incomplete"] for r in _lines(out)] == [True] * 3 + [False] * 3
    assert "Failed trials" not in (out / "summary.md").read_text()


def test_a_server_that_stops_mid_run_is_reported_with_the_finished_trials(tmp_path, capsys):
    out = tmp_path / "out"
    with FakeChatServer(stop_after=8) as server:
        code = run.main(_argv(server.base_url, out, tasks=4))
    text = capsys.readouterr().err
    assert code == run.EXIT_FAILED_TRIALS
    finished = [r for r in _lines(out) if not r["incomplete"]]
    assert 1 <= len(finished) < 4 and "trials failed" in text
    assert "connection failed" in text
    summary = (out / "summary.md").read_text()
    assert "Failed trials (not in the figures)" in summary and "connection failed" in summary


def test_throttling_and_malformed_answers_that_recover_are_counted_not_failed(tmp_path):
    faults = ["429", "malformed", "reset", "null"]
    with FakeChatServer(faults=faults) as server:
        factory = build_agent_factory(
            {"kind": "openai", "model": "m", "base_url": server.base_url, "backoff_s": 0.01}
        )
        specs = plan_trials(factory.name, ["mage/KuhnPoker-v0"], ["random"], tasks=1)
        (record,) = evaluate(factory, specs, ResultsFile(tmp_path / "r.jsonl"))
    assert not record["incomplete"] and record["faults"] == 3  # every retried fault counted
    assert record["failed_steps"] == 0
    assert record["invalid_steps"] == 1  # the null content: the model's own empty answer


def test_a_run_against_a_dead_backend_stops_starting_trials(tmp_path):
    factory = build_agent_factory(
        {"kind": "openai", "model": "m", "base_url": _closed_port_url(), "max_retries": 0}
    )
    specs = plan_trials(factory.name, ["mage/KuhnPoker-v0"], ["random"], tasks=30)
    results = ResultsFile(tmp_path / "r.jsonl")
    assert evaluate(factory, specs, results, stop_after_failures=4) == []
    assert len(results.failed()) == 4 and len(results) == 0


def test_an_agents_own_exception_is_its_failed_step_not_a_backend_fault(tmp_path):
    def broken(observation, info):
        raise RuntimeError("bug in my agent")

    one = TrialConfig(num_episodes=1)
    specs = plan_trials("broken", ["mage/KuhnPoker-v0"], ["random"], tasks=1, trial=one)
    (record,) = evaluate(broken, specs, ResultsFile(None))
    assert not record["incomplete"] and record["failed_steps"] >= 1 and record["faults"] == 0


def test_faults_that_recovered_are_counted_in_the_report(tmp_path, capsys):
    with FakeChatServer(faults=["500", "429", "slow"], slow_s=0.8) as server:
        argv = _argv(server.base_url, tmp_path / "out", tasks=2)
        assert run.main([*argv, "--agent-option", "max_retries=3"]) == 0
    text = capsys.readouterr().out
    assert "3 backend requests failed and were retried in finished trials" in text
    assert sum(r["faults"] for r in _lines(tmp_path / "out")) == 3


def test_a_backend_that_raises_fails_its_trials_not_the_run():
    from baselines.agents import AgentFactory
    from mage_agents.base import Reply
    from mage_agents.prompting import LLMAgent

    class Exploding:
        name = "exploding"
        calls = 0

        def generate(self, chats):
            self.calls += 1
            if self.calls == 2:  # both trials are still playing: 3 attempts each
                raise MemoryError("out of memory")
            return [Reply("<action>check</action>") for _ in chats]

    backend = Exploding()
    factory = AgentFactory("llm", lambda: LLMAgent(backend, "zero-shot", name="llm"))
    specs = plan_trials("llm", ["mage/KuhnPoker-v0"], ["random"], tasks=2)
    results = ResultsFile(None)
    assert evaluate(factory, specs, results, batch_size=2) == []
    failed = results.failed()
    assert len(failed) == 2 and all(r["incomplete"] and r["faults"] == 1 for r in failed)
    assert all(r["errors"] == ["backend MemoryError: out of memory"] for r in failed)
    assert len(evaluate(factory, specs, results, batch_size=2)) == 2  # replayed, finished


def test_the_cli_stops_on_a_dead_backend_and_says_how_many_were_not_started(tmp_path, capsys):
    out = tmp_path / "out"
    assert run.main(_argv(_closed_port_url(), out, tasks=12)) == run.EXIT_FAILED_TRIALS
    text = capsys.readouterr().err
    stopped = STOP_AFTER_FAILURES
    assert f"{stopped} trials failed" in text
    assert f"{12 - stopped} trials were not started: the run stopped on repeated failures" in text
    assert len(_lines(out)) == stopped


def test_worker_processes_stop_on_a_dead_backend_too(tmp_path):
    config = {"kind": "openai", "model": "m", "base_url": _closed_port_url(), "max_retries": 0}
    specs = plan_trials("openai:m/zero-shot", ["mage/KuhnPoker-v0"], ["random"], tasks=40)
    results = ResultsFile(tmp_path / "r.jsonl")
    assert evaluate(config, specs, results, workers=2, stop_after_failures=3) == []
    assert len(results.failed()) == 3 and len(results) == 0

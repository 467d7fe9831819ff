"""The OpenAI-compatible client against a local fake server with injected faults."""

import json
import time

import pytest

from baselines.agents import build_agent_factory
from baselines.evaluate.runner import evaluate, plan_trials
from baselines.results import ResultsFile
from mage_agents.fake_endpoint import FakeChatServer
from mage_agents.openai_client import OpenAIChatBackend

CHAT = [{"role": "user", "content": "Kuhn poker.\nLegal moves: check, bet."}]
SECRET = "sk-test-0123456789abcdef"


def _backend(server, **kwargs):
    kwargs.setdefault("backoff_s", 0.01)
    return OpenAIChatBackend(server.base_url, "fake-model", **kwargs)


def test_answer_tokens_and_request_fields(monkeypatch):
    monkeypatch.setenv("MY_KEY", SECRET)
    with FakeChatServer() as server:
        backend = _backend(server, api_key_env="MY_KEY", temperature=0.3, top_p=0.9, seed=7)
        (reply,) = backend.generate([CHAT])
    assert reply.text == "<action>check</action>" and reply.error is None
    assert reply.prompt_tokens == len(CHAT[0]["content"]) // 4
    assert reply.completion_tokens == len(reply.text) // 4
    body = server.bodies[0]
    assert (body["model"], body["temperature"], body["top_p"], body["seed"]) == (
        "fake-model",
        0.3,
        0.9,
        7,
    )
    assert server.headers[0]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in repr(backend)


@pytest.mark.parametrize("fault", ["500", "429", "malformed", "slow"])
def test_transient_faults_are_retried(fault):
    with FakeChatServer(faults=[fault, fault], slow_s=0.5) as server:
        (reply,) = _backend(server, timeout_s=0.2).generate([CHAT])
    assert reply.error is None and reply.text == "<action>check</action>"
    assert server.requests == 3


def test_retry_after_is_honoured():
    with FakeChatServer(faults=["429"], retry_after=0.3) as server:
        start = time.monotonic()
        (reply,) = _backend(server, backoff_s=0.0).generate([CHAT])
    assert reply.error is None
    assert time.monotonic() - start >= 0.3


def test_exhausted_retries_become_a_failed_reply_with_its_reason():
    with FakeChatServer(faults=["500"] * 10) as server:
        (reply,) = _backend(server, max_retries=2).generate([CHAT])
    assert reply.text == ""
    assert reply.error.startswith("HTTP 500") and reply.error.endswith("after 3 attempts")
    assert server.requests == 3


def test_client_errors_are_not_retried():
    with FakeChatServer(faults=["401"]) as server:
        (reply,) = _backend(server).generate([CHAT])
    assert "HTTP 401" in reply.error and server.requests == 1


def test_unreachable_server_is_a_failed_reply():
    with FakeChatServer() as server:
        url = server.base_url
    (reply,) = OpenAIChatBackend(url, "m", max_retries=1, backoff_s=0.01).generate([CHAT])
    assert "connection failed" in reply.error


def test_concurrency_is_bounded_and_order_kept():
    chats = [[{"role": "user", "content": f"Legal moves: m{i}, x."}] for i in range(12)]
    with FakeChatServer(faults=["slow"] * 12, slow_s=0.1) as server:
        replies = _backend(server, max_concurrency=3).generate(chats)
    assert [r.text for r in replies] == [f"<action>m{i}</action>" for i in range(12)]
    assert server.max_in_flight == 3


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError, match="base_url"):
        OpenAIChatBackend("localhost:8000", "m")
    with pytest.raises(ValueError, match="max_concurrency"):
        OpenAIChatBackend("http://x", "m", max_concurrency=0)
    with pytest.raises(ValueError, match="backoff_s"):  # time.sleep(-1) would crash a retry
        OpenAIChatBackend("http://x", "m", backoff_s=-1.0)


def test_a_response_with_unreadable_usage_still_answers():
    with FakeChatServer(faults=["bad_usage"]) as server:
        (reply,) = _backend(server).generate([CHAT])
    assert (reply.text, reply.error) == ("<action>check</action>", None)
    assert (reply.prompt_tokens, reply.completion_tokens) == (0, 0)


def test_runner_records_failed_steps_and_never_leaks_the_key(tmp_path, monkeypatch):
    # Issue 14 changed the contract: a step the backend could not answer makes its trial
    # incomplete (kept with its reasons, replayed next run), never a scored invalid answer.
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeChatServer(faults=["500"] * 8) as server:
        config = {"kind": "openai", "model": "fake", "base_url": server.base_url}
        factory = build_agent_factory({**config, "max_retries": 1, "backoff_s": 0.01})
        specs = plan_trials(factory.name, ["mage/KuhnPoker-v0"], ["random"], tasks=4)
        results = ResultsFile(tmp_path / "r.jsonl")
        assert evaluate(factory, specs, results, batch_size=4) == []
        failed = results.failed()
        assert len(failed) == 4 and all(r["incomplete"] for r in failed)
        assert sum(r["failed_steps"] for r in failed) == 4  # 8 faults, 2 attempts per step
        assert sum(r["faults"] for r in failed) == 8  # every attempt counted
        assert all("HTTP 500" in r["errors"][0] for r in failed)
        records = evaluate(factory, specs, ResultsFile(tmp_path / "r.jsonl"), batch_size=4)
    assert len(records) == 4 and not any(r["incomplete"] for r in records)
    assert all(r["trial"]["num_episodes"] == 3 for r in records)
    assert sum(r["prompt_tokens"] for r in records) > 0
    assert SECRET not in (tmp_path / "r.jsonl").read_text()
    assert SECRET not in json.dumps(records + failed)

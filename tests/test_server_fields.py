"""What the OpenAI backend does when a server refuses a field, and how many requests it keeps in
flight (against the fake server, which can refuse fields and be slow)."""

import threading
import time

import pytest

from mage_agents.endpoint_gate import ConcurrencyGate
from mage_agents.fake_endpoint import FakeChatServer
from mage_agents.openai_client import OpenAIChatBackend

CHAT = [{"role": "user", "content": "Legal moves: check, bet."}]
TRANSFORMERS = "Unexpected fields in the request: {'top_k'}"


def test_the_answer_tags_are_sent_as_stop_strings_and_cut_client_side_too():
    answer = "<action>bet</action> and then some more text"
    with FakeChatServer(answer=lambda m: answer) as server:
        (reply,) = OpenAIChatBackend(server.base_url, "m").generate([CHAT])
    assert server.bodies[0]["stop"] == ["</action>", "</reflection>"]
    assert reply.text == "<action>bet</action>"


def test_a_server_refusing_stop_gets_the_answers_cut_client_side():
    answer = "<action>bet</action> trailing"
    refuse = {"stop": "Unrecognized request argument supplied: stop"}
    with FakeChatServer(answer=lambda m: answer, refuse=refuse) as server:
        backend = OpenAIChatBackend(server.base_url, "m", backoff_s=0.01)
        replies = backend.generate([CHAT, CHAT])
    assert [(r.text, r.faults, r.error) for r in replies] == [("<action>bet</action>", 0, None)] * 2
    assert "stop" not in server.bodies[-1] and len(backend.notes) == 1
    assert "cut after the first of them client-side" in backend.notes[0]


def test_top_k_refused_as_transformers_serve_does_travels_in_its_generation_config():
    with FakeChatServer(refuse={"top_k": TRANSFORMERS}) as server:
        backend = OpenAIChatBackend(server.base_url, "m", top_k=20, temperature=0.7)
        (reply,) = backend.generate([CHAT])
    assert reply.error is None and reply.faults == 0
    refused, sent = server.bodies
    assert refused["top_k"] == 20 and "top_k" not in sent
    assert sent["generation_config"] == (
        '{"do_sample": true, "max_new_tokens": 512, "temperature": 0.7, "top_p": 0.8, "top_k": 20}'
    )
    assert "generation_config" in backend.notes[0]


def test_a_field_the_client_cannot_do_without_fails_with_the_flag_to_pass():
    refuse = {"top_k": "Unrecognized request argument supplied: top_k"}
    with FakeChatServer(refuse=refuse) as server:
        (reply,) = OpenAIChatBackend(server.base_url, "m", top_k=20).generate([CHAT])
        thinking = {"chat_template_kwargs": "Extra inputs are not permitted: chat_template_kwargs"}
        server.refuse = thinking
        (other,) = OpenAIChatBackend(server.base_url, "m", thinking=True).generate([CHAT])
    assert reply.backend_failed and reply.faults == 1  # not retried: it cannot succeed
    assert "--agent-option top_k=null" in reply.error
    assert other.backend_failed and "--agent-option thinking=null" in other.error


def test_server_transformers_sends_the_sampling_in_generation_config_from_the_start():
    with FakeChatServer() as server:
        OpenAIChatBackend(server.base_url, "m", server="transformers", temperature=0).generate(
            [CHAT]
        )
    (body,) = server.bodies
    assert body["generation_config"] == '{"do_sample": false, "max_new_tokens": 512}'
    with pytest.raises(ValueError, match="server must be one of"):
        OpenAIChatBackend("http://x", "m", server="vllm")


def test_the_deadline_grows_with_the_token_budget_and_the_servers_slowness_unless_given():
    backend = OpenAIChatBackend("http://x", "m", max_tokens=512)
    assert backend.deadline_s == 572  # nothing answered yet: 60 s + 1 s a token
    assert OpenAIChatBackend("http://x", "m", max_tokens=8192).deadline_s == 879.2  # the floor
    hung = OpenAIChatBackend("http://x", "m", max_tokens=512)
    hung.speed.timed_out()  # one long wait in vain: the next may be a loaded model's answer
    assert hung.deadline_s == 572
    hung.speed.timed_out()  # two: the floor until an answer comes
    assert hung.deadline_s == pytest.approx(111.2)
    backend.speed.add(seconds=1.0, tokens=100)  # a fast server: back to the floor, 10 tokens/s
    assert backend.deadline_s == pytest.approx(111.2)
    backend.speed.add(seconds=399.0, tokens=100)  # it slowed to 0.5 tokens/s over both answers
    assert backend.deadline_s == pytest.approx(60 + 2 * 512 / 0.5)
    assert OpenAIChatBackend("http://x", "m", max_tokens=8192, timeout_s=30).deadline_s == 30


def test_the_gate_halves_on_slow_answers_and_grows_on_fast_ones():
    gate = ConcurrencyGate(ceiling=8)
    for _ in range(7):  # fast answers: 1 -> 2 -> 4 -> 8 (doubling), capped at the ceiling
        gate.release(gate.acquire(), seconds=0.1, tokens=10)
    assert gate.limit == 8
    gate.release(gate.acquire(), seconds=5.0, tokens=10)  # 50x slower per token: queueing
    assert gate.limit == 4
    tickets = [gate.acquire() for _ in range(4)]
    for ticket in tickets:  # a round sent before the decrease halves it once, not four times
        gate.release(ticket, seconds=5.0, tokens=10, deadline=8.0)
    assert gate.limit == 2
    for _ in range(2):  # after a decrease it grows by one at a time
        gate.release(gate.acquire(), seconds=0.1, tokens=10)
    assert gate.limit == 3
    gate.release(gate.acquire(), seconds=1.0, timed_out=True, answered=False)
    assert gate.limit == 1


def test_a_one_at_a_time_server_is_not_swamped_nor_timed_out():
    # The fake server answers one request at a time (a lock), each in 0.6 s: four requests at
    # once would make the last wait 2.4 s, past its 2 s deadline.
    serial = threading.Lock()

    def one_at_a_time(messages):
        with serial:
            time.sleep(0.6)
        return "<action>check</action>"

    with FakeChatServer(answer=one_at_a_time) as server:
        backend = OpenAIChatBackend(
            server.base_url, "m", max_concurrency=8, timeout_s=2, max_retries=0
        )
        replies = backend.generate([CHAT] * 4)
        assert [r.error for r in replies] == [None] * 4
        assert backend.gate.max_in_flight <= 2
        fixed = OpenAIChatBackend(
            server.base_url, "m", timeout_s=2, max_retries=0, adaptive_concurrency=False
        )
        assert any(r.error for r in fixed.generate([CHAT] * 4))  # what the gate prevents

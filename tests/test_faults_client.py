"""Fault injection, client side: a local server on 127.0.0.1 that hangs, drips, throttles, lies.

Every timeout here is a fraction of a second and every request loop is bounded, so the suite stays
fast; nothing listens on or connects to any other address.
"""

import socket
import threading
import time

from mage_agents.fake_endpoint import FakeChatServer
from mage_agents.openai_client import OpenAIChatBackend

CHAT = [{"role": "user", "content": "Kuhn poker.\nLegal moves: check, bet."}]
SECRET = "sk-test-0123456789abcdef"


def _backend(url, **kwargs):
    kwargs.setdefault("backoff_s", 0.01)
    return OpenAIChatBackend(url, "fake-model", **kwargs)


def _closed_port_url():
    """A 127.0.0.1 URL on which nothing listens (the port was just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_dripping_server_is_cut_off_at_the_deadline():
    # ~300 bytes at one byte per 20 ms would take 6 s; every byte arrives well inside the socket
    # timeout, so only an overall deadline stops it.
    with FakeChatServer(faults=["drip"] * 3, drip_s=0.02) as server:
        start = time.monotonic()
        (reply,) = _backend(server.base_url, timeout_s=0.3, max_retries=1).generate([CHAT])
        elapsed = time.monotonic() - start
    assert reply.error.startswith("timeout") and "timeout_s=0.3" in reply.error
    assert reply.faults == 2
    assert elapsed < 3.0  # two attempts of 0.3 s and a short backoff; a full drip takes 6 s each


def test_a_drip_inside_the_deadline_is_a_normal_answer():
    with FakeChatServer(faults=["drip"], drip_s=0.001) as server:
        (reply,) = _backend(server.base_url, timeout_s=5).generate([CHAT])
    assert (reply.text, reply.error, reply.faults) == ("<action>check</action>", None, 0)


def test_every_retried_fault_is_counted_not_only_the_last():
    with FakeChatServer(faults=["500", "429", "malformed", "reset"]) as server:
        (reply,) = _backend(server.base_url, max_retries=5).generate([CHAT])
    assert reply.error is None and reply.text == "<action>check</action>"
    assert reply.faults == 4 and server.requests == 5


def test_a_refused_connection_is_a_counted_backend_failure():
    (reply,) = _backend(_closed_port_url(), max_retries=2).generate([CHAT])
    assert "connection failed" in reply.error and reply.error.endswith("after 3 attempts")
    assert reply.faults == 3 and reply.backend_failed


def test_a_hanging_server_times_out_and_is_retried():
    with FakeChatServer(faults=["slow", "slow"], slow_s=0.5) as server:
        (reply,) = _backend(server.base_url, timeout_s=0.1, max_retries=1).generate([CHAT])
    assert reply.backend_failed and reply.error.startswith("timeout") and reply.faults == 2


def test_null_content_from_a_healthy_server_is_the_models_answer_not_a_fault():
    with FakeChatServer(faults=["null"]) as server:
        (reply,) = _backend(server.base_url).generate([CHAT])
    assert (reply.text, reply.error, reply.faults, reply.backend_failed) == ("", None, 0, False)


def test_a_server_that_stops_mid_run_fails_the_later_requests():
    chats = [CHAT] * 4
    with FakeChatServer(stop_after=2) as server:
        replies = _backend(server.base_url, max_concurrency=1, max_retries=1).generate(chats)
    assert [r.error is None for r in replies] == [True, True, False, False]
    assert all("connection failed" in r.error for r in replies[2:])
    assert server.requests == 2


def test_the_key_is_redacted_before_the_error_text_is_cut(monkeypatch):
    # The key straddles the 200-character cut: redacting after cutting left its prefix behind.
    monkeypatch.setenv("MY_KEY", SECRET)
    body = "x" * 190 + f"bad key {SECRET}"
    with FakeChatServer(faults=["401"], error_body=body) as server:
        (reply,) = _backend(server.base_url, api_key_env="MY_KEY").generate([CHAT])
    assert reply.error.startswith("HTTP 401")
    assert SECRET[:6] not in reply.error  # not even the prefix "sk-tes"


def test_the_key_is_redacted_in_completions(monkeypatch):
    monkeypatch.setenv("MY_KEY", SECRET)
    with FakeChatServer(answer=lambda messages: f"{SECRET} <action>check</action>") as server:
        (reply,) = _backend(server.base_url, api_key_env="MY_KEY").generate([CHAT])
    assert reply.text == "*** <action>check</action>"


class _SilentServer:
    """Accepts connections on 127.0.0.1 and never answers (a server that hangs); counts them."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.accepted = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _accept(self):
        try:
            while True:
                self.accepted.append(self.sock.accept()[0])
        except OSError:  # closed
            pass

    def close(self):
        self.sock.close()
        for conn in self.accepted:
            conn.close()


def test_a_hanging_server_fails_a_batch_in_a_few_deadlines_not_one_per_request():
    # The adaptive gate sends one request at a time to a new server; the others wait at the
    # gate, and fail once a request in flight has timed out with nothing answered since, instead
    # of each waiting its turn to time out (8 requests x 2 attempts x the deadline).
    server = _SilentServer()
    try:
        replies = _backend(server.base_url, timeout_s=0.3, max_retries=1).generate([CHAT] * 8)
    finally:
        server.close()
    assert all(r.backend_failed for r in replies)
    assert len(server.accepted) < 8 * 2  # most attempts never reached the hanging server
    assert any("not sent" in r.error for r in replies)
    assert all(r.error.endswith("after 2 attempts") and r.faults == 2 for r in replies)


def test_one_answer_past_the_deadline_costs_the_waiting_requests_one_retry_not_their_answer():
    # a deadline far above a loaded machine's answer time, far below the slow answer's
    with FakeChatServer(faults=["slow"], slow_s=4.0) as server:
        replies = _backend(server.base_url, timeout_s=1.5, max_retries=1).generate([CHAT] * 4)
    assert [r.error for r in replies] == [None] * 4
    assert [r.text for r in replies] == ["<action>check</action>"] * 4

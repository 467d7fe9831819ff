"""The fake server's own counting, which the client's concurrency tests rely on."""

import time

from mage_agents import fake_endpoint
from mage_agents.fake_endpoint import FakeChatServer
from mage_agents.openai_client import OpenAIChatBackend


def test_an_answered_request_is_no_longer_counted_in_flight(monkeypatch):
    # The cause of a flaky `max_in_flight == 4` with 3 workers: the server counted a request as
    # in flight until after its answer was written, and a handler thread descheduled right after
    # the write still counted while the client was already sending its next request. Holding the
    # handler back after each write reproduces that schedule every time.
    send = fake_endpoint._send

    def send_then_lag(*args, **kwargs):
        send(*args, **kwargs)
        time.sleep(0.05)

    monkeypatch.setattr(fake_endpoint, "_send", send_then_lag)
    chats = [[{"role": "user", "content": f"Legal moves: m{i}, x."}] for i in range(6)]
    with FakeChatServer(faults=["slow"] * 6, slow_s=0.05) as server:
        replies = OpenAIChatBackend(server.base_url, "m", max_concurrency=2).generate(chats)
    assert [r.text for r in replies] == [f"<action>m{i}</action>" for i in range(6)]
    assert server.max_in_flight == 2

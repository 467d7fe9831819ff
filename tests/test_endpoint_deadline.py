"""The client's deadline follows a slow server's measured speed; a timeout says what to change.

The fake server is made slow (``seconds_per_token``); the deadline's 60 s base is scaled down
to 0.1 s so that the same arithmetic runs in about a second.
"""

import time

import pytest

from mage_agents import openai_client
from mage_agents.fake_endpoint import FakeChatServer
from mage_agents.openai_client import OpenAIChatBackend

CHAT = [{"role": "user", "content": "Kuhn poker.\nLegal moves: check, bet."}]
SLOW = 0.12  # seconds a token: about 8 tokens/s, slower than the old deadline's 10 tokens/s


def _constants():
    """The deadline's constants where the client reads them (a doctest run may import the
    module a second time: the client's function knows its own)."""
    return openai_client.speed_deadline.__globals__


@pytest.fixture
def short_base(monkeypatch):
    monkeypatch.setitem(_constants(), "BASE_S", 0.1)


def _short_then_long():
    """A short first answer (2 tokens, 0.24 s), then a full one (15 tokens, 1.8 s)."""
    answers = iter(["x" * 8] + ["x" * 60] * 9)
    return lambda messages: next(answers)


def _two_answers(server, **options):
    backend = OpenAIChatBackend(server.base_url, "m", max_tokens=15, max_retries=0, **options)
    return backend, [backend.generate([CHAT])[0] for _ in range(2)]


def test_a_fixed_deadline_too_short_for_a_slow_server_names_timeout_s_and_its_speed(short_base):
    old_default = 0.1 + 0.1 * 15  # 60 s + 0.1 s a token, scaled: 1.6 s for a 1.8 s answer
    with FakeChatServer(answer=_short_then_long(), seconds_per_token=SLOW) as server:
        _, (short, full) = _two_answers(server, timeout_s=old_default)
    assert short.error is None and full.backend_failed
    assert full.error.startswith("timeout") and "timeout_s=1.6 s" in full.error
    speed = float(full.error.split("the server wrote ")[1].split(" tokens/s")[0])
    assert 0 < speed < 1 / SLOW  # measured on the short answer, its latency included
    assert "raise timeout_s" in full.error


def test_the_deadline_that_follows_the_servers_speed_lets_it_finish(short_base):
    with FakeChatServer(answer=_short_then_long(), seconds_per_token=SLOW) as server:
        backend, (short, full) = _two_answers(server)
    assert (short.error, full.error) == (None, None) and full.completion_tokens == 15
    # twice the 15 tokens at the measured speed, past the old 1.6 s
    assert backend.deadline_s > 0.1 + 2 * 15 * SLOW > 1.6


def test_a_server_that_never_answers_still_fails_in_bounded_time(short_base, monkeypatch):
    monkeypatch.setitem(_constants(), "FIRST_MAX_S", 0.4)  # the first answer's wait
    with FakeChatServer(faults=["slow"] * 2, slow_s=3.0) as server:
        backend = OpenAIChatBackend(
            server.base_url, "m", max_tokens=2, max_retries=1, backoff_s=0.01
        )
        start = time.monotonic()
        (reply,) = backend.generate([CHAT])
        elapsed = time.monotonic() - start
    assert reply.backend_failed and reply.faults == 2 and elapsed < 2.9  # not one answer
    assert "not answered yet" in reply.error and "timeout_s=" in reply.error

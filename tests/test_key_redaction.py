"""The API key stays out of what we print and store; what a model wrote is played untouched."""

import json
import urllib.parse

import pytest

from baselines import run
from mage_agents.fake_endpoint import KEY_ECHOES, FakeChatServer
from mage_agents.openai_client import OpenAIChatBackend
from mage_agents.redaction import MIN_SECRET_LENGTH, redact_answer, redact_error

KEY = "sk-AUDIT/SEC-0123456789-2b1d"
CHAT = [{"role": "user", "content": "Kuhn poker.\nLegal moves: check, bet."}]


def _leaks(text):
    """Any trace of the key in ``text``: the key in each encoding, or its secret middle."""
    echoes = [encode(KEY) for encode in KEY_ECHOES.values()]
    return [e for e in echoes if e in text] + [
        part for part in ("AUDIT", "0123456789") if part in text
    ]


@pytest.mark.parametrize("encoding", sorted(KEY_ECHOES))
def test_every_encoding_of_the_key_in_an_error_is_redacted(encoding):
    echoed = KEY_ECHOES[encoding](KEY)
    text = f'HTTP 401: {{"error": "Incorrect API key provided: {echoed}."}}'
    assert redact_error(text, KEY) == 'HTTP 401: {"error": "Incorrect API key provided: ***."}'


def test_mixed_doubled_and_lowercase_escapes_are_redacted_and_the_text_around_them_kept():
    mixed = "sk\\u002dAUDIT\\\\/SEC%2d0123456789-2b1d"  # \u002d, a doubled \\/, lowercase %2d
    assert redact_error(f"a {mixed} b {KEY}", KEY) == "a *** b ***"
    assert redact_error(f"x{KEY}", KEY) == "x***"
    assert redact_error("connection failed (timed out)", KEY) == "connection failed (timed out)"


def test_a_masked_key_is_redacted_only_when_it_shows_part_of_this_key():
    assert redact_error(f"key {KEY[:3]}*****{KEY[-4:]} refused", KEY) == "key *** refused"
    assert redact_error(f"key {KEY[:12]}***", KEY) == "key ***"
    assert redact_error("key sk-*****", KEY) == "key sk-*****"  # shows 3 characters: no secret
    assert redact_error("rated ***** (5 stars)", KEY) == "rated ***** (5 stars)"


def test_a_short_key_is_never_searched_for_in_answers_and_only_as_a_word_in_errors():
    assert MIN_SECRET_LENGTH == 8
    for key in ("c", "x", "none", "EMPTY"):
        assert redact_answer("<action>c</action> none EMPTY x", key) == (
            "<action>c</action> none EMPTY x"
        )
    assert redact_error("connection failed: Bearer c.", "c") == "connection failed: Bearer ***."
    assert redact_error("HTTP 401: key 'EMPTY' refused", "EMPTY") == "HTTP 401: key '***' refused"
    assert redact_answer(f"{KEY} <action>bet</action>", KEY) == "*** <action>bet</action>"


def test_a_one_letter_key_leaves_every_answer_as_the_model_wrote_it(monkeypatch):
    # the audit: OPENAI_API_KEY=c turned every <action> into <a***tion>, 100% invalid, exit 0
    monkeypatch.setenv("OPENAI_API_KEY", "c")
    with FakeChatServer() as server:
        (reply,) = OpenAIChatBackend(server.base_url, "fake").generate([CHAT])
        assert server.headers[0]["Authorization"] == "Bearer c"
    assert reply.text == "<action>check</action>"


def test_a_short_key_runs_valid_trials_from_the_command_line(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "c")
    out = tmp_path / "out"
    with FakeChatServer() as server:
        argv = ["--agent", f"openai:fake@{server.base_url}", "--env", "mage/KuhnPoker-v0"]
        assert run.main([*argv, "--tasks", "2", "--no-plots", "--out", str(out)]) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert records and all(r["invalid_steps"] == r["off_format_steps"] == 0 for r in records)


@pytest.mark.parametrize("encoding", sorted(KEY_ECHOES))
def test_run_stores_and_prints_no_echo_of_the_key(tmp_path, monkeypatch, capsys, encoding):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = tmp_path / "out"
    with FakeChatServer(faults=["401"] * 4, echo_key=encoding) as server:
        argv = ["--agent", f"openai:fake@{server.base_url}", "--env", "mage/KuhnPoker-v0"]
        code = run.main([*argv, "--tasks", "1", "--no-plots", "--out", str(out)])
    printed = capsys.readouterr()
    stored = (out / "results.jsonl").read_text()
    assert code == run.EXIT_FAILED_TRIALS and "Incorrect API key provided: ***" in stored
    assert not _leaks(stored + printed.out + printed.err)


@pytest.mark.parametrize("encoding", sorted(KEY_ECHOES))
def test_arena_stores_and_prints_no_echo_of_the_key(tmp_path, monkeypatch, capsys, encoding):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = tmp_path / "arena"
    with FakeChatServer(faults=["401"] * 4, echo_key=encoding) as server:
        argv = ["arena", "--agents", f"openai:fake@{server.base_url}", "random", "--games", "1"]
        code = run.main([*argv, "--no-plots", "--out", str(out)])
    printed = capsys.readouterr()
    stored = (out / "results.jsonl").read_text()
    assert code == run.EXIT_FAILED_TRIALS and "Incorrect API key provided: ***" in stored
    assert "Incorrect API key provided: ***" in printed.out + printed.err  # the first failure
    assert not _leaks(stored + printed.out + printed.err)


def test_the_fake_endpoint_echoes_the_key_as_asked():
    assert KEY_ECHOES["url"](KEY) == urllib.parse.quote(KEY, safe="")
    assert KEY_ECHOES["json"](KEY) == "sk-AUDIT\\/SEC-0123456789-2b1d"
    assert "\\u002d" in KEY_ECHOES["unicode"](KEY)
    with pytest.raises(ValueError, match="echo_key"):
        FakeChatServer(echo_key="rot13")

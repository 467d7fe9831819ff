"""A small OpenAI-compatible chat server on 127.0.0.1, for tests and offline smoke runs.

It answers ``POST /v1/chat/completions`` with a scripted policy (by default: the first legal move
listed in the prompt, inside ``<action>`` tags) and can inject faults, one per request, from a
queue: ``"slow"`` (sleeps past the client's timeout), ``"drip"`` (sends a normal answer one byte
every ``drip_s``), ``"reset"`` (closes the connection without an answer), ``"500"``, ``"429"``
(with ``Retry-After``), ``"malformed"`` (invalid JSON), ``"bad_usage"`` (a normal answer whose
``usage`` is not a mapping), ``"null"`` (a healthy answer whose content is ``null``), ``"401"``
and ``"huge"`` (an answer of ``huge_bytes`` bytes, streamed without a ``Content-Length``, so that
only reading it tells its size; it is never held in memory whole, here either).
With ``seconds_per_token=s`` every answer takes ``s`` seconds per completion token before it is
sent (a slow server: 1 token/s on a busy CPU is ``s=1``).
With ``refuse={"top_k": detail}`` it answers HTTP 422 with that detail to every request carrying
one of those fields, as servers that do not take a field do.
With ``echo_key=ENCODING`` the ``"500"`` and ``"401"`` answers echo the request's API key (from
its ``Authorization`` header) in one of :data:`KEY_ECHOES`' encodings, as careless servers and
proxies do. With ``stop_after=n`` it stops listening after its n-th request (a server that
dies mid-run). It counts requests, remembers the headers it saw and the highest number of
requests in flight at once (a request is in flight from its arrival until its answer starts to
be written, so a client that has read an answer never sees it still counted).

Example:
    >>> from mage_agents.openai_client import OpenAIChatBackend
    >>> with FakeChatServer(faults=["500"]) as server:
    ...     backend = OpenAIChatBackend(server.base_url, "fake", backoff_s=0.01)
    ...     reply = backend.generate([[{"role": "user", "content": "Legal moves: check, bet."}]])[0]
    >>> reply.text, server.requests
    ('<action>check</action>', 2)
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeChatServer", "first_legal_move", "KEY_ECHOES"]

_LEGAL = re.compile(r"Legal moves: (.*?)\.\s*$", re.MULTILINE)
_MOVE = re.compile(r"\([^)]*\)|[^,]+")


KEY_ECHOES: dict[str, Callable[[str], str]] = {
    "plain": lambda key: key,
    "json": lambda key: key.replace("/", "\\/"),  # JSON's escaped solidus
    "unicode": lambda key: "".join(c if c.isalnum() else f"\\u{ord(c):04x}" for c in key),
    "url": lambda key: urllib.parse.quote(key, safe=""),
    "masked": lambda key: f"{key[:12]}{'*' * 20}{key[-4:]}",  # a provider's "Incorrect key"
}
"""How ``echo_key`` writes the key into an error answer: each encoding a server might use."""


def first_legal_move(messages: list[dict[str, Any]]) -> str:
    """Answer with the first move of the last "Legal moves: ..." line, or a short reflection.

    Example:
        >>> first_legal_move([{"role": "user", "content": "Legal moves: (1, 1), (2, 3)."}])
        '<action>(1, 1)</action>'
    """
    text = str(messages[-1].get("content", "")) if messages else ""
    found = _LEGAL.findall(text)
    if not found:
        return "<reflection>Play the first legal move again.</reflection>"
    first = _MOVE.findall(found[-1])[0].strip()
    return f"<action>{first}</action>"


class FakeChatServer:
    """An OpenAI-compatible chat server in a background thread; use it as a context manager.

    Args:
        answer: ``f(messages) -> text`` (default :func:`first_legal_move`).
        faults: Faults to inject, one per request, in order (then normal answers).
        slow_s: How long a ``"slow"`` request sleeps before answering.
        retry_after: ``Retry-After`` header of a ``"429"`` answer, in seconds.
        drip_s: Pause between the bytes of a ``"drip"`` answer.
        error_body: The body of ``"500"`` and ``"401"`` answers.
        stop_after: Stop listening after this many requests (``None``: never).
        refuse: Request field -> the detail of the HTTP 422 answered to requests carrying it.
        seconds_per_token: How long each answer takes per completion token (a slow server).
        huge_bytes: The size of a ``"huge"`` answer.
        echo_key: Echo the request's key in ``"500"`` and ``"401"`` answers, encoded as
            :data:`KEY_ECHOES` says (``None``: ``error_body``).
    """

    def __init__(
        self,
        answer: Callable[[list[dict[str, Any]]], str] = first_legal_move,
        faults: Iterable[str] = (),
        slow_s: float = 1.0,
        retry_after: float = 0.01,
        drip_s: float = 0.05,
        error_body: str = '{"error": {"message": "injected fault"}}',
        stop_after: int | None = None,
        refuse: dict[str, str] | None = None,
        seconds_per_token: float = 0.0,
        echo_key: str | None = None,
        huge_bytes: int = 300 * 2**20,
    ) -> None:
        self.huge_bytes = huge_bytes
        if echo_key is not None and echo_key not in KEY_ECHOES:
            raise ValueError(f"echo_key must be one of {', '.join(KEY_ECHOES)}, not {echo_key!r}.")
        self.echo_key = echo_key
        self.answer = answer
        self.refuse = dict(refuse or {})
        self.seconds_per_token = seconds_per_token
        self.drip_s = drip_s
        self.error_body = error_body
        self.stop_after = stop_after
        self.faults: deque[str] = deque(faults)
        self.slow_s = slow_s
        self.retry_after = retry_after
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.headers: list[dict[str, str]] = []
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # a short poll keeps stop() quick: shutdown() waits for the loop's next poll
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The API root to give a client, e.g. ``http://127.0.0.1:PORT/v1``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving and close the listening socket: later connections are refused."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def _next_fault(self, headers: dict[str, str], body: dict[str, Any]) -> str | None:
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.headers.append(headers)
            self.bodies.append(body)
            if self.requests == self.stop_after:  # from another thread: shutdown() waits for it
                threading.Thread(target=self.stop, daemon=True).start()
            return self.faults.popleft() if self.faults else None

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (the http.server naming)
                length = int(self.headers.get("Content-Length", 0))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    body = {}
                fault = server._next_fault(dict(self.headers), body)
                try:
                    status, data, headers = server._respond(self.path, fault, body, self.headers)
                finally:
                    server._done()  # before writing: the client may send its next request then
                if fault == "reset":
                    self.close_connection = True
                    return
                if fault == "huge":
                    _send_huge(self, server.huge_bytes)
                    return
                _send(self, status, data, headers, server.drip_s if fault == "drip" else 0.0)

        return Handler

    def _error_body(self, headers: Any) -> str:
        """``error_body``, or with ``echo_key`` an error echoing the key (raw JSON, as written)."""
        if self.echo_key is None:
            return self.error_body
        key = str((headers or {}).get("Authorization", "")).removeprefix("Bearer ")
        echo = KEY_ECHOES[self.echo_key](key)
        return '{"error": {"message": "Incorrect API key provided: ' + echo + '."}}'

    def _respond(
        self, path: str, fault: str | None, body: dict, headers: Any = None
    ) -> tuple[int, bytes, dict]:
        """Return the status, body and extra headers of the answer to one request."""
        if path.rstrip("/") != "/v1/chat/completions":
            return 404, b'{"error": "not found"}', {}
        refused = [detail for name, detail in self.refuse.items() if name in body]
        if refused:
            return 422, json.dumps({"detail": refused[0]}).encode(), {}
        if fault == "slow":
            time.sleep(self.slow_s)
        elif fault in ("500", "401"):
            return int(fault), self._error_body(headers).encode(), {}
        elif fault == "429":
            return 429, b'{"error": "rate limited"}', {"Retry-After": str(self.retry_after)}
        elif fault == "malformed":
            return 200, b'{"choices": [{"message": ', {}
        messages = body.get("messages") or []
        text = None if fault == "null" else self.answer(messages)
        prompt_chars = sum(len(str(m.get("content", ""))) for m in messages)
        usage = {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(text or "") // 4}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        time.sleep(self.seconds_per_token * usage["completion_tokens"])  # generating them
        # Every field OpenAI's schema requires: strict clients (verifiers' proxy) validate it.
        payload = {
            "id": f"fake-{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": "unknown" if fault == "bad_usage" else usage,
        }
        return 200, json.dumps(payload).encode(), {}


def _send_huge(handler: BaseHTTPRequestHandler, size: int) -> None:
    """A chat completion of ``size`` bytes, written 1 MiB at a time, its end the close."""
    head = b'{"choices": [{"message": {"role": "assistant", "content": "'
    chunk = b"x" * 2**20
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        handler.wfile.write(head)
        for _ in range(max(size - len(head), 0) // len(chunk)):
            handler.wfile.write(chunk)
        handler.wfile.write(b'"}}]}')
    except (BrokenPipeError, ConnectionResetError):  # the client stopped reading: as it should
        pass
    handler.close_connection = True


def _send(
    handler: BaseHTTPRequestHandler,
    status: int,
    data: bytes,
    headers: dict | None = None,
    drip_s: float = 0.0,
) -> None:
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        if not drip_s:
            handler.wfile.write(data)
            return
        for i in range(len(data)):  # bounded: one pass over the answer
            handler.wfile.write(data[i : i + 1])
            handler.wfile.flush()
            time.sleep(drip_s)
    except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout): fine
        pass

"""A client for any OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp, SGLang, ...).

Only the standard library is used (``http.client``; proxy variables are not read). Many prompts
are sent at once through a thread pool bounded by ``max_concurrency``. Rate limits (429), server
errors (5xx), timeouts, dropped connections and malformed JSON are retried with exponential
backoff (honouring ``Retry-After``); when the retries run out, or on an error that retrying cannot
fix (400, 401, 404), the prompt's :class:`~mage_agents.base.Reply` carries the reason in ``error``
and the evaluation goes on.

``timeout_s`` is a deadline for the whole attempt, not only a socket timeout. Every failed attempt
is counted in :attr:`~mage_agents.base.Reply.faults`, the retried ones too.

The API key is read from an environment variable at each request. It is never stored on the
object, and it is replaced by ``***`` in error texts (before they are cut to length) and in
completions, so it cannot appear in a repr, a log line or a results file.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import random
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from mage_agents.base import Chat, Reply

__all__ = ["OpenAIChatBackend", "EndpointError"]

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
"""HTTP statuses worth retrying: rate limits, overload and transient server errors."""


class EndpointError(Exception):
    """One failed request; ``retryable`` says whether another attempt could succeed."""

    def __init__(self, reason: str, retryable: bool, retry_after: float | None = None):
        super().__init__(reason)
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass
class OpenAIChatBackend:
    """Chat completions from an OpenAI-compatible endpoint.

    Attributes:
        base_url: The API root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is added).
        model: The model name the server expects.
        api_key_env: Name of the environment variable holding the API key; if it is unset, no
            ``Authorization`` header is sent (local servers rarely need one).
        max_concurrency: Requests in flight at once.
        timeout_s: Deadline of one attempt, from connecting to the last byte of the answer, in
            seconds (a server that answers slowly, or drips its answer, is cut off there).
        max_retries: Extra attempts after the first, for retryable failures.
        backoff_s: First backoff delay; it doubles at each retry, up to ``max_backoff_s``.
        max_backoff_s: Upper bound on one backoff delay (also caps ``Retry-After``).
        temperature: Sampling temperature (LaMer evaluated at 0.7).
        top_p: Nucleus sampling mass (LaMer evaluated at 0.8).
        max_tokens: Upper bound on tokens per completion.
        top_k: Sample among the ``top_k`` likeliest tokens (LaMer and MAGE evaluated with 20).
            Not part of OpenAI's API: vLLM, SGLang and llama.cpp servers take it; ``None``
            (default) does not send it.
        thinking: Turn the chat template's thinking switch on or off, sent as
            ``chat_template_kwargs={"enable_thinking": ...}`` (vLLM's and SGLang's convention,
            Qwen3's switch; LaMer evaluated with it off, MAGE on). ``None`` sends nothing.
        stop: Stop strings sent to the server (none by default).
        seed: If set, request ``i`` of each call carries ``seed + i`` (servers that honour it are
            then reproducible).
        extra_body: Extra JSON fields for every request (they win over the fields above).

    Example:
        >>> backend = OpenAIChatBackend("http://127.0.0.1:8000/v1", "qwen3-4b")
        >>> backend.name
        'openai:qwen3-4b'
    """

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    max_concurrency: int = 8
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    temperature: float = 0.7
    top_p: float = 0.8
    max_tokens: int = 512
    top_k: int | None = None
    thinking: bool | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url must start with http:// or https://, not {self.base_url!r}."
            )
        if self.max_concurrency < 1 or self.max_retries < 0 or self.timeout_s <= 0:
            raise ValueError("Need max_concurrency >= 1, max_retries >= 0 and timeout_s > 0.")
        if self.backoff_s < 0 or self.max_backoff_s < 0:
            raise ValueError("Need backoff_s >= 0 and max_backoff_s >= 0 (seconds to wait).")
        if self.top_k is not None and (isinstance(self.top_k, bool) or int(self.top_k) < 1):
            raise ValueError(f"top_k must be None or an int >= 1, not {self.top_k!r}.")
        self.base_url = self.base_url.rstrip("/")

    @property
    def name(self) -> str:
        """The backend's name in results: ``openai:<model>``."""
        return f"openai:{self.model}"

    def generate(self, chats: Sequence[Chat]) -> list[Reply]:
        """Send every chat, at most ``max_concurrency`` at a time; one reply per chat, in order."""
        if not chats:
            return []
        jobs = [
            (chat, None if self.seed is None else self.seed + i) for i, chat in enumerate(chats)
        ]
        if len(jobs) == 1:
            return [self._complete(*jobs[0])]
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(jobs))) as pool:
            return list(pool.map(lambda job: self._complete(*job), jobs))

    def _complete(self, chat: Chat, seed: int | None) -> Reply:
        """One chat with retries; never raises. Every failed attempt is counted in ``faults``."""
        attempts = self.max_retries + 1
        for attempt in range(attempts):
            try:
                reply = _reply_from(self._post(self._body(chat, seed)))
            except EndpointError as error:
                if not error.retryable or attempt == attempts - 1:
                    tries = f" after {attempt + 1} attempt{'s' if attempt else ''}"
                    return Reply("", error=self._redact(f"{error}{tries}"), faults=attempt + 1)
                time.sleep(self._delay(attempt, error.retry_after))
            else:
                # a server may echo the request headers into its answer: never store the key
                return replace(reply, text=self._redact(reply.text), faults=attempt)
        raise AssertionError("unreachable")

    def _body(self, chat: Chat, seed: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(chat),
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }
        if self.top_k is not None:
            body["top_k"] = int(self.top_k)
        if self.thinking is not None:
            body["chat_template_kwargs"] = {"enable_thinking": bool(self.thinking)}
        if self.stop:
            body["stop"] = list(self.stop)
        if seed is not None:
            body["seed"] = seed
        body.update(self.extra_body)
        return body

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_backoff_s)
        base = min(self.backoff_s * 2**attempt, self.max_backoff_s)
        return base * (0.5 + random.random() / 2)  # jitter spreads the retries of many threads

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST one request and return the decoded JSON, or raise :class:`EndpointError`.

        ``timeout_s`` bounds the whole attempt, from connecting to the last byte: a socket
        timeout alone restarts at every byte received, so a server dripping one byte a second
        would hold a request forever.
        """
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(body).encode()
        connection = self._connection()
        watchdog = _Watchdog(self.timeout_s)
        try:
            connection.connect()
            watchdog.watch(connection.sock)
            connection.request("POST", self._path + "/chat/completions", data, headers)
            response = connection.getresponse()
            raw = response.read()
            status = response.status
        except (TimeoutError, http.client.HTTPException, OSError, ValueError) as error:
            if watchdog.fired:
                raise EndpointError(self._deadline_reason(), retryable=True) from None
            if isinstance(error, TimeoutError):
                raise EndpointError(f"timeout ({error})", retryable=True) from None
            raise EndpointError(f"connection failed ({error})", retryable=True) from None
        finally:
            watchdog.cancel()
            connection.close()
        if watchdog.fired:  # the watchdog cut the body short: what was read is not the answer
            raise EndpointError(self._deadline_reason(), retryable=True)
        if status >= 400:
            raise _http_error(status, raw, response.getheader("Retry-After"), self._redact)
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise EndpointError("malformed JSON in the response", retryable=True) from None

    def _connection(self) -> http.client.HTTPConnection:
        parts = urllib.parse.urlsplit(self.base_url)
        if parts.scheme == "https":
            return http.client.HTTPSConnection(parts.hostname, parts.port, timeout=self.timeout_s)
        return http.client.HTTPConnection(parts.hostname, parts.port, timeout=self.timeout_s)

    @property
    def _path(self) -> str:
        return urllib.parse.urlsplit(self.base_url).path

    def _deadline_reason(self) -> str:
        return f"timeout (no complete response within timeout_s={self.timeout_s:g} s)"

    def _redact(self, text: str) -> str:
        key = os.environ.get(self.api_key_env)
        return text.replace(key, "***") if key else text


class _Watchdog:
    """Shuts a socket down when its deadline passes, ending any read blocked on it."""

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket | None) -> None:
        """Watch ``sock`` (the connection hands it to the response, so keep our own handle)."""
        with self._lock:
            self._sock = sock
        if self.fired:  # the deadline passed while connecting
            raise TimeoutError("connect")

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            if self._sock is not None:
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)
                except OSError:  # already closed
                    pass

    def cancel(self) -> None:
        """Stop the timer (the attempt is over)."""
        self._timer.cancel()


def _http_error(
    status: int, raw: bytes, retry_after_header: str | None, redact: Callable[[str], str]
) -> EndpointError:
    # Redact before cutting: a key straddling the cut would leave its prefix in the text.
    detail = redact(raw[:4096].decode("utf-8", "replace")).strip()
    retry_after = None
    if retry_after_header:
        try:
            retry_after = float(retry_after_header)
        except ValueError:
            retry_after = None
    reason = f"HTTP {status}" + (f": {detail[:200]}" if detail else "")
    return EndpointError(reason, retryable=status in RETRYABLE_STATUS, retry_after=retry_after)


def _reply_from(payload: Any) -> Reply:
    """Read the first choice and the token usage; a response without them is malformed."""
    try:
        message = payload["choices"][0]["message"]
        text = message.get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise EndpointError("malformed response: no choices[0].message", retryable=True) from None
    if not isinstance(text, str):
        raise EndpointError("malformed response: content is not text", retryable=True)
    usage = payload.get("usage")
    return Reply(
        text,
        prompt_tokens=_token_count(usage, "prompt_tokens"),
        completion_tokens=_token_count(usage, "completion_tokens"),
    )


def _token_count(usage: Any, key: str) -> int:
    """A count from ``usage``; 0 where the server sent none or something that is not a count."""
    value = usage.get(key) if isinstance(usage, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return 0
    return int(value) if math.isfinite(value) else 0

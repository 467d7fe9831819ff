"""The wire of an OpenAI-compatible endpoint: one request's errors, deadline and answer.

:class:`EndpointError` is one failed request (retryable or not, and why); :class:`Watchdog`
enforces a deadline on a whole attempt, not only between bytes; :func:`http_error` and
:func:`mark_refusal` turn an error answer into an :class:`EndpointError`, naming the optional
field the server refused where it says so; :func:`read_body` reads an answer's body, up to
:data:`MAX_RESPONSE_BYTES`; :func:`reply_from` reads a chat completion.
"""

from __future__ import annotations

import math
import socket
import threading
from collections.abc import Callable
from typing import Any

from mage_agents.base import Reply
from mage_agents.server_fields import TRANSFORMERS_REFUSAL, advice, refused_field

__all__ = [
    "RETRYABLE_STATUS",
    "EndpointError",
    "Watchdog",
    "http_error",
    "MAX_RESPONSE_BYTES",
    "read_body",
    "mark_refusal",
    "reply_from",
]

MAX_RESPONSE_BYTES = 16 * 2**20
"""The largest answer body read (16 MiB, a hundred times a completion of 32k tokens): a larger
one is a malformed response, and is never read whole into memory."""

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
"""HTTP statuses worth retrying: rate limits, overload and transient server errors."""


class EndpointError(Exception):
    """One failed request; ``retryable`` says whether another attempt could succeed.

    Attributes:
        refused: The optional request field the server refused (HTTP 400/422), if that was it.
        transformers: The refusal was worded as ``transformers serve`` words it.
        timed_out: The attempt ran past its deadline.
    """

    def __init__(
        self,
        reason: str,
        retryable: bool,
        retry_after: float | None = None,
        refused: str | None = None,
        transformers: bool = False,
        timed_out: bool = False,
    ):
        super().__init__(reason)
        self.retryable = retryable
        self.retry_after = retry_after
        self.refused = refused
        self.transformers = transformers
        self.timed_out = timed_out


class Watchdog:
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


def read_body(response: Any, limit: int = MAX_RESPONSE_BYTES) -> bytes:
    """Read ``response``'s body in chunks, up to ``limit`` bytes.

    Raises:
        EndpointError: A malformed response (retryable): the body is larger than ``limit``
            (said by its ``Content-Length`` before anything is read, or found reading it).
    """
    declared = response.getheader("Content-Length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks, size = [], 0
    while chunk := response.read(min(1 << 16, limit + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
    return b"".join(chunks)


def _too_large(limit: int) -> EndpointError:
    return EndpointError(
        f"malformed response: its body is larger than {limit / 2**20:g} MiB (not read further)",
        retryable=True,
    )


def http_error(
    status: int, raw: bytes, retry_after_header: str | None, redact: Callable[[str], str]
) -> EndpointError:
    """Return the error of an HTTP error answer: its status, its detail (redacted, cut short)."""
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


def mark_refusal(error: EndpointError, status: int, raw: bytes, sent: set[str]) -> EndpointError:
    """Mark ``error`` with the optional field the server refused, if its answer names one."""
    detail = raw[:4096].decode("utf-8", "replace")
    refused = refused_field(status, detail, sent)
    if refused is not None:
        error.refused = refused
        error.transformers = TRANSFORMERS_REFUSAL in detail
        error.args = (f"{error.args[0]} (the server refuses {refused}: {advice(refused)})",)
    return error


def reply_from(payload: Any) -> Reply:
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

"""A client for any OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp, SGLang, ...).

Only the standard library is used (``http.client``; proxy variables are not read). Many prompts
are sent at once through a thread pool bounded by ``max_concurrency``. Rate limits (429), server
errors (5xx), timeouts, dropped connections and malformed responses (invalid JSON, or a body
over 16 MiB, never read whole: :data:`~mage_agents.endpoint_http.MAX_RESPONSE_BYTES`) are retried
with exponential backoff (honouring ``Retry-After``); when the retries run out, or on an error
that retrying cannot fix (400, 401, 404), the prompt's :class:`~mage_agents.base.Reply` carries
the reason in ``error`` and the evaluation goes on.

``timeout_s`` is a deadline for the whole attempt, not only a socket timeout; unset (the default),
the deadline follows the server's measured speed and ``max_tokens``, so that a slow CPU server
finishing a long answer is not cut off (:mod:`mage_agents.endpoint_deadline`).
Every failed attempt is counted in :attr:`~mage_agents.base.Reply.faults`, the retried ones too.
How many requests are in flight adapts to the server (:mod:`mage_agents.endpoint_gate`).

The answer tags' closing strings are sent as ``stop`` by default, as the local backend stops at
them, and every answer is cut after the first one client-side too. A server that refuses a field
(``stop``, ``seed``, ``top_k``, ...) is answered as :mod:`mage_agents.server_fields` says: the
field is dropped or carried another way, with a note in :attr:`OpenAIChatBackend.notes`, or the
request fails with the flag to pass.

The API key is read from an environment variable at each request. It is never stored on the
object, and every echo of it in an error text (plain, JSON-escaped, URL-encoded or partly masked)
is replaced by ``***`` before the text is cut to length, so it cannot appear in a repr, a log
line or a results file. Answers are played as the model wrote them: only a key of 8 characters
or more found verbatim in one (a server echoing the request) is replaced
(:mod:`mage_agents.redaction`).
"""

from __future__ import annotations

import functools
import http.client
import json
import os
import random
import threading
import time
import urllib.parse
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from mage_agents.base import Chat, Reply
from mage_agents.endpoint_deadline import SpeedMeter, speed_deadline, timeout_reason
from mage_agents.endpoint_gate import ConcurrencyGate, Stalled, gate_for
from mage_agents.endpoint_http import (
    EndpointError,
    Watchdog,
    http_error,
    mark_refusal,
    read_body,
    reply_from,
)
from mage_agents.prompting import ANSWER_STOPS, cut_at_stop
from mage_agents.redaction import redact_answer, redact_error
from mage_agents.server_fields import transformers_generation_config

__all__ = ["OpenAIChatBackend", "EndpointError"]

SERVERS = ("auto", "openai", "transformers")
"""How requests carry the sampling settings (see :class:`OpenAIChatBackend`'s ``server``)."""


@dataclass
class OpenAIChatBackend:
    """Chat completions from an OpenAI-compatible endpoint.

    Attributes:
        base_url: The API root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is added).
        model: The model name the server expects.
        api_key_env: Name of the environment variable holding the API key; if it is unset, no
            ``Authorization`` header is sent (local servers rarely need one).
        max_concurrency: The most requests in flight at once.
        adaptive_concurrency: Start with one request in flight and adapt to how fast answers
            come, up to ``max_concurrency`` (:mod:`mage_agents.endpoint_gate`); ``False`` keeps
            ``max_concurrency`` in flight whatever the server.
        timeout_s: Deadline of one attempt, from sending to the last byte of the answer, in
            seconds (a server that answers slowly, or drips its answer, is cut off there);
            ``None``: a deadline that follows the server's speed, measured on its answers, and
            ``max_tokens`` (:func:`~mage_agents.endpoint_deadline.speed_deadline`).
        max_retries: Extra attempts after the first, for retryable failures.
        backoff_s: First backoff delay; it doubles at each retry, up to ``max_backoff_s``.
        max_backoff_s: Upper bound on one backoff delay (also caps ``Retry-After``).
        temperature: Sampling temperature (LaMer evaluated at 0.7).
        top_p: Nucleus sampling mass (LaMer evaluated at 0.8).
        max_tokens: Upper bound on tokens per completion.
        top_k: Sample among the ``top_k`` likeliest tokens (LaMer and MAGE evaluated with 20).
            Not part of OpenAI's API: vLLM, SGLang, llama.cpp and Ollama take it,
            ``transformers serve`` inside its ``generation_config`` (see ``server``); ``None``
            (default) does not send it: the server's default applies.
        thinking: Turn the chat template's thinking switch on or off, sent as
            ``chat_template_kwargs={"enable_thinking": ...}`` (vLLM's, SGLang's and
            ``transformers serve``'s convention, Qwen3's switch; LaMer evaluated with it off,
            MAGE on). ``None`` sends nothing. A template without the switch ignores it.
        stop: Stop strings sent to the server: by default the answer tags' closing strings, at
            which the local backend stops too. Answers are also cut after the first of them
            client-side (for servers that ignore ``stop``, or refuse it: then it is dropped).
        seed: If set, request ``i`` of each call carries ``seed + i`` (servers that honour it are
            then reproducible).
        server: ``"auto"`` (default): standard fields, switching to ``transformers serve``'s way
            when the server refuses ``top_k`` as it does; ``"transformers"``: send the sampling
            settings in ``transformers serve``'s ``generation_config`` field from the start, so
            that ``temperature > 0`` samples even when the model's generation config says
            ``do_sample: false``; ``"openai"``: standard fields only, never switch.
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
    adaptive_concurrency: bool = True
    timeout_s: float | None = None
    max_retries: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    temperature: float = 0.7
    top_p: float = 0.8
    max_tokens: int = 512
    top_k: int | None = None
    thinking: bool | None = None
    stop: tuple[str, ...] = ANSWER_STOPS
    seed: int | None = None
    server: str = "auto"
    extra_body: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list, init=False, repr=False, compare=False)
    """What the backend could not do as asked, and what it did instead (for the results)."""

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url must start with http:// or https://, not {self.base_url!r}."
            )
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be None or > 0 seconds, not {self.timeout_s!r}.")
        if self.max_concurrency < 1 or self.max_retries < 0 or self.max_tokens < 1:
            raise ValueError("Need max_concurrency >= 1, max_retries >= 0 and max_tokens >= 1.")
        if self.server not in SERVERS:
            raise ValueError(f"server must be one of {', '.join(SERVERS)}, not {self.server!r}.")
        if self.backoff_s < 0 or self.max_backoff_s < 0:
            raise ValueError("Need backoff_s >= 0 and max_backoff_s >= 0 (seconds to wait).")
        if self.top_k is not None and (isinstance(self.top_k, bool) or int(self.top_k) < 1):
            raise ValueError(f"top_k must be None or an int >= 1, not {self.top_k!r}.")
        self.base_url = self.base_url.rstrip("/")
        self.stop = tuple(self.stop)
        self._lock = threading.Lock()
        self._dropped: set[str] = set()  # fields the server refused and the client does without
        self._dialect = "transformers" if self.server == "transformers" else "openai"
        self._gate = (
            gate_for(self.base_url, self.max_concurrency) if self.adaptive_concurrency else None
        )
        self.speed = SpeedMeter()
        """The server's measured speed (its last answers' completion tokens a second)."""

    @property
    def name(self) -> str:
        """The backend's name in results: ``openai:<model>``."""
        return f"openai:{self.model}"

    @property
    def deadline_s(self) -> float:
        """The deadline of the next attempt: ``timeout_s``, else one that follows the speed."""
        if self.timeout_s is not None:
            return self.timeout_s
        return speed_deadline(self.max_tokens, self.speed.tokens_per_s(), self.speed.waits_in_vain)

    @property
    def gate(self) -> ConcurrencyGate | None:
        """The adaptive bound on requests in flight (``None`` when not adaptive)."""
        return self._gate

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
        """One chat with retries; never raises. Every failed attempt is counted in ``faults``.

        A refused optional field the client can do without is no fault: the request is sent
        again at once without it (once per field).
        """
        failures = adapted = 0
        while True:
            try:
                reply = self._attempt(chat, seed)
            except EndpointError as error:
                if error.refused and adapted < 5 and self._adapt(error):
                    adapted += 1
                    continue
                failures += 1
                if not error.retryable or failures > self.max_retries:
                    tries = f" after {failures} attempt{'s' if failures > 1 else ''}"
                    error_text = redact_error(f"{error}{tries}", self._key())
                    return Reply("", error=error_text, faults=failures)
                time.sleep(self._delay(failures - 1, error.retry_after))
            else:
                # a server may echo the request headers into its answer: never store the key
                text = redact_answer(cut_at_stop(reply.text, self.stop), self._key())
                return replace(reply, text=text, faults=failures)

    def _attempt(self, chat: Chat, seed: int | None) -> Reply:
        """Send one request through the gate; return its reply or raise :class:`EndpointError`."""
        body = self._body(chat, seed)
        try:
            ticket = self._gate.acquire() if self._gate else 0
        except Stalled:
            raise EndpointError(
                "not sent: a request in flight timed out while this one waited, and nothing "
                f"was answered since (the server may hang; deadline {self.deadline_s:g} s, "
                "timeout_s to change it)",
                retryable=True,
            ) from None
        deadline = self.deadline_s  # fixed when sent: answers that come meanwhile change the next
        start, tokens, timed_out, answered = time.perf_counter(), 0, False, False
        try:
            reply = reply_from(self._post(body, deadline))
            tokens, answered = reply.completion_tokens, True
            self.speed.add(time.perf_counter() - start, tokens)
            return reply
        except EndpointError as error:
            timed_out = error.timed_out
            if timed_out:
                self.speed.timed_out()
            raise
        finally:
            if self._gate:
                seconds = time.perf_counter() - start
                self._gate.release(ticket, seconds, tokens, deadline, timed_out, answered)

    def _adapt(self, error: EndpointError) -> bool:
        """Do without the field ``error`` says the server refused; False if the client cannot."""
        field_name = error.refused
        with self._lock:
            if field_name in self._dropped or (
                field_name == "top_k" and self._dialect == "transformers"
            ):
                return True  # another request already adapted
            if field_name in ("stop", "seed"):
                self._dropped.add(field_name)
                self.notes.append(_DROPPED[field_name])
                return True
            if field_name == "top_k" and error.transformers and self.server == "auto":
                self._dialect = "transformers"
                self.notes.append(
                    "The server refused top_k as transformers serve does: the sampling settings "
                    "(do_sample, temperature, top_p, top_k, max_new_tokens) now travel in its "
                    "generation_config field (pass --agent-option server=transformers to start so)."
                )
                return True
        return False

    def _body(self, chat: Chat, seed: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(chat),
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }
        if self._dialect == "transformers":
            body["generation_config"] = transformers_generation_config(
                self.temperature, self.top_p, self.top_k, self.max_tokens
            )
        elif self.top_k is not None:
            body["top_k"] = int(self.top_k)
        if self.thinking is not None:
            body["chat_template_kwargs"] = {"enable_thinking": bool(self.thinking)}
        if self.stop and "stop" not in self._dropped:
            body["stop"] = list(self.stop)
        if seed is not None and "seed" not in self._dropped:
            body["seed"] = seed
        body.update(self.extra_body)
        return body

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_backoff_s)
        base = min(self.backoff_s * 2**attempt, self.max_backoff_s)
        return base * (0.5 + random.random() / 2)  # jitter spreads the retries of many threads

    def _post(self, body: dict[str, Any], deadline: float) -> dict[str, Any]:
        """POST one request and return the decoded JSON, or raise :class:`EndpointError`.

        ``deadline`` bounds the whole attempt, from connecting to the last byte: a socket
        timeout alone restarts at every byte received, so a server dripping one byte a second
        would hold a request forever.
        """
        headers = {"Content-Type": "application/json"}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(body).encode()
        connection = self._connection(deadline)
        watchdog = Watchdog(deadline)
        try:
            connection.connect()
            watchdog.watch(connection.sock)
            connection.request("POST", self._path + "/chat/completions", data, headers)
            response = connection.getresponse()
            raw = read_body(response)
            status = response.status
        except (TimeoutError, http.client.HTTPException, OSError, ValueError) as error:
            # the socket's own timeout is the deadline too: the same failure, the same advice
            if watchdog.fired or isinstance(error, TimeoutError):
                raise self._deadline_error(deadline) from None
            raise EndpointError(f"connection failed ({error})", retryable=True) from None
        finally:
            watchdog.cancel()
            connection.close()
        if watchdog.fired:  # the watchdog cut the body short: what was read is not the answer
            raise self._deadline_error(deadline)
        if status >= 400:
            redact = functools.partial(redact_error, key=key)
            error = http_error(status, raw, response.getheader("Retry-After"), redact)
            raise mark_refusal(error, status, raw, set(body))
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise EndpointError("malformed JSON in the response", retryable=True) from None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_lock", None)  # locks do not copy; the gate is the endpoint's, not a copy's
        state.pop("_gate", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        adaptive = self.adaptive_concurrency
        self._gate = gate_for(self.base_url, self.max_concurrency) if adaptive else None

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        parts = urllib.parse.urlsplit(self.base_url)
        if parts.scheme == "https":
            return http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout)
        return http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)

    @property
    def _path(self) -> str:
        return urllib.parse.urlsplit(self.base_url).path

    def _deadline_error(self, deadline: float) -> EndpointError:
        reason = timeout_reason(deadline, self.timeout_s, self.max_tokens, self.speed)
        return EndpointError(reason, retryable=True, timed_out=True)

    def _key(self) -> str | None:
        """The API key, read from its environment variable at each use (never kept)."""
        return os.environ.get(self.api_key_env) or None


_DROPPED = {
    "stop": "The server refused stop strings: they are no longer sent, and every answer is cut "
    "after the first of them client-side (the same text; the tokens after it are still paid).",
    "seed": "The server refused seed: it is no longer sent, so its answers are not reproducible.",
}

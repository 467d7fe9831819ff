"""How many requests to keep in flight at one endpoint: adaptive, so a slow server is not swamped.

Servers differ by orders of magnitude in how many requests they serve at once: vLLM and SGLang
batch dozens; llama.cpp serves as many as its ``--parallel`` slots; ``transformers serve`` without
continuous batching and a default Ollama serve one or a few at a time and queue the rest. A
client that keeps eight requests in flight at a one-at-a-time server makes the eighth wait for
seven answers, and its deadline runs out while it waits in the server's queue.

:class:`ConcurrencyGate` keeps at most ``limit`` requests in flight (``limit`` starts at 1 and
never exceeds the backend's ``max_concurrency``). After each answer it compares the answer's
time per completion token with the fastest seen so far: when answers stay about as fast, the
server had spare capacity and ``limit`` grows (doubling, then by one once it has had to shrink);
when an answer is more than twice as slow per token, or took more than half the deadline, or
timed out, requests are queueing at the server and ``limit`` halves (once per round of requests
in flight). A one-at-a-time server thus settles at 1 or 2 requests in flight, a batching server
at ``max_concurrency``. Waiting at the gate does not count towards a request's deadline, but a
request waiting there when one in flight times out, with nothing answered since, is not sent
(:class:`Stalled`): a server that hangs then fails a batch in a few deadlines, as a client
without the gate would, not in one deadline per request queued behind the gate.

One gate is shared by every backend of the same endpoint (:func:`gate_for`).
"""

from __future__ import annotations

import threading

__all__ = ["ConcurrencyGate", "Stalled", "gate_for"]

SLOWER = 2.0
"""An answer this many times slower per token than the fastest seen means queueing."""

QUICK_S = 1.0
"""An answer within this many seconds is never slow (no deadline is near; timings are noise)."""


class Stalled(Exception):
    """A request waited at the gate while one in flight timed out and nothing was answered since."""


class ConcurrencyGate:
    """Bounds the requests in flight at one endpoint, adapting the bound to how fast answers come.

    Args:
        ceiling: The most requests ever in flight (the backend's ``max_concurrency``).

    Example:
        >>> gate = ConcurrencyGate(ceiling=8)
        >>> ticket = gate.acquire()
        >>> gate.release(ticket, seconds=0.5, tokens=10, deadline=60)
        >>> gate.limit
        2
    """

    def __init__(self, ceiling: int) -> None:
        if ceiling < 1:
            raise ValueError(f"ceiling must be >= 1, not {ceiling}.")
        self.ceiling = int(ceiling)
        self.limit = 1
        self.in_flight = 0
        self.max_in_flight = 0
        self._fastest: float | None = None  # seconds per completion token
        self._successes = 0
        self._sent = 0  # requests let through so far: a ticket is its sequence number
        self._shrunk_at = -1  # the ticket after which the last decrease happened
        self._grow_by_doubling = True
        self._timeouts = 0  # requests that timed out so far
        self._stalled = False  # the last request to end timed out: nothing answered since
        self._changed = threading.Condition()

    def acquire(self) -> int:
        """Wait until a request may be sent; return its ticket (give it to :meth:`release`).

        Raises:
            Stalled: A request in flight timed out while this one waited, and no request has
                been answered since: the server may hang, so this one is not sent.
        """
        with self._changed:
            timeouts = self._timeouts
            while self.in_flight >= self.limit:
                self._changed.wait()
                if self._stalled and self._timeouts > timeouts:
                    raise Stalled("a request in flight timed out and none was answered since")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._sent += 1
            return self._sent

    def release(
        self,
        ticket: int,
        seconds: float,
        tokens: int = 0,
        deadline: float = float("inf"),
        timed_out: bool = False,
        answered: bool = True,
    ) -> None:
        """Report how a request went and let the next one through.

        Args:
            ticket: What :meth:`acquire` returned.
            seconds: How long the request took (sending to the last byte).
            tokens: Completion tokens of the answer (0 when unknown or failed).
            deadline: The request's deadline in seconds.
            timed_out: The request ran past its deadline.
            answered: The server answered (a refused or failed request says nothing about its
                speed, unless it timed out).
        """
        with self._changed:
            self.in_flight -= 1
            if not (answered or timed_out):
                self._changed.notify_all()
                return
            self._stalled = timed_out
            self._timeouts += timed_out
            per_token = seconds / max(tokens, 1)
            slow = timed_out or seconds > deadline / 2
            if not slow and self._fastest is not None and seconds > QUICK_S:
                slow = per_token > SLOWER * self._fastest
            if not timed_out and (self._fastest is None or per_token < self._fastest):
                self._fastest = per_token
            if slow:
                self._shrink(ticket)
            else:
                self._grow()
            self._changed.notify_all()

    def _shrink(self, ticket: int) -> None:
        if ticket <= self._shrunk_at:  # sent before the last decrease: already accounted for
            return
        self.limit = max(1, self.limit // 2)
        self._shrunk_at = self._sent
        self._successes = 0
        self._grow_by_doubling = False

    def _grow(self) -> None:
        self._successes += 1
        if self._successes >= self.limit:
            step = self.limit if self._grow_by_doubling else 1
            self.limit = min(self.ceiling, self.limit + step)
            self._successes = 0


_GATES: dict[tuple[str, int], ConcurrencyGate] = {}
_GATES_LOCK = threading.Lock()


def gate_for(endpoint: str, ceiling: int) -> ConcurrencyGate:
    """Return the gate shared by the backends of ``endpoint`` with the same ``max_concurrency``.

    Example:
        >>> gate_for("http://127.0.0.1:1/v1", 4) is gate_for("http://127.0.0.1:1/v1", 4)
        True
    """
    with _GATES_LOCK:
        key = (endpoint, int(ceiling))
        if key not in _GATES:
            _GATES[key] = ConcurrencyGate(ceiling)
        return _GATES[key]

"""How long one request to an OpenAI-compatible endpoint may take: as long as the server needs.

Servers differ a thousandfold in speed: vLLM on a GPU writes hundreds of tokens a second,
``transformers serve`` on a busy CPU about one. A fixed deadline cuts the slow one off (64 tokens
at 1.1 tokens/s do not fit in 60 s + 0.1 s a token) or waits far too long for a fast one that
hangs. Unless the backend's ``timeout_s`` is given, the deadline of an attempt is therefore:

- before the server has answered: :data:`BASE_S` plus one second per token of ``max_tokens`` (a
  server of one token a second is waited for), at most :data:`FIRST_MAX_S`; after
  :data:`LONG_WAITS` such waits timed out, the floor below until the server answers (the second
  wait covers a first request that loaded the model; a server that hangs is not waited for that
  long at every retry of every trial);
- once it has: :data:`BASE_S` plus :data:`SLACK` times what ``max_tokens`` take at the speed of
  its last :data:`WINDOW` answers (their completion tokens over their seconds, each timed from
  sending to its last byte, so the wait in the server's queue counts);

and never shorter than :data:`BASE_S` plus 0.1 s a token (the fixed deadline of earlier
versions). A server that hangs still fails in bounded time: its requests end at their deadline,
and the endpoint's gate sends no more while nothing is answered
(:mod:`mage_agents.endpoint_gate`). A timeout's error names ``timeout_s`` and the speed seen
(:func:`timeout_reason`).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

__all__ = ["SpeedMeter", "speed_deadline", "timeout_reason"]

BASE_S = 60.0
"""Seconds every deadline allows beyond generation (connecting, reading the prompt, queueing)."""

FIRST_TOKENS_PER_S = 1.0
"""The speed assumed before the server's first answer: the slowest server waited for."""

FIRST_MAX_S = 600.0
"""The longest wait for a server's first answer (a longer one needs ``timeout_s``)."""

SLACK = 2.0
"""How many times the measured time of ``max_tokens`` a deadline allows (speeds vary)."""

FLOOR_TOKENS_PER_S = 10.0
"""No deadline is shorter than ``max_tokens`` at this speed (the fixed deadline of old)."""

WINDOW = 8
"""Answers the speed is measured on (the last ones: a server that slows down is followed)."""

LONG_WAITS = 2
"""Timeouts of the long first-answer deadline before the floor is used (until an answer)."""


class SpeedMeter:
    """The completion tokens per second of an endpoint's last answers (thread-safe).

    Example:
        >>> meter = SpeedMeter()
        >>> meter.tokens_per_s() is None
        True
        >>> meter.add(seconds=2.0, tokens=10); meter.add(seconds=8.0, tokens=10)
        >>> meter.tokens_per_s(), len(meter)
        (2.0, 2)
    """

    def __init__(self, window: int = WINDOW) -> None:
        self._answers: deque[tuple[float, int]] = deque(maxlen=window)
        self._lock = threading.Lock()
        self.waits_in_vain = 0
        """Requests that timed out before the server's first answer."""

    def add(self, seconds: float, tokens: int) -> None:
        """Count one answer (one without a token count says nothing of the speed)."""
        if tokens > 0 and seconds > 0:
            with self._lock:
                self._answers.append((seconds, tokens))

    def timed_out(self) -> None:
        """Count a request that timed out (before any answer: a first wait in vain)."""
        if not self._answers:
            self.waits_in_vain += 1

    def tokens_per_s(self) -> float | None:
        """Tokens over seconds of the last answers; ``None`` before the first."""
        with self._lock:
            if not self._answers:
                return None
            return sum(t for _, t in self._answers) / sum(s for s, _ in self._answers)

    def __len__(self) -> int:
        return len(self._answers)

    def __getstate__(self) -> dict[str, Any]:
        return {"window": self._answers.maxlen}  # a copy in another process measures anew

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["window"])


def speed_deadline(max_tokens: int, tokens_per_s: float | None, waits_in_vain: int = 0) -> float:
    """The deadline of an attempt asking for ``max_tokens`` from a server this fast.

    Args:
        max_tokens: The answer's token budget.
        tokens_per_s: The server's measured speed (``None``: it has not answered yet).
        waits_in_vain: Requests that timed out before the server's first answer.

    Example:
        >>> speed_deadline(64, None), speed_deadline(64, 1.0), speed_deadline(64, 100.0)
        (124.0, 188.0, 66.4)
        >>> speed_deadline(64, None, waits_in_vain=2)
        66.4
    """
    floor = BASE_S + max_tokens / FLOOR_TOKENS_PER_S
    if tokens_per_s is None:
        if waits_in_vain >= LONG_WAITS:
            return floor
        return max(floor, min(BASE_S + max_tokens / FIRST_TOKENS_PER_S, FIRST_MAX_S))
    return max(floor, BASE_S + SLACK * max_tokens / tokens_per_s)


def timeout_reason(
    deadline: float, timeout_s: float | None, max_tokens: int, meter: SpeedMeter
) -> str:
    """Why an attempt timed out, naming ``timeout_s`` and the speed the server showed.

    Example:
        >>> meter = SpeedMeter(); meter.add(seconds=58.0, tokens=64)
        >>> print(timeout_reason(30.0, 30.0, 64, meter))  # doctest: +NORMALIZE_WHITESPACE
        timeout (no complete response within timeout_s=30 s; the server wrote 1.10 tokens/s
        over its last 1 answers, so max_tokens=64 may take 58 s: raise timeout_s, or leave it
        unset to follow the server's speed)
    """
    speed = meter.tokens_per_s()
    if speed is None:
        seen = "the server has not answered yet, so its speed is unknown"
    else:
        seen = (
            f"the server wrote {_speed(speed)} tokens/s over its last {len(meter)} answers, so "
            f"max_tokens={max_tokens} may take {max_tokens / speed:.0f} s"
        )
    if timeout_s is not None:
        return (
            f"timeout (no complete response within timeout_s={timeout_s:g} s; {seen}: raise "
            "timeout_s, or leave it unset to follow the server's speed)"
        )
    return (
        f"timeout (no complete response within {_seconds(deadline)} s, the deadline that "
        f"follows the server's speed; {seen}: for a slower server set timeout_s, e.g. "
        f"--agent-option timeout_s={_generous(deadline)})"
    )


def _seconds(seconds: float) -> str:
    return f"{seconds:.0f}" if seconds >= 10 else f"{seconds:.2g}"


def _speed(tokens_per_s: float) -> str:
    return f"{tokens_per_s:.2f}" if tokens_per_s < 10 else f"{tokens_per_s:.0f}"


def _generous(deadline: float) -> int:
    """A ``timeout_s`` to suggest: four times the deadline that passed, in round seconds."""
    return int(-(-4 * deadline // 60) * 60)

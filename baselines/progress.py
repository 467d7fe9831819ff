"""Progress of a long run: trials done of those planned, answers and tokens a second, an ETA.

On a terminal, a rich bar (gone when the run ends); elsewhere (a log file, a pipe, a captured
notebook cell), one line on stderr every :data:`LINE_EVERY_S`, so that an hour-long run says how
it goes there too. Answers are counted as they come (the rollout engine's ``on_answers``), not
only when a trial ends: a batch of trials that all end together after an hour shows its pace from
its first step.

The ETA counts answers where they are seen: the trials planned times the answers a finished trial
took (their mean), less the answers given so far, at the answers' rate. Before a trial ends it is
unknown (``ETA ?``). Where only whole trials are seen (worker processes, the arena's games), it
is the trials left at the trials' rate.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
)
from rich.text import Text

from mage_agents.base import Reply

__all__ = ["Pace", "RunProgress", "LINE_EVERY_S"]

LINE_EVERY_S = 60.0
"""Off a terminal, a progress line is written at most this often (none for a shorter run)."""


class Pace:
    """What a run has done so far and how fast: trials, answers, completion tokens.

    Args:
        total: The trials (or games) to play.
        unit: What a trial is called in the text (``"trials"``, ``"games"``).
        clock: Seconds, monotonic (tests pass their own).

    Example:
        >>> ticks = iter([0.0, 10.0])
        >>> pace = Pace(4, clock=lambda: next(ticks))
        >>> pace.answered([Reply("bet", completion_tokens=3)] * 5)
        >>> pace.trial_ended({"steps": 5})
        >>> str(pace)
        '1/4 trials, 5 answers (0.50/s, 1.5 tokens/s), 0:00:10 elapsed, ETA 0:00:30'
    """

    def __init__(
        self, total: int, unit: str = "trials", clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.total, self.unit, self.clock = int(total), unit, clock
        self.trials = self.answers = self.tokens = 0
        self.finished_answers = 0
        """The answers of the finished trials (their records' ``steps``)."""
        self.started = clock()
        self._live = False  # answers are counted as they come (else from each trial's record)

    def answered(self, replies: Sequence[Reply]) -> None:
        """Count one step's answers (a backend that gave none answered nothing)."""
        self._live = True
        given = [r for r in replies if not r.backend_failed]
        self.answers += len(given)
        self.tokens += sum(r.completion_tokens for r in given)

    def trial_ended(self, record: dict[str, Any] | None = None) -> None:
        """Count one trial ended (``record``: its results record, which says its answers)."""
        self.trials += 1
        steps = int((record or {}).get("steps") or 0)
        self.finished_answers += steps
        if not self._live:  # played in a worker process: its answers are known only now
            self.answers += steps
            self.tokens += int((record or {}).get("completion_tokens") or 0)

    def eta_s(self, elapsed: float) -> float | None:
        """Seconds left, estimated (``None`` before anything ended)."""
        if self.trials == 0 or elapsed <= 0:
            return None
        if self.answers == 0 or self.finished_answers == 0:
            return (self.total - self.trials) * elapsed / self.trials
        expected = self.total * self.finished_answers / self.trials
        return max(expected - self.answers, 0.0) * elapsed / self.answers

    def __str__(self) -> str:
        elapsed = self.clock() - self.started
        text = f"{self.trials}/{self.total} {self.unit}, "
        if self.answers:
            text += f"{self.answers} answers ({self.answers / max(elapsed, 1e-9):.2f}/s"
            if self.tokens:
                text += f", {self.tokens / max(elapsed, 1e-9):.1f} tokens/s"
            text += "), "
        elif self.trials:
            text += f"{self.trials / max(elapsed, 1e-9):.2f} {self.unit}/s, "
        return text + f"{_clock(elapsed)} elapsed, ETA {self._eta(elapsed)}"

    def rates(self) -> str:
        """The rates and the ETA alone, short (what the bar shows beside its count)."""
        elapsed = max(self.clock() - self.started, 1e-9)
        if self.answers:
            text = f"{self.answers / elapsed:.2f} answers/s"
            text += f", {self.tokens / elapsed:.1f} tokens/s" if self.tokens else ""
        elif self.trials:
            text = f"{self.trials / elapsed:.2f} {self.unit}/s"
        else:
            return "waiting for the first answer"
        return f"{text}, ETA {self._eta(elapsed)}"

    def _eta(self, elapsed: float) -> str:
        eta = self.eta_s(elapsed)
        return "?" if eta is None else _clock(eta)


def _clock(seconds: float) -> str:
    whole = int(round(seconds))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class RunProgress:
    """Shows a run's :class:`Pace`: a bar on a terminal, a line now and then elsewhere.

    Use it as a context manager; give it each step's answers (:meth:`answered`) and each trial
    that ends (:meth:`trial_ended`).

    Args:
        console: Where the run prints (its terminal, if it is one).
        name: What is played (the agent's name, ``"arena"``).
        total: The trials (or games) to play.
        unit: What a trial is called in the text.
        lines: Where the lines go off a terminal (default: stderr).
        every_s: The least time between two lines.
        clock: Seconds, monotonic.
    """

    def __init__(
        self,
        console: Console,
        name: str,
        total: int,
        unit: str = "trials",
        lines: Console | None = None,
        every_s: float = LINE_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.pace = Pace(total, unit, clock)
        self.lines = lines if lines is not None else Console(stderr=True, width=200)
        self.every_s, self.clock = every_s, clock
        self._said = self.pace.started
        self.bar: Progress | None = None
        """The rich bar, on a terminal (else ``None``)."""
        self._task: TaskID | None = None
        if console.is_terminal and total > 0:
            self.bar = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(bar_width=16),
                MofNCompleteColumn(),
                _RatesColumn(),
                console=console,
                transient=True,
            )
            self._task = self.bar.add_task(name, total=total, pace=self.pace)

    def __enter__(self) -> RunProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def answered(self, replies: Sequence[Reply]) -> None:
        """Count one step's answers (the bar's text moves at once)."""
        self.pace.answered(replies)
        self._say()

    def trial_ended(self, record: dict[str, Any] | None = None) -> None:
        """Count one trial ended: the bar advances."""
        self.pace.trial_ended(record)
        if self.bar is not None:
            self.bar.update(self._task, completed=self.pace.trials)
        self._say()

    def _say(self) -> None:
        """Off a terminal, a line when :attr:`every_s` has passed since the last one."""
        now = self.clock()
        if self.bar is None and now - self._said >= self.every_s:
            self._said = now
            self.lines.print(f"{self.name}: {self.pace}", highlight=False, soft_wrap=True)


class _RatesColumn(ProgressColumn):
    """The bar's rates and ETA, read from its :class:`Pace` at each refresh."""

    def render(self, task: Task) -> Text:
        return Text(task.fields["pace"].rates())

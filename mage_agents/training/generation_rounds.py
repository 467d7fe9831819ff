"""Generation calls kept in step across processes: every process makes the same calls.

With several processes, TRL's generation is collective: in vLLM server mode every process gathers
its prompts to the main process and takes its slice of the completions back (each process's
slice assumed to be as long as its prompts), in colocate mode with tensor parallelism the
processes of a group gather their prompts, the weight sync before a step's first generation
gathers sharded parameters, and ``generate`` under FSDP or DeepSpeed ZeRO-3 syncs every token.
The rollout engine makes one generation call per lockstep step, and trials end at different
turns on different processes, so a process whose trials are over would stop calling while the
others wait for it: a hang, or a slice of someone else's completions.

:class:`GenerationRounds` keeps the processes in step. Each generation call is a *round*: before
it, the processes exchange whether they are still playing and how many prompts they bring
(:meth:`GenerationRounds.agree`, one small all-gather); every process then makes the call with
the same number of prompts when the generator needs it (vLLM, :attr:`pad_to_largest`) or at
least one, padding with a dummy prompt whose completion is thrown away, and no process calls when
none has prompts. A process whose trials have ended keeps answering rounds with dummy prompts
(:meth:`GenerationRounds.drain`) until every process is done. One process: no exchange, no
dummy, no change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["GenerationRounds", "Round", "accelerator_exchange"]

Exchange = Callable[[Sequence[int]], list[list[int]]]
"""All-gather of a few integers: every process's values, in process order."""


@dataclass(frozen=True)
class Round:
    """What the processes agreed for one generation call.

    Attributes:
        playing: Some process still has trials being played.
        rows: Prompts this process sends to the generator (its own, then dummies); 0: no call.
    """

    playing: bool
    rows: int


class GenerationRounds:
    """Makes every process make the same generation calls, with the same number of prompts.

    Args:
        exchange: The all-gather (:func:`accelerator_exchange` for a training run).
        pad_to_largest: Send as many prompts as the process with the most (TRL's vLLM paths
            slice completions by that count); else send one dummy prompt when there is none.

    Example:
        Two processes, played one after the other by a fake exchange that answers with what the
        other process would say: the second has no prompts left, but still takes part.

        >>> rounds = GenerationRounds(lambda mine: [list(mine), [0, 0]], pad_to_largest=True)
        >>> rounds.agree(3)
        Round(playing=True, rows=3)
        >>> GenerationRounds(lambda mine: [[1, 3], list(mine)], pad_to_largest=True).agree(0, False)
        Round(playing=True, rows=3)
    """

    def __init__(self, exchange: Exchange, pad_to_largest: bool) -> None:
        self.exchange = exchange
        self.pad_to_largest = pad_to_largest
        self.calls = 0
        """Generation calls this process made in rounds (dummy ones included)."""

    def agree(self, prompts: int, playing: bool = True) -> Round:
        """Exchange this process's prompts for the coming call; return what to send."""
        answers = self.exchange([int(playing), int(prompts)])
        largest = max(count for _, count in answers)
        if largest == 0:
            rows = 0
        elif self.pad_to_largest:
            rows = largest
        else:
            rows = max(int(prompts), 1)
        return Round(any(flag for flag, _ in answers), rows)

    def generate(
        self, prompts: list[Any], dummy: Any, call: Callable[[list[Any]], list[Any]]
    ) -> list[Any]:
        """Make this process's call of a round; return the outputs of ``prompts`` only.

        Args:
            prompts: This process's prompts for the call (may be empty).
            dummy: A prompt to pad with; its outputs are dropped.
            call: The collective generation call, one output per prompt.
        """
        agreed = self.agree(len(prompts))
        if agreed.rows == 0:
            return []
        self.calls += 1
        outputs = call(list(prompts) + [dummy] * (agreed.rows - len(prompts)))
        return list(outputs[: len(prompts)])

    def drain(self, dummy: Any, call: Callable[[list[Any]], list[Any]]) -> int:
        """Answer the other processes' rounds until no process plays; return the rounds taken."""
        taken = 0
        while True:
            agreed = self.agree(0, playing=False)
            if not agreed.playing:
                return taken
            taken += 1
            if agreed.rows:
                self.calls += 1
                call([dummy] * agreed.rows)


def accelerator_exchange(accelerator: Any) -> Exchange:
    """Return the all-gather of a few integers over ``accelerator``'s processes."""
    import torch

    def exchange(values: Sequence[int]) -> list[list[int]]:
        mine = torch.tensor([list(values)], dtype=torch.long, device=accelerator.device)
        return accelerator.gather(mine).tolist()

    return exchange

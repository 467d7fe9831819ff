"""Forwards bounded by tokens: the rows of a micro-batch split into forwards of at most N tokens.

TRL runs one forward, and one backward, over a whole micro-batch: its activations grow with the
rows times the padded width, and with one sample row per model turn a micro-batch of a few trials
already holds hundreds of rows. With ``max_tokens_per_forward`` the trainer plans forwards instead
(:func:`plan_forwards`): the rows are sorted by length, so that rows of similar length share a
forward and pad little, and packed greedily into forwards whose padded tokens stay within the
budget. A forward's padded tokens (:func:`forward_tokens`) are its rows times the longest prompt
plus the longest completion, the padding columns no row of the forward needs being cut
(:func:`rows_of`); with legal-move choice, each legal row adds every legal answer after its
prompt (the renormalising forward of :mod:`.legal_logps`). A single row longer than the budget
gets a forward of its own: rows are never cut.

The zero-mask filler rows of :func:`~.batch.turn_batch` (no loss, no gradient) take part like the
others, last and cheaply: with several processes every process then has as many rows, and each
forward as many rows on every process. :func:`padding_figures` gives the metrics a step logs:
useful tokens over padded tokens, and rows per forward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

__all__ = [
    "RowSizes",
    "row_sizes",
    "forward_tokens",
    "plan_forwards",
    "rows_of",
    "padding_figures",
    "single_forward_figures",
    "PROMPT_KEYS",
]

PROMPT_KEYS = ("prompt_ids", "prompt_mask")
"""The batch's prompt tensors (left-padded, their own width)."""

LEGAL_KEYS = ("legal_answer_ids", "legal_answer_mask")
"""The batch's legal answers, ``(rows, moves, tokens)``."""


@dataclass(frozen=True)
class RowSizes:
    """The real (unpadded) sizes of each row of a batch.

    Attributes:
        prompt: Prompt tokens of each row.
        completion: Completion tokens of each row (0: a filler row, without loss).
        moves: Legal answers of each row (0: a free row).
        answer: Tokens of each row's longest legal answer (0: a free row).
        answers: Tokens of all of each row's legal answers together.
    """

    prompt: list[int]
    completion: list[int]
    moves: list[int]
    answer: list[int]
    answers: list[int]


def row_sizes(batch: dict[str, Any]) -> RowSizes:
    """Return the real sizes of the rows of ``batch`` (the tensors of :func:`~.batch.turn_batch`).

    Example:
        >>> from mage_agents.training.batch import TurnRow, turn_batch
        >>> batch = turn_batch([TurnRow([5, 6], [7], 1.0), TurnRow([5], [8, 9], -1.0)], 0, 3)
        >>> sizes = row_sizes(batch)
        >>> sizes.prompt, sizes.completion
        ([2, 1, 1], [1, 2, 0])
    """
    prompt = batch["prompt_mask"].sum(1).tolist()
    completion = batch["completion_mask"].sum(1).tolist()
    rows = len(prompt)
    if "legal_answer_mask" in batch:
        lengths = batch["legal_answer_mask"].sum(-1)
        moves = (lengths > 0).sum(1).tolist()
        longest = lengths.max(1).values.tolist() if lengths.size(1) else [0] * rows
        total = lengths.sum(1).tolist()
    else:
        moves, longest, total = [0] * rows, [0] * rows, [0] * rows
    return RowSizes(prompt, completion, moves, longest, total)


def forward_tokens(sizes: RowSizes, rows: Sequence[int]) -> int:
    """Return the padded tokens of one forward over ``rows``.

    That is rows x (longest prompt + longest completion), plus, for the rows that chose among
    legal moves, their legal answers x (longest prompt + longest answer): the forward that
    renormalises over the legal moves (an upper bound: equal prompts are scored once).

    Example:
        >>> sizes = RowSizes([10, 4], [2, 6], [0, 3], [0, 5], [0, 12])
        >>> forward_tokens(sizes, [0]), forward_tokens(sizes, [0, 1])
        (12, 59)
    """
    if not rows:
        return 0
    prompt = max(sizes.prompt[r] for r in rows)
    completion = max(sizes.completion[r] for r in rows)
    tokens = len(rows) * (prompt + completion)
    legal = [r for r in rows if sizes.moves[r]]
    if legal:
        width = max(sizes.prompt[r] for r in legal) + max(sizes.answer[r] for r in legal)
        tokens += len(legal) * max(sizes.moves[r] for r in legal) * width
    return tokens


class _Forward:
    """A forward being filled: its padded tokens as rows join it (each in O(1))."""

    def __init__(self, sizes: RowSizes) -> None:
        self.sizes = sizes
        self.rows = self.prompt = self.completion = 0
        self.legal = self.legal_prompt = self.answer = self.moves = 0

    def tokens_with(self, row: int) -> int:
        """The forward's padded tokens if ``row`` joined it."""
        s = self.sizes
        rows, prompt = self.rows + 1, max(self.prompt, s.prompt[row])
        tokens = rows * (prompt + max(self.completion, s.completion[row]))
        legal, legal_prompt, answer, moves = self.legal, self.legal_prompt, self.answer, self.moves
        if s.moves[row]:
            legal, legal_prompt = legal + 1, max(legal_prompt, s.prompt[row])
            answer, moves = max(answer, s.answer[row]), max(moves, s.moves[row])
        return tokens + legal * moves * (legal_prompt + answer)

    def add(self, row: int) -> None:
        s = self.sizes
        self.rows += 1
        self.prompt = max(self.prompt, s.prompt[row])
        self.completion = max(self.completion, s.completion[row])
        if s.moves[row]:
            self.legal += 1
            self.legal_prompt = max(self.legal_prompt, s.prompt[row])
            self.answer, self.moves = max(self.answer, s.answer[row]), max(self.moves, s.moves[row])


def plan_forwards(
    sizes: RowSizes, budget: int, agree: Callable[[int], int] | None = None
) -> list[list[int]]:
    """Split every row into forwards of at most ``budget`` padded tokens.

    Rows are taken longest first and packed greedily: each forward takes as many of the next
    rows as fit in the budget, at least one (a row alone over the budget is a forward of its
    own). With several processes ``agree`` turns this process's count into the smallest of
    every process's (one small all-gather a forward): each forward then has as many rows on
    every process, which TRL's per-row metric gathers need, and every process as many forwards
    (their rows are as many, :func:`~.batch.turn_batch`).

    Example:
        >>> sizes = RowSizes([8, 2, 2, 7], [2, 2, 2, 1], [0] * 4, [0] * 4, [0] * 4)
        >>> plan_forwards(sizes, 20)
        [[0, 3], [1, 2]]
        >>> plan_forwards(sizes, 5)
        [[0], [3], [1], [2]]
        >>> plan_forwards(sizes, 20, agree=lambda fit: min(fit, 1))  # another process: one
        [[0], [3], [1], [2]]
    """
    if budget < 1:
        raise ValueError(f"budget counts tokens: it must be at least 1, not {budget}.")
    order = sorted(
        range(len(sizes.prompt)), key=lambda r: (-(sizes.prompt[r] + sizes.completion[r]), r)
    )
    forwards: list[list[int]] = []
    start = 0
    while start < len(order):
        forward = _Forward(sizes)
        forward.add(order[start])
        fit = 1
        while start + fit < len(order) and forward.tokens_with(order[start + fit]) <= budget:
            forward.add(order[start + fit])
            fit += 1
        if agree is not None:
            fit = max(1, agree(fit))
        forwards.append(order[start : start + fit])
        start += fit
    return forwards


def _width(mask: torch.Tensor) -> int:
    """Columns up to the last one any row of ``mask`` uses (at least 1)."""
    used = mask.flatten(0, -2).any(0) if mask.dim() > 1 else mask.bool()
    positions = used.nonzero()
    return max(1, int(positions[-1]) + 1) if positions.numel() else 1


def rows_of(batch: dict[str, Any], rows: Sequence[int]) -> dict[str, Any]:
    """Return the sub-batch of ``rows``, without the padding columns none of them needs.

    Prompts are left-padded: leading columns no row attends to are cut; completions (and every
    per-token tensor of their width) and legal answers are right-padded: trailing ones are cut.
    Scalars (``num_items_in_batch``) are kept as they are.

    Example:
        >>> from mage_agents.training.batch import TurnRow, turn_batch
        >>> batch = turn_batch([TurnRow([5, 6, 7], [8], 1.0), TurnRow([5], [8, 9], 0.5)], 0, 1)
        >>> part = rows_of(batch, [0])
        >>> part["prompt_ids"].tolist(), part["completion_ids"].tolist()
        ([[5, 6, 7]], [[8]])
    """
    index = torch.as_tensor(list(rows), dtype=torch.long, device=batch["prompt_ids"].device)
    count = batch["prompt_ids"].size(0)
    width = batch["completion_ids"].size(1)
    prompt_mask = batch["prompt_mask"][index]
    start = batch["prompt_mask"].size(1) - _width(prompt_mask.flip(1))
    keep = _width(batch["completion_mask"][index])
    part: dict[str, Any] = {}
    for key, value in batch.items():
        if not isinstance(value, torch.Tensor) or value.dim() == 0 or value.size(0) != count:
            part[key] = value
            continue
        value = value[index]
        if key in PROMPT_KEYS:
            value = value[:, start:]
        elif key in LEGAL_KEYS:
            mask = batch["legal_answer_mask"][index]
            moves = max(1, int((mask.sum(-1) > 0).sum(1).max())) if mask.numel() else 1
            value = value[:, :moves, : _width(mask)]
        elif value.dim() == 2 and value.size(1) == width:
            value = value[:, :keep]
        part[key] = value
    return part


def padding_figures(sizes: RowSizes, forwards: Sequence[Sequence[int]]) -> dict[str, float]:
    """Return the totals a step's forwards log: useful and padded tokens, rows, forwards.

    Useful tokens are each row's real prompt and completion (and, for a legal row, each legal
    answer after its prompt); padded tokens are :func:`forward_tokens` of each forward.

    Example:
        >>> sizes = RowSizes([8, 2], [2, 2], [0, 0], [0, 0], [0, 0])
        >>> padding_figures(sizes, [[0, 1]])
        {'useful': 14.0, 'padded': 20.0, 'rows': 2.0, 'forwards': 1.0, 'largest': 20.0}
    """
    useful = padded = rows = largest = 0
    for forward in forwards:
        tokens = forward_tokens(sizes, forward)
        padded += tokens
        largest = max(largest, tokens)
        rows += len(forward)
        for r in forward:
            useful += sizes.prompt[r] + sizes.completion[r]
            useful += sizes.moves[r] * sizes.prompt[r] + sizes.answers[r]
    return {
        "useful": float(useful),
        "padded": float(padded),
        "rows": float(rows),
        "forwards": float(len(forwards)),
        "largest": float(largest),
    }


def single_forward_figures(batch: dict[str, Any]) -> dict[str, float]:
    """Return :func:`padding_figures` of TRL's one forward over ``batch`` as it is padded.

    Without a token budget TRL runs the micro-batch's tensors as they come: every row, filler
    rows included, at the full prompt and completion widths (and, with legal answers, every
    legal row's answers at the full widths).

    Example:
        >>> from mage_agents.training.batch import TurnRow, turn_batch
        >>> batch = turn_batch([TurnRow([5, 6, 7], [8], 1.0), TurnRow([5], [8, 9], 0.5)], 0, 3)
        >>> single_forward_figures(batch)
        {'useful': 7.0, 'padded': 15.0, 'rows': 3.0, 'forwards': 1.0, 'largest': 15.0}
    """
    sizes = row_sizes(batch)
    kept = [r for r, c in enumerate(sizes.completion) if c > 0]
    useful = padding_figures(sizes, [kept])["useful"] if kept else 0.0
    rows, prompt = batch["prompt_ids"].shape
    padded = rows * (prompt + batch["completion_ids"].size(1))
    if "legal_answer_mask" in batch:
        moves, width = batch["legal_answer_mask"].shape[1:]
        padded += sum(1 for m in sizes.moves if m) * moves * (prompt + width)
    return {
        "useful": useful,
        "padded": float(padded),
        "rows": float(rows),
        "forwards": 1.0,
        "largest": float(padded),
    }

"""Model turns with their advantages, as the padded batch TRL's GRPO loss reads.

One row per model turn: ``prompt_ids`` (left-padded), ``completion_ids`` (right-padded), their
masks and the turn's advantage; a turn that chose among legal moves also carries every legal
answer (``legal_answer_ids``, ``legal_answer_mask``, ``(rows, moves, tokens)``) and which one it
chose (``legal_choice``), from which the loss reads the renormalised policy
(:mod:`mage_agents.training.legal_logps`). TRL shuffles the batch and splits it into
``steps_per_generation`` equal chunks, dropping any remainder silently; :func:`turn_batch`
therefore pads the batch with zero-mask rows (they carry no loss and no gradient) up to a
multiple of that number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from mage_agents.training.legal_logps import answer_tensors

__all__ = ["TurnRow", "turn_batch"]


@dataclass(frozen=True)
class TurnRow:
    """One training sample: a model turn and its advantage.

    Attributes:
        prompt_ids: What the model read.
        completion_ids: What it wrote (the tokens trained on).
        advantage: The estimator's advantage of the turn.
        logprobs: The sampler's log-probability of each completion token (vLLM's, or the
            renormalised policy's for a legal move), or ``None`` (none known: ratio 1).
        answers: With legal-move choice, the legal moves' answers (token ids); else empty.
        choice: The index of ``completion_ids`` among ``answers`` (-1 without answers).
    """

    prompt_ids: Sequence[int]
    completion_ids: Sequence[int]
    advantage: float
    logprobs: Sequence[float] | None = None
    answers: Sequence[Sequence[int]] = ()
    choice: int = -1


def _pad(rows: list[list[float]], value: float, left: bool, dtype: torch.dtype) -> torch.Tensor:
    width = max(1, max((len(r) for r in rows), default=1))
    padded = [
        ([value] * (width - len(r)) + r) if left else (r + [value] * (width - len(r))) for r in rows
    ]
    return torch.tensor(padded, dtype=dtype)


def turn_batch(
    rows: Sequence[TurnRow],
    pad_token_id: int,
    multiple: int,
    device: torch.device | str = "cpu",
    at_least: int = 0,
) -> dict[str, torch.Tensor]:
    """Return the padded tensors of ``rows``, with zero-mask rows added up to ``multiple``.

    Rows without completion tokens (a failed generation) are left out. The result has at least
    ``multiple`` rows, so that no split TRL makes is empty, and at least ``at_least`` (with
    several processes: the most rows of any process, since TRL's metrics gather one value per
    row and every process must bring as many).

    Example:
        >>> batch = turn_batch([TurnRow([5, 6], [7], 1.0), TurnRow([5], [8, 9], -1.0)], 0, 4)
        >>> batch["prompt_ids"].tolist(), batch["completion_mask"].tolist()
        ([[5, 6], [0, 5], [0, 0], [0, 0]], [[1, 0], [1, 1], [0, 0], [0, 0]])
        >>> batch["advantages"].tolist(), int(batch["num_items_in_batch"])
        ([1.0, -1.0, 0.0, 0.0], 3)
    """
    if multiple < 1:
        raise ValueError(f"multiple must be at least 1, not {multiple}.")
    kept = [r for r in rows if len(r.completion_ids) > 0]
    size = max(len(kept), at_least, 1)
    missing = size + (-size % multiple) - len(kept)
    prompts = [list(r.prompt_ids) for r in kept] + [[pad_token_id]] * missing
    completions = [list(r.completion_ids) for r in kept] + [[]] * missing
    # a padding row attends to its one pad token: a row with nothing to attend to gives NaN
    # log-probs, and NaN times a zero mask is still NaN in the loss
    prompt_mask = [[1] * len(p) for p in prompts]
    completion_mask = [[1] * len(c) for c in completions]
    batch = {
        "prompt_ids": _pad(prompts, pad_token_id, True, torch.long),
        "prompt_mask": _pad(prompt_mask, 0, True, torch.long),
        "completion_ids": _pad(completions, pad_token_id, False, torch.long),
        "completion_mask": _pad(completion_mask, 0, False, torch.long),
        "advantages": torch.tensor([float(r.advantage) for r in kept] + [0.0] * missing),
    }
    if any(r.logprobs is not None for r in kept):
        # a row whose sampler gave no log-probabilities is NaN: its importance ratio is 1
        nan = float("nan")
        sampled = [
            [nan] * len(r.completion_ids) if r.logprobs is None else list(r.logprobs) for r in kept
        ] + [[]] * missing
        batch["sampling_per_token_logps"] = _pad(sampled, 0.0, False, torch.float32)
    if any(r.answers for r in kept):
        answers = [list(r.answers) for r in kept] + [[]] * missing
        ids, mask = answer_tensors(answers, pad_token_id)
        batch |= {"legal_answer_ids": ids, "legal_answer_mask": mask}
        batch["legal_choice"] = torch.tensor([max(r.choice, 0) for r in kept] + [0] * missing)
    batch = {k: v.to(device) for k, v in batch.items()}
    batch["num_items_in_batch"] = batch["completion_mask"].sum()
    return batch

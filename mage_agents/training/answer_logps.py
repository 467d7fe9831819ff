"""Log-probabilities of every legal answer after a prompt, read from the prompt's key-value cache.

A turn with ``n`` legal moves is scored by one pass over its prompt and one short pass over its
``n`` answers, which read the prompt's keys and values instead of encoding the prompt ``n``
times. The sampler uses it without gradient; the loss with gradient, which flows into the prompt
pass through the cache. On a Minesweeper turn of 15 moves after a 325-token page, the loss's
forwards were 15 full passes of the page (about 19 GB and 100 CPU s a step of the tiny model).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch

from mage_agents.training.legal_logps import AnswerScorer, full_answer_logps

__all__ = ["answer_logps", "answer_scorer", "cached_answer_logps", "packed_answer_logps"]
__all__ += ["cache_argument", "PACKED_ATTENTION"]


def cache_argument(model: Any) -> str:
    """The forward argument that takes a key-value cache (``cache`` from transformers 5 on)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    parameters = inspect.signature(base.forward).parameters
    return "cache" if "cache" in parameters else "past_key_values"


def cached_answer_logps(
    model: Any,
    prompt_ids: torch.Tensor,
    prompt_mask: torch.Tensor,
    answer_ids: torch.Tensor,
    answer_mask: torch.Tensor,
    temperature: float,
) -> torch.Tensor | None:
    """Return ``log p`` of each answer token after its prompt, ``(prompts, moves, tokens)``.

    The positions and the attention are those of one forward of ``[prompt | answer]`` (the
    prompts left-padded, the answers right-padded), so the values equal that forward's.

    Args:
        model: A causal language model (or a PEFT model around one), in the mode to score in.
        prompt_ids: Left-padded prompts, ``(prompts, length)``.
        prompt_mask: 1 on the prompts' tokens, 0 on the padding.
        answer_ids: Each prompt's answers, ``(prompts, moves, tokens)``, right-padded.
        answer_mask: 1 on the answers' tokens, 0 on the padding.
        temperature: The logits are divided by it, as the sampler's and TRL's are.

    Returns:
        The log-probabilities (padding's are meaningless), or ``None`` when the model kept no
        cache: gradient checkpointing turns it off in training mode.
    """
    prompts, moves, width = answer_ids.shape
    out = model(input_ids=prompt_ids, attention_mask=prompt_mask, use_cache=True, logits_to_keep=1)
    first = torch.log_softmax(out.logits[:, -1].float() / temperature, dim=-1)
    logps = first.gather(1, answer_ids[:, :, 0])[:, :, None]
    if width == 1:
        return logps
    # transformers 5 names the cache `cache` (4.x `past_key_values`); none under checkpointing
    cache = out["cache"] if "cache" in out else out.get("past_key_values")
    if cache is None:
        return None
    rows = torch.arange(prompts, device=prompt_ids.device).repeat_interleave(moves)
    cache.reorder_cache(rows)  # one copy of its prompt's keys and values per answer
    tails = answer_ids[:, :, :-1].flatten(0, 1)
    tail_mask = torch.cat([prompt_mask[rows], answer_mask[:, :, :-1].flatten(0, 1)], dim=1)
    logits = model(input_ids=tails, attention_mask=tail_mask, **{cache_argument(model): cache})
    rest = torch.log_softmax(logits.logits.float() / temperature, dim=-1)
    rest = rest.gather(2, answer_ids[:, :, 1:].flatten(0, 1)[:, :, None])[:, :, 0]
    return torch.cat([logps, rest.view(prompts, moves, width - 1)], dim=2)


PACKED_ATTENTION = ("sdpa", "eager")
"""Attention implementations that take a custom 4D additive mask (flash attention does not)."""


def packed_answer_logps(
    model: Any,
    prompt_ids: torch.Tensor,
    prompt_mask: torch.Tensor,
    answer_ids: torch.Tensor,
    answer_mask: torch.Tensor,
    temperature: float,
) -> torch.Tensor | None:
    """:func:`cached_answer_logps` in one forward per prompt, its answers packed after it.

    Each row is ``[prompt | answer 1 | ... | answer n]``; a 4D mask lets each answer see the
    prompt and its own earlier tokens, and its positions restart where the prompt ends, so
    every answer token's logits are those of one forward of ``[prompt | answer]``. Nothing is
    copied per answer (the cache route copies the prompt's keys and values once per answer):
    half the cache route's CPU time on a Minesweeper batch of the tiny model, forward and
    backward.

    Returns:
        The log-probabilities, or ``None`` when the model's attention takes no custom mask.
    """
    config = getattr(model, "config", None)
    if getattr(config, "_attn_implementation", None) not in PACKED_ATTENTION:
        return None
    prompts, moves, width = answer_ids.shape
    length, device = prompt_ids.size(1), prompt_ids.device
    ids = torch.cat([prompt_ids, answer_ids.flatten(1)], dim=1)
    steps = torch.arange(width, device=device)
    positions = torch.cat([torch.arange(length, device=device), length + steps.repeat(moves)])
    dtype = next(model.parameters()).dtype
    mask = _packed_mask(prompt_mask, answer_mask, dtype)
    kept = moves * width + 1  # the prompt's last position, then every answer token's
    out = model(
        input_ids=ids,
        attention_mask=mask,
        position_ids=positions[None].expand(prompts, -1),
        logits_to_keep=kept,
    )
    logps = torch.log_softmax(out.logits.float() / temperature, dim=-1)
    # answer k's token j is predicted at kept index 0 (j == 0), else at 1 + k * width + j - 1
    index = torch.arange(moves, device=device)[:, None] * width + steps[None]
    index[:, 0] = 0
    picked = logps[:, index.flatten()]
    return picked.gather(2, answer_ids.flatten(1)[:, :, None])[:, :, 0].view(prompts, moves, width)


def _packed_mask(
    prompt_mask: torch.Tensor, answer_mask: torch.Tensor, dtype: torch.dtype
) -> torch.Tensor:
    """The additive 4D mask of packed rows: causal, each answer blind to the other answers."""
    moves, width = answer_mask.shape[1:]
    device = prompt_mask.device
    # block: -1 on the prompt, k on answer k; a query sees the prompt and its own block
    block = torch.cat(
        [
            torch.full((prompt_mask.size(1),), -1, device=device),
            torch.arange(moves, device=device).repeat_interleave(width),
        ]
    )
    order = torch.arange(block.numel(), device=device)
    visible = (order[None, :] <= order[:, None]) & (
        (block[None] == -1) | (block[None] == block[:, None])
    )
    valid = torch.cat([prompt_mask, answer_mask.flatten(1)], dim=1).bool()
    allowed = visible[None] & valid[:, None, :]
    allowed |= torch.eye(block.numel(), dtype=torch.bool, device=device)[None]  # no empty row
    blocked = torch.zeros(allowed.shape, dtype=dtype, device=device)
    return blocked.masked_fill(~allowed, torch.finfo(dtype).min)[:, None]


def answer_logps(
    model: Any,
    prompt_ids: torch.Tensor,
    prompt_mask: torch.Tensor,
    answer_ids: torch.Tensor,
    answer_mask: torch.Tensor,
    temperature: float,
) -> torch.Tensor | None:
    """Return ``log p`` of each answer token, ``(prompts, moves, tokens)``, or ``None``.

    Packed (:func:`packed_answer_logps`) where the model's attention takes a custom mask, else
    from the prompt's cache (:func:`cached_answer_logps`); ``None`` when neither can run.
    """
    arguments = (model, prompt_ids, prompt_mask, answer_ids, answer_mask, temperature)
    logps = packed_answer_logps(*arguments)
    return cached_answer_logps(*arguments) if logps is None else logps


def answer_scorer(
    model: Any,
    score: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor],
    temperature: float,
    batch_size: int | None = None,
) -> AnswerScorer:
    """Return the loss's :data:`~mage_agents.training.legal_logps.AnswerScorer` of ``model``.

    It scores ``batch_size`` prompts at a time (all at once when ``None``) with
    :func:`answer_logps`, and falls back to a full forward per answer (``score``, TRL's) when
    neither of its routes can run.
    """

    def scorer(
        prompt_ids: torch.Tensor,
        prompt_mask: torch.Tensor,
        answer_ids: torch.Tensor,
        answer_mask: torch.Tensor,
    ) -> torch.Tensor:
        size = batch_size or prompt_ids.size(0)
        parts = []
        for k in range(0, prompt_ids.size(0), size):
            part = (prompt_ids[k : k + size], prompt_mask[k : k + size])
            part += (answer_ids[k : k + size], answer_mask[k : k + size])
            logps = answer_logps(model, *part, temperature)
            parts.append(full_answer_logps(score, *part) if logps is None else logps)
        return torch.cat(parts, dim=0)

    return scorer

"""Token log-probabilities of the legal-move policy, the ones TRL's loss reads.

With ``action_choice="legal"`` a move is sampled from the model's probabilities renormalised over
the legal moves' answers: ``q(a) = p(a) / Z``, ``Z = sum_b p(b)`` over the legal answers ``b``.
TRL's loss, its ratio, the old log-probabilities and the KL term read one log-probability per
completion token, so the trainer gives them the token-level conditionals of ``q`` itself: an
answer is a path in the trie of the legal answers, and its token ``t`` gets

    log q(a_t | a_<t) = log M(a_<=t) - log M(a_<t),

where ``M(s)`` is the total ``p`` of the legal answers that start with ``s`` (``M`` of the empty
prefix is ``Z``). The values sum to ``log q(a) = log p(a) - log Z``, so at ratio 1 the loss's
gradient is exactly the policy gradient of ``q``; tokens every legal answer shares (``<action>``)
get 0 (probability 1 under ``q``: ratio 1, no gradient, no KL), and the token where the answers
part carries the choice. Token-level clipping and TRL's per-token KL estimator then act on ``q``'s
own conditionals, as they act on ``p``'s for free text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

__all__ = [
    "legal_token_logps",
    "sequence_scores",
    "policy_token_logps",
    "full_answer_logps",
    "AnswerScorer",
    "answer_tensors",
    "dummy_score",
]


def answer_tensors(
    answers: Sequence[Sequence[Sequence[int]]], pad_token_id: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return the answers of each row as ``(ids, mask)``, both ``(rows, moves, tokens)``.

    Example:
        >>> ids, mask = answer_tensors([[[5, 6], [5]], []], 0)
        >>> ids.tolist(), mask.tolist()
        ([[[5, 6], [5, 0]], [[0, 0], [0, 0]]], [[[1, 1], [1, 0]], [[0, 0], [0, 0]]])
    """
    moves = max([len(row) for row in answers] + [1])
    width = max([len(a) for row in answers for a in row] + [1])
    # padded as lists, then one tensor each: a tensor per answer cost more than the rest
    no_ids, no_mask = [pad_token_id] * width, [0] * width
    ids, mask = [], []
    for row in answers:
        for answer in row:
            ids.append([*answer, *no_ids[len(answer) :]])
            mask.append([1] * len(answer) + no_mask[len(answer) :])
        ids += [no_ids] * (moves - len(row))
        mask += [no_mask] * (moves - len(row))
    shape = (len(answers), moves, width)
    return (
        torch.tensor(ids, dtype=torch.long).reshape(shape),
        torch.tensor(mask, dtype=torch.long).reshape(shape),
    )


def sequence_scores(token_logps: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Return ``log p`` of each answer, ``(rows, moves)``; ``-inf`` where a row has no such move."""
    scores = (token_logps * mask).sum(-1)
    return scores.masked_fill(~mask.bool().any(-1), float("-inf"))


def legal_token_logps(
    token_logps: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor, choice: torch.Tensor
) -> torch.Tensor:
    """Return ``log q(a_t | a_<t)`` of each row's chosen answer, ``(rows, tokens)``.

    Args:
        token_logps: ``log p`` of every token of every legal answer, ``(rows, moves, tokens)``.
        ids: The answers' token ids, same shape.
        mask: 1 on the answers' tokens, 0 on padding, same shape.
        choice: Index of each row's chosen answer among its moves, ``(rows,)``.

    Returns:
        The renormalised policy's token log-probabilities of the chosen answer (0 past its end);
        they sum to ``log p(a) - logsumexp_b log p(b)``.

    Example:
        >>> ids = torch.tensor([[[1, 2], [1, 3]]])  # two answers that part at their 2nd token
        >>> logps = torch.log(torch.tensor([[[0.5, 0.2], [0.5, 0.6]]]))
        >>> out = legal_token_logps(logps, ids, torch.ones_like(ids), torch.tensor([0]))
        >>> [round(float(v), 4) for v in out.exp()[0]]  # the shared token, then 0.1 / 0.4
        [1.0, 0.25]
    """
    rows = torch.arange(ids.size(0), device=ids.device)
    valid = mask.bool()
    chosen_ids, chosen_mask = ids[rows, choice], valid[rows, choice]
    # share[r, b, t]: answer b agrees with the chosen one on tokens 0..t; the chosen answer is
    # marked beyond its end too, so every prefix mass is finite (no -inf - -inf below)
    same = (ids == chosen_ids[:, None, :]) & valid & chosen_mask[:, None, :]
    share = torch.cumprod(same.long(), dim=-1).bool()
    share[rows, choice] = True
    scores = sequence_scores(token_logps, mask)
    log_mass = torch.logsumexp(scores[:, :, None].masked_fill(~share, float("-inf")), dim=1)
    log_total = torch.logsumexp(scores, dim=1)
    before = torch.cat([log_total[:, None], log_mass[:, :-1]], dim=1)
    out = log_mass - before
    # the last token closes the answer: what is left of M after longer answers that share it
    last = (chosen_mask.sum(-1) - 1).clamp(min=0)
    tail = scores[rows, choice] - before[rows, last]
    out = out.clone()
    out[rows, last] = tail
    return out * chosen_mask


def _distinct_prompts(
    prompt_ids: torch.Tensor, prompt_mask: torch.Tensor, ids: torch.Tensor
) -> tuple[list[int], list[int]]:
    """Return (the first row of each distinct prompt-and-answers, each row's distinct index)."""
    index: dict[tuple, int] = {}
    firsts, owner = [], []
    for r in range(prompt_ids.size(0)):
        prompt = prompt_ids[r][prompt_mask[r].bool()].tolist()
        key = (tuple(prompt), tuple(ids[r].flatten().tolist()))
        if key not in index:
            index[key] = len(firsts)
            firsts.append(r)
        owner.append(index[key])
    return firsts, owner


def full_answer_logps(
    score: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor],
    prompt_ids: torch.Tensor,
    prompt_mask: torch.Tensor,
    answer_ids: torch.Tensor,
    answer_mask: torch.Tensor,
) -> torch.Tensor:
    """Return ``log p`` of each answer token, ``(prompts, moves, tokens)``, a forward per answer.

    What :func:`~mage_agents.training.answer_logps.cached_answer_logps` gives from one pass
    over each prompt, for models that keep no cache in training (gradient checkpointing).

    Args:
        score: ``score(ids, attention_mask, width)`` returns ``log p`` of the last ``width``
            tokens of each row (TRL's ``_get_per_token_logps_and_entropies``).
        prompt_ids: Left-padded prompts, ``(prompts, length)``.
        prompt_mask: 1 on the prompts' tokens.
        answer_ids: Each prompt's answers, ``(prompts, moves, tokens)``, right-padded.
        answer_mask: 1 on the answers' tokens.
    """
    prompts, moves, width = answer_ids.shape
    sequences = torch.cat(
        [prompt_ids.repeat_interleave(moves, dim=0), answer_ids.flatten(0, 1)], dim=1
    )
    attention = torch.cat(
        [prompt_mask.repeat_interleave(moves, dim=0), answer_mask.flatten(0, 1)], dim=1
    )
    return score(sequences, attention, width).view(prompts, moves, width)


AnswerScorer = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
"""``scorer(prompt_ids, prompt_mask, answer_ids, answer_mask)`` returns ``log p`` of each answer
token, ``(prompts, moves, tokens)``: :func:`full_answer_logps`'s contract."""


def policy_token_logps(
    scorer: AnswerScorer, batch: dict[str, Any], logps: torch.Tensor
) -> torch.Tensor:
    """Return ``logps`` with the legal-choice rows replaced by the renormalised policy's.

    Args:
        scorer: Scores every legal answer after its prompt (:data:`AnswerScorer`), with
            gradient when the loss needs it.
        batch: The rows: ``prompt_ids``, ``prompt_mask`` and, per row, its legal answers
            (``legal_answer_ids``, ``legal_answer_mask``, ``legal_choice``; no answers: a free
            row, kept as it is).
        logps: TRL's token log-probabilities of the completions, ``(rows, tokens)``.

    Returns:
        The log-probabilities TRL's loss should read.
    """
    ids, mask = batch["legal_answer_ids"], batch["legal_answer_mask"]
    legal = mask.flatten(1).any(1)
    if not bool(legal.any()):
        return logps
    rows = legal.nonzero()[:, 0]
    prompts, prompt_mask = batch["prompt_ids"][rows], batch["prompt_mask"][rows]
    firsts, owner = _distinct_prompts(prompts, prompt_mask, ids[rows])
    # each distinct prompt is scored once with every legal answer after it
    unique_ids, unique_mask = ids[rows][firsts], mask[rows][firsts]
    scored = scorer(prompts[firsts], prompt_mask[firsts], unique_ids, unique_mask)
    owner_index = torch.tensor(owner, device=logps.device)
    token_logps = scored[owner_index]
    chosen = legal_token_logps(token_logps, ids[rows], mask[rows], batch["legal_choice"][rows])
    placed = torch.zeros((len(rows), logps.size(1)), dtype=logps.dtype, device=logps.device)
    span = min(chosen.size(1), logps.size(1))
    placed[:, :span] = chosen[:, :span].to(logps.dtype)
    full = torch.zeros_like(logps).index_put((rows,), placed)
    return torch.where(legal[:, None], full, logps)


def dummy_score(
    score: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor],
    batch: dict[str, Any],
    logps: torch.Tensor,
) -> torch.Tensor:
    """Run the renormalising forward on one row and return ``logps`` unchanged in value.

    With several processes that forward is collective (DDP's buffer sync): a process whose rows
    chose no legal move still runs it, on the last token of its first prompt, and adds zero
    times its result, so that its gradient graph has the same forwards as the others'.
    """
    ids = batch["prompt_ids"][:1]
    mask = batch["prompt_mask"][:1]
    scored = score(ids, mask, 1)
    return logps + 0.0 * scored.sum()

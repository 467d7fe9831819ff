"""TRL's loss of a micro-batch, in forwards bounded by tokens, with the same gradient.

With ``max_tokens_per_forward`` the trainer's ``compute_loss`` plans the micro-batch's forwards
(:mod:`.forwards`) and runs TRL's loss on each, backpropagating every forward but the last at
once (its activations are freed before the next forward) and returning the last one for the
training loop's own backward. Each forward's loss is weighted so that their sum is TRL's loss of
the whole micro-batch, term by term, for every ``loss_type``:

* ``dapo``, ``cispo``, ``vespo`` divide by ``num_items_in_batch``, the whole step's loss tokens:
  a forward's loss is already its share (weight 1);
* ``bnpo`` divides by the micro-batch's loss tokens: weight = the forward's share of them;
* ``grpo``, ``sapo``, ``luspo``, ``dr_grpo`` average over the micro-batch's rows: weight = the
  forward's share of its rows (the zero-mask filler rows count, as in TRL's mean);
* TRL's entropy bonus is a mean over the micro-batch's loss tokens (weight: the token share),
  a mixture-of-experts router loss a mean over forwards (weight: the row share).

The forwards before the last are backpropagated as the training loop backpropagates the
micro-batches before the last of an accumulation window: gradient sync deferred
(``accelerator.no_sync``, ``sync_gradients`` off, so DeepSpeed does not step), the same backward
arguments. With several processes every process runs as many forwards, each with as many rows
(:func:`agreed_forwards`): every forward is collective (DDP's buffer sync, FSDP's gathers, TRL's
metric gathers, which take one value per row).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from mage_agents.training.forwards import padding_figures, plan_forwards, row_sizes, rows_of

__all__ = ["Share", "policy_weight", "bounded_loss", "bounded_log_probs", "agreed_forwards"]

TOKEN_MEAN = ("bnpo",)
ROW_MEAN = ("grpo", "sapo", "luspo", "dr_grpo")
STEP_NORMALISED = ("dapo", "cispo", "vespo")


@dataclass(frozen=True)
class Share:
    """A forward's part of its micro-batch.

    Attributes:
        rows: Its rows over the micro-batch's rows.
        tokens: Its loss tokens over the micro-batch's loss tokens.
    """

    rows: float
    tokens: float


def policy_weight(loss_type: str, share: Share) -> float:
    """The weight of a forward's policy (and KL) loss so that the forwards add up to TRL's loss.

    Example:
        >>> share = Share(rows=0.25, tokens=0.5)
        >>> policy_weight("dapo", share), policy_weight("bnpo", share), policy_weight("grpo", share)
        (1.0, 0.5, 0.25)
    """
    if loss_type in STEP_NORMALISED:
        return 1.0
    if loss_type in TOKEN_MEAN:
        return share.tokens
    if loss_type in ROW_MEAN:
        return share.rows
    raise ValueError(f"Unknown loss type: {loss_type}")


def agreed_forwards(trainer: Any, batch: dict[str, Any], budget: int) -> list[list[int]]:
    """The forwards of ``batch`` within ``budget``, with as many rows on every process."""
    accelerator = trainer.accelerator
    agree = None
    if accelerator.num_processes > 1:

        def agree(fit: int) -> int:
            mine = torch.tensor([fit], device=accelerator.device)
            return int(accelerator.gather(mine).min())

    return plan_forwards(row_sizes(batch), budget, agree)


def _loss_mask(inputs: dict[str, Any]) -> torch.Tensor:
    mask = inputs["completion_mask"]
    return mask * inputs["tool_mask"] if "tool_mask" in inputs else mask


@contextlib.contextmanager
def _deferred_sync(trainer: Any, model: Any) -> Iterator[None]:
    """Backpropagate without syncing gradients, as the training loop does within a window."""
    state = trainer.accelerator.gradient_state
    syncing = state.sync_gradients
    state._set_sync_gradients(False)
    if trainer.accelerator.distributed_type.value == "DEEPSPEED":
        context: Any = contextlib.nullcontext()  # DeepSpeed accumulates by sync_gradients
    elif getattr(trainer, "is_distributed_loading_by_transformers", False):
        context = trainer._defer_fsdp_gradient_reduction()
    else:
        context = trainer.accelerator.no_sync(model)
    try:
        with context:
            yield
    finally:
        state._set_sync_gradients(syncing)


def _backward(trainer: Any, model: Any, loss: torch.Tensor) -> None:
    kwargs = {}
    if trainer.accelerator.distributed_type.value == "DEEPSPEED":
        kwargs["scale_wrt_gas"] = False  # as the training loop calls it
    with _deferred_sync(trainer, model):
        trainer.accelerator.backward(loss, **kwargs)


def _weighted(
    trainer: Any, part: dict[str, Any], loss: torch.Tensor, extras: dict[str, Any], share: Share
) -> tuple[torch.Tensor, dict[str, float]]:
    """``loss`` (TRL's, of one forward) re-weighted as a share of its micro-batch's loss."""
    accumulation = trainer.current_gradient_accumulation_steps if trainer.model.training else 1
    w_policy = policy_weight(trainer.loss_type, share)
    mask = _loss_mask(part)
    bonus = loss.new_zeros(())
    if extras["entropy_coef"]:
        entropies = extras["entropies"]
        mean = (entropies * mask).sum() / mask.sum().clamp(min=1.0)
        bonus = extras["entropy_coef"] * mean / accumulation
    aux = loss.new_zeros(())
    if extras["aux_loss"] is not None:
        aux = trainer.router_aux_loss_coef * extras["aux_loss"] / accumulation
    total = w_policy * (loss + bonus - aux) - share.tokens * bonus + share.rows * aux
    terms = dict(extras["terms"])
    for name in ("loss/policy", "loss/kl_penalty"):
        if name in terms:
            terms[name] *= w_policy
    if "loss/entropy_bonus" in terms:
        terms["loss/entropy_bonus"] *= share.tokens
    return total, terms


def bounded_loss(trainer: Any, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
    """Return the micro-batch's loss, its forwards bounded by ``max_tokens_per_forward``.

    Every forward but the last is backpropagated here; the returned loss carries the last one's
    gradient and, detached, the others' values (so the logged ``loss`` is the whole micro-batch's).
    """
    forwards = agreed_forwards(trainer, inputs, trainer.args.max_tokens_per_forward)
    parts = [rows_of(inputs, rows) for rows in forwards]
    shares = [_share(inputs, rows) for rows in forwards]
    done = torch.zeros((), device=trainer.accelerator.device)
    terms: dict[str, float] = {}
    last = None
    for k, (part, share) in enumerate(zip(parts, shares, strict=True)):
        loss, extras = trainer._loss_parts(model, part)
        loss, part_terms = _weighted(trainer, part, loss, extras, share)
        for name, value in part_terms.items():
            terms[name] = terms.get(name, 0.0) + value
        if k < len(parts) - 1:
            _backward(trainer, model, loss)
            done = done + loss.detach()
        else:
            last = loss
    trainer._record_loss_terms(terms)
    trainer._record_forwards(padding_figures(row_sizes(inputs), forwards))
    return last + done


def _share(inputs: dict[str, Any], rows: list[int]) -> Share:
    mask = _loss_mask(inputs)
    tokens = float(mask.sum())
    part = float(mask[torch.as_tensor(rows, device=mask.device)].sum())
    return Share(len(rows) / mask.size(0), part / tokens if tokens else 0.0)


def bounded_log_probs(batch: dict[str, Any], forwards: list[list[int]], score: Any) -> torch.Tensor:
    """Return the token log-probabilities of every row of ``batch``, scored forward by forward.

    Args:
        batch: The rows (a whole generation batch).
        forwards: The rows of each forward (:func:`agreed_forwards`, or chunks of rows).
        score: ``score(part) -> (rows, width)`` log-probabilities of a sub-batch.

    Returns:
        ``(rows, completion width)`` log-probabilities, 0 past each row's completion.
    """
    out = torch.zeros(batch["completion_ids"].shape, device=batch["completion_ids"].device)
    for rows in forwards:
        logps = score(rows_of(batch, rows))
        index = torch.as_tensor(rows, device=out.device)
        out[index, : logps.size(1)] = logps.to(out.dtype)
    return out

"""The loss side of :class:`~mage_agents.training.MetaRLTrainer`: TRL's loss, on the sampled policy.

With legal-move choice the token log-probabilities TRL's loss reads (current, old, reference) are
those of the policy renormalised over the legal moves (:mod:`.legal_logps`), through
``_get_per_token_logps_and_entropies``; with ``max_tokens_per_forward`` the loss and the old and
reference log-probs run in forwards bounded by tokens (:mod:`.bounded_loss`). The loss's named
terms and its forwards are logged per micro-batch.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from trl import GRPOTrainer
from trl.models.utils import disable_gradient_checkpointing
from trl.trainer.utils import use_adapter

from mage_agents.training.answer_logps import answer_scorer
from mage_agents.training.bounded_loss import agreed_forwards, bounded_log_probs, bounded_loss
from mage_agents.training.forwards import single_forward_figures
from mage_agents.training.legal_logps import dummy_score, policy_token_logps
from mage_agents.training.loss_terms import loss_terms

__all__ = ["SampledPolicyLoss"]


class SampledPolicyLoss:
    """Mixed into a ``GRPOTrainer`` subclass, before it: the loss and the log-probs it reads.

    It overrides TRL's ``compute_loss``, ``_compute_loss`` and
    ``_get_per_token_logps_and_entropies``, and adds the old, reference and vLLM
    importance-sampling log-probs of a generated batch (:meth:`_add_log_probs`). The host
    trainer sets ``_loss_batch`` and ``_loss_outputs`` to None and, with several processes,
    ``generation_rounds``.
    """

    def _total(self, values: list[float]) -> list[float]:
        """``values`` summed over the processes."""
        mine = torch.tensor([values], dtype=torch.float64, device=self.accelerator.device)
        return self.accelerator.gather(mine).sum(0).tolist()

    def _largest(self, values: list[float]) -> list[float]:
        """``values``' maxima over the processes."""
        mine = torch.tensor([values], dtype=torch.float64, device=self.accelerator.device)
        return self.accelerator.gather(mine).max(0).values.tolist()

    def _get_per_token_logps_and_entropies(
        self,
        model: Any,
        input_ids: Any,
        attention_mask: Any,
        logits_to_keep: int,
        *args: Any,
        **kwargs: Any,
    ) -> tuple[Any, Any, Any]:
        logps, entropies, aux = super()._get_per_token_logps_and_entropies(
            model, input_ids, attention_mask, logits_to_keep, *args, **kwargs
        )
        batch = self._loss_batch
        if batch is not None:  # TRL's loss is asking: the legal rows get the sampled policy's
            logps = self._policy_logps(model, batch, logps, kwargs.get("batch_size"))
            self._loss_outputs = (logps, entropies, aux)
        return logps, entropies, aux

    def _policy_logps(
        self, model: Any, batch: dict[str, Any], logps: torch.Tensor, batch_size: int | None
    ) -> torch.Tensor:
        """``logps`` with every legal-choice row's replaced by the renormalised policy's."""
        if self.args.action_choice != "legal":
            return logps

        def score(ids: torch.Tensor, mask: torch.Tensor, width: int) -> torch.Tensor:
            return GRPOTrainer._get_per_token_logps_and_entropies(
                self, model, ids, mask, width, batch_size=batch_size
            )[0]

        legal = "legal_answer_mask" in batch and bool(batch["legal_answer_mask"].any())
        if not legal:
            # several processes: every process runs the renormalising forward (it is collective)
            return dummy_score(score, batch, logps) if self.generation_rounds else logps
        scorer = answer_scorer(model, score, self.temperature, batch_size)
        return policy_token_logps(scorer, batch, logps)

    def compute_loss(
        self,
        model: Any,
        inputs: dict[str, Any],
        return_outputs: bool = False,
        num_items_in_batch: Any = None,
    ) -> torch.Tensor:
        """TRL's loss; with ``max_tokens_per_forward``, in forwards bounded by tokens."""
        if self.args.max_tokens_per_forward is None or not torch.is_grad_enabled():
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        return bounded_loss(self, model, inputs)

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
        loss, extras = self._loss_parts(model, inputs)
        self._record_loss_terms(extras["terms"])
        self._record_forwards(single_forward_figures(inputs))
        return loss

    def _loss_parts(self, model: Any, inputs: dict[str, Any]) -> tuple[torch.Tensor, dict]:
        """TRL's loss of ``inputs``, with what went into it (named terms, entropies, aux)."""
        coef = self._applied_entropy_coef()
        self._loss_batch, self._loss_outputs = inputs, None
        try:
            loss = super()._compute_loss(model, inputs)
        finally:
            self._loss_batch = None
        logps, entropies, aux = self._loss_outputs
        terms = loss_terms(self, inputs, loss, logps, entropies, coef, aux)
        return loss, {"terms": terms, "entropies": entropies, "aux_loss": aux, "entropy_coef": coef}

    def _record_loss_terms(self, terms: dict[str, float]) -> None:
        """Log a micro-batch's named loss terms, averaged over the processes as TRL's ``loss``."""
        mode = "train" if self.model.training else "eval"
        scale = self.current_gradient_accumulation_steps if mode == "train" else 1
        names = sorted(terms)
        values = [terms[name] for name in names]
        if self.accelerator.num_processes > 1:
            values = [v / self.accelerator.num_processes for v in self._total(values)]
        for name, value in zip(names, values, strict=True):
            self._metrics[mode][name].append(value * scale)  # in the units of TRL's `loss`

    def _record_forwards(self, figures: dict[str, float]) -> None:
        """Log a micro-batch's forwards: padding efficiency, rows and tokens per forward."""
        mode = "train" if self.model.training else "eval"
        keys = ("useful", "padded", "rows", "forwards")
        values = [figures[k] for k in keys]
        if self.accelerator.num_processes > 1:
            values = self._total(values)
            (largest,) = self._largest([figures["largest"]])
        else:
            largest = figures["largest"]
        useful, padded, rows, forwards = values
        metrics = self._metrics[mode]
        metrics["forward/padding_efficiency"].append(useful / padded if padded else 1.0)
        metrics["forward/rows"].append(rows / forwards if forwards else 0.0)
        metrics["forward/count"].append(forwards / self.accelerator.num_processes)
        metrics["forward/largest_tokens"].append(largest)

    def _applied_entropy_coef(self) -> float:
        """The coefficient of TRL's own entropy bonus in the coming loss (0 when it is off)."""
        if not self._entropy_bonus_enabled:
            return 0.0
        if self.use_adaptive_entropy and self._last_world_entropy > self.args.entropy_target:
            return 0.0
        return float(self.entropy_coef)

    def _needs_old_log_probs(self) -> bool:
        # Without them TRL uses the detached current log-probs: the ratio is 1, clipping never acts.
        every = self.args.steps_per_generation * self.num_iterations
        return (
            self.num_iterations > 1
            or self.args.gradient_accumulation_steps % every != 0
            or (self.use_vllm and self.vllm_importance_sampling_correction)
        )

    def _log_probs(self, model: Any, batch: dict[str, Any], mode: str) -> torch.Tensor:
        size = (
            self.args.per_device_train_batch_size
            if mode == "train"
            else self.args.per_device_eval_batch_size
        )
        budget = self.args.max_tokens_per_forward
        if budget is None and self.accelerator.num_processes == 1:
            return self._scored(model, batch, size)
        if budget is None:  # TRL's chunks of rows (the processes' rows are as many)
            rows = batch["prompt_ids"].size(0)
            forwards = [list(range(k, min(k + size, rows))) for k in range(0, rows, size)]
        else:
            forwards = agreed_forwards(self, batch, budget)
        return bounded_log_probs(batch, forwards, lambda part: self._scored(model, part))

    def _scored(self, model: Any, batch: dict[str, Any], size: int | None = None) -> torch.Tensor:
        """The log-probabilities TRL's loss reads of the completions of ``batch``."""
        ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
        mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
        logps, _, _ = super()._get_per_token_logps_and_entropies(
            model, ids, mask, batch["completion_ids"].size(1), batch_size=size
        )
        return self._policy_logps(model, batch, logps, size)

    def _add_log_probs(self, batch: dict[str, Any], mode: str) -> None:
        """Add the old, reference and vLLM importance-sampling terms TRL's loss reads."""
        checkpointing = self.args.gradient_checkpointing_kwargs
        with torch.no_grad(), disable_gradient_checkpointing(self.model, checkpointing):
            old = self._log_probs(self.model, batch, mode) if self._needs_old_log_probs() else None
            if old is not None:
                batch["old_per_token_logps"] = old
            if self.beta != 0.0:
                batch["ref_per_token_logps"] = self._reference_log_probs(batch, mode)
        if self.use_vllm and self.vllm_importance_sampling_correction:
            # TRL's loss reads a ratio whenever the correction is on: a batch whose sampler
            # gave no log-probabilities has NaN ones, ratio 1
            sampled = batch.get("sampling_per_token_logps", torch.full_like(old, math.nan))
            batch["importance_sampling_ratio"] = self._importance_ratio(old, sampled, batch)

    def _reference_log_probs(self, batch: dict[str, Any], mode: str) -> torch.Tensor:
        if self.ref_model is not None:
            return self._log_probs(self.ref_model, batch, mode)
        # a PEFT adapter: the base model is the reference (or a "ref" copy of a re-trained one)
        model = self.accelerator.unwrap_model(self.model)
        with use_adapter(model, adapter_name="ref" if "ref" in model.peft_config else None):
            return self._log_probs(self.model, batch, mode)

    def _importance_ratio(
        self, old: torch.Tensor, sampled: torch.Tensor, batch: dict[str, Any]
    ) -> torch.Tensor:
        """TRL's vLLM importance-sampling correction, in its configured mode (NaN: ratio 1)."""
        diff = torch.nan_to_num((old - sampled) * batch["completion_mask"], nan=0.0)
        mode = self.vllm_importance_sampling_mode
        ratio = torch.exp(diff.sum(dim=-1, keepdim=True) if mode.startswith("sequence") else diff)
        low = self.vllm_importance_sampling_clip_min
        high = self.vllm_importance_sampling_clip_max
        if mode.endswith("truncate"):
            return torch.clamp(ratio, min=low, max=high)
        low = -math.inf if low is None else low
        high = math.inf if high is None else high
        return ratio.masked_fill((ratio < low) | (ratio > high), 0.0)

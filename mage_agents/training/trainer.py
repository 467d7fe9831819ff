"""``MetaRLTrainer``: TRL's ``GRPOTrainer`` with trials as rollouts and one sample per model turn.

Only generation and scoring are overridden (``_generate_and_score_completions``):

1. each dataset row is a task (its ``seed`` column); TRL's sampler repeats it ``num_generations``
   times in a row, and those consecutive rows are one group of trials of the same task;
2. the rollout engine (:func:`mage_agents.rollout.collect`) plays every trial with the policy
   being trained (:class:`~mage_agents.training.generation.TrainerBackend`);
3. the chosen estimator (:mod:`mage_agents.advantages`) gives every model turn, act or reflect,
   its own advantage, and each turn becomes one sample row;
4. the rows are padded to a multiple of ``steps_per_generation`` (TRL's split drops a remainder),
   with the old, reference and importance-sampling log-probs TRL's loss needs in this setting.

With legal-move choice the token log-probabilities TRL's loss reads (current, old, reference)
are those of the policy renormalised over the legal moves (:mod:`.legal_logps`), through
``_get_per_token_logps_and_entropies``. A step's sampling draws from its own random stream
(:mod:`.streams`). TRL does everything else: the loss and its clipping, KL, PEFT/LoRA, gradient
accumulation, bf16, ``report_to``, checkpoints and resume, accelerate, ``use_vllm``.
"""

from __future__ import annotations

import json
import math
import zlib
from pathlib import Path
from typing import Any

import torch
from accelerate.utils import gather_object
from trl import GRPOTrainer
from trl.models.utils import disable_gradient_checkpointing
from trl.trainer.utils import use_adapter

from mage_agents.advantages import config_settings, estimate, is_stateful
from mage_agents.prompting import LLMAgent
from mage_agents.rollout import TrialPlan, collect
from mage_agents.rollout.envs import WorkerEnvs
from mage_agents.rollout.self_play import split_batch
from mage_agents.training.answer_logps import answer_scorer
from mage_agents.training.batch import TurnRow, turn_batch
from mage_agents.training.bounded_loss import agreed_forwards, bounded_log_probs, bounded_loss
from mage_agents.training.config import MetaRLConfig
from mage_agents.training.forwards import single_forward_figures
from mage_agents.training.generation import TrainerBackend
from mage_agents.training.generation_rounds import GenerationRounds, accelerator_exchange
from mage_agents.training.league import (
    LEAGUE_STATE_FILE,
    League,
    adapter_base,
    league_plans,
    take_snapshot,
)
from mage_agents.training.legal import LegalMoveAgent, LegalMoveBackend
from mage_agents.training.legal_logps import dummy_score, policy_token_logps
from mage_agents.training.loss_terms import loss_terms
from mage_agents.training.metrics import step_metrics, trial_record
from mage_agents.training.streams import random_stream, stream_seed
from mage_agents.training.trials import check_trials, trial_planner
from mage_agents.training.trl_contract import trl_contract_problems

__all__ = ["MetaRLTrainer", "task_dataset"]

STATE_FILE = "meta_rl_state.json"
"""Written into every checkpoint: the trainer's own state (best evaluation so far, TRL's count of
micro-steps, which places the step within its generation)."""

ESTIMATOR_STATE_FILE = "estimator_state_{}.json"
"""Written, per process, into every checkpoint of a run whose estimator keeps state (rae's
baselines, computed from that process's trials)."""

BUFFER_FILE = "generation_buffer_{}.pt"
"""Written, per process, into a checkpoint taken between the steps of one generation
(``steps_per_generation > 1``): the rest of its batch, which TRL keeps only in memory, so the
resumed run trains on what the uninterrupted one would."""


def task_dataset(config: MetaRLConfig, count: int | None = None, first: int | None = None) -> Any:
    """Return the dataset of tasks: one row per task seed (and the ``prompt`` TRL expects)."""
    from datasets import Dataset

    first = config.task_seed if first is None else first
    seeds = list(range(first, first + (config.num_tasks if count is None else count)))
    return Dataset.from_dict({"prompt": [f"task {s}" for s in seeds], "seed": seeds})


def _rewards_come_from_trials(prompts: Any, completions: Any, **kwargs: Any) -> list[float]:
    raise RuntimeError("MetaRLTrainer scores turns in its trials: this reward is never called.")


class MetaRLTrainer(GRPOTrainer):
    """Trains a language model on meta-RL trials with LaMer, MAGE, GRPO, RLOO or GiGPO.

    Args:
        model: A local model directory, or a loaded causal LM (nothing is downloaded).
        args: The :class:`~mage_agents.training.MetaRLConfig`.
        train_dataset: Rows with a ``seed`` column (default: :func:`task_dataset`).
        processing_class: The tokenizer (loaded from ``model`` when it is a path).
        peft_config: A PEFT config (e.g. ``LoraConfig``) to train an adapter.
        callbacks: Extra ``transformers`` callbacks.

    Raises:
        RuntimeError: If the installed TRL changed the methods this trainer relies on.
        ValueError: For a setting it cannot honour (a model that is not a local directory, a KL
            term without a reference, ``mask_truncated_completions``), or trials that cannot be
            made (an unknown env id, env keyword or opponent), before the model loads.
    """

    def __init__(
        self,
        model: Any,
        args: MetaRLConfig,
        train_dataset: Any = None,
        processing_class: Any = None,
        peft_config: Any = None,
        callbacks: list | None = None,
    ) -> None:
        problems = trl_contract_problems()
        if problems:
            raise RuntimeError(
                "This TRL is not the one MetaRLTrainer was written for (pin trl in pyproject): "
                + " ".join(problems)
            )
        if not isinstance(args, MetaRLConfig):
            raise TypeError(f"args must be a MetaRLConfig, not {type(args).__name__}.")
        check_trials(args)
        if isinstance(model, Path):
            model = str(model)  # TRL takes a directory as a str only
        if isinstance(model, str) and not (Path(model) / "config.json").is_file():
            raise ValueError(
                f"{model} is not a local model directory (no config.json): pass a folder saved "
                "with save_pretrained, or a loaded model. Nothing is downloaded."
            )
        if args.mask_truncated_completions:
            # TRL's rule (no end token: truncated) would mask every turn ended by its stop string
            raise ValueError(
                "mask_truncated_completions is not supported by MetaRLTrainer: its turns end at "
                "their answer's stop string, not at an end token. Leave it False."
            )
        if args.beta != 0 and peft_config is None and not isinstance(model, str):
            if not getattr(getattr(model, "config", None), "_name_or_path", ""):
                raise ValueError(
                    "beta != 0 needs a reference model, which TRL loads from the model's "
                    "directory, and this model was built in code: save_pretrained() it and pass "
                    "the directory, train a LoRA adapter (peft_config), or set beta=0."
                )
        super().__init__(
            model=model,
            reward_funcs=_rewards_come_from_trials,
            args=args,
            train_dataset=task_dataset(args) if train_dataset is None else train_dataset,
            processing_class=processing_class,
            peft_config=peft_config,
            callbacks=callbacks,
        )
        if args.league_every:
            adapter_base(self.accelerator.unwrap_model(self.model))  # refuses a base built in code
        self.generation_rounds = None  # several processes: their generation calls kept in step
        if self.accelerator.num_processes > 1:
            self._check_processes()
            exchange = accelerator_exchange(self.accelerator)
            self.generation_rounds = GenerationRounds(exchange, pad_to_largest=self.use_vllm)
        self.backend = TrainerBackend(self)
        if self.use_vllm:  # vLLM stops at the answer tags itself instead of running on
            extra = self.vllm_generation.generation_kwargs
            extra.setdefault("stop", list(self.backend.stop_strings))
            extra.setdefault("include_stop_str_in_output", True)
        if args.action_choice == "legal":
            self.backend = LegalMoveBackend(self, self.backend)
        self.best: dict[str, Any] | None = None
        self.estimator_state: dict[str, Any] = {}  # a stateful estimator's (rae's baselines)
        self.league = League()  # the kept snapshots of the learner (league_every > 0)
        self._workers: WorkerEnvs | None = None  # one pool for the whole run, not per step
        self._loss_batch: dict[str, Any] | None = None  # the micro-batch the loss is reading
        self._loss_outputs: tuple | None = None
        if args.evaluation_steps:
            from mage_agents.training.evaluation import EvaluationCallback

            self.add_callback(EvaluationCallback(self))

    # -- rollouts ------------------------------------------------------------------------------

    def new_agent(self) -> LLMAgent:
        """Return an agent that plays with the policy being trained."""
        if self.args.action_choice == "legal":
            return LegalMoveAgent(self.backend, self.args.strategy)
        return LLMAgent(self.backend, self.args.strategy)

    def plan(
        self,
        seeds: list[int],
        group_size: int,
        tag: str,
        first_row: int = 0,
        *,
        evaluation: bool = False,
    ) -> list[TrialPlan]:
        """Plan one trial per entry of ``seeds``; each ``group_size`` consecutive ones a group.

        The trials are the config's (:func:`~mage_agents.training.trials.trial_planner`; with
        ``evaluation``, on ``evaluation_env_kwargs``); rows are ``{tag}|row{i}`` and group ``g``
        is scoped ``{tag}|group{g}``, so two groups of one batch are never compared, even on the
        same task. The agent seeds follow the planner's rule with the run's seed and the step's
        tag as process 0 writes it as their stream: the same trials whatever the number of
        processes. ``first_row`` is the position of ``seeds[0]`` in the step's rows of all
        processes (row ids count over the processes).
        """
        step, process, _ = tag.partition("|p")
        stream = zlib.crc32((f"{step}|p0" if process else tag).encode())  # process 0's tag
        planner = trial_planner(self.args, evaluation=evaluation, stream=(self.args.seed, stream))
        plans = []
        for j, seed in enumerate(seeds):
            group = j // group_size
            start = group * group_size
            if seed != seeds[start]:
                raise ValueError(
                    f"Rows {start}..{start + group_size - 1} should repeat one task (TRL's "
                    f"sampler repeats each row num_generations times) but hold the seeds "
                    f"{sorted(set(seeds[start : start + group_size]))}."
                )
            trial_id, scope = f"{tag}|row{first_row + j}", f"{tag}|group{group}"
            plans.append(planner.plan(seed, j - start, trial_id=trial_id, scope=scope))
        return plans

    def play(self, plans: list[TrialPlan]) -> list[Any]:
        """Play the planned trials with the current policy; return their trajectories."""
        if self.args.env_workers and self._workers is None:
            self._workers = WorkerEnvs(self.args.env_workers)
        trajectories = collect(
            plans,
            self.new_agent,
            batch_size=max(1, len(plans)),
            max_steps=self.args.max_turns,
            env_workers=self._workers or 0,
        )
        if self.generation_rounds is not None:
            self.backend.drain()  # the other processes' trials may still be playing
        return trajectories

    def _check_processes(self) -> None:
        """Refuse what several processes cannot run; say why."""
        if self.args.action_choice != "legal":
            return
        zero3 = (
            self.is_deepspeed_enabled
            and getattr(self.accelerator.state.deepspeed_plugin, "zero_stage", 0) == 3
        )
        if self.is_fsdp_enabled or zero3:
            raise ValueError(
                "action_choice='legal' scores the legal moves with the unwrapped model, one "
                "forward per process whenever it has moves to score: under FSDP or DeepSpeed "
                "ZeRO-3 those forwards gather parameters collectively and would not be matched. "
                "Train a model that size with generate (the published setting), or use DDP "
                "(or ZeRO-1/2)."
            )

    def _total(self, values: list[float]) -> list[float]:
        """``values`` summed over the processes."""
        mine = torch.tensor([values], dtype=torch.float64, device=self.accelerator.device)
        return self.accelerator.gather(mine).sum(0).tolist()

    def _largest(self, values: list[float]) -> list[float]:
        """``values``' maxima over the processes."""
        mine = torch.tensor([values], dtype=torch.float64, device=self.accelerator.device)
        return self.accelerator.gather(mine).max(0).values.tolist()

    def by_seat(self, trajectories: list[Any]) -> list[Any]:
        """In self-play, each game as one trajectory per seat (its turns, reward and role).

        See :func:`~mage_agents.rollout.self_play.split_seats`; otherwise ``trajectories``.
        """
        return split_batch(trajectories) if self.args.self_play else trajectories

    # -- the override --------------------------------------------------------------------------

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        mode = "train" if self.model.training else "eval"
        group = self.num_generations if mode == "train" else self.num_generations_eval
        seeds = [int(row["seed"]) for row in inputs]
        # a step that accumulates several generations (gradient_accumulation_steps larger than
        # steps_per_generation) gives each its own stream and trial ids; the first keeps the step's
        micro = self._step % self.args.gradient_accumulation_steps if mode == "train" else 0
        step = (self.state.global_step, micro) if micro else (self.state.global_step,)
        process = self.accelerator.process_index
        tag = f"{mode}{'.'.join(map(str, step))}|p{process}"
        legal = isinstance(self.backend, LegalMoveBackend)
        if legal:
            self.backend.clear()  # the sampling records of this batch only
        seed = stream_seed(self.args.seed, "rollout", *step, process)
        league = mode == "train" and self.args.league_every > 0
        if league:
            take_snapshot(self)
        with random_stream(seed):
            plans = self.plan(seeds, group, tag, process * len(seeds), evaluation=mode == "eval")
            if league:
                first = process * len(seeds)
                plans = league_plans(self.league, plans, group, self.args, step, first)
            trajectories = self.by_seat(self.play(plans))
        if league:
            self.league.count(trajectories)
        total = self._total if self.accelerator.num_processes > 1 else None
        advantages = self.advantages(trajectories, total)
        if legal:
            advantages = self.backend.adjust(trajectories, advantages, total)
        rows = [
            self._row(turn, float(value))
            for trajectory, values in zip(trajectories, advantages, strict=True)
            for turn, value in zip(trajectory.turns, values, strict=True)
        ]
        multiple = self.args.steps_per_generation if mode == "train" else 1
        at_least = 0
        if total:  # as many rows on every process (TRL gathers a value per row)
            (at_least,) = self._largest([float(sum(1 for r in rows if r.completion_ids))])
        batch = turn_batch(
            rows,
            self.processing_class.pad_token_id,
            multiple,
            self.accelerator.device,
            int(at_least),
        )
        batch["num_items_in_batch"] = self.accelerator.gather(batch["num_items_in_batch"]).sum()
        self._add_log_probs(batch, mode)
        records = [trial_record(t, a) for t, a in zip(trajectories, advantages, strict=True)]
        for name, value in step_metrics(gather_object(records)).items():
            self._metrics[mode][name].append(value)
        (count,) = self._total([float(len(rows))]) if total else (float(len(rows)),)
        self._metrics[mode]["rows"].append(count)
        if legal:
            for name, value in self.backend.sampling_metrics(trajectories, total).items():
                self._metrics[mode][name].append(value)
        return batch

    def advantages(self, trajectories: list[Any], total: Any = None) -> list[Any]:
        """One advantage per turn of each trajectory, from the configured estimator.

        ``scale_advantages`` chooses the normalisation: ``"default"`` keeps each method's
        published one (GRPO divides by the group std; GiGPO, LaMer and MAGE centre only; RLOO is
        leave-one-out), ``"group"`` divides by the group std, ``"none"`` centres only, and
        ``"batch"`` centres within groups and divides by the std of all the batch's rows.
        ``total`` sums numbers over the processes of a run: with it, that std is of every
        process's rows (each process holds whole groups).
        """
        args = self.args
        settings = config_settings(args.estimator, args)
        if is_stateful(args.estimator):
            settings["state"] = self.estimator_state
        batch_std = args.scale_advantages == "batch"
        return estimate(args.estimator, trajectories, batch_std=batch_std, pooled=total, **settings)

    def _row(self, turn: Any, advantage: float) -> TurnRow:
        """The sample row of one model turn (with its legal answers, if it chose among them)."""
        sample = self.backend.sample_of(turn) if hasattr(self.backend, "sample_of") else None
        return TurnRow(
            turn.prompt_ids or [],
            turn.completion_ids or [],
            advantage,
            turn.logprobs if self.use_vllm else None,
            answers=sample.answers if sample is not None else (),
            choice=sample.choice if sample is not None else -1,
        )

    # -- the loss reads the sampled policy -----------------------------------------------------

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
        sampled = batch.get("sampling_per_token_logps")
        if self.use_vllm and self.vllm_importance_sampling_correction and sampled is not None:
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
        """TRL's vLLM importance-sampling correction, in its configured mode."""
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

    # -- state that survives resume ------------------------------------------------------------

    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        # ours first: TRL's trainer_state.json, written last, marks a checkpoint complete
        folder = Path(self._get_output_dir(trial=trial)) / f"checkpoint-{self.state.global_step}"
        folder.mkdir(parents=True, exist_ok=True)
        generate_every = self.args.steps_per_generation * self.num_iterations
        if self._buffered_inputs is not None and self._step % generate_every != 0:
            buffer = folder / BUFFER_FILE.format(self.accelerator.process_index)
            torch.save(self._buffered_inputs, buffer)
        if is_stateful(self.args.estimator):
            estimator = folder / ESTIMATOR_STATE_FILE.format(self.accelerator.process_index)
            estimator.write_text(json.dumps(self.estimator_state, indent=1))
        if self.args.league_every:
            league = folder / LEAGUE_STATE_FILE.format(self.accelerator.process_index)
            league.write_text(self.league.to_json())
        if self.args.should_save:
            state = {"best": self.best, "micro_step": self._step}
            (folder / STATE_FILE).write_text(json.dumps(state, indent=1))
        super()._save_checkpoint(model, trial)

    def _restore(self, checkpoint: Path) -> None:
        """Restore what TRL's checkpoint lacks (best so far, generation, estimator, league)."""
        if (checkpoint / STATE_FILE).is_file():
            state = json.loads((checkpoint / STATE_FILE).read_text())
            self.best = state["best"]
            self._step = int(state.get("micro_step", 0))  # TRL restarts it at 0
        estimator = checkpoint / ESTIMATOR_STATE_FILE.format(self.accelerator.process_index)
        if estimator.is_file():
            self.estimator_state = json.loads(estimator.read_text())
        league = checkpoint / LEAGUE_STATE_FILE.format(self.accelerator.process_index)
        if league.is_file():
            self.league = League.from_json(league.read_text())
        buffer = checkpoint / BUFFER_FILE.format(self.accelerator.process_index)
        if buffer.is_file():
            device = self.accelerator.device
            self._buffered_inputs = torch.load(buffer, map_location=device, weights_only=True)

    def train(self, resume_from_checkpoint: str | bool | None = None, **kwargs: Any) -> Any:
        """Train (see ``transformers.Trainer.train``); a resumed run restores our state too."""
        checkpoint = resume_from_checkpoint
        if checkpoint is True:
            from transformers.trainer_utils import get_last_checkpoint

            checkpoint = get_last_checkpoint(self.args.output_dir)
        if checkpoint:
            self._restore(Path(checkpoint))
        try:
            return super().train(resume_from_checkpoint=resume_from_checkpoint, **kwargs)
        finally:
            if self._workers is not None:
                self._workers.close()
                self._workers = None

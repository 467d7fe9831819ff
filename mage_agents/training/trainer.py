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

The loss side, which makes TRL's loss read the sampled policy (with legal-move choice, the
policy renormalised over the legal moves), is :mod:`.policy_loss`; what a checkpoint keeps beyond
TRL's own is :mod:`.resume_state`. A step's sampling draws from its own random stream
(:mod:`.streams`). TRL does everything else: the loss and its clipping, KL, PEFT/LoRA, gradient
accumulation, bf16, ``report_to``, checkpoints and resume, accelerate, ``use_vllm``.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

from accelerate.utils import gather_object
from trl import GRPOTrainer

from mage_agents.advantages import config_settings, estimate, is_stateful
from mage_agents.placement import hub_kernels_allowed
from mage_agents.prompting import LLMAgent
from mage_agents.rollout import TrialPlan, collect
from mage_agents.rollout.envs import LocalEnvs, WorkerEnvs
from mage_agents.rollout.self_play import split_batch
from mage_agents.training.batch import TurnRow, turn_batch
from mage_agents.training.config import MetaRLConfig
from mage_agents.training.generation import TrainerBackend
from mage_agents.training.generation_rounds import GenerationRounds, accelerator_exchange
from mage_agents.training.league import (
    League,
    adapter_base,
    check_league_scheme,
    league_plans,
    take_snapshot,
)
from mage_agents.training.legal import LegalMoveAgent, LegalMoveBackend
from mage_agents.training.metrics import step_metrics, trial_record
from mage_agents.training.policy_loss import SampledPolicyLoss
from mage_agents.training.resume_state import ResumableState
from mage_agents.training.streams import random_stream, stream_seed
from mage_agents.training.trials import check_trials, trial_planner
from mage_agents.training.trl_contract import trl_contract_problems
from mage_agents.training.vllm_weights import sync_by_reload_on_cpu

__all__ = ["MetaRLTrainer", "task_dataset"]


def task_dataset(config: MetaRLConfig, count: int | None = None, first: int | None = None) -> Any:
    """Return the dataset of tasks: one row per task seed (and the ``prompt`` TRL expects)."""
    from datasets import Dataset

    first = config.task_seed if first is None else first
    seeds = list(range(first, first + (config.num_tasks if count is None else count)))
    return Dataset.from_dict({"prompt": [f"task {s}" for s in seeds], "seed": seeds})


def _rewards_come_from_trials(prompts: Any, completions: Any, **kwargs: Any) -> list[float]:
    raise RuntimeError("MetaRLTrainer scores turns in its trials: this reward is never called.")


class MetaRLTrainer(ResumableState, SampledPolicyLoss, GRPOTrainer):
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
        if args.league_every:
            check_league_scheme()
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
        with hub_kernels_allowed(args.hub_kernels):  # TRL loads the KL reference (and a path)
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
            sync_by_reload_on_cpu(self.vllm_generation)
            extra = self.vllm_generation.generation_kwargs
            extra.setdefault("stop", list(self.backend.stop_strings))
            extra.setdefault("include_stop_str_in_output", True)
        if args.action_choice == "legal":
            self.backend = LegalMoveBackend(self, self.backend)
        self.best: dict[str, Any] | None = None
        self.estimator_state: dict[str, Any] = {}  # a stateful estimator's (rae's baselines)
        self.league = League()  # the kept snapshots of the learner (league_every > 0)
        # One pool for the whole run, not per step: worker processes start once, and envs are
        # built once and reset with each trial's task seed.
        self._workers: WorkerEnvs | LocalEnvs | None = None
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
        if self._workers is None:
            workers = self.args.env_workers
            self._workers = WorkerEnvs(workers) if workers else LocalEnvs()
        trajectories = collect(
            plans,
            self.new_agent,
            batch_size=max(1, len(plans)),
            max_steps=self.args.max_turns,
            env_workers=self._workers,
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
        leave-one-out; RAE centres each score on its role's moving baseline, with no group and
        no std), ``"group"`` divides by the group std, ``"none"`` centres only, and ``"batch"``
        divides every advantage the estimator returns by the std of all the batch's rows,
        without re-centring (a grouped estimator's values are centred within their groups; RAE's
        only on their roles' baselines).
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

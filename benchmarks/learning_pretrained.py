"""Part 4 of the learning benchmark: a real pretrained model learns on a CPU.

SmolLM2-135M-Instruct (fetched once with ``python -m baselines.models get smollm2-135m``) trains
a LoRA adapter through :class:`~mage_agents.training.MetaRLTrainer` on MAGE's published Kuhn poker
page (``templates: mage``, strategy ``paper``: the page alone as the user message), writing free
text (``action_choice: generate``), the reply read by our tolerant rule (``grpo-mage-rules``:
by MAGE's, ``PASS`` or ``BET`` upper-case in the first ``<action>`` tag). The learner sits
second, as in MAGE's evaluation.

Measured before training and at the end, on held-out tasks (seeds from :data:`EVAL_SEED`, never
trained on), with MAGE's evaluation sampling (temperature 0.7, top_p 0.8, top_k 20): 3-episode
trials replaying one deal with the earlier episodes in memory, stopping at the first win, against
each training style and MAGE's held-out CFR opponent; per trial the invalid-answer share, each
episode's return and pass@k. Every ``every`` steps, the exact value of the model's policy
(:func:`~mage_agents.training.kuhn_policy.kuhn_exact_evaluation`: its probability of writing each
legal answer right after the page, greedy and as a mixed policy) and ``legal_mass``, how much of
its probability those answers hold (the rest is other text).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from benchmarks.learning_common import cpu_seconds

__all__ = ["VARIANTS", "EVAL_SEED", "EVAL_SAMPLING", "build_trainer", "evaluate"]
__all__ += ["exact_policy", "PretrainedScore", "run_one"]

EVAL_SEED = 50_000
"""First held-out task seed (training draws from 0)."""

EVAL_SAMPLING = {"temperature": 0.7, "top_p": 0.8, "top_k": 20}
"""MAGE's evaluation sampling (examples/kuhnpoker/mage.sh)."""

OPPONENTS = ("conservative", "aggressive", "balanced", "cfr-argmax")
"""Scored opponents: MAGE's training styles and its held-out evaluation opponent."""

_ENV = {
    "seat": "second",
    "reward_scale": 5,
    # Our tolerant reading of the reply (a move named anywhere in it counts, PASS and BET among
    # the names), not MAGE's: under MAGE's rule (only ``<action>PASS</action>`` or
    # ``<action>BET</action>``) the untrained model wrote no valid answer in 48 held-out trials,
    # so every reward of a group was the same forfeit and GRPO had nothing to learn from.
    "answer_rules": "ours",
    "max_episode_steps": 6,
    # A forfeit (the game's worst payoff, -10) after two invalid answers in a row: MAGE lets an
    # attempt run 6 turns of invalid answers, which a model that starts 80% invalid pays for
    # in CPU time; two in a row keeps every hand at most four turns.
    "max_invalid_actions": 2,
}

_GRPO = {
    "model": "smollm2-135m",
    "lora": {"r": 8, "lora_alpha": 16, "lora_dropout": 0.0, "target_modules": "all-linear"},
    "estimator": "grpo",
    "env_id": "mage/KuhnPoker-v0",
    "env_kwargs": _ENV,
    "opponent": "mage-kuhn-train",
    "trial": {
        "num_episodes": 1,
        "reflection": False,
        "memory": "history_only",
        "templates": "mage",
    },
    "strategy": "paper",
    "action_choice": "generate",
    "invalid_action_penalty": 2.0,  # MAGE's Kuhn code
    "num_generations": 4,
    "per_device_train_batch_size": 2,  # x steps_per_generation = 8 hands, 2 deals x 4
    "steps_per_generation": 4,
    "gradient_accumulation_steps": 4,  # one optimizer step per generation
    "gradient_checkpointing": True,  # ~5 GB instead of ~15 GB at 4 rows a forward
    "max_completion_length": 32,
    "temperature": 1.0,
    "learning_rate": 3e-4,
    "lr_scheduler_type": "constant",
    "beta": 0.0,
}

VARIANTS: dict[str, dict[str, Any]] = {
    "grpo": _GRPO,
    "grpo-mage-rules": {**_GRPO, "env_kwargs": {**_ENV, "answer_rules": "mage"}},
    "mage": {
        **_GRPO,
        "estimator": "mage",
        "trial": {**_GRPO["trial"], "num_episodes": 3, "same_task": True, "stop_on_success": True},
        "per_device_train_batch_size": 1,  # x 4 = 4 trials of 3 hands, about the same rows
    },
}
"""Variant name -> settings (``model`` and ``lora`` are the model's, the rest MetaRLConfig's)."""


def build_trainer(settings: dict[str, Any], seed: int, out: Any, callbacks: list) -> Any:
    """Return a :class:`MetaRLTrainer` training a LoRA adapter on the pretrained model."""
    from peft import LoraConfig

    from mage_agents.model_files import load_pretrained
    from mage_agents.training import MetaRLConfig, MetaRLTrainer

    settings = dict(settings)
    model, tokenizer = load_pretrained(settings.pop("model"), dtype="auto")
    lora = LoraConfig(task_type="CAUSAL_LM", **settings.pop("lora"))
    config = MetaRLConfig(
        output_dir=str(out),
        seed=seed,
        max_steps=10_000,  # the callback stops the run (budget or step limit)
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        disable_tqdm=True,
        use_cpu=True,
        **settings,
    )
    return MetaRLTrainer(
        model, config, processing_class=tokenizer, peft_config=lora, callbacks=callbacks
    )


def evaluate(trainer: Any, tasks: int, batch: int = 12) -> list[dict[str, Any]]:
    """Play ``tasks`` held-out 3-episode trials per opponent; return one record per trial.

    Each record: ``opponent``, ``seed``, ``returns`` (per episode played), ``pass_at_k``,
    ``invalid`` and ``plays`` (invalid answers and play turns).
    """
    from dataclasses import replace

    from mage_agents.rollout import TrialPlan, collect
    from mage_agents.training.streams import random_stream, stream_seed

    args = trainer.args
    trial = replace(args.trial, num_episodes=3, same_task=True, stop_on_success=True)
    plans = [
        TrialPlan(
            trial_id=f"heldout|{opponent}|{seed}",
            group_id=f"heldout|{opponent}|{seed}",
            env_id=args.env_id,
            task_seed=seed,
            seed=seed,
            opponent=opponent,
            env_kwargs=dict(args.env_kwargs),
            trial=trial,
        )
        for opponent in OPPONENTS
        for seed in range(EVAL_SEED, EVAL_SEED + tasks)
    ]
    was_training = trainer.model.training
    trainer.model.eval()
    try:
        scoring = random_stream(stream_seed(args.seed, "scoring"))
        with scoring, trainer.backend.sampling(**EVAL_SAMPLING):
            trajectories = collect(plans, trainer.new_agent, batch_size=batch)
    finally:
        trainer.model.train(was_training)
    records = []
    for plan, trajectory in zip(plans, trajectories, strict=True):
        plays = [t for t in trajectory.turns if t.phase == "play"]
        records.append(
            {
                "opponent": plan.opponent,
                "seed": plan.task_seed,
                "returns": [float(r) for r in trajectory.result.returns],
                "pass_at_k": [float(p) for p in trajectory.result.pass_at_k],
                "invalid": sum(t.invalid for t in plays),
                "plays": len(plays),
            }
        )
    return records


def exact_policy(trainer: Any) -> dict[str, float]:
    """Return the exact Kuhn figures of the model's answer policy at each opponent, seat second."""
    from dataclasses import replace

    from mage_agents.training.kuhn_policy import kuhn_exact_evaluation

    args = trainer.args
    settings: dict[str, Any] = {k: v for k, v in args.env_kwargs.items() if k != "seat"}
    settings["config"] = replace(args.trial, num_episodes=1, seat_rotation=None)
    return kuhn_exact_evaluation(
        trainer.accelerator.unwrap_model(trainer.model),
        trainer.processing_class,
        list(OPPONENTS),
        [1],
        strategy=args.strategy,
        answer_template=_page_answer(args.env_kwargs),
        chat_template_kwargs=trainer.chat_template_kwargs,
        temperature=trainer.temperature,
        **settings,
    )


_TAGS = {"check": "PASS", "fold": "PASS", "bet": "BET", "call": "BET"}


def _page_answer(env_kwargs: dict[str, Any]) -> Any:
    """The answer MAGE's page asks for, for each legal move (the exact policy scores it).

    Under MAGE's rules the legal moves are those tagged answers themselves; under ours they are
    move names, played by the page's ``<action>PASS</action>`` or ``<action>BET</action>``.
    """
    if env_kwargs.get("answer_rules") == "mage":
        return "{action}"
    return lambda move: f"<action>{_TAGS[move]}</action>"


TRAINING_LOGS = ("trial/invalid_rate", "trial/final_return", "trial/pass@1", "loss", "rows")
"""The training figures kept from each step's log."""


class PretrainedScore(TrainerCallback):
    """Scores the pretrained model's policy and stops the run at its training budget.

    The budget counts the process CPU seconds spent training, not those of the scores.

    Args:
        every: Exact policy every this many steps (and at step 0).
        budget: Training CPU seconds after which the run stops.
        max_steps: Stop at this many optimizer steps (``None``: only the budget).
        tasks: Held-out tasks per opponent of the sampled evaluations (before and at the end).
        save: Called with no argument after each score (writes the record).
    """

    def __init__(
        self, every: int, budget: float, max_steps: int | None, tasks: int, save: Any
    ) -> None:
        self.every, self.budget, self.max_steps, self.tasks = every, budget, max_steps, tasks
        self.save = save
        self.trainer: Any = None
        self.curve: list[dict[str, Any]] = []
        self.steps: list[dict[str, float]] = []
        self.evaluations: list[dict[str, Any]] = []
        self.scoring_cpu = 0.0

    def start(self, trainer: Any) -> None:
        """Attach the trainer, start the clocks and score the untrained model."""
        self.trainer = trainer
        self.cpu0, self.wall0 = cpu_seconds(), time.perf_counter()
        self._exact(0)
        self._evaluate(0)

    def training_cpu(self) -> float:
        """Process CPU seconds spent training so far (scores excluded)."""
        return cpu_seconds() - self.cpu0 - self.scoring_cpu

    def _timed(self, work: Any) -> Any:
        cpu = cpu_seconds()
        try:
            return work()
        finally:
            self.scoring_cpu += cpu_seconds() - cpu

    def _exact(self, step: int) -> None:
        figures = self._timed(lambda: exact_policy(self.trainer))
        point = {"step": step, "train_cpu_s": self.training_cpu(), **figures}
        point["wall_s"] = time.perf_counter() - self.wall0
        self.curve.append(point)
        print(
            f"step {step} train cpu {point['train_cpu_s']:.0f}s wall {point['wall_s']:.0f}s: "
            f"exact value {figures['exact/mean_value']:+.3f}, legal mass "
            f"{figures['exact/legal_mass']:.3f}",
            flush=True,
        )
        self.save()

    def _evaluate(self, step: int) -> None:
        trials = self._timed(lambda: evaluate(self.trainer, self.tasks))
        self.evaluations.append({"step": step, "trials": trials})
        plays = sum(t["plays"] for t in trials)
        invalid = sum(t["invalid"] for t in trials) / max(plays, 1)
        first = sum(t["returns"][0] for t in trials) / len(trials)
        print(f"held-out at step {step}: invalid {invalid:.3f}, return {first:+.3f}", flush=True)
        self.save()

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> Any:
        """Keep the step's training figures (:data:`TRAINING_LOGS`)."""
        kept = {k: float(v) for k, v in (logs or {}).items() if k in TRAINING_LOGS}
        if kept:
            self.steps.append({"step": state.global_step, **kept})
        return control

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """Score every ``every`` steps; at the budget or the step limit, evaluate and stop."""
        last = self.max_steps is not None and state.global_step >= self.max_steps
        over = self.training_cpu() >= self.budget
        if state.global_step % self.every == 0 or last or over:
            self._exact(state.global_step)
        if last or over:
            self._evaluate(state.global_step)
            control.should_training_stop = True
        return control

    def summary(self) -> dict[str, Any]:
        """The record's figures: the curves, the evaluations and the clocks."""
        return {
            "curve": self.curve,
            "training": self.steps,
            "evaluations": self.evaluations,
            "steps": self.curve[-1]["step"] if self.curve else 0,
            "train_cpu_s": self.training_cpu(),
            "scoring_cpu_s": self.scoring_cpu,
            "wall_s": time.perf_counter() - self.wall0,
        }


def run_one(
    variant: str,
    seed: int,
    budget: float,
    every: int,
    out: Path,
    max_steps: int | None = None,
    tasks: int = 12,
    overrides: dict[str, Any] | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """Train one run; write its record to ``out/pretrained/NAME/seedN.json``; return it.

    The trained LoRA adapter is saved beside it (``adapter-seedN``), to score again later.
    """
    import torch
    from transformers import PrinterCallback

    torch.set_num_threads(1)
    settings = {**VARIANTS[variant], **(overrides or {})}
    folder = out / "pretrained" / (name or variant)
    folder.mkdir(parents=True, exist_ok=True)
    head = {"part": "pretrained", "variant": name or variant, "seed": seed, "settings": settings}
    head |= {"budget_cpu_s": budget, "max_steps": max_steps, "eval_sampling": EVAL_SAMPLING}

    def save(finished: bool = False) -> dict[str, Any]:
        record = {**head, "finished": finished, **score.summary()}
        (folder / f"seed{seed}.json").write_text(json.dumps(record, indent=1))
        return record

    score = PretrainedScore(every, budget, max_steps, tasks, save)
    trainer = build_trainer(settings, seed, folder / f"trainer-seed{seed}", [score])
    trainer.remove_callback(PrinterCallback)
    score.start(trainer)
    trainer.train()
    trainer.save_model(str(folder / f"adapter-seed{seed}"))
    return save(True)

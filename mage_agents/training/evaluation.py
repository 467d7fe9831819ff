"""Periodic evaluation during training, and the best model kept.

Every ``evaluation_steps`` optimizer steps the current policy plays ``evaluation_tasks`` held-out
tasks (seeds from ``evaluation_seed``, far from the training seeds; on the env's held-out split
where ``evaluation_env_kwargs`` names it, as the published trainers evaluate on WebShop's test
goals and ALFWorld's validation games) through the same rollout engine as
``python -m baselines.run``, one trial per task, with the training sampling settings.
For Kuhn poker the exact value of the greedy policy against each opponent and seat is computed
too (:mod:`mage_agents.training.kuhn_policy`), with the best response's value and the policy at
each card, and the exact NashConv and exploitability of the model's policy in both seats. The
figures are logged through TRL with an ``eval/`` prefix; the model with the best score
(``eval/exact/mean_value`` for Kuhn poker, the lowest ``eval/exact/exploitability`` in
self-play, else ``eval/trial/final_return``; the latest of tied scores, the most trained) is
saved in ``OUTPUT/best`` with ``best.json``.

An evaluation samples from its own random stream (:mod:`.streams`, the same at every
evaluation), so it never changes what training draws: the trained weights do not depend on
``evaluation_steps``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from mage_agents.training.eval_transcripts import keep_evaluation_transcripts
from mage_agents.training.kuhn_policy import (
    evaluation_opponents,
    kuhn_exact_evaluation,
    kuhn_exact_exploitability,
)
from mage_agents.training.metrics import step_metrics, trial_record
from mage_agents.training.streams import random_stream, stream_seed
from mage_agents.training.trials import env_kwargs_of

__all__ = ["EvaluationCallback", "evaluate_policy", "is_kuhn"]

KUHN_IDS = ("mage/KuhnPoker-v0",)


def is_kuhn(env_id: str) -> bool:
    """Return True for the Kuhn poker env ids (exact evaluation applies)."""
    return env_id in KUHN_IDS


def _seats(env_kwargs: dict[str, Any], rotation: str | None, self_play: bool) -> list[int]:
    seat = env_kwargs.get("seat", "first")
    if seat == "random" or rotation is not None or self_play:  # training plays both seats
        return [0, 1]
    return [("first", "second").index(seat)]


def evaluate_policy(trainer: Any) -> dict[str, float]:
    """Return the evaluation figures of the trainer's current policy (``eval/...`` keys).

    With several processes each plays every n-th held-out task (its own stream), and the
    trials are gathered: every process computes the same figures, from all the trials.
    """
    processes = trainer.accelerator.num_processes
    path = (trainer.accelerator.process_index,) if processes > 1 else ()
    with random_stream(stream_seed(trainer.args.seed, "evaluation", *path)):
        return _evaluate(trainer)


def _play_share(trainer: Any, plans: list[Any]) -> list[Any]:
    """This process's share of ``plans``, played; every process's trials, in plan order."""
    accelerator = trainer.accelerator
    if accelerator.num_processes == 1:
        return trainer.play(plans)
    from accelerate.utils import gather_object

    mine = trainer.play(plans[accelerator.process_index :: accelerator.num_processes])
    order = {plan.trial_id: k for k, plan in enumerate(plans)}
    return sorted(gather_object(mine), key=lambda t: order[t.trial_id])


def _evaluate(trainer: Any) -> dict[str, float]:
    args = trainer.args
    seeds = list(range(args.evaluation_seed, args.evaluation_seed + args.evaluation_tasks))
    plans = trainer.plan(seeds, 1, f"eval{trainer.state.global_step}", evaluation=True)
    trajectories = _play_share(trainer, plans)
    keep_evaluation_transcripts(trainer, plans, trajectories)  # a sample, to read
    records = [trial_record(t, [0.0] * len(t.turns)) for t in trainer.by_seat(trajectories)]
    figures = {k: v for k, v in step_metrics(records).items() if not k.startswith("advantages/")}
    if is_kuhn(args.env_id):
        # the prompts training plays (templates, memory, ...), at one seat at a time
        rotation = args.trial.seat_rotation
        settings = {k: v for k, v in env_kwargs_of(args, evaluation=True).items() if k != "seat"}
        settings["config"] = replace(args.trial, seat_rotation=None)
        model = trainer.accelerator.unwrap_model(trainer.model)
        scoring = dict(
            strategy=args.strategy,
            answer_template=args.answer_template,
            chat_template_kwargs=trainer.chat_template_kwargs,
            temperature=trainer.temperature,
        )
        figures.update(
            kuhn_exact_evaluation(
                model,
                trainer.processing_class,
                args.evaluation_opponents or evaluation_opponents(args.opponent),
                _seats(env_kwargs_of(args, evaluation=True), rotation, args.self_play),
                **scoring,
                **settings,
            )
        )
        figures.update(
            kuhn_exact_exploitability(
                model, trainer.processing_class, args.self_play, **scoring, **settings
            )
        )
    return {f"eval/{k}": float(v) for k, v in figures.items()}


LOWER_IS_BETTER = frozenset({"eval/exact/exploitability"})
"""Figures the best model minimises."""


def best_metric(env_id: str, self_play: bool = False) -> str:
    """The figure the best model is chosen by (self-play on Kuhn poker: the exploitability)."""
    if is_kuhn(env_id):
        return "eval/exact/exploitability" if self_play else "eval/exact/mean_value"
    return "eval/trial/final_return"


class EvaluationCallback(TrainerCallback):
    """Evaluates every ``evaluation_steps`` steps and keeps the best model.

    Args:
        trainer: The :class:`~mage_agents.training.MetaRLTrainer`.
    """

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """Evaluate when the step is a multiple of ``evaluation_steps``."""
        if state.global_step % self.trainer.args.evaluation_steps == 0:
            self.evaluate()
        return control

    def evaluate(self) -> dict[str, float]:
        """Evaluate now, log the figures and save the model if it is the best so far."""
        trainer = self.trainer
        model = trainer.model
        control = trainer.control
        flags = (control.should_log, control.should_save, control.should_evaluate)
        model.eval()  # TRL then logs our figures as evaluation ones, apart from training's
        try:
            figures = evaluate_policy(trainer)
            trainer.log(dict(figures))
        finally:
            model.train()
            # logging resets the flags the step set (log, save) for this same step
            control.should_log, control.should_save, control.should_evaluate = flags
        self._keep_best(figures)
        return figures

    def _keep_best(self, figures: dict[str, float]) -> None:
        trainer = self.trainer
        name = best_metric(trainer.args.env_id, trainer.args.self_play)
        value = figures.get(name)
        if value is None or not trainer.args.keep_best:
            return
        sign = -1.0 if name in LOWER_IS_BETTER else 1.0
        if trainer.best is not None and sign * value < sign * trainer.best["value"]:
            return  # a tie replaces the best: the later model is the more trained one
        trainer.best = {"metric": name, "value": value, "step": trainer.state.global_step}
        folder = Path(trainer.args.output_dir) / "best"
        trainer.save_model(str(folder))
        if trainer.args.should_save:
            (folder / "best.json").write_text(json.dumps(trainer.best, indent=1))

"""Where a training step's time goes on the tiny ready configs: the model's work, and the rest.

Each config trains for ``--steps`` steps after one warm-up step, as ``python -m baselines.run
train`` would (its own model, trials and settings; no saving, no evaluation, no logging
callbacks, one torch thread). A step's CPU time (``time.process_time``: on a shared machine the
wall clock also counts other jobs) is split into:

- **generation**: the trainer's backend answering the prompts (``generate``: sampling, or the
  forwards that score the legal moves);
- **update**: TRL's loss forward (``compute_loss``), the backward pass and the optimizer step;
- **glue**: everything else: the envs, planning, batching, the estimator, metrics and TRL's own
  loop (dataloader, sampler, accelerate, callbacks).

The glue share is the figure to keep small: the rest is the model's work, which no code of ours
can make cheaper. Printed per config: median seconds per step and each part's share of it.

Run: ``python -m benchmarks trainer --glue [--configs tiny_kuhn_robust,...] [--steps 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from transformers import PrinterCallback, TrainerCallback

__all__ = ["TINY_CONFIGS", "glue_shares", "main"]

TINY_CONFIGS = (
    "tiny_kuhn_grpo",
    "tiny_kuhn_mage",
    "tiny_kuhn_robust",
    "selfplay_kuhn_tiny",
    "league_kuhn_tiny",
    "tiny_shopsim_grpo",
    "tiny_shopsim_lamer",
)
"""The ready training configs of the tiny model (the generated-ALFWorld ones build games first)."""

FIXED = {"save_strategy": "no", "evaluation_steps": 0, "logging_steps": 1, "report_to": []}


class _Clock:
    """Wraps a callable and adds up the seconds spent in it."""

    def __init__(self, function: Any) -> None:
        self.function, self.total = function, 0.0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.total += time.process_time() - start


class _Steps(TrainerCallback):
    """Per step: its wall time, and the seconds each clock gained during it."""

    def __init__(self, clocks: dict[str, Any]) -> None:
        self.clocks = clocks
        self.figures: list[dict[str, float]] = []
        self._start: dict[str, float] = {}
        self._optimizer = 0.0

    def on_step_begin(self, args, state, control, **kwargs):
        self._start = {name: clock.total for name, clock in self.clocks.items()}
        self._start["step"] = time.process_time()

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        self._optimizer = time.process_time()

    def on_optimizer_step(self, args, state, control, **kwargs):
        self._optimizer = time.process_time() - self._optimizer

    def on_step_end(self, args, state, control, **kwargs):
        step = {"step": time.process_time() - self._start["step"], "optimizer": self._optimizer}
        for name, clock in self.clocks.items():
            step[name] = clock.total - self._start[name]
        self.figures.append(step)


def glue_shares(name: str, steps: int) -> dict[str, float]:
    """Train ``name`` for ``steps`` + 1 steps; return median step seconds and each part's share."""
    from baselines.train.command import read_config
    from baselines.train.config import build_config, load_model
    from mage_agents.training import MetaRLTrainer

    with tempfile.TemporaryDirectory() as out:
        settings = read_config(Path(name)) | FIXED | {"out": out, "max_steps": steps + 1}
        config = build_config(settings)
        model, tokenizer = load_model(settings)
        if config.beta != 0:  # TRL loads the KL reference from the model's folder
            model.save_pretrained(f"{out}/base")
            tokenizer.save_pretrained(f"{out}/base")
            model.config._name_or_path = f"{out}/base"
        trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
        trainer.remove_callback(PrinterCallback)
        clocks = {
            "generation": _Clock(trainer.backend.generate),
            "loss": _Clock(trainer.compute_loss),
            "backward": _Clock(trainer.accelerator.backward),
        }
        trainer.backend.generate = clocks["generation"]
        trainer.compute_loss = clocks["loss"]
        trainer.accelerator.backward = clocks["backward"]
        timer = _Steps(clocks)
        trainer.add_callback(timer)
        trainer.train()
    timed = timer.figures[1:]  # the first step warms up
    step = statistics.median(f["step"] for f in timed)
    shares = {
        "generation": statistics.median(f["generation"] / f["step"] for f in timed),
        "update": statistics.median(
            (f["loss"] + f["backward"] + f["optimizer"]) / f["step"] for f in timed
        ),
    }
    shares["glue"] = statistics.median(
        1 - (f["generation"] + f["loss"] + f["backward"] + f["optimizer"]) / f["step"]
        for f in timed
    )
    return {"step": step, **shares}


def main(argv: list[str]) -> None:
    """Print the share of generation, update and glue in a step of each tiny config."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks trainer --glue")
    parser.add_argument("--configs", default=",".join(TINY_CONFIGS), help="comma-separated")
    parser.add_argument("--steps", type=int, default=3, help="timed steps (after one warm-up)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print(f"{'config':22} {'s/step':>7} {'generation':>11} {'update':>7} {'glue':>6}")
    for name in args.configs.split(","):
        figures = glue_shares(name, args.steps)
        print(
            f"{name:22} {figures['step']:7.3f} {figures['generation']:11.1%} "
            f"{figures['update']:7.1%} {figures['glue']:6.1%}"
        )

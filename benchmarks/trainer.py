"""Benchmark: one training step through ``MetaRLTrainer`` (on TRL) vs a bare torch loop.

Both play the same kind of step with the same tiny model built in code, on one torch thread:
16 single-episode Kuhn poker trials (groups of 4 sharing a deal) through the rollout engine,
every completion exactly ``--tokens`` tokens long (no stop string, no early end, so both do the
same generation work), GRPO advantages, one policy-gradient update with AdamW. The bare loop
does that by hand (tokenise, ``generate``, a masked log-prob loss, ``backward``, ``step``); the
trainer does it through TRL (dataloader, sampler, accelerate, TRL's loss with entropy and
clipping statistics, logging) plus our glue (planning, batching, metrics). Printed: median
seconds per step of each (after one warm-up step), rows per step, and the trainer's overhead.

Run: ``python -m benchmarks trainer`` prints this table, then the budgets and processes
views below (with their defaults); ``--overhead [--steps 6] [--trials 16] [--tokens 8]`` prints
this table alone.

The views of the trainer, each in its own module, each alone with its flag:
``--budgets none,4096,1024`` (padding efficiency and step time at several
``max_tokens_per_forward``, :mod:`.trainer_budgets`), ``--processes`` (one process against two on
the same global batch: the same update, resume, and CPU seconds per trial,
:mod:`.trainer_processes`) and ``--memory CONFIG`` (the memory model's estimate of a config, and
its shape measured on the tiny model, :mod:`.trainer_memory`) and ``--glue`` (the share of a
step outside generation and the update, on every tiny ready config, :mod:`.trainer_glue`).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

import numpy as np
import torch
from transformers import PrinterCallback, TrainerCallback

from benchmarks import positive_int
from mage_agents.advantages import estimate
from mage_agents.base import Reply
from mage_agents.local_model import render_chat
from mage_agents.prompting import LLMAgent
from mage_agents.rollout import collect, plan_groups
from mage_agents.tiny_model import build_tiny_model
from mage_agents.training import MetaRLConfig, MetaRLTrainer
from mage_agents.training.batch import TurnRow, turn_batch
from mage_agents.training.generation import TrainerBackend

__all__ = ["main", "bare_steps", "trainer_steps"]

GROUP = 4
ENV = "mage/KuhnPoker-v0"
ENV_KWARGS = {"seat": "first", "max_invalid_actions": 1}


class _BareBackend:
    """Tokenise, ``generate`` exactly ``tokens`` tokens, return the ids: nothing else."""

    name = "bare"

    def __init__(self, model: Any, tokenizer: Any, tokens: int) -> None:
        self.model, self.tokenizer, self.tokens = model, tokenizer, tokens

    @torch.no_grad()
    def generate(self, chats: list) -> list[Reply]:
        texts = [render_chat(self.tokenizer, chat) for chat in chats]
        encoded = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        out = self.model.generate(
            **encoded,
            do_sample=True,
            temperature=1.0,
            top_p=1.0,
            max_new_tokens=self.tokens,
            min_new_tokens=self.tokens,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        width = encoded["input_ids"].shape[1]
        replies = []
        for row, mask in zip(out, encoded["attention_mask"], strict=True):
            prompt = row[:width][mask.bool()].tolist()
            ids = row[width:].tolist()
            replies.append(
                Reply(
                    self.tokenizer.decode(ids, skip_special_tokens=True),
                    prompt_ids=tuple(prompt),
                    completion_ids=tuple(ids),
                )
            )
        return replies


def _bare_step(
    model: Any, tokenizer: Any, optimizer: Any, step: int, trials: int, tokens: int
) -> int:
    backend = _BareBackend(model, tokenizer, tokens)
    plans = plan_groups(ENV, list(range(step * 100, step * 100 + trials // GROUP)), GROUP,
                        opponent="aggressive", trial={"num_episodes": 1, "reflection": False},
                        env_kwargs={**ENV_KWARGS, "invalid_action_penalty": 1.0},
                        seed=step)  # fmt: skip
    model.eval()
    start = time.perf_counter()
    trajectories = collect(plans, lambda: LLMAgent(backend, "zero-shot"), batch_size=len(plans))
    rollout = time.perf_counter() - start
    advantages = np.concatenate(estimate("grpo", trajectories))
    turns = [t for trajectory in trajectories for t in trajectory.turns]
    rows = [
        TurnRow(t.prompt_ids, t.completion_ids, a) for t, a in zip(turns, advantages, strict=True)
    ]
    batch = turn_batch(rows, tokenizer.pad_token_id, 1)
    model.train()
    ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
    mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
    logits = model(input_ids=ids, attention_mask=mask).logits[:, -tokens - 1 : -1].float()
    logps = torch.log_softmax(logits, dim=-1).gather(-1, batch["completion_ids"][..., None])[..., 0]
    weights = batch["completion_mask"] * batch["advantages"][:, None]
    loss = -(logps * weights).sum() / batch["completion_mask"].sum().clamp(min=1)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return len(rows), rollout


def bare_steps(steps: int, trials: int, tokens: int) -> dict[str, list[float]]:
    """Time ``steps`` + 1 bare steps; return the figures of all but the first (warm-up)."""
    torch.manual_seed(0)
    model, tokenizer = build_tiny_model(seed=0)
    tokenizer.padding_side = "left"
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    figures: dict[str, list[float]] = {"step": [], "rows": [], "rollout": [], "glue": []}
    for step in range(steps + 1):
        start = time.perf_counter()
        rows, rollout = _bare_step(model, tokenizer, optimizer, step, trials, tokens)
        figures["step"].append(time.perf_counter() - start)
        figures["rows"].append(rows)
        figures["rollout"].append(rollout)
        figures["glue"].append(0.0)
    return {k: v[1:] for k, v in figures.items()}


class _StepTimer(TrainerCallback):
    def __init__(self) -> None:
        self.seconds: list[float] = []
        self._start = 0.0

    def on_step_begin(self, args, state, control, **kwargs):
        self._start = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        self.seconds.append(time.perf_counter() - self._start)


class _Timed:
    """Adds up the seconds spent in a method, per training step."""

    def __init__(self, method: Any) -> None:
        self.method, self.seconds = method, []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.method(*args, **kwargs)
        finally:
            self.seconds.append(time.perf_counter() - start)


def trainer_steps(steps: int, trials: int, tokens: int) -> dict[str, list[float]]:
    """Time ``steps`` + 1 MetaRLTrainer steps; return the figures of all but the first."""
    model, tokenizer = build_tiny_model(seed=0)
    with tempfile.TemporaryDirectory() as out:
        config = MetaRLConfig(
            output_dir=out,
            estimator="grpo",
            env_id=ENV,
            env_kwargs=ENV_KWARGS,
            opponent="aggressive",
            trial={"num_episodes": 1, "reflection": False},
            invalid_action_penalty=1.0,
            num_generations=GROUP,
            per_device_train_batch_size=trials,
            max_completion_length=tokens,
            generation_kwargs={"min_new_tokens": tokens},
            temperature=1.0,
            learning_rate=1e-3,
            max_steps=steps + 1,
            use_cpu=True,
            gradient_checkpointing=False,
            report_to=[],
            logging_steps=1,
            save_strategy="no",
            disable_tqdm=True,
        )
        timer = _StepTimer()
        trainer = MetaRLTrainer(model, config, processing_class=tokenizer, callbacks=[timer])
        trainer.backend = TrainerBackend(trainer, stop_strings=())
        trainer.remove_callback(PrinterCallback)
        trainer.play = play = _Timed(trainer.play)
        score = _Timed(trainer._generate_and_score_completions)
        trainer._generate_and_score_completions = score
        trainer.train()
        rows = [int(e["rows"]) for e in trainer.state.log_history if "rows" in e]
    glue = [s - p for s, p in zip(score.seconds, play.seconds, strict=True)]
    figures = {"step": timer.seconds, "rows": rows, "rollout": play.seconds, "glue": glue}
    return {k: v[1:] for k, v in figures.items()}


VIEWS = {
    "--budgets": "benchmarks.trainer_budgets",
    "--processes": "benchmarks.trainer_processes",
    "--memory": "benchmarks.trainer_memory",
    "--glue": "benchmarks.trainer_glue",
}
"""A flag -> the module of that view (given the rest of the arguments)."""

WHOLE = ("--budgets", "--processes")
"""The views a plain ``python -m benchmarks trainer`` runs after the overhead table."""


def view_of(argv: list[str]) -> tuple[str, list[str]] | None:
    """The view a flag of ``argv`` names and the arguments its ``main`` takes (``None``: none).

    Example:
        >>> view_of(["--budgets", "none,1024", "--steps", "2"])
        ('benchmarks.trainer_budgets', ['--budgets', 'none,1024', '--steps', '2'])
        >>> view_of(["--memory", "lamer_sokoban_qwen3_4b"])
        ('benchmarks.trainer_memory', ['lamer_sokoban_qwen3_4b'])
    """
    for flag, module in VIEWS.items():
        if flag in argv:
            rest = [a for a in argv if a != flag]
            if flag == "--budgets" and rest and not rest[0].startswith("--"):
                rest = ["--budgets", *rest]  # --budgets none,1024 keeps its value
            return module, rest
    return None


def main(argv: list[str]) -> None:
    """Run the benchmark (or the view a flag of :data:`VIEWS` names) and print its tables."""
    import importlib

    view = view_of(argv)
    if view is not None:
        importlib.import_module(view[0]).main(view[1])
        return
    whole = "--overhead" not in argv
    overhead([a for a in argv if a != "--overhead"])
    if whole:
        for flag in WHOLE:
            print()
            importlib.import_module(VIEWS[flag]).main([])


def overhead(argv: list[str]) -> None:
    """The trainer against a bare torch loop: the table of the module's docstring."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks trainer")
    parser.add_argument(
        "--steps", type=positive_int, default=6, help="timed steps (after one warm-up)"
    )
    parser.add_argument(
        "--trials", type=positive_int, default=16, help="trials per step (groups of 4)"
    )
    parser.add_argument("--tokens", type=positive_int, default=8, help="tokens per completion")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    results = {
        "bare torch loop": bare_steps(args.steps, args.trials, args.tokens),
        "MetaRLTrainer (TRL)": trainer_steps(args.steps, args.trials, args.tokens),
    }
    print(
        f"{'median s/step':22} {'step':>7} {'rollout':>8} {'update':>8} {'our glue':>9} {'rows':>6}"
    )
    medians = {}
    for name, figures in results.items():
        m = {k: statistics.median(v) for k, v in figures.items()}
        medians[name] = m
        update = m["step"] - m["rollout"] - m["glue"]
        print(
            f"{name:22} {m['step']:7.3f} {m['rollout']:8.3f} {update:8.3f} {m['glue']:9.4f} "
            f"{m['rows']:6.1f}"
        )
    base, ours = medians["bare torch loop"], medians["MetaRLTrainer (TRL)"]
    print(f"trainer over the bare loop: {100 * (ours['step'] / base['step'] - 1):+.1f}%")
    print(
        f"our glue (planning, estimator, batch, metrics): {100 * ours['glue'] / base['step']:.1f}%"
    )

"""Benchmark: batched vs one-at-a-time generation with a small local model, over 16 trials.

The same 16 Kuhn poker trials (3 episodes, reflections in between) are played twice by a
zero-shot agent on a randomly initialised Llama built in code: once with every step of the 16
trials generated as one batch, once one prompt at a time (the reference). Printed: generated
tokens per second of each, their ratio, and the share of wall time spent outside generation
(env steps, prompt building, answer parsing, bookkeeping; target under 10%).

Run: ``python -m benchmarks generation [--trials 16] [--hidden 256] [--layers 4]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import torch

from baselines.agents import AgentFactory
from baselines.evaluate.runner import evaluate, plan_trials
from baselines.results import ResultsFile
from benchmarks import positive_int
from mage_agents.local_model import LocalModelBackend
from mage_agents.prompting import LLMAgent
from mage_agents.tiny_model import build_tiny_model

__all__ = ["main", "measure", "TimedBackend"]


class TimedBackend:
    """Wraps a backend and adds up the time spent in ``generate`` (the rest is overhead)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.name = backend.name
        self.seconds = 0.0

    def generate(self, chats: list) -> list:
        """Generate through the wrapped backend, timing the call."""
        start = time.perf_counter()
        replies = self.backend.generate(chats)
        self.seconds += time.perf_counter() - start
        return replies


def measure(model: Any, tokenizer: Any, trials: int, batch_size: int, tokens: int) -> dict:
    """Play ``trials`` Kuhn trials with ``batch_size`` trials per generation; return the figures."""
    backend = LocalModelBackend(
        model, tokenizer, max_new_tokens=tokens, batch_size=batch_size, stop_strings=(), seed=0
    )
    timed = TimedBackend(backend)
    factory = AgentFactory("bench", lambda: LLMAgent(timed, "zero-shot"))
    specs = plan_trials("bench", ["mage/KuhnPoker-v0"], ["random"], tasks=trials)
    start = time.perf_counter()
    records = evaluate(factory, specs, ResultsFile(None), batch_size=batch_size)
    total = time.perf_counter() - start
    generated = sum(r["completion_tokens"] for r in records)
    return {
        "batch_size": batch_size,
        "steps": sum(r["steps"] for r in records),
        "generated_tokens": generated,
        "wall_s": total,
        "generate_s": timed.seconds,
        "tokens_per_s": generated / total,
        "outside_share": (total - timed.seconds) / total,
    }


def main(argv: list[str]) -> None:
    """Print the figures of the batched and the one-at-a-time runs, and their ratio."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks generation")
    parser.add_argument(
        "--trials", type=positive_int, default=16, help="trials played (default 16)"
    )
    parser.add_argument(
        "--hidden", type=positive_int, default=256, help="model hidden size (default 256)"
    )
    parser.add_argument(
        "--layers", type=positive_int, default=4, help="transformer layers (default 4)"
    )
    parser.add_argument(
        "--tokens", type=positive_int, default=32, help="new tokens per step (default 32)"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    model, tokenizer = build_tiny_model(layers=args.layers, hidden=args.hidden)
    params = sum(p.numel() for p in model.parameters())
    print(f"model: Llama, {args.layers} layers, hidden {args.hidden}, {params / 1e6:.1f}M params")
    print(f"{args.trials} Kuhn poker trials x 3 episodes, {args.tokens} new tokens per step\n")
    rows = [measure(model, tokenizer, args.trials, b, args.tokens) for b in (args.trials, 1)]
    print(
        f"{'mode':<16}{'steps':>7}{'tokens':>9}{'wall s':>9}{'gen s':>9}{'tok/s':>9}{'outside':>9}"
    )
    for row, label in zip(rows, ("batched", "one-at-a-time"), strict=True):
        print(
            f"{label:<16}{row['steps']:>7}{row['generated_tokens']:>9}{row['wall_s']:>9.2f}"
            f"{row['generate_s']:>9.2f}{row['tokens_per_s']:>9.0f}{row['outside_share']:>9.1%}"
        )
    ratio = rows[0]["tokens_per_s"] / rows[1]["tokens_per_s"]
    print(f"\nbatched / one-at-a-time throughput: {ratio:.2f}x")
    print(f"time outside generation (batched): {rows[0]['outside_share']:.1%} (target < 10%)")

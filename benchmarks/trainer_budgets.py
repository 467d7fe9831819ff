"""Padding and step time at several token budgets (``max_tokens_per_forward``).

The same training run (a config, seed 0, the tiny model, one torch thread) is repeated at each
budget: the same trials are played (the rollout streams do not depend on the budget, and the
update is the same to float precision), so what changes is how the update's forwards are cut.
Printed per budget: forwards per micro-batch, rows per forward, padding efficiency (useful tokens
over padded tokens), the largest forward, the median seconds of the update (training step minus
rollout) and of the whole step, after one warm-up step.

Run: ``python -m benchmarks trainer --budgets none,4096,1024 [--config tiny_kuhn_mage]``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import positive_int

__all__ = ["budget_run", "main"]


def budget_run(name: str, budget: int | None, steps: int) -> dict[str, Any]:
    """Train ``steps`` + 1 steps of config ``name`` at ``budget``; figures of all but the first."""
    import torch
    from transformers import PrinterCallback, TrainerCallback

    from baselines.train.command import _read_config, build_config, load_model
    from mage_agents.training import MetaRLTrainer

    torch.set_num_threads(1)
    times: dict[str, list[float]] = {"step": [], "rollout": []}

    class Clock(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            self.start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            times["step"].append(time.perf_counter() - self.start)

    with tempfile.TemporaryDirectory() as out:
        settings = _read_config(Path(name)) | {"out": out}
        settings |= {"max_steps": steps + 1, "save_strategy": "no", "evaluation_steps": 0}
        settings |= {"logging_steps": 1, "max_tokens_per_forward": budget, "seed": 0}
        config = build_config(settings)
        model, tokenizer = load_model(settings)
        trainer = MetaRLTrainer(model, config, processing_class=tokenizer, callbacks=[Clock()])
        trainer.remove_callback(PrinterCallback)
        play = trainer._generate_and_score_completions

        def timed(inputs: Any) -> Any:
            start = time.perf_counter()
            try:
                return play(inputs)
            finally:
                times["rollout"].append(time.perf_counter() - start)

        trainer._generate_and_score_completions = timed
        trainer.train()
        logs = [e for e in trainer.state.log_history if "forward/count" in e][1:]
    update = [s - r for s, r in zip(times["step"], times["rollout"], strict=True)][1:]
    figures = {k: statistics.mean(e[k] for e in logs) for k in logs[0] if k.startswith("forward/")}
    figures["rows"] = statistics.mean(e["rows"] for e in logs)
    figures["update"] = statistics.median(update)
    figures["step"] = statistics.median(times["step"][1:])
    return figures


def main(argv: list[str]) -> None:
    """Print the table of :func:`budget_run` at each budget."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks trainer --budgets")
    parser.add_argument("--budgets", default="none,4096,1024,256")
    parser.add_argument("--config", default="tiny_kuhn_mage")
    parser.add_argument(
        "--steps", type=positive_int, default=4, help="timed steps (after one warm-up)"
    )
    args = parser.parse_args(argv)
    budgets = [None if b == "none" else int(b) for b in args.budgets.split(",")]
    print(
        f"{args.config}, {args.steps} timed steps each:\n"
        f"{'budget':>8} {'rows/step':>9} {'forwards':>9} {'rows/fwd':>9} {'padding eff.':>12} "
        f"{'largest':>8} {'update s':>9} {'step s':>7}"
    )
    for budget in budgets:
        f = budget_run(args.config, budget, args.steps)
        print(
            f"{'none' if budget is None else budget:>8} {f['rows']:>9.1f} "
            f"{f['forward/count']:>9.1f} {f['forward/rows']:>9.1f} "
            f"{f['forward/padding_efficiency']:>12.3f} {f['forward/largest_tokens']:>8.0f} "
            f"{f['update']:>9.3f} {f['step']:>7.3f}"
        )

"""The memory model of a training step: a config's estimate, and its shape checked on a CPU.

**The estimate.** For a training config (``--memory CONFIG``), the peak memory of one step on one
device (:mod:`mage_agents.training.memory`) at the config's own ``max_tokens_per_forward`` and at
other budgets, from the model's ``config.json`` (or its known architecture, with no weights on
disk) and the config's settings (LoRA, bf16, gradient checkpointing, the vLLM colocate share of an
80 GB device), as ``train --check`` computes it.

**The shape, measured.** A model of memory is only as good as its dependence on the budget. On
the tiny model built in code (here 4 layers, hidden 256: activations well above the noise of a
Python process), one training step of a fixed batch (128 rows of 250 prompt and 6 completion
tokens) runs at three budgets, each in a fresh process; the growth of its peak resident memory
(``VmHWM`` after the step, reset just before it, minus the resident memory then) is compared
with the growth the model predicts between the budgets (float32 on a CPU: no vLLM, no runtime
allowance).

Run: ``python -m benchmarks trainer --memory lamer_sokoban_qwen3_4b``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["config_estimates", "measured_step", "rss_check", "main"]

BUDGETS = (8192, 16384, 32768, 65536)
TINY = {"layers": 4, "hidden": 256, "seed": 0}
ROWS, PROMPT, COMPLETION = 128, 250, 6
MEASURED_BUDGETS = (2048, 8192, 16384)


def config_estimates(name: str) -> tuple[list[dict[str, Any]], str]:
    """The estimates of config ``name`` at its own budget and at :data:`BUDGETS`."""
    from baselines.train.check import check
    from baselines.train.command import load_train_settings

    settings = load_train_settings(["--config", name])
    own = settings.get("max_tokens_per_forward")
    rows = []
    for budget in sorted({own, *BUDGETS, None}, key=lambda b: (b is None, b or 0)):
        report = check(settings | {"max_tokens_per_forward": budget})
        rows.append({"budget": budget, "own": budget == own, **report.figures})
    model = next(line for line in report.lines if line.startswith("model:"))
    return rows, model


def measured_step(budget: int, rows: int = ROWS) -> dict[str, float]:
    """One training step of the fixed batch (``rows`` rows) at ``budget``; its memory growth."""
    import tempfile

    import torch

    from mage_agents.tiny_model import build_tiny_model
    from mage_agents.training import MetaRLConfig, MetaRLTrainer
    from mage_agents.training.batch import TurnRow, turn_batch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model, tokenizer = build_tiny_model(**TINY)
    vocab = len(tokenizer)
    turns = [
        TurnRow(
            torch.randint(3, vocab, (PROMPT,)).tolist(),
            torch.randint(3, vocab, (COMPLETION,)).tolist(),
            float(torch.randn(())),
        )
        for _ in range(rows)
    ]
    batch = turn_batch(turns, tokenizer.pad_token_id, 1)
    with tempfile.TemporaryDirectory() as out:
        config = MetaRLConfig(
            output_dir=out,
            estimator="grpo",
            trial={"num_episodes": 1, "reflection": False},
            num_generations=2,
            per_device_train_batch_size=2,
            max_steps=1,
            max_tokens_per_forward=budget,
            use_cpu=True,
            gradient_checkpointing=False,
            report_to=[],
            save_strategy="no",
            disable_tqdm=True,
        )
        trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
        trainer._generate_and_score_completions = lambda inputs: dict(batch)
        _reset_peak()  # the peak of building the model and the batch is not the step's
        before = _status_bytes("VmRSS")
        trainer.train()
    peak = _status_bytes("VmHWM")
    return {"budget": budget, "growth": peak - before, "peak": peak}


def _reset_peak() -> None:
    """Reset this process's peak resident memory (``VmHWM``) to its current one (Linux)."""
    Path("/proc/self/clear_refs").write_text("5")


def _status_bytes(key: str) -> float:
    """A memory figure of ``/proc/self/status`` (``VmRSS``, ``VmHWM``), in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return float(line.split()[1]) * 1024  # kB
    raise OSError(f"/proc/self/status has no {key}: the memory check needs Linux.")


def predicted_activations(budget: int) -> float:
    """The memory model's activations of a forward of ``budget`` tokens of the fixed batch."""
    from mage_agents.tiny_model import build_tiny_model
    from mage_agents.training.memory import Architecture, TrainingShape, estimate_memory

    model, _ = build_tiny_model(**TINY)
    arch = Architecture.from_config(model.config.to_dict())
    width = PROMPT + COMPLETION
    rows = max(1, budget // width)
    shape = TrainingShape(
        tokens=rows * width,
        width=width,
        scored=rows * COMPLETION,
        dtype_bytes=4,
        gradient_checkpointing=False,
        runtime_bytes=0.0,
    )
    parts = estimate_memory(arch, shape)
    return parts["activations"] + parts["lm head"]


def rss_check(
    budgets: tuple[int, ...] = MEASURED_BUDGETS, rows: int = ROWS
) -> list[dict[str, float]]:
    """Measure :func:`measured_step` at each budget in a fresh process; add the predictions."""
    results = []
    for budget in budgets:
        code = (
            "import json, sys; from benchmarks.trainer_memory import measured_step; "
            f"print(json.dumps(measured_step({budget}, {rows})))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        figures["predicted"] = predicted_activations(budget)
        results.append(figures)
    return results


def main(argv: list[str]) -> None:
    """Print a config's estimates and the measured shape of the model on the tiny model."""
    from mage_agents.training.memory import GIB

    name = argv[0] if argv else "lamer_sokoban_qwen3_4b"
    rows, model = config_estimates(name)
    print(f"{name}: {model}")
    print(f"{'max_tokens_per_forward':>24} {'tokens a forward':>16} {'activations GiB':>16} "
          f"{'total GiB':>10}")  # fmt: skip
    for row in rows:
        memory = row["memory"]
        label = "none" if row["budget"] is None else f"{row['budget']:,}"
        label += " (config)" if row["own"] else ""
        print(
            f"{label:>24} {row['tokens']:>16,} {memory['activations'] / GIB:>16.1f} "
            f"{memory['total'] / GIB:>10.1f}"
        )
    print(
        f"\nshape on the tiny model ({TINY['layers']} layers, hidden {TINY['hidden']}, float32, "
        f"{ROWS} rows of {PROMPT}+{COMPLETION} tokens), one step in a fresh process per budget:"
    )
    print(
        f"{'budget':>8} {'peak RSS MiB':>13} {'growth MiB':>11} {'model: activations MiB':>23} "
        f"{'growth / model':>15}"
    )
    measured = rss_check()
    for m in measured:
        print(
            f"{m['budget']:>8,} {m['peak'] / 2**20:>13.0f} {m['growth'] / 2**20:>11.0f} "
            f"{m['predicted'] / 2**20:>23.0f} {m['growth'] / m['predicted']:>15.2f}"
        )
    first, last = measured[0], measured[-1]
    slope = (last["growth"] - first["growth"]) / (last["predicted"] - first["predicted"])
    print(
        f"slope, {first['budget']:,} to {last['budget']:,} tokens: the measured growth rises "
        f"{slope:.2f} MiB per MiB of the model's saved activations (above 1: the backward's "
        "transient buffers and the allocator's, which the model leaves out)"
    )

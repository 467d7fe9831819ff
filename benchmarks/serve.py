"""Benchmark: the runner over a real server (``transformers serve``) vs its local backend.

The same Kuhn poker trials (vs the env's default opponent, 3 episodes with reflections) are
played by a zero-shot agent on the same model twice: through ``--agent openai:`` against
``transformers serve`` started here on the model's folder, and through ``--agent local:`` in
this process (the reference). Both use the same sampling settings (MAGE's evaluation:
temperature 0.7, top_p 0.8, top_k 20) and token budget, and the runner steps ``--batch-size``
trials together. Printed per path: trials/s, generated tokens/s, the share of moves read
off-format, the invalid rate, and the ratios to the local backend. With ``--continuous-batching``
the server batches concurrent requests; otherwise it generates them one at a time.

Run: ``python -m benchmarks serve [--model tiny|smollm2-135m|PATH] [--trials 8]
[--batch-size 8] [--max-tokens 32] [--continuous-batching]`` (one torch thread each side).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from baselines.agents import build_agent_factory
from baselines.evaluate.runner import evaluate, plan_trials
from baselines.report.summary import summarize
from baselines.results import ResultsFile
from benchmarks import positive_int
from mage_agents.model_files import resolve_model
from mage_agents.transformers_server import TransformersServer

__all__ = ["main", "play"]


def play(agent: dict[str, Any], trials: int, batch_size: int) -> dict[str, float]:
    """Play ``trials`` Kuhn trials with ``agent`` (a config); return the figures."""
    factory = build_agent_factory(agent)
    specs = plan_trials(factory.name, ["mage/KuhnPoker-v0"], tasks=trials)
    start = time.perf_counter()
    records = evaluate(factory, specs, ResultsFile(None), batch_size=batch_size)
    seconds = time.perf_counter() - start
    summary = summarize(records)[0]
    return {
        "trials": len(records),
        "seconds": seconds,
        "trials_per_s": len(records) / seconds,
        "tokens_per_s": sum(r["completion_tokens"] for r in records) / seconds,
        "off_format": summary.off_format_rate.value,
        "invalid": summary.invalid_rate.value,
        "final_return": summary.final_return.value,
        "failed": sum(r.get("failed_steps", 0) for r in records),
    }


def _model_folder(spec: str, work: Path) -> Path:
    if spec == "tiny":
        from mage_agents.tiny_model import build_tiny_model

        build_tiny_model(work / "tiny", seed=0)
        return work / "tiny"
    source = resolve_model(spec)
    if source.gguf_file is not None:
        raise SystemExit(f"{spec}: the server needs a folder; run python -m baselines.models get")
    return source.folder


def main(argv: list[str]) -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks serve")
    parser.add_argument("--model", default="tiny", help="tiny, a fetched name or a folder")
    parser.add_argument("--trials", type=positive_int, default=8)
    parser.add_argument("--batch-size", type=positive_int, default=8)
    parser.add_argument("--max-tokens", type=positive_int, default=32)
    parser.add_argument("--continuous-batching", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    sampling = {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "max_tokens": args.max_tokens}
    with tempfile.TemporaryDirectory() as work:
        folder = _model_folder(args.model, Path(work))
        local = {"kind": "local", "path": str(folder), "batch_size": args.batch_size, **sampling}
        figures = {"local": play(local, args.trials, args.batch_size)}
        batching = args.continuous_batching
        with TransformersServer(folder, continuous_batching=batching) as server:
            startup = server.startup_s
            remote = {"kind": "openai", "model": server.model, "base_url": server.base_url}
            remote |= {"max_concurrency": args.batch_size, "server": "transformers", **sampling}
            figures["transformers serve"] = play(remote, args.trials, args.batch_size)
    mode = "continuous batching" if batching else "one request at a time"
    print(
        f"Kuhn poker, {args.trials} trials of 3 episodes, model {args.model}, batch "
        f"{args.batch_size}, max_tokens {args.max_tokens}; server ({mode}) up in {startup:.1f} s"
    )
    print(
        f"{'path':<20}{'seconds':>9}{'trials/s':>10}{'tokens/s':>10}{'off-format':>12}"
        f"{'invalid':>9}{'final return':>14}{'failed':>8}"
    )
    reference = figures["local"]
    for name, row in figures.items():
        print(
            f"{name:<20}{row['seconds']:>9.1f}{row['trials_per_s']:>10.3f}"
            f"{row['tokens_per_s']:>10.1f}{row['off_format']:>12.0%}{row['invalid']:>9.0%}"
            f"{row['final_return']:>+14.3f}{row['failed']:>8}"
        )
    served = figures["transformers serve"]
    print(
        f"server / local: trials/s x{served['trials_per_s'] / reference['trials_per_s']:.2f}, "
        f"tokens/s x{served['tokens_per_s'] / reference['tokens_per_s']:.2f}"
    )

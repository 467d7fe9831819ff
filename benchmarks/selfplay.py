"""``python -m benchmarks selfplay``: does self-play bring the learner nearer equilibrium?

Trains the tiny model built in code (small-model defaults, one torch thread) on single Kuhn
hands in three ways at the same budget (the same steps, and the same games per step):

* ``self-play-rae``: the policy plays both seats (``self_play``), SPIRAL's role-conditioned
  advantages (``rae``);
* ``self-play-grpo``: the same games, GRPO's group-normalised advantages (each seat's plays of a
  deal form a group);
* ``population-grpo``: GRPO against MAGE's fixed population of styles (``mage-kuhn-train``), the
  learner's seat drawn per game, so that both seats train as in self-play.

Every ``--every`` steps (and before the first) it computes the exact exploitability of the model's
policy at all twelve information states (:func:`~mage_agents.training.kuhn_policy.
kuhn_exact_exploitability`, OpenSpiel's NashConv / 2): no sampling. A self-play game trains on
both seats' turns, a population game on the learner's only; the figures are per step.

Records (one JSON per variant and seed, kept: a rerun skips those that exist) go under ``--out``;
the table printed at the end gives each variant's exploitability at the start and the end
(mean and range over seeds), and their ratio.

Example:
    python -m benchmarks selfplay --seeds 0-2 --steps 40 --every 10 --out runs/selfplay \
        --plot docs/selfplay_exploitability.png
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from benchmarks import positive_int
from mage_agents.training.small_model import SMALL_MODEL_DEFAULTS, SMALL_MODEL_INIT_STD

__all__ = ["VARIANTS", "main", "run_one", "table"]

_BASE = {
    **SMALL_MODEL_DEFAULTS,
    "env_id": "mage/KuhnPoker-v0",
    "env_kwargs": {"max_invalid_actions": 2},
    "trial": {"num_episodes": 1, "reflection": False},
    "invalid_action_penalty": 1.0,
    "num_generations": 4,
    "per_device_train_batch_size": 32,
    "max_completion_length": 8,
    "temperature": 1.0,
    "beta": 0.0,
}

VARIANTS: dict[str, dict[str, Any]] = {
    "self-play-rae": {**_BASE, "self_play": True, "estimator": "rae"},
    "self-play-grpo": {**_BASE, "self_play": True, "estimator": "grpo"},
    "population-grpo": {
        **_BASE,
        "estimator": "grpo",
        "opponent": "mage-kuhn-train",
        "env_kwargs": {**_BASE["env_kwargs"], "seat": "random"},
    },
}
"""Variant -> MetaRLConfig settings."""


def _exploitability(trainer: Any) -> dict[str, float]:
    from mage_agents.training.kuhn_policy import kuhn_exact_exploitability

    args = trainer.args
    figures = kuhn_exact_exploitability(
        trainer.accelerator.unwrap_model(trainer.model),
        trainer.processing_class,
        args.self_play,
        strategy=args.strategy,
        answer_template=args.answer_template,
        temperature=trainer.temperature,
        config=args.trial,
    )
    return {key.removeprefix("exact/"): value for key, value in figures.items()}


def run_one(variant: str, seed: int, steps: int, every: int, out: Path) -> dict[str, Any]:
    """Train one run; return its record (the curve of exact exploitability), also written."""
    import torch
    from transformers import PrinterCallback, TrainerCallback

    from mage_agents.tiny_model import build_tiny_model
    from mage_agents.training import MetaRLConfig, MetaRLTrainer

    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(seed=seed, init_std=SMALL_MODEL_INIT_STD)
    config = MetaRLConfig(
        output_dir=str(out / "trainer"),
        seed=seed,
        max_steps=steps,
        logging_steps=steps,
        save_strategy="no",
        report_to=[],
        disable_tqdm=True,
        use_cpu=True,
        gradient_checkpointing=False,
        **VARIANTS[variant],
    )
    curve: list[dict[str, float]] = []
    start = time.process_time()

    class Score(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step % every == 0 or state.global_step == steps:
                point = {"step": state.global_step, "cpu_s": time.process_time() - start}
                curve.append(point | _exploitability(trainer))

    trainer = MetaRLTrainer(model, config, processing_class=tokenizer, callbacks=[Score()])
    trainer.remove_callback(PrinterCallback)
    curve.append({"step": 0, "cpu_s": 0.0} | _exploitability(trainer))
    trainer.train()
    record = {"variant": variant, "seed": seed, "steps": steps, "curve": curve}
    record["settings"] = {k: v for k, v in VARIANTS[variant].items() if k != "trial"}
    return record


def _summary(values: list[float]) -> str:
    mean = sum(values) / len(values)
    return f"{mean:.3f} [{min(values):.3f}, {max(values):.3f}]"


def table(records: list[dict[str, Any]]) -> str:
    """The Markdown table of the records: exploitability at the start and the end, per variant."""
    lines = [
        "| variant | seeds | steps | exploitability at step 0 | at the last step | "
        "greedy policy's, last | end / start | CPU s a run |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for variant in VARIANTS:
        runs = [r for r in records if r["variant"] == variant]
        if not runs:
            continue
        first = [r["curve"][0]["exploitability"] for r in runs]
        last = [r["curve"][-1]["exploitability"] for r in runs]
        greedy = [r["curve"][-1]["greedy_exploitability"] for r in runs]
        ratio = [b / a for a, b in zip(first, last, strict=True)]
        cpu = sum(r["curve"][-1]["cpu_s"] for r in runs) / len(runs)
        lines.append(
            f"| {variant} | {len(runs)} | {runs[0]['steps']} | {_summary(first)} | "
            f"{_summary(last)} | {_summary(greedy)} | {_summary(ratio)} | {cpu:.0f} |"
        )
    return "\n".join(lines)


def plot(records: list[dict[str, Any]], path: Path) -> None:
    """Draw each variant's exploitability over the steps (a thin line per seed) into ``path``."""
    from benchmarks.learning_common import pyplot, save_figure

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    for colour, variant in zip(("C0", "C1", "C2"), VARIANTS, strict=True):
        runs = [r for r in records if r["variant"] == variant]
        for k, run in enumerate(runs):
            steps = [p["step"] for p in run["curve"]]
            values = [p["exploitability"] for p in run["curve"]]
            ax.plot(steps, values, color=colour, lw=1, label=variant if k == 0 else None)
    ax.axhline(11 / 24, color="grey", ls=":", lw=1, label="uniform policy")
    ax.set(xlabel="optimizer step", ylabel="exact exploitability", ylim=(0, None))
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)


def _seeds(text: str) -> list[int]:
    from benchmarks.learning import parse_seeds

    return parse_seeds(text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks selfplay",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated")
    parser.add_argument("--seeds", default="0-4", help="seeds, e.g. 0-4 or 0,3")
    parser.add_argument("--steps", type=positive_int, default=40, help="optimizer steps a run (40)")
    parser.add_argument(
        "--every", type=positive_int, default=10, help="score every this many steps (10)"
    )
    parser.add_argument("--out", type=Path, default=Path("runs/selfplay"))
    parser.add_argument("--plot", type=Path, help="also draw the curves into this PNG file")
    return parser


def main(argv: list[str]) -> None:
    """Run the variants and seeds not yet recorded, then print the table of all the records."""
    args = _parser().parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"Unknown variants {unknown}: choose among {', '.join(VARIANTS)}.")
    for seed in _seeds(args.seeds):  # seed after seed: a run cut short has every variant
        for variant in variants:
            path = args.out / variant / f"seed{seed}.json"
            if path.is_file():
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            record = run_one(variant, seed, args.steps, args.every, path.parent / f"run{seed}")
            path.write_text(json.dumps(record, indent=1))
            curve = record["curve"]
            print(
                f"{variant} seed {seed}: exploitability {curve[0]['exploitability']:.3f} -> "
                f"{curve[-1]['exploitability']:.3f} ({time.perf_counter() - started:.0f} s wall)",
                flush=True,
            )
    records = [json.loads(p.read_text()) for p in sorted(args.out.glob("*/seed*.json"))]
    print(table(records))
    if args.plot is not None and records:
        plot(records, args.plot)
        print(f"Wrote {args.plot}.")

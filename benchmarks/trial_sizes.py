"""Benchmark: how many sample rows and prompt characters one generation of a config makes.

Each model turn of a trial (a move or a reflection) is one sample row of the generation (the
trials of one rollout batch, which feeds ``steps_per_generation`` optimizer steps), with its
prompt. For a training config, trials are played through the trial settings the trainer uses
(the config's ``trial``: memory, history window, reflections, stop on success) by a
random-legal agent, and each turn's prompt is built by the config's prompting strategy as a model
would see it. A random agent rarely wins, so its trials run to the turn limits: the figures are
near the most a generation can hold, the sizes to plan memory and speed for.

Printed per config: the env measured (WebShop's and ALFWorld's official data are not shipped:
without them the generated shop and games stand in, same pages and engine), model turns per
trial (mean, max), rows per generation (trials a generation x the mean), prompt characters per
row (mean, 95th percentile, max), and prompt characters per generation. Tokens are not counted
(no model's tokenizer is on disk here); at about 4 characters a token for English text, divide
by 4.

Usage: ``python -m benchmarks trial_sizes [--config NAME ...] [--trials N]`` (default: the
WebShop and ALFWorld ``*_qwen3_4b`` configs, 16 trials each; a few seconds each, plus the first
making of generated ALFWorld games).
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from baselines.train.command import _read_config, build_config
from baselines.train.trial_shape import PromptSizes, measured_env, play_scripted
from benchmarks import positive_int

__all__ = ["CONFIGS", "measure", "measured_env", "PromptSizes", "main"]

CONFIGS = [
    f"{method}_{env}_qwen3_4b"
    for env in ("webshop", "alfworld")
    for method in ("lamer", "mage", "gigpo", "grpo")
]


def measure(name: str, trials: int) -> dict[str, Any]:
    """Play ``trials`` trials of config ``name`` and return its sizes."""
    settings = _read_config(Path(name)) | {"out": "/tmp/unused", "use_vllm": False, "bf16": False}
    config = build_config(settings)
    played = play_scripted(config, trials)
    env_id = played.env_id
    turns, chars = np.array(played.turns), np.array(played.sizes)
    per_step = config.per_device_train_batch_size * config.steps_per_generation
    return {
        "config": name,
        "env": env_id,
        "turns": (turns.mean(), turns.max()),
        "rows": per_step * turns.mean(),
        "chars": (chars.mean(), np.percentile(chars, 95), chars.max()),
        "chars_per_step": per_step * turns.mean() * chars.mean(),
    }


def main(argv: list[str]) -> None:
    """Print the sizes of each config's step."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks trial_sizes")
    parser.add_argument("--config", action="append", help="training config (repeatable)")
    parser.add_argument("--trials", type=positive_int, default=16, help="trials played per config")
    args = parser.parse_args(argv)
    names = args.config or CONFIGS
    if importlib.util.find_spec("alfworld") is None:
        names = [n for n in names if "alfworld" not in n]
        print("(the alfworld extra is not installed: the ALFWorld configs are left out)")
    print(
        f"{'config':26} {'env measured':28} {'turns/trial':>12} {'rows/gen':>9} "
        f"{'prompt chars/row mean p95 max':>30} {'chars/gen':>10}"
    )
    for name in names:
        s = measure(name, args.trials)
        turns = f"{s['turns'][0]:.1f} ({s['turns'][1]})"
        chars = " ".join(f"{c:,.0f}" for c in s["chars"])
        print(
            f"{s['config']:26} {s['env']:28} {turns:>12} {s['rows']:>9,.0f} {chars:>30} "
            f"{s['chars_per_step'] / 1e6:>9.2f}M"
        )

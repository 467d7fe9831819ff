"""Benchmark: how many sample rows and prompt characters one training step of a config makes.

Each model turn of a trial (a move or a reflection) is one sample row of the step, with its
prompt. For a training config, trials are played through the trial settings the trainer uses
(the config's ``trial``: memory, history window, reflections, stop on success) by a
random-legal agent, and each turn's prompt is built by the config's prompting strategy as a model
would see it. A random agent rarely wins, so its trials run to the turn limits: the figures are
near the most a step can hold, the sizes to plan memory and speed for.

Printed per config: the env measured (WebShop's and ALFWorld's official data are not shipped:
without them the generated shop and games stand in, same pages and engine), model turns per
trial (mean, max), rows per step (trials a step x the mean), prompt characters per row (mean,
95th percentile, max), and prompt characters per step. Tokens are not counted (no model's
tokenizer is on disk here); at about 4 characters a token for English text, divide by 4.

Usage: ``python -m baselines.bench trial_sizes [--config NAME ...] [--trials N]`` (default: the
WebShop and ALFWorld ``*_qwen3_4b`` configs, 16 trials each; a few seconds each, plus the first
making of generated ALFWorld games).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path
from typing import Any

import numpy as np

from baselines.train import _read_config, build_config
from mage_agents.prompting import STRATEGIES
from mage_agents.rollout import collect
from mage_agents.rollout.plan import TrialPlanner
from mage_agents.scripted import RandomLegalAgent

CONFIGS = [
    f"{method}_{env}_qwen3_4b"
    for env in ("webshop", "alfworld")
    for method in ("lamer", "mage", "gigpo", "grpo")
]
_WEBSHOP_ONLY = ("catalogue", "goals", "split", "data_path", "num_products")


class PromptSizes(RandomLegalAgent):
    """A random-legal agent that records the size of the prompt a model would read each turn."""

    def __init__(self, strategy: str, sizes: list[int]) -> None:
        super().__init__()
        self.strategy = STRATEGIES[strategy]()
        self.memory = self.strategy.new_memory()
        self.sizes = sizes

    def reset(self, seed: int | None = None) -> None:
        """Start a trial: reseed, clear the strategy's memory."""
        super().reset(seed)
        self.memory = self.strategy.new_memory()

    def act(self, observation: str, info: Any) -> str:
        """Record the prompt's characters, then play a random legal move."""
        chat = self.strategy.chat(observation, info, self.memory)
        self.sizes.append(sum(len(m["content"]) for m in chat))
        answer = super().act(observation, info)
        self.strategy.remember(answer, info, self.memory)
        return answer


def measured_env(env_id: str, env_kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The env to measure: the config's, or its no-download stand-in when the data is missing."""
    if env_id == "mage/WebShop-v0" and not os.environ.get("MAGE_WEBSHOP_DATA"):
        kept = {k: v for k, v in env_kwargs.items() if k not in _WEBSHOP_ONLY}
        return "mage/ShopSim-v0", kept
    if env_id == "mage/ALFWorld-v0":
        from mage_envs.alfworld.data import split_folder

        try:
            split_folder(env_kwargs.get("data_path"), env_kwargs.get("split", "train"))
        except Exception:  # noqa: BLE001 - any missing-data error: use the generated games
            kept = {k: v for k, v in env_kwargs.items() if k not in ("split", "data_path")}
            return "mage/ALFWorld-Generated-v0", kept
    return env_id, env_kwargs


def measure(name: str, trials: int) -> dict[str, Any]:
    """Play ``trials`` trials of config ``name`` and return its sizes."""
    settings = _read_config(Path(name)) | {"out": "/tmp/unused", "use_vllm": False, "bf16": False}
    config = build_config(settings)
    env_id, env_kwargs = measured_env(config.env_id, dict(config.env_kwargs))
    if config.invalid_action_penalty is not None:
        env_kwargs["invalid_action_penalty"] = config.invalid_action_penalty
    planner = TrialPlanner(env_id, config.opponent, env_kwargs, config.trial)
    plans = [planner.plan(i, 0, trial_id=f"t{i}", scope=f"g{i}") for i in range(trials)]
    sizes: list[int] = []
    done = collect(plans, lambda: PromptSizes(config.strategy, sizes), max_steps=config.max_turns)
    turns = np.array([len(t.turns) for t in done])
    chars = np.array(sizes)
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
    parser = argparse.ArgumentParser(prog="python -m baselines.bench trial_sizes")
    parser.add_argument("--config", action="append", help="training config (repeatable)")
    parser.add_argument("--trials", type=int, default=16, help="trials played per config")
    args = parser.parse_args(argv)
    names = args.config or CONFIGS
    if importlib.util.find_spec("alfworld") is None:
        names = [n for n in names if "alfworld" not in n]
        print("(the alfworld extra is not installed: the ALFWorld configs are left out)")
    print(
        f"{'config':26} {'env measured':28} {'turns/trial':>12} {'rows/step':>9} "
        f"{'prompt chars/row mean p95 max':>30} {'chars/step':>10}"
    )
    for name in names:
        s = measure(name, args.trials)
        turns = f"{s['turns'][0]:.1f} ({s['turns'][1]})"
        chars = " ".join(f"{c:,.0f}" for c in s["chars"])
        print(
            f"{s['config']:26} {s['env']:28} {turns:>12} {s['rows']:>9,.0f} {chars:>30} "
            f"{s['chars_per_step'] / 1e6:>9.2f}M"
        )

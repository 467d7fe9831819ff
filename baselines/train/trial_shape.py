"""What a training config's trials look like: played by a random-legal agent, prompts recorded.

A training step holds one sample row per model turn, each with its own prompt. To size a step
without a model, :func:`play_scripted` plays trials of a config through the trainer's trial
settings (``config.trial``, :class:`~mage_envs.meta.TrialConfig`: memory, history window,
reflections, stop on success) with a random-legal agent, and records each turn's prompt as the
config's prompting strategy writes it. A random agent rarely wins, so its trials run to their
limits: near the most a step holds. WebShop's and ALFWorld's official data are not shipped: without
them the generated shop and games stand in (:func:`measured_env`), the same pages and engine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from mage_agents.prompting import STRATEGIES
from mage_agents.rollout import collect
from mage_agents.rollout.plan import TrialPlanner
from mage_agents.scripted import RandomLegalAgent
from mage_agents.training.trials import env_kwargs_of

__all__ = ["PromptSizes", "ScriptedTrials", "measured_env", "play_scripted"]

_WEBSHOP_ONLY = ("catalogue", "goals", "split", "data_path", "num_products")


class PromptSizes(RandomLegalAgent):
    """A random-legal agent that records the prompt a model would read each turn.

    Args:
        strategy: The prompting strategy's name.
        sizes: Receives each prompt's characters.
        prompts: Receives each prompt (its messages' text), if given.
    """

    def __init__(self, strategy: str, sizes: list[int], prompts: list[str] | None = None) -> None:
        super().__init__()
        self.strategy = STRATEGIES[strategy]()
        self.memory = self.strategy.new_memory()
        self.sizes, self.prompts = sizes, prompts

    def reset(self, seed: int | None = None) -> None:
        """Start a trial: reseed, clear the strategy's memory."""
        super().reset(seed)
        self.memory = self.strategy.new_memory()

    def act(self, observation: str, info: Any) -> str:
        """Record the prompt, then play a random legal move."""
        chat = self.strategy.chat(observation, info, self.memory)
        text = "\n".join(m["content"] for m in chat)
        self.sizes.append(sum(len(m["content"]) for m in chat))
        if self.prompts is not None:
            self.prompts.append(text)
        answer = super().act(observation, info)
        self.strategy.remember(answer, info, self.memory)
        return answer


def measured_env(env_id: str, env_kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The env to play: the config's, or its no-download stand-in when the data is missing."""
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


@dataclass(frozen=True)
class ScriptedTrials:
    """Trials of a config played by a random-legal agent.

    Attributes:
        env_id: The env played (the config's, or its stand-in).
        turns: Model turns of each trial.
        sizes: Prompt characters of each turn, all trials.
        prompts: Each turn's prompt text, all trials.
    """

    env_id: str
    turns: list[int]
    sizes: list[int]
    prompts: list[str]


def play_scripted(config: Any, trials: int) -> ScriptedTrials:
    """Play ``trials`` trials of ``config`` (a ``MetaRLConfig``) with a random-legal agent."""
    env_id, env_kwargs = measured_env(config.env_id, env_kwargs_of(config))
    planner = TrialPlanner(env_id, config.opponent, env_kwargs, config.trial)
    plans = [planner.plan(i, 0, trial_id=f"t{i}", scope=f"g{i}") for i in range(trials)]
    sizes: list[int] = []
    prompts: list[str] = []
    done = collect(
        plans, lambda: PromptSizes(config.strategy, sizes, prompts), max_steps=config.max_turns
    )
    return ScriptedTrials(env_id, [len(t.turns) for t in done], sizes, prompts)

"""Exact scores of the policy being trained, taken during a learning run, with its clocks.

Kuhn poker is small enough to score a policy without sampling. The greedy policy over the legal
moves (the most probable move's answer text, as :mod:`mage_agents.training.kuhn_policy` scores
it) is deterministic and so are MAGE's Kuhn styles, so a whole trial is a function of the deal:
playing each of the six deals once gives the exact expected return of every episode.
"""

from __future__ import annotations

import time
from typing import Any

from transformers import TrainerCallback

from benchmarks.learning_common import (
    BEST_RESPONSE,
    DEALS,
    HELD_OUT,
    SAMPLED_HELD_OUT,
    STYLES,
    TARGET_SHARE,
    cpu_seconds,
    deal_seeds,
    play_scored,
)

__all__ = ["DEALS", "HELD_OUT", "STYLES", "ScoreCallback", "deal_seeds", "episode_returns"]
__all__ += ["exact_value"]


def exact_value(
    trainer: Any, prompts: list, opponent: str, seat: int
) -> tuple[float, dict[str, float]]:
    """Return the exact value of the trainer's greedy first-episode policy against ``opponent``.

    Also returns the policy: each information state's probability of its second legal move
    (bet or call).
    """
    from mage_agents.training.kuhn_policy import kuhn_policy_table
    from mage_envs.policy_value import greedy_table, kuhn_policy_value

    model = trainer.accelerator.unwrap_model(trainer.model)
    table, _ = kuhn_policy_table(
        model, trainer.processing_class, prompts, trainer.args.answer_template
    )
    value = kuhn_policy_value(greedy_table(table), opponent, seat)
    return value, {state: round(list(probs.values())[-1], 3) for state, probs in table.items()}


def episode_returns(
    trainer: Any, opponents: tuple[str, ...] = (*STYLES, HELD_OUT)
) -> tuple[dict[str, list[float]], dict[str, dict[str, list[float]]]]:
    """Return the exact returns of each episode of the greedy policy.

    Returns:
        Per opponent, the mean return of each episode over the six deals; and per opponent and
        deal (:data:`DEALS`), the return of each episode.
    """
    args = trainer.args
    cases = [(opponent, seed) for opponent in opponents for seed in deal_seeds(args.env_id)]
    episodes = args.trial.num_episodes
    trajectories = play_scored(trainer, cases, episodes, stop_on_success=False)
    result: dict[str, list[float]] = {}
    deals: dict[str, dict[str, list[float]]] = {}
    for opponent in opponents:
        rows = [
            [float(r) for r in t.result.returns]
            for t in trajectories
            if f"|{opponent}|" in t.trial_id
        ]
        result[opponent] = [sum(r[k] for r in rows) / len(rows) for k in range(episodes)]
        deals[opponent] = dict(zip(DEALS, rows, strict=True))
    return result, deals


class ScoreCallback(TrainerCallback):
    """Scores the policy every ``every`` steps, records the clocks and stops the run.

    Args:
        part: ``"robustness"`` (exact first-hand value vs the aggressive style) or
            ``"signature"`` (exact return per episode and opponent).
        settings: The run's MetaRLConfig settings.
        every: Score every this many optimizer steps (and at step 0).
        budget: Process CPU seconds after which the run stops.
        stop_at_target: Stop as soon as the robustness target is reached.
        max_steps: Stop at this many optimizer steps (``None``: only the budget stops the run).
    """

    def __init__(
        self,
        part: str,
        settings: dict,
        every: int,
        budget: float,
        stop_at_target: bool,
        max_steps: int | None = None,
    ) -> None:
        self.part, self.settings, self.every, self.budget = part, settings, every, budget
        self.stop_at_target, self.max_steps = stop_at_target, max_steps
        self.curve: list[dict[str, Any]] = []
        self.trainer: Any = None
        self.prompts: list = []

    def bind(self, trainer: Any, save: Any = None) -> None:
        """Attach the trainer whose model is scored, and what saves the record after a score."""
        from mage_agents.training.kuhn_policy import decision_prompts

        self.trainer = trainer
        self.save = save
        if self.part == "robustness":
            strategy = self.settings.get("strategy", "zero-shot")
            self.prompts = decision_prompts("aggressive", 0, strategy, num_episodes=1)

    def start(self) -> None:
        """Start the clocks and take the score before any update."""
        self.wall0, self.cpu0 = time.perf_counter(), cpu_seconds()
        self._score(0)

    def _score(self, step: int) -> dict[str, Any]:
        if self.part == "robustness":
            value, policy = exact_value(self.trainer, self.prompts, "aggressive", 0)
            figures: dict[str, Any] = {"value": value, "policy": policy}
        elif self.part == "minesweeper":
            from benchmarks.learning_pass import pass_scores

            figures = pass_scores(self.trainer)
        else:
            from benchmarks.learning_sampled import sampled_returns

            returns, deals = episode_returns(self.trainer)
            returns[SAMPLED_HELD_OUT], deals[SAMPLED_HELD_OUT] = sampled_returns(self.trainer)
            figures = {"returns": returns, "deals": deals}
        point = {
            "step": step,
            "wall_s": time.perf_counter() - self.wall0,
            "cpu_s": cpu_seconds() - self.cpu0,
            **figures,
        }
        self.curve.append(point)
        if getattr(self, "save", None) is not None and step > 0:
            self.save()
        shown = {k: v for k, v in figures.items() if k != "deals"}
        print(
            f"step {step} cpu {point['cpu_s']:.0f}s wall {point['wall_s']:.0f}s: {shown}",
            flush=True,
        )
        return point

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """Score every ``every`` steps; stop at the budget, the step limit (or the target)."""
        last = self.max_steps is not None and state.global_step >= self.max_steps
        if state.global_step % self.every and not last:
            return control
        point = self._score(state.global_step)
        reached = point.get("value", -1.0) >= TARGET_SHARE * BEST_RESPONSE
        over = point["cpu_s"] >= self.budget or point["wall_s"] >= 4 * self.budget
        if over or last or (reached and self.stop_at_target):
            control.should_training_stop = True
        return control

    def summary(self) -> dict[str, Any]:
        """Return the run's curve and its headline figures."""
        out: dict[str, Any] = {"curve": self.curve, "steps": self.curve[-1]["step"]}
        out["wall_s"], out["cpu_s"] = self.curve[-1]["wall_s"], self.curve[-1]["cpu_s"]
        if self.part == "robustness":
            values = [p["value"] for p in self.curve]
            out["best"], out["final"] = max(values), values[-1]
            hit = next((p for p in self.curve if p["value"] >= TARGET_SHARE * BEST_RESPONSE), None)
            if hit is not None:
                out |= {
                    "target_step": hit["step"],
                    "target_wall_s": hit["wall_s"],
                    "target_cpu_s": hit["cpu_s"],
                }
        elif self.part == "minesweeper":
            final = self.curve[-1]["pass_at_k"]
            out["final_pass_at_k"], out["best"] = final, final[-1]
        else:
            final = self.curve[-1]["returns"]
            out["final_returns"] = final
            out["best"] = sum(final[s][-1] for s in STYLES) / len(STYLES)
        return out

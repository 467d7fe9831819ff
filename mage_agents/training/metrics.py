"""The figures logged at every training step, from the trials played and their advantages.

Per trial: return of each episode index, pass@k by attempt, final-episode return, invalid
answers per play turn, model turns and reflection length; per opponent the same for
populations; over the rows, the advantages' mean, std, min and max. The figures are computed
from per-trial records, so with several processes the records are gathered first and every
trial counts once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["trial_record", "step_metrics"]


def trial_record(trajectory: Any, advantages: Sequence[float]) -> dict[str, Any]:
    """Return the JSON-sized summary of one trial that :func:`step_metrics` aggregates."""
    result = trajectory.result
    plays = [t for t in trajectory.turns if t.phase == "play"]
    reflections = [t for t in trajectory.turns if t.phase != "play"]
    opponents = {o for o in result.opponents if o is not None}
    return {
        "returns": list(result.returns),
        "pass_at_k": list(result.pass_at_k),
        "final_return": float(result.final_return),
        "invalid": sum(t.invalid for t in plays),
        "plays": len(plays),
        "turns": len(trajectory.turns),
        "reflection_chars": [len(t.action) for t in reflections],
        "opponent": opponents.pop() if len(opponents) == 1 else None,
        "advantages": [float(a) for a in advantages],
    }


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else 0.0


def _trial_figures(records: Sequence[dict[str, Any]], prefix: str) -> dict[str, float]:
    figures: dict[str, float] = {}
    longest = max((len(r["pass_at_k"]) for r in records), default=0)
    for n in range(longest):
        played = [r["returns"][n] for r in records if len(r["returns"]) > n]
        if played:
            figures[f"{prefix}return/episode_{n + 1}"] = _mean(played)
        figures[f"{prefix}pass@{n + 1}"] = _mean([r["pass_at_k"][n] for r in records])
    figures[f"{prefix}final_return"] = _mean([r["final_return"] for r in records])
    return figures


def step_metrics(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Return the step's figures from the per-trial records of :func:`trial_record`.

    Example:
        >>> a = {"returns": [-1.0, 1.0], "pass_at_k": [0.0, 1.0], "final_return": 1.0,
        ...      "invalid": 1, "plays": 4, "turns": 5, "reflection_chars": [10],
        ...      "opponent": "aggressive", "advantages": [0.5, -0.5]}
        >>> m = step_metrics([a])
        >>> m["trial/pass@2"], m["trial/invalid_rate"], m["trial/aggressive/final_return"]
        (1.0, 0.25, 1.0)
    """
    if not records:
        return {}
    metrics = _trial_figures(records, "trial/")
    plays = sum(r["plays"] for r in records)
    metrics["trial/invalid_rate"] = sum(r["invalid"] for r in records) / max(plays, 1)
    metrics["trial/turns"] = _mean([r["turns"] for r in records])
    chars = [c for r in records for c in r["reflection_chars"]]
    if chars:
        metrics["trial/reflection_chars"] = _mean(chars)
    advantages = np.array([a for r in records for a in r["advantages"]], dtype=np.float64)
    if advantages.size:
        metrics.update(
            {
                "advantages/mean": float(advantages.mean()),
                "advantages/std": float(advantages.std()),
                "advantages/min": float(advantages.min()),
                "advantages/max": float(advantages.max()),
            }
        )
    by_opponent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record["opponent"] is not None:
            by_opponent[record["opponent"]].append(record)
    for name, group in sorted(by_opponent.items()):
        figures = _trial_figures(group, f"trial/{name}/")
        metrics.update({k: v for k, v in figures.items() if "/episode_" not in k})
    return metrics

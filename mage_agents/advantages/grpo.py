"""GRPO: a trial's return, normalised within its group (Shao et al., 2024; verl-agent's baseline).

For trajectory ``i`` of a group with score ``s_i`` (its trial return, or its final episode's
return with ``target="final"``), every turn of ``i`` gets

    A_i = (s_i - mean(s)) / (std(s) + eps)      (scale_std=True, as in GRPO)
    A_i =  s_i - mean(s)                         (scale_std=False, Dr. GRPO)

Statistics (``stats``): ``"turn"`` (default, as verl-agent's ``compute_mean_std_cross_all_data``)
counts each trajectory once per turn, which biases the mean and std toward long trajectories;
``"trajectory"`` counts each trajectory once. The std is the unbiased one. A group of one
trajectory, or with equal scores, gets 0.

Example (worked by hand): scores 3, 1, 2 have mean 2 and std 1, so the advantages are 1, -1, 0;
one turn each, so both statistics agree.

    >>> from mage_agents.rollout import Trajectory
    >>> group = [Trajectory.from_rewards([[r]], trial_id=str(r)) for r in (3.0, 1.0, 2.0)]
    >>> [a.round(4).tolist() for a in grpo(group)]
    [[1.0], [-1.0], [0.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mage_agents.advantages.common import Rows, normalise
from mage_agents.advantages.returns import trial_scores

__all__ = ["grpo", "grpo_settings"]


def grpo(
    trajectories: Sequence[Any],
    *,
    target: str = "trial",
    scale_std: bool = True,
    stats: str = "turn",
    eps: float = 1e-6,
) -> list[np.ndarray]:
    """GRPO advantages: one value per trajectory, normalised within its group.

    Args:
        trajectories: The batch (any number of groups, read from ``group_id``).
        target: ``"trial"`` (sum of the episode returns) or ``"final"`` (the last episode's).
        scale_std: Divide by the group's std (GRPO) or only centre it.
        stats: ``"turn"`` or ``"trajectory"`` (see the module docstring).
        eps: Added to the std.

    Returns:
        Per trajectory, one advantage per turn (aligned with ``trajectory.turns``).
    """
    rows = Rows(trajectories)
    scores = trial_scores(rows, target)[rows.owner]
    weights = rows.weights(rows.group, stats)
    advantages = normalise(scores, rows.group, weights, rows.owner, scale_std=scale_std, eps=eps)
    return rows.split(advantages)


def grpo_settings(config: Any) -> dict[str, Any]:
    """GRPO's settings from a training config: the group std, unless ``scale_advantages`` not."""
    scale = config.scale_advantages in ("default", "group")
    return {"scale_std": scale, "stats": config.statistics}

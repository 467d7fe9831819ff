"""RLOO: a trial's return minus the mean return of the other trials of its group.

For a group of ``N`` members with scores ``s`` (trial returns, or final-episode returns):

    A_i = s_i - (sum_{j != i} s_j) / (N - 1) = N / (N - 1) * (s_i - mean(s))

With ``stats="turn"`` (default, as verl-agent's ``compute_rloo_outcome_advantage`` with
``compute_mean_std_cross_all_data=True``) every turn is a member, so ``N`` is the group's number
of turns and long trajectories weigh more; with ``stats="trajectory"`` each trajectory is one
member. No std scaling. A group of one trajectory, or with equal scores, gets 0.

Example (worked by hand): scores 3, 1, 2: the others' means are 1.5, 2.5, 2, so the advantages
are 1.5, -1.5, 0.

    >>> from mage_agents.rollout import Trajectory
    >>> group = [Trajectory.from_rewards([[r]], trial_id=str(r)) for r in (3.0, 1.0, 2.0)]
    >>> [a.tolist() for a in rloo(group)]
    [[1.5], [-1.5], [0.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mage_agents.advantages.common import Rows, normalise
from mage_agents.advantages.returns import trial_scores

__all__ = ["rloo", "rloo_settings"]


def rloo(
    trajectories: Sequence[Any], *, target: str = "trial", stats: str = "turn"
) -> list[np.ndarray]:
    """RLOO advantages: each trajectory's score minus the leave-one-out mean of its group.

    Args:
        trajectories: The batch (any number of groups, read from ``group_id``).
        target: ``"trial"`` (sum of the episode returns) or ``"final"`` (the last episode's).
        stats: ``"turn"`` or ``"trajectory"`` (see the module docstring).

    Returns:
        Per trajectory, one advantage per turn (aligned with ``trajectory.turns``).
    """
    rows = Rows(trajectories)
    scores = trial_scores(rows, target)[rows.owner]
    weights = rows.weights(rows.group, stats)
    advantages = normalise(
        scores, rows.group, weights, rows.owner, scale_std=False, leave_one_out=True
    )
    return rows.split(advantages)


def rloo_settings(config: Any) -> dict[str, Any]:
    """RLOO's settings from a training config (leave-one-out is its own scaling)."""
    return {"stats": config.statistics}

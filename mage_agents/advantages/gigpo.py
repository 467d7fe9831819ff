"""GiGPO: an episode term from the group, plus a step term from anchor-state groups (Feng et al.).

For turn ``t`` of trajectory ``i``:

    A_t = A^E_i + omega * A^S_t

- Episode term ``A^E``: the trajectory's return ``R_i`` (here: the trial's, the sum of its
  episode returns), normalised within its group of trajectories of the same task.
- Step term ``A^S``: the discounted return ``G_t = sum_{k >= t} gamma**(k - t) r_k`` (over the
  trial's play turns; a reflection turn gets the return of the turn after it), normalised within
  the *anchor-state group* of ``t``: every turn of the same group whose raw observation
  (``Turn.anchor_key``) is identical, at any time step.
- Normalisation ``mode``: ``"mean_norm"`` (default, as LaMer's and MAGE's scripts) subtracts the
  mean; ``"mean_std_norm"`` also divides by ``std + eps``. A group of one (one trajectory for the
  episode term, one turn for the step term) or with equal values gets 0.
- Statistics: ``stats="turn"`` (default, as verl-agent) counts every turn row; the episode term
  then weighs long trajectories more. ``stats="trajectory"`` weighs each trajectory once in
  every group (in an anchor group, its turns there share one unit of weight).

Published setting: ``gamma=0.95``, ``omega=1``, group size 8, ``mode="mean_norm"`` (LaMer's
GiGPO runs; verl-agent also ran ``mean_std_norm``).

Example (worked by hand), two one-turn trials from the same state ``s0`` with rewards 1 and 0:
the episode term is +-0.5, the step term (returns 1 and 0 in one anchor group) is +-0.5 too.

    >>> from mage_agents.rollout import Trajectory
    >>> a = Trajectory.from_rewards([[1.0]], trial_id="a")
    >>> b = Trajectory.from_rewards([[0.0]], trial_id="b")
    >>> [x.tolist() for x in gigpo([a, b])]
    [[1.0], [-1.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mage_agents.advantages.common import Rows, centring_mode, check_choice, normalise
from mage_agents.advantages.returns import STEP_GAMMA, discounted_returns, trial_scores

__all__ = ["gigpo", "gigpo_settings", "two_term_advantages", "MODES", "OMEGA"]

MODES = ("mean_norm", "mean_std_norm")
"""GiGPO's normalisation modes."""

OMEGA = 1.0
"""The published weight of the step (anchor-state) term (GiGPO, LaMer, MAGE)."""


def two_term_advantages(
    rows: Rows,
    episode_scores: np.ndarray,
    step_returns: np.ndarray,
    group_keys: np.ndarray,
    *,
    omega: float,
    mode: str,
    stats: str,
    eps: float,
) -> np.ndarray:
    """``A = norm_episode(episode_scores) + omega * norm_anchor(step_returns)``, per row.

    Args:
        rows: The flattened batch.
        episode_scores: Per row, the score the episode term normalises.
        step_returns: Per row, the discounted return the step term normalises.
        group_keys: Per row, the id of its comparison group (the trial group, or the opponent in
            MAGE).
            Anchor-state groups are formed inside each of these.
        omega: Weight of the step term.
        mode: ``"mean_norm"`` or ``"mean_std_norm"``.
        stats: ``"turn"`` or ``"trajectory"``.
        eps: Added to the std.
    """
    check_choice("mode", mode, MODES)
    scale = mode == "mean_std_norm"
    weights = rows.weights(group_keys, stats)
    episode = normalise(episode_scores, group_keys, weights, rows.owner, scale_std=scale, eps=eps)
    anchors = rows.anchors(group_keys)
    step = normalise(
        step_returns,
        anchors,
        rows.weights(anchors, stats),
        np.arange(len(rows)),
        scale_std=scale,
        eps=eps,
    )
    return episode + float(omega) * step


def gigpo(
    trajectories: Sequence[Any],
    *,
    gamma: float = STEP_GAMMA,
    omega: float = OMEGA,
    mode: str = "mean_norm",
    stats: str = "turn",
    eps: float = 1e-6,
) -> list[np.ndarray]:
    """GiGPO advantages (see the module docstring for the formula).

    Args:
        trajectories: The batch (any number of groups, read from ``group_id``).
        gamma: Discount of the step returns.
        omega: Weight of the step term.
        mode: ``"mean_norm"`` or ``"mean_std_norm"``.
        stats: ``"turn"`` or ``"trajectory"``.
        eps: Added to the std.

    Returns:
        Per trajectory, one advantage per turn (aligned with ``trajectory.turns``).
    """
    rows = Rows(trajectories)
    step_returns = discounted_returns(rows, rows.reward, gamma, gamma, across="code")
    scores = trial_scores(rows)[rows.owner]
    advantages = two_term_advantages(
        rows, scores, step_returns, rows.group, omega=omega, mode=mode, stats=stats, eps=eps
    )
    return rows.split(advantages)


def gigpo_settings(config: Any) -> dict[str, Any]:
    """GiGPO's settings from a training config: the step discount, omega, scaling, statistics."""
    mode = centring_mode(config)
    return {
        "gamma": config.step_gamma,
        "omega": config.omega,
        "mode": mode,
        "stats": config.statistics,
    }

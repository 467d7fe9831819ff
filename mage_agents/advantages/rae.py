"""RAE: role-conditioned advantages, a trial's return minus a moving baseline of its role's returns.

SPIRAL (Liu et al., 2025) trains one policy on both seats of a zero-sum game. A group mean
there is about 0 whatever the policy does (one seat's gain is the other's loss) and one seat
may be favoured by the rules (the first player of tic-tac-toe), so SPIRAL keeps, per role
(the seat played), an exponential moving average of that role's returns and subtracts it:

    A_i  = s_i - b_r                               (every turn of trajectory i)
    b_r <- decay * b_r + (1 - decay) * s_i        (the role r of trajectory i, decay 0.95)

trajectory after trajectory in batch order, baselines starting at 0. Each trajectory's
advantage reads its role's baseline *before* its own score enters it (SPIRAL's order: a
baseline that already holds ``s_i`` would pull ``(1 - decay) * s_i`` of the score into its own
baseline and shrink every advantage to ``decay`` times the unbiased one). The score ``s_i`` is
the trial return (``target="trial"``) or the last episode's (``"final"``).

What is centred and scaled: each score is centred on its role's moving baseline, nothing else.
No group mean and no std: RAE's baseline is its role's history, so it needs no group of trials
of one task and works on self-play batches as they come. The trainer's ``scale_advantages``
adds one thing only under ``"batch"``: every advantage is then divided by the std of all the
batch's advantages (not re-centred); under the other modes RAE's values go to the loss as they
are.

The baselines are the estimator's *state*: pass a mapping as ``state`` and it is read and
updated in place (the trainer keeps one for the run and saves it in every checkpoint, so a
resumed run subtracts the baselines the uninterrupted one would). Without ``state`` every
call starts from 0.

Example (worked by hand): the first seat wins 2 then 4, the second loses 2; one baseline per
seat. First seat: A = 2 - 0 = 2, then b = 0.05 * 2 = 0.1; A = 4 - 0.1 = 3.9, then
b = 0.95 * 0.1 + 0.05 * 4 = 0.295. Second seat: A = -2 - 0 = -2, then b = 0.05 * -2 = -0.1.

    >>> from dataclasses import replace
    >>> from mage_agents.rollout import Trajectory
    >>> def game(seat, reward):
    ...     t = Trajectory.from_rewards([[0.0, reward]], trial_id=f"{seat}{reward}")
    ...     return replace(t, turns=[replace(turn, seat=seat) for turn in t.turns])
    >>> state = {}
    >>> batch = [game("first", 2.0), game("second", -2.0), game("first", 4.0)]
    >>> [a.round(4).tolist() for a in rae(batch, state=state)]
    [[2.0, 2.0], [-2.0, -2.0], [3.9, 3.9]]
    >>> {role: round(b, 4) for role, b in state.items()}
    {'first': 0.295, 'second': -0.1}
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import Any

import numpy as np

from mage_agents.advantages.common import Rows
from mage_agents.advantages.returns import trial_scores

__all__ = ["rae", "rae_settings", "role_of", "RAE_DECAY"]

RAE_DECAY = 0.95
"""SPIRAL's decay of each role's moving-average baseline."""


def role_of(trajectory: Any) -> str:
    """The role a trajectory plays: the seat of its play turns (``""`` when none is recorded).

    Raises:
        ValueError: If its play turns sit in more than one seat (one baseline cannot serve both).
    """
    seats = {turn.seat for turn in trajectory.turns if turn.phase == "play"}
    if len(seats) > 1:
        raise ValueError(
            f"Trial {trajectory.trial_id!r} plays the seats {sorted(map(str, seats))}: rae "
            "subtracts one role's baseline per trajectory. Rotate seats per trial "
            "(seat_rotation: trial) or train by self-play, which gives each seat its own rows."
        )
    (seat,) = seats or {None}
    return "" if seat is None else str(seat)


def rae(
    trajectories: Sequence[Any],
    *,
    decay: float = RAE_DECAY,
    target: str = "trial",
    state: MutableMapping[str, float] | None = None,
) -> list[np.ndarray]:
    """Role-conditioned advantages: each trajectory's score minus its role's moving baseline.

    Args:
        trajectories: The batch, in order (each trajectory reads its role's baseline, then
            updates it).
        decay: Weight of a baseline's past, in [0, 1) (SPIRAL: 0.95).
        target: ``"trial"`` (sum of the episode returns) or ``"final"`` (the last episode's).
        state: Role -> baseline, read and updated in place (``None``: every baseline starts at 0
            and nothing is kept).

    Returns:
        Per trajectory, one advantage per turn (aligned with ``trajectory.turns``).

    Raises:
        ValueError: For a decay outside [0, 1), or a trajectory playing several seats.
    """
    if not 0.0 <= decay < 1.0:
        raise ValueError(f"rae's decay must lie in [0, 1), not {decay}.")
    baselines = {} if state is None else state
    scores = trial_scores(Rows(trajectories), target)
    advantages = []
    for trajectory, score in zip(trajectories, scores.tolist(), strict=True):
        role = role_of(trajectory)
        baseline = float(baselines.get(role, 0.0))  # read before the update (SPIRAL's order)
        baselines[role] = decay * baseline + (1.0 - decay) * score
        advantages.append(np.full(len(trajectory.turns), score - baseline))
    return advantages


def rae_settings(config: Any) -> dict[str, Any]:
    """RAE's settings from a training config (its decay, ``rae_decay``)."""
    return {"decay": config.rae_decay}

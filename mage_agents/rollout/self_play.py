"""Self-play trials split by seat: one trajectory per seat, with that seat's own reward.

In a self-play trial (``opponent="self"``, see :mod:`mage_envs.games.openspiel_env`) the one
policy plays every seat, and the rollout engine records every turn, each with the seat it was
played in (``Turn.seat``). :func:`split_seats` turns such a trajectory into one trajectory per
seat: its turns (prompts, answers, token ids) as played, and its rewards as that seat earned
them: the step rewards of its own turns (invalid-answer penalties) and, on its last turn, its
payoff from the final info's ``seat_rewards`` (the mover's payoff, which the env paid on the
game's last step, is taken off that step first). Each seat's trajectory is its own role
(``rae``) and its own group (``group_id|seat``), so estimators that compare the trials of a task
compare the seat's plays of the same deal with each other, never the two seats.

Self-play trials are single games (``num_episodes=1``, as SPIRAL's): across episodes a seat's
memory would carry the other seat's private view into its prompts.

Example:
    >>> from mage_agents import RandomLegalAgent
    >>> from mage_agents.rollout import collect, plan_groups
    >>> (plan,) = plan_groups("mage/KuhnPoker-v0", [3], 1, opponent="self",
    ...                       env_kwargs={"reward_scale": 5}, trial={"num_episodes": 1})
    >>> (trajectory,) = collect([plan], RandomLegalAgent)
    >>> seats = split_seats(trajectory)
    >>> [(t.trial_id.rsplit("|", 1)[1], t.result.final_return) for t in seats]
    [('first', -10.0), ('second', 10.0)]
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mage_agents.rollout.types import Trajectory
from mage_envs.meta.trial import TrialResult

__all__ = ["split_seats", "split_batch"]


def split_seats(trajectory: Trajectory) -> list[Trajectory]:
    """Split a self-play trajectory into one trajectory per seat, in order of first move.

    A trial cut before its game ended (the step limit) has no ``seat_rewards``: each seat
    keeps the rewards of its own turns only.

    Raises:
        ValueError: If the trial has more than one episode, or a turn names no seat.
    """
    if any(turn.episode > 0 or turn.is_reflection for turn in trajectory.turns):
        raise ValueError(
            f"Trial {trajectory.trial_id!r} has several episodes: self-play trials are single "
            "games (num_episodes: 1), since a seat's memory of earlier episodes would show it "
            "the other seat's private view."
        )
    seats: dict[str, list[int]] = {}
    for index, turn in enumerate(trajectory.turns):
        if turn.seat is None:
            raise ValueError(f"Trial {trajectory.trial_id!r}: turn {index} names no seat.")
        seats.setdefault(turn.seat, []).append(index)
    payoffs = _seat_payoffs(trajectory.final_info)
    rewards = [turn.reward for turn in trajectory.turns]
    if payoffs and trajectory.turns:
        last = trajectory.turns[-1]
        rewards[-1] -= payoffs.get(str(last.seat), 0.0)  # the mover's payoff, paid again below
    return [
        _seat_trajectory(trajectory, seat, indices, rewards, payoffs.get(seat))
        for seat, indices in seats.items()
    ]


def split_batch(trajectories: list[Trajectory]) -> list[Trajectory]:
    """:func:`split_seats` of every trajectory, seat after seat, trial after trial."""
    return [seat for trajectory in trajectories for seat in split_seats(trajectory)]


def _seat_payoffs(info: dict[str, Any]) -> dict[str, float]:
    rewards, names = info.get("seat_rewards"), info.get("seat_names")
    if not isinstance(rewards, list) or not isinstance(names, list):
        return {}
    return {str(name): float(value) for name, value in zip(names, rewards, strict=True)}


def _seat_trajectory(
    trajectory: Trajectory,
    seat: str,
    indices: list[int],
    rewards: list[float],
    payoff: float | None,
) -> Trajectory:
    trial_id, group_id = f"{trajectory.trial_id}|{seat}", f"{trajectory.group_id}|{seat}"
    own = [rewards[i] for i in indices]
    if payoff is not None:
        own[-1] += payoff
    turns = [
        replace(trajectory.turns[i], trial_id=trial_id, group_id=group_id, reward=reward)
        for i, reward in zip(indices, own, strict=True)
    ]
    total = sum(own)
    result = TrialResult.from_episodes(
        [total],
        [payoff is not None and payoff > 0],
        num_episodes=1,
        opponents=[turns[0].opponent],
        seats=[seat],
        invalid_actions=sum(t.invalid for t in turns),
        lengths=[len(turns)],
    )
    return replace(
        trajectory,
        trial_id=trial_id,
        group_id=group_id,
        turns=turns,
        result=result,
        latency_s=[trajectory.latency_s[i] for i in indices if i < len(trajectory.latency_s)],
    )

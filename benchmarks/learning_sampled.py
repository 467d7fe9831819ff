"""Exact returns of the greedy policy against a sampling opponent: CFR's equilibrium, sampled.

Part 2's held-out ``cfr-argmax`` plays, at the learner's seat, exactly as the conservative style.
The sampled ``cfr`` does not: acting second it bluffs a Jack after a check and calls a bet with a
Queen a third of the time. Its trials are not a function of the deal, but they are a small tree:
acting second in Kuhn poker the opponent moves once a hand, so a trial of N hands branches into
at most 2**N. A scripted opponent (``script:M0.M1...``, one action id per hand;
:class:`~mage_envs.opponents.scripted.ScriptedOpponent`) plays one branch;
the branch's weight is the product of the sampling opponent's probabilities of those moves at
the information states it met there. The weighted sum over a deal's 2**N scripted trials is the
exact expected return of each episode of the greedy policy against the sampling opponent.
"""

from __future__ import annotations

import itertools
from typing import Any

import pyspiel

from benchmarks.learning_common import DEALS, SAMPLED_HELD_OUT, deal_seeds, play_scored
from mage_envs.games.kuhn_poker import BET, CARD_NAMES, PASS
from mage_envs.opponents.base import PolicyOpponent, SeatView
from mage_envs.opponents.registry import make_opponent

__all__ = ["branch_weight", "sampled_returns"]

_PASS_MOVES = ("check", "fold")  # the env's names of PASS; those of BET are bet and call


def branch_weight(
    opponent: PolicyOpponent, deal: str, first_moves: list[int | None], script: tuple
) -> float:
    """Return the probability that ``opponent``, acting second, plays ``script`` in these games.

    Args:
        opponent: A Kuhn opponent with explicit probabilities (its ``action_probabilities``).
        deal: The learner's card then the opponent's (``"QK"``).
        first_moves: Per game, the learner's first move's action id, or ``None`` where it made
            none (a forfeit: the opponent never moved, and the two scripts that differ there
            are one branch, each weighted a half).
        script: The opponent's move in each game.
    """
    game = pyspiel.load_game("kuhn_poker")
    weight = 1.0
    for first, move in zip(first_moves, script, strict=True):
        if first is None:
            weight *= 0.5
            continue
        state = game.new_initial_state()
        for action in (CARD_NAMES.index(deal[0]), CARD_NAMES.index(deal[1]), first):
            state.apply_action(action)
        probabilities = opponent.action_probabilities(SeatView.from_state(state, 1, game))
        weight *= probabilities.get(move, 0.0)
    return weight


def _first_moves(trajectory: Any, episodes: int) -> list[int | None]:
    """Per episode, the action id of the learner's first accepted move, or ``None``."""
    moves: list[int | None] = [None] * episodes
    for turn in trajectory.turns:
        if turn.phase != "play" or turn.move in (None, "<invalid>"):
            continue
        if turn.seat not in (None, 0, "first"):
            raise ValueError(f"Scored at the first seat only; a turn was at seat {turn.seat}.")
        if moves[turn.episode] is None:
            moves[turn.episode] = PASS if turn.move in _PASS_MOVES else BET
    return moves


def sampled_returns(
    trainer: Any, opponent: str = SAMPLED_HELD_OUT
) -> tuple[list[float], dict[str, list[float]]]:
    """Return the exact expected returns of each episode of the greedy policy vs ``opponent``.

    ``opponent`` is a Kuhn opponent with explicit probabilities, met by the learner in the first
    seat; each deal's trial is played once per script of the opponent's moves. A deterministic
    opponent gives its own trials' returns: every other script weighs 0.

    Returns:
        The mean over the six deals of each episode's expected return; and per deal
        (:data:`DEALS`), each episode's expected return.

    Raises:
        ValueError: If the branches' weights of a deal do not sum to 1 (the opponent moved
            other than once a game, so the tree is not the one scored).
    """
    policy = make_opponent(opponent, pyspiel.load_game("kuhn_poker"))
    episodes = trainer.args.trial.num_episodes
    scripts = list(itertools.product((PASS, BET), repeat=episodes))
    cases = [
        ("script:" + ".".join(map(str, script)), seed)
        for seed in deal_seeds(trainer.args.env_id)
        for script in scripts
    ]
    trajectories = iter(play_scored(trainer, cases, episodes, stop_on_success=False))
    deals: dict[str, list[float]] = {}
    for deal in DEALS:
        expected, total = [0.0] * episodes, 0.0
        for script in scripts:
            trajectory = next(trajectories)
            weight = branch_weight(policy, deal, _first_moves(trajectory, episodes), script)
            total += weight
            for k, value in enumerate(trajectory.result.returns):
                expected[k] += weight * float(value)
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"The branches of deal {deal} weigh {total}, not 1.")
        deals[deal] = expected
    mean = [sum(deals[d][k] for d in DEALS) / len(DEALS) for k in range(episodes)]
    return mean, deals

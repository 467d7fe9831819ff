"""Exact expected payoffs of arena pairs where both players are tabular Kuhn poker policies.

A scripted Kuhn player (the styles, ``cfr``, ``cfr-argmax``, ``random``) states its action
probabilities at every information state (a :class:`~mage_envs.opponents.PolicyOpponent`), so
the expected payoff of one against another is a finite sum over deals and betting lines:
OpenSpiel's ``expected_game_score.policy_value``, through :func:`mage_envs.policy_value.
kuhn_policy_value`. The arena prints it beside the sampled mean payoff, a check of the games.
"""

from __future__ import annotations

from typing import Any

from mage_envs.bounds import policy_table
from mage_envs.opponents import PolicyOpponent
from mage_envs.policy_value import kuhn_policy_value

__all__ = ["exact_values", "pair_value"]


def pair_value(player: PolicyOpponent, other: PolicyOpponent, game: Any) -> float:
    """``player``'s exact expected payoff per game against ``other``, the mean of both seats.

    Example:
        >>> import pyspiel
        >>> from mage_envs.opponents import make_opponent
        >>> kuhn = pyspiel.load_game("kuhn_poker")
        >>> pair_value(make_opponent("always-bet", kuhn), make_opponent("always-pass", kuhn), kuhn)
        1.0
    """
    table = {state: dict(probs) for state, probs in policy_table(player, game).items()}
    return 0.5 * sum(kuhn_policy_value(table, other, seat) for seat in (0, 1))


def exact_values(players: Any) -> dict[tuple[str, str], float]:
    """``(a, b) -> a's exact payoff`` for every pair of tabular players (Kuhn poker only)."""
    game = players.game
    if game.get_type().short_name != "kuhn_poker" or game.num_players() != 2:
        return {}
    tabular = [(n, b) for n, b in players.bots.items() if isinstance(b, PolicyOpponent)]
    values = {}
    for i, (a, bot_a) in enumerate(tabular):
        for b, bot_b in tabular[i + 1 :]:
            values[(a, b)] = pair_value(bot_a, bot_b, game)
    return values

"""The one adapter from an opponent to an OpenSpiel ``Policy``, for OpenSpiel's exact tools.

OpenSpiel's best responses and exploitability read a ``policy.Policy``. :class:`OpponentPolicy`
shows any opponent that publishes ``action_probabilities(view)`` (a
:class:`~mage_envs.opponents.base.PolicyOpponent`) as one; it asks the opponent with the
:class:`~mage_envs.opponents.base.SeatView` of the seat to move, so it sees no hidden information.
"""

from __future__ import annotations

from typing import Any

import pyspiel
from open_spiel.python import policy as openspiel_policy

from mage_envs.opponents.base import SeatView

__all__ = ["OpponentPolicy"]


class OpponentPolicy(openspiel_policy.Policy):
    """An OpenSpiel policy that asks an opponent for its action probabilities.

    Args:
        game: The OpenSpiel game.
        opponent: Any object with ``action_probabilities(view) -> {action: probability}``.
        players: The seats it plays (default: all).

    Example:
        >>> import pyspiel
        >>> from mage_envs.opponents import make_opponent
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> policy = OpponentPolicy(game, make_opponent("always-bet", game))
        >>> state = game.new_initial_state().child(0).child(1)
        >>> policy.action_probabilities(state)
        {0: 0.0, 1: 1.0}
    """

    def __init__(self, game: pyspiel.Game, opponent: Any, players: list[int] | None = None) -> None:
        super().__init__(game, list(range(game.num_players())) if players is None else players)
        self.opponent = opponent

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict:
        """Return ``{action: probability}`` of the opponent in the seat to move at ``state``."""
        player = state.current_player() if player_id is None else player_id
        view = SeatView.from_state(state, player, self.game)
        return dict(self.opponent.action_probabilities(view))

"""``script:M0.M1...``: an opponent that plays a given move in each game of a trial.

It is deterministic and knows nothing of the game: game ``g`` since it was built, it plays the
action id ``M<g>`` at every decision. Played once per branch of a sampling opponent's moves, it
turns a trial against that opponent into a weighted sum of deterministic trials (the learning
benchmark scores the sampled CFR opponent exactly this way); it also pins a game's moves in a
test.
"""

from __future__ import annotations

import pyspiel

from mage_envs.opponents.base import PolicyOpponent, SeatView
from mage_envs.opponents.registry import register_opponent_scheme

__all__ = ["ScriptedOpponent", "scripted_opponent"]


class ScriptedOpponent(PolicyOpponent):
    """Plays ``moves[g]`` (an action id) at every decision of the ``g``-th game since it was built.

    Args:
        moves: One action id per game of the trial, in order.
    """

    reads_state = False

    def __init__(self, moves: tuple[int, ...]) -> None:
        super().__init__()
        self.moves = tuple(moves)
        self.name = "script:" + ".".join(map(str, self.moves))
        self._game = -1

    def reset(self, seed: int | None, player: int) -> None:
        """Start the next game of the script."""
        super().reset(seed, player)
        self._game += 1

    def action_probabilities(self, view: SeatView) -> dict[int, float]:
        """Return the scripted move of this game, one-hot.

        Raises:
            ValueError: If the script has no move for this game, or its move is not legal here.
        """
        if not 0 <= self._game < len(self.moves):
            raise ValueError(f"{self.name} has no move for game {self._game + 1}.")
        move = self.moves[self._game]
        if move not in view.legal_actions:
            raise ValueError(
                f"{self.name}: move {move} is not legal at {view.information_state!r}."
            )
        return {a: float(a == move) for a in view.legal_actions}


def scripted_opponent(spec: str, game: pyspiel.Game) -> ScriptedOpponent:
    """Build ``script:SPEC``, where SPEC is one action id per game joined by dots (``0.1.1``)."""
    parts = spec.split(".")
    if not all(p.isascii() and p.isdigit() for p in parts):
        raise ValueError(
            f"script:SPEC takes action ids joined by dots, such as 0.1.1, not {spec!r}."
        )
    return ScriptedOpponent(tuple(int(p) for p in parts))


register_opponent_scheme("script", scripted_opponent)

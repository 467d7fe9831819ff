"""MAGE's "theoretical upper bound" on Kuhn poker, reproduced to explain its 65.6%.

MAGE's code (``agent_system/environments/kuhnpoker/envs.py``, ``is_winnable_oracle``) marks a deal
winnable when some line of play wins it against a *model* of the opponent: for its ``cfr``
opponent the model bets or calls only with a King. The real CFR-1000 argmax differs in one place:
as first player with a Queen it checks and then calls a bet (CFR's average policy calls there with
probability about 0.53), so a Jack cannot bluff a Queen. The oracle therefore counts 4 of the 6
deals with the agent second where the exact bound (:func:`mage_envs.bounds.kuhn_bounds`) counts 3.
The paper's 65.6% is 84/128: the oracle's count on its 128 validation deals (4/6 expected).
"""

from __future__ import annotations

from itertools import permutations

__all__ = ["MAGE_MODELS", "mage_oracle_winnable", "mage_oracle_share", "MAGE_PAPER_BOUND"]

JACK, QUEEN, KING = 0, 1, 2

MAGE_PAPER_BOUND = 84 / 128
"""The figure MAGE's paper quotes for Kuhn poker against CFR (65.6%, agent second)."""


def _conservative(facing_bet: bool, card: int) -> bool:
    return card == KING


def _aggressive(facing_bet: bool, card: int) -> bool:
    return card != JACK if facing_bet else True


def _balanced(facing_bet: bool, card: int) -> bool:
    return card == KING or (card == QUEEN and not facing_bet)


MAGE_MODELS = {
    "conservative": _conservative,
    "aggressive": _aggressive,
    "balanced": _balanced,  # MAGE's "intermediate"
    "cfr-argmax": _conservative,  # the oracle's model of its "cfr" player: a King bets or calls
}
"""Our opponent name -> MAGE's oracle model: ``f(facing_bet, card) -> bets (or calls)``."""


def mage_oracle_winnable(opponent: str, agent_card: int, opponent_card: int, seat: int) -> bool:
    """Whether MAGE's oracle calls a deal winnable (cards 0 Jack, 1 Queen, 2 King; seat 0 first).

    Example:
        >>> mage_oracle_winnable("cfr-argmax", JACK, QUEEN, seat=1)  # a bluff the model folds to
        True
    """
    bets = MAGE_MODELS[opponent]
    higher = agent_card > opponent_card
    if seat == 0:  # check and show down (or call its bet) with the higher card, or bet it off
        return higher or not bets(True, opponent_card)
    if bets(False, opponent_card):  # it bets first: only calling with the higher card wins
        return higher
    return higher or not bets(True, opponent_card)  # it checked: show down, or bluff it off


def mage_oracle_share(opponent: str, seat: int) -> float:
    """The share of the six deals MAGE's oracle calls winnable.

    Example:
        >>> mage_oracle_share("cfr-argmax", seat=1)
        0.6666666666666666
    """
    deals = list(permutations((JACK, QUEEN, KING), 2))
    return sum(mage_oracle_winnable(opponent, a, o, seat) for a, o in deals) / len(deals)

"""Scripted Kuhn poker styles: MAGE's training opponents and two trivial ones.

A style is the probability of betting with each card (J, Q, K) in two situations: when no bet is
faced (open: bet rather than check) and when facing a bet (bet = call rather than fold). It reads
only its own information state (its card and the betting), never the other card.

MAGE's training styles (the paper's wording, see ``docs/opponents.md`` for how we read it):

- ``conservative``: bets and calls only with a King.
- ``aggressive``: always bets first; facing a bet, folds a Jack and calls otherwise.
- ``balanced`` (``intermediate`` in MAGE's code): a King bets and calls, a Jack checks and folds,
  a Queen bets unless facing a bet (then it folds).

Importing the module registers the styles by name and Kuhn poker's population presets:

- ``mage-kuhn-train``: conservative 0.3, aggressive 0.3, balanced 0.4 (MAGE's training pool).
- ``mage-kuhn-eval``: ``cfr-argmax`` (MAGE's evaluation opponent).
- ``kuhn-nash``: ``cfr`` (sampled equilibrium play).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyspiel

from mage_envs.opponents.base import PolicyOpponent, SeatView
from mage_envs.opponents.population import Population
from mage_envs.opponents.registry import register_opponent, register_population

__all__ = ["KuhnStyle", "KUHN_STYLES", "PASS", "BET"]

PASS, BET = 0, 1


@dataclass(frozen=True)
class _BetProbabilities:
    open: tuple[float, float, float]
    facing: tuple[float, float, float]


class KuhnStyle(PolicyOpponent):
    """A Kuhn poker opponent that bets with fixed probabilities per card and situation.

    Args:
        name: The name shown in ``info["opponent"]``.
        open: Probability of betting with J, Q, K when no bet is faced.
        facing: Probability of calling with J, Q, K when facing a bet.

    Example:
        >>> import pyspiel
        >>> state = pyspiel.load_game("kuhn_poker").new_initial_state()
        >>> for action in (2, 0):  # player 0 gets the King, player 1 the Jack
        ...     state.apply_action(action)
        >>> style = KUHN_STYLES["conservative"]()
        >>> style.action_probabilities(SeatView.from_state(state, 0))
        {0: 0.0, 1: 1.0}
    """

    def __init__(
        self,
        name: str,
        open: tuple[float, float, float],
        facing: tuple[float, float, float],
    ) -> None:
        super().__init__()
        for situation, probs in (("open", open), ("facing", facing)):
            if len(probs) != 3 or not all(0.0 <= float(p) <= 1.0 for p in probs):
                raise ValueError(
                    f"{situation} must hold three bet probabilities in [0, 1] (J, Q, K), "
                    f"not {probs!r}."
                )
        self.name = name
        self._bets = _BetProbabilities(
            tuple(float(p) for p in open), tuple(float(p) for p in facing)
        )

    def bet_probability(self, card: int, facing_bet: bool) -> float:
        """Return the probability of betting (or calling) with ``card`` (0 = J, 1 = Q, 2 = K)."""
        return (self._bets.facing if facing_bet else self._bets.open)[card]

    def action_probabilities(self, view: SeatView) -> dict[int, float]:
        """Return ``{PASS: p, BET: 1 - p}`` from the card and the betting in the information state.

        Raises:
            ValueError: If the view is not a Kuhn poker information state.
        """
        card, betting = _parse_information_state(view.information_state)
        bet = self.bet_probability(card, facing_bet="b" in betting)
        return {PASS: 1.0 - bet, BET: bet}


def _parse_information_state(info: str) -> tuple[int, str]:
    """Split OpenSpiel's Kuhn information state (for example ``"2pb"``) into card and betting."""
    if not info or info[0] not in "012" or set(info[1:]) - {"p", "b"}:
        raise ValueError(
            f"Expected a two-player Kuhn poker information state such as '2pb', not {info!r}."
        )
    return int(info[0]), info[1:]


KUHN_STYLES = {
    "conservative": lambda: KuhnStyle("conservative", open=(0, 0, 1), facing=(0, 0, 1)),
    "aggressive": lambda: KuhnStyle("aggressive", open=(1, 1, 1), facing=(0, 1, 1)),
    "balanced": lambda: KuhnStyle("balanced", open=(0, 1, 1), facing=(0, 0, 1)),
    "always-pass": lambda: KuhnStyle("always-pass", open=(0, 0, 0), facing=(0, 0, 0)),
    "always-bet": lambda: KuhnStyle("always-bet", open=(1, 1, 1), facing=(1, 1, 1)),
}
"""Style name -> factory of a fresh :class:`KuhnStyle`."""


def _is_kuhn(game: pyspiel.Game) -> bool:
    return game.get_type().short_name == "kuhn_poker" and game.num_players() == 2


_DESCRIPTIONS = {
    "conservative": "bets and calls only with a King",
    "aggressive": "always bets when it can; facing a bet folds a Jack, calls otherwise",
    "balanced": 'MAGE\'s "intermediate": King bets/calls, Jack checks/folds, Queen bets when not '
    "facing a bet and folds to one",
    "always-pass": "passes (checks or folds) every time",
    "always-bet": "bets (bets or calls) every time",
}
for _name, _words in _DESCRIPTIONS.items():
    register_opponent(
        _name, lambda game, s=KUHN_STYLES[_name]: s(), _is_kuhn, games="Kuhn", description=_words
    )
register_population(
    Population({"conservative": 0.3, "aggressive": 0.3, "balanced": 0.4}, "mage-kuhn-train")
)
register_population(Population({"cfr-argmax": 1.0}, "mage-kuhn-eval"))
register_population(Population({"cfr": 1.0}, "kuhn-nash"))

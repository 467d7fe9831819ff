"""Kuhn poker as text, on OpenSpiel's ``kuhn_poker`` rules.

Three cards (J < Q < K), one per player, ante 1 chip each. Moves are OpenSpiel's Pass (0) and
Bet (1), shown in poker words: with no bet to face, ``check`` or ``bet``; facing a bet, ``fold`` or
``call``. ``pass`` and ``bet`` are accepted as aliases in both situations. A player sees their own
card and the betting; the opponent's card appears only when the rules reveal it (a showdown).
"""

from __future__ import annotations

from typing import Any

import pyspiel

from mage_envs.games.mage_pages import MAGE_KUHN
from mage_envs.games.openspiel_env import OpenSpielTextEnv
from mage_envs.games.text_game import Move, TextGame
from mage_envs.projections import action_tag, mage_kuhn

__all__ = ["KuhnPokerText", "KuhnPokerEnv", "CARD_NAMES"]

CARD_NAMES = ("J", "Q", "K")
PASS, BET = 0, 1


def betting(state: pyspiel.State) -> list[int]:
    """Return the betting actions so far (the history after the two deals)."""
    return state.history()[2:]


def facing_bet(actions: list[int]) -> bool:
    """Return True if the player to act faces an uncalled bet."""
    return BET in actions


def is_showdown(actions: list[int]) -> bool:
    """Return True if a finished betting sequence ends in a showdown (nobody folded)."""
    return not (len(actions) >= 2 and actions[-1] == PASS and actions[-2] == BET)


class KuhnPokerText(TextGame):
    """Text rendering of Kuhn poker for one player."""

    published_rules = ("mage",)

    def __init__(self) -> None:
        super().__init__(pyspiel.load_game("kuhn_poker"), "Kuhn poker")

    def published_move(self, answer: str, rules: str, state: pyspiel.State, player: int) -> int:
        """MAGE's projection: ``PASS`` (0) or ``BET`` (1), alone and upper-case in the tag."""
        return mage_kuhn(answer)

    def published_answer(self, action: int, rules: str) -> str:
        """``<action>PASS</action>`` or ``<action>BET</action>``."""
        return action_tag("BET" if action == BET else "PASS")

    def published_hint(self, rules: str) -> str:
        """MAGE's format: one action name inside the tag."""
        return "write PASS or BET inside <action></action>, e.g. <action>PASS</action>."

    def moves(self, state: pyspiel.State, player: int) -> list[Move]:
        """Return check/bet, or fold/call when facing a bet."""
        if facing_bet(betting(state)):
            return [Move(PASS, "fold", ("pass",)), Move(BET, "call", ("bet",))]
        return [Move(PASS, "check", ("pass",)), Move(BET, "bet")]

    def move_name(self, state: pyspiel.State, player: int, action: int) -> str:
        """Check or bet; facing a bet, fold or call."""
        facing = facing_bet(betting(state))
        if action == PASS:
            return "fold" if facing else "check"
        return "call" if facing else "bet"

    def observation_text(self, state: pyspiel.State, player: int) -> str:
        """Return the rules in brief, the player's card, the betting in words and the pot."""
        history = state.history()
        card, actions = CARD_NAMES[history[player]], history[2:]
        contributed = [1, 1]
        for i, action in enumerate(actions):
            contributed[i % 2] += action
        mine, theirs = contributed[player], contributed[1 - player]
        return (
            f"Kuhn poker: cards J < Q < K, one card each, both ante 1 chip. "
            f"You act {self.seat_name(player)}.\n"
            f"Your card: {card}.\n"
            f"Betting so far: {describe_betting(actions, player)}.\n"
            f"Pot: {mine + theirs} chips (you put in {mine}, the opponent {theirs})."
        )

    def outcome_text(self, state: pyspiel.State, player: int) -> str:
        """Describe how the hand ended and what the player won or lost."""
        actions = betting(state)
        payoff = int(state.returns()[player])
        chips = f"{abs(payoff)} chip{'s' if abs(payoff) != 1 else ''}"
        result = f"You win {chips}." if payoff > 0 else f"You lose {chips}."
        if not is_showdown(actions):
            folder = "you" if (len(actions) - 1) % 2 == player else "the opponent"
            return f"The hand is over: {folder} folded. {result}"
        mine = CARD_NAMES[state.history()[player]]
        theirs = CARD_NAMES[state.history()[1 - player]]
        return f"The hand is over. Showdown: your {mine} against the opponent's {theirs}. {result}"

    def outcome_key(self, state: pyspiel.State, player: int) -> tuple[str, int | None]:
        """Return what the player knows at the end: the information state, and the shown card.

        At a showdown the end text and :meth:`revealed` show the opponent's card; after a fold
        nothing more than the information state.
        """
        history = state.history()
        shown = history[1 - player] if is_showdown(history[2:]) else None
        return state.information_state_string(player), shown

    def revealed(self, state: pyspiel.State, player: int) -> dict[str, Any]:
        """At a showdown, both cards; after a fold, only the player's own card."""
        history = state.history()
        facts: dict[str, Any] = {"your_card": CARD_NAMES[history[player]]}
        showdown = is_showdown(betting(state))
        facts["showdown"] = showdown
        if showdown:
            facts["opponent_card"] = CARD_NAMES[history[1 - player]]
        return facts

    def ground_truth(self, state: pyspiel.State, player: int) -> dict[str, Any]:
        """The deal: both cards, the opponent's included (for analysis, never shown)."""
        history = state.history()
        if len(history) < 2:  # not dealt yet
            return {}
        return {
            "your_card": CARD_NAMES[history[player]],
            "opponent_card": CARD_NAMES[history[1 - player]],
        }

    def opponent_moves_shown(self) -> bool:
        """The betting is public: each player sees the other's moves."""
        return True


def describe_betting(actions: list[int], player: int) -> str:
    """Describe the betting in words from ``player``'s side.

    Example:
        >>> describe_betting([0, 1], player=0)
        'you checked, the opponent bet'
    """
    if not actions:
        return "nothing yet"
    words, bet_made = [], False
    for i, action in enumerate(actions):
        who = "you" if i % 2 == player else "the opponent"
        if action == BET:
            verb, bet_made = ("called" if bet_made else "bet"), True
        else:
            verb = "folded" if bet_made else "checked"
        words.append(f"{who} {verb}")
    return ", ".join(words)


class KuhnPokerEnv(OpenSpielTextEnv):
    """``mage/KuhnPoker-v0``: Kuhn poker against an opponent, as text.

    The reward is the chips won in the hand times ``reward_scale`` (MAGE used 5).

    Arguments: as :class:`~mage_envs.games.openspiel_env.OpenSpielTextEnv`.

    Example:
        >>> import gymnasium as gym, mage_envs
        >>> env = gym.make("mage/KuhnPoker-v0", seat="second", opponent="always-bet")
        >>> obs, info = env.reset(seed=0)
        >>> info["seat"], info["legal_actions"]
        ('second', ['fold', 'call'])
    """

    text_game_class = KuhnPokerText
    page_presets = {"mage": MAGE_KUHN}  # MAGE's pages (mage_envs/page_presets.py)

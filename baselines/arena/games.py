"""The arena's games: who plays whom, on which deal, and one game played to its end.

Every pair of players meets on the same ``N`` deals in both seat orders: deal ``d`` of a pair is
played with A first and B second, then with B first and A second, from the same chance seed, so
the cards (or the chance moves of any game) are the same in both orders and luck cancels. Deals
are the same for every pair as well. A player's own randomness is seeded from the deal and its
seat, so a game replays byte for byte.

Players are opponents of :mod:`mage_envs.opponents` (scripted names, ``mcts-N``, ``cfr``) or
agents (``agent:SPEC``, or a bare agent spec such as ``local:PATH`` or ``openai:MODEL@URL``):
an agent reads its own seat's page, rendered by the env's text game, as it does as an opponent
in the envs. Three endings of a game are kept apart:

- it is played out: the payoffs are OpenSpiel's;
- a player named no legal move in its answers (:class:`OpponentForfeit`): it loses, scored the
  game's worst payoff, the other the opposite;
- a player's backend gave no answer (:class:`OpponentFault`): no result. The game is recorded
  as failed, counted nowhere, and played again by the next run.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import pyspiel

from mage_envs.games.openspiel_env import sample_chance
from mage_envs.games.views import ViewCache
from mage_envs.opponents import (
    Opponent,
    OpponentFault,
    OpponentForfeit,
    SeatView,
    make_opponent,
)
from mage_envs.opponents.text_opponent import reads_page

__all__ = ["ArenaGame", "Players", "Schedule", "schedule", "play", "game_id", "player_spec"]

TWO_PLAYER_GAMES = (
    "The arena plays the two-player games of the suite: mage/KuhnPoker-v0, mage/TicTacToe-v0 "
    "or mage/OpenSpiel-v0."
)
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_CHANCE = int(pyspiel.PlayerId.CHANCE)


@dataclass(frozen=True)
class ArenaGame:
    """One scheduled game.

    Attributes:
        first: The name of the player in seat 0.
        second: The name of the player in seat 1.
        deal: The deal's index (the same deals for every pair and both orders).
        seed: The arena's seed.
    """

    first: str
    second: str
    deal: int
    seed: int

    def streams(self) -> tuple[random.Random, int, int]:
        """The chance generator and the two seats' seeds: functions of the seed and deal only."""
        # One int-seeded stdlib generator: numpy's SeedSequence costs as much as a Kuhn hand.
        rng = random.Random(self.seed * 2**32 + self.deal)
        return rng, rng.getrandbits(63), rng.getrandbits(63)


def game_id(env_id: str, game: ArenaGame) -> str:
    """The game's id in the results file (the key a rerun resumes by)."""
    return f"{env_id}|{game.first}|{game.second}|seed{game.seed}|deal{game.deal}"


class Schedule(Sequence[ArenaGame]):
    """Every pair on ``deals`` deals, both seat orders, deal by deal; each game made when asked.

    The length and the game at any position are known without making the others, so a
    schedule of a trillion deals costs nothing until played (as the runner's ``--tasks``).

    Raises:
        ValueError: For fewer than one deal.

    Example:
        >>> [(g.first, g.second, g.deal) for g in Schedule(["a", "b"], 2, seed=0)]
        [('a', 'b', 0), ('b', 'a', 0), ('a', 'b', 1), ('b', 'a', 1)]
    """

    def __init__(self, names: Sequence[str], deals: int, seed: int) -> None:
        if deals < 1:
            raise ValueError(f"--games must be >= 1, not {deals}.")
        self.deals, self.seed = int(deals), seed
        orders = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
        self.orders = [order for a, b in orders for order in ((a, b), (b, a))]

    def __len__(self) -> int:
        return self.deals * len(self.orders)

    def __getitem__(self, index: int) -> ArenaGame:
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("Schedule index out of range.")
        deal, order = divmod(index, len(self.orders))
        return ArenaGame(*self.orders[order], deal, self.seed)

    def __iter__(self) -> Iterator[ArenaGame]:
        for deal in range(self.deals):
            for first, second in self.orders:
                yield ArenaGame(first, second, deal, self.seed)


def schedule(names: Sequence[str], deals: int, seed: int) -> Schedule:
    """Every pair on ``deals`` deals, both seat orders, deal by deal (a lazy :class:`Schedule`).

    Example:
        >>> [(g.first, g.second, g.deal) for g in schedule(["a", "b"], 2, seed=0)]
        [('a', 'b', 0), ('b', 'a', 0), ('a', 'b', 1), ('b', 'a', 1)]
    """
    return Schedule(names, deals, seed)


_BARE_AGENT_KINDS = ("openai", "local", "tiny", "python")
"""Agent kinds a player may name without ``agent:`` (the others are opponent names too)."""


def player_spec(name: str) -> str:
    """The opponent spec of an arena player: a bare agent spec (``local:PATH``) is ``agent:``.

    Example:
        >>> player_spec("local:/models/q"), player_spec("cfr"), player_spec("agent:random")
        ('agent:local:/models/q', 'cfr', 'agent:random')
    """
    return f"agent:{name}" if name.partition(":")[0] in _BARE_AGENT_KINDS else name


class Players:
    """The arena's players for one env: built once, each told its seat and seed per game.

    Args:
        env_id: The env whose game and text pages the arena plays (``mage/KuhnPoker-v0``).
        names: The players' names (see :func:`player_spec`).

    Raises:
        ValueError: If the env is not a two-player OpenSpiel text env, or a name is unknown.
    """

    def __init__(self, env_id: str, names: Sequence[str]) -> None:
        if len(set(names)) != len(names) or len(names) < 2:
            raise ValueError(f"--agents needs two or more different players, not {list(names)}.")
        try:
            env = gym.make(env_id).unwrapped
        except gym.error.Error as error:  # an unknown id, namespace or version
            raise ValueError(f"--env {env_id}: {error} {TWO_PLAYER_GAMES}") from None
        text_game = getattr(env, "text_game", None)
        if text_game is None:
            raise ValueError(f"--env {env_id} is not a two-player game. {TWO_PLAYER_GAMES}")
        self.env_id, self.game = env_id, text_game.game
        self.views = ViewCache(text_game)
        self.bots: dict[str, Opponent] = {
            name: make_opponent(player_spec(name), self.game) for name in names
        }

    def play(self, game: ArenaGame) -> dict[str, Any]:
        """Play ``game``; return its record.

        The record holds ``payoffs``, ``moves`` and ``chance`` (the chance outcomes: the cards),
        or with ``forfeit`` the forfeiter, or only a ``fault`` (no result).
        """
        chance, *seat_seeds = game.streams()
        bots = (self.bots[game.first], self.bots[game.second])
        try:
            for seat, bot in enumerate(bots):
                if reads_page(bot):
                    bot.begin_episode(0)  # each arena game is a trial of its own
                bot.reset(seat_seeds[seat], seat)
            payoffs, moves, dealt = play(self.game, bots, chance, self.views)
        except OpponentFault as fault:
            return {"fault": str(fault)}
        except _Forfeit as forfeit:
            return {
                "payoffs": forfeit.payoffs,
                "forfeit": forfeit.name,
                "moves": forfeit.moves,
                "chance": forfeit.dealt,
            }
        return {"payoffs": payoffs, "moves": moves, "chance": dealt}


class _Forfeit(Exception):
    def __init__(self, name: str, payoffs: list[float], moves: int, dealt: list[int]) -> None:
        super().__init__(name)
        self.name, self.payoffs, self.moves, self.dealt = name, payoffs, moves, dealt


def play(
    game: pyspiel.Game,
    bots: Sequence[Opponent],
    rng: random.Random,
    views: ViewCache | None = None,
) -> tuple[list[float], int, list[int]]:
    """Play one game, ``bots[p]`` in seat ``p`` (already reset).

    A bot that reads pages gets its seat's page from ``views`` and its end page at the end.

    Returns:
        The payoffs, the number of moves and the chance outcomes (the deal), in order.

    Raises:
        OpponentFault: A bot's backend gave no answer.
        ValueError: A bot chose an illegal action.
    """
    state, moves, dealt = game.new_initial_state(), 0, []
    readers = [views is not None and reads_page(bot) for bot in bots]
    player = state.current_player()
    while player != _TERMINAL:
        if player == _CHANCE:
            dealt.append(sample_chance(state, rng.random()))
            state.apply_action(dealt[-1])
            player = state.current_player()
            continue
        bot = bots[player]
        page = views.view(state, player, False) if readers[player] else None
        view = SeatView.from_state(state, player, game, page)
        try:
            action = bot.act(view)
        except OpponentForfeit:
            worst = float(game.min_utility())
            payoffs = [-worst, -worst]
            payoffs[player] = worst
            raise _Forfeit(bot.name, payoffs, moves, dealt) from None
        if action not in view.legal_actions:
            raise ValueError(f"{bot.name!r} chose the illegal action {action!r}.")
        state.apply_action(action)
        moves += 1
        player = state.current_player()
    for seat, bot in enumerate(bots):
        if readers[seat]:
            bot.end_game(views.view(state, seat, True))
    return [float(r) for r in state.returns()], moves, dealt

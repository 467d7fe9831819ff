"""A single-agent Gymnasium text env for a two-player OpenSpiel game, against an opponent.

The learner writes text; the env parses it into a legal move, applies it with OpenSpiel's rules,
lets the opponent (and chance) move, and returns what the learner sees next as text.

Invalid text follows :class:`~mage_envs.invalid.InvalidAnswerRule`; a game cut off by
``max_invalid_actions`` invalid answers in a row is a forfeit: lost, and scored ``forfeit_payoff``
(by default the game's worst payoff, OpenSpiel's ``min_utility``), so that answering junk never
scores better than playing and losing. An opponent that reads text
(:class:`~mage_envs.opponents.text_opponent.TextOpponent`: any agent) gets the page of its own
seat, rendered by the same text game, and its end page when the game is over; if it forfeits
(no legal move in its answers) the learner wins with ``-forfeit_payoff``; if its backend fails,
:class:`~mage_envs.opponents.text_opponent.OpponentFault` leaves ``step``/``reset``: no result
for either side (the rollout engine voids the trial).

Self-play (``opponent="self"``): no opponent moves; the agent plays every seat, each step the
seat to move, and reads that seat's view only (its own card, never the other's). The step's
reward is the mover's (its payoff when its move ends the game), and the final info's
``seat_rewards`` holds every seat's reward, by player id, with their ``seat_names``, so that each
seat's turns can be trained on with their own reward (the wrapper's trial returns add up the
movers' rewards of both seats: they are no one seat's score, see
``mage_agents.rollout.self_play``). A game of the suite is a
subclass that names its :class:`~mage_envs.games.text_game.TextGame` in ``text_game_class``; the
constructor and its documentation live here only.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import gymnasium as gym
import pyspiel

from mage_envs.games.seeding import SeededGenerator
from mage_envs.games.text_game import TextGame
from mage_envs.games.views import View, ViewCache
from mage_envs.invalid import (
    INVALID_ANSWER_SETTINGS,
    InvalidAnswerRule,
    InvalidStreak,
    did_not_name,
)
from mage_envs.opponents import Opponent, Population, SeatView, as_population
from mage_envs.opponents.text_opponent import OpponentForfeit, PageReader, reads_page
from mage_envs.parsing import parse_action
from mage_envs.seeds import draw_seed
from mage_envs.text import fit_text, render_text, text_space

__all__ = ["OpenSpielTextEnv", "SEATS", "SELF_PLAY"]

SEATS = ("first", "second", "random")
SELF_PLAY = "self"
"""The opponent spec of self-play: the agent plays every seat."""
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_CHANCE = int(pyspiel.PlayerId.CHANCE)


class OpenSpielTextEnv(gym.Env[str, str]):
    """The learner against an opponent in a two-player OpenSpiel game, through text.

    Subclasses set ``text_game_class`` (a :class:`~mage_envs.games.text_game.TextGame` built with
    no arguments) and need no constructor of their own.

    Args:
        opponent: ``None`` (uniform random legal play), ``"self"`` (self-play: the agent plays
            every seat, ``seat`` unused; see the module docstring), an opponent name, an object
            following the :class:`~mage_envs.opponents.Opponent` protocol, or a
            :class:`~mage_envs.opponents.Population` or population preset name (one member is
            drawn at each reset from the seed; ``options={"keep_opponent": True}`` keeps it).
        seat: ``"first"``, ``"second"`` or ``"random"`` (drawn at each reset from the seed).
        reward_scale: Multiplies the game payoff (MAGE used 5 chips per unit in Kuhn poker and
            10 per win in tic-tac-toe).
        invalid_action_penalty: Subtracted from the reward of an invalid answer (LaMer trained with
            0.5, GiGPO with 0.1; default 0 keeps rewards equal to game payoffs).
        max_invalid_actions: Consecutive invalid answers that end the episode as truncated: a
            forfeit, with ``info["forfeit"] = True`` (``None``: no limit).
        forfeit_payoff: The payoff of a forfeit (then multiplied by ``reward_scale``, like any
            payoff; the invalid-action penalty is charged on top); ``None``: the game's worst
            payoff (Kuhn poker -2, tic-tac-toe -1). MAGE's published env scored 0 (its invalid
            answers earned 0 and the game was cut at ``max_turns``); pass 0.0 to do the same.
        max_turns: The learner's answers a game may take, invalid ones included (MAGE's
            ``max_turns``); a game still unfinished when they are spent is cut off as a forfeit,
            scored ``forfeit_payoff`` like one ended by ``max_invalid_actions`` (``None``: no
            limit). Unlike Gymnasium's ``max_episode_steps``, which ends the episode unscored,
            so that a model writing junk until the limit would score 0, above playing and losing.
        forfeit_winner_payoff: In self-play, the payoff of the other seat when one forfeits
            (times ``reward_scale``); ``None``: ``-forfeit_payoff``, zero-sum. SPIRAL ended a
            game at the first invalid answer and scored it -1.5 for the offender and +0.5 for
            the other seat: ``max_invalid_actions=1, forfeit_payoff=-1.5,
            forfeit_winner_payoff=0.5``.
        render_mode: ``None``, ``"ansi"`` (``render()`` returns the text) or ``"human"``.
        answer_rules: ``"ours"`` (default: the tolerant parser of :mod:`mage_envs.parsing`) or a
            published projection the game knows (``"mage"`` for Kuhn poker and tic-tac-toe, see
            :mod:`mage_envs.projections`).
        text_game: The game and its text rendering (default: ``text_game_class()``).
    """

    metadata = {
        "render_modes": ["ansi", "human"],
        "render_fps": 4,
        "reset_options": ("seat", "keep_opponent", "episode"),
        "invalid_answer_settings": INVALID_ANSWER_SETTINGS,
    }
    text_game_class: ClassVar[type[TextGame] | None] = None
    """The game of a subclass: its :class:`TextGame`, built with no arguments."""

    def __init__(
        self,
        opponent: str | Opponent | Population | None = None,
        seat: str = "first",
        reward_scale: float = 1.0,
        invalid_action_penalty: float = 0.0,
        max_invalid_actions: int | None = 5,
        render_mode: str | None = None,
        *,
        answer_rules: str = "ours",
        text_game: TextGame | None = None,
        forfeit_payoff: float | None = None,
        max_turns: int | None = None,
        forfeit_winner_payoff: float | None = None,
    ) -> None:
        _check_settings(seat, render_mode, self.metadata["render_modes"])
        if not (math.isfinite(reward_scale) and reward_scale > 0):
            raise ValueError(f"reward_scale must be a finite number > 0, not {reward_scale!r}.")
        self.invalid_rule = InvalidAnswerRule(invalid_action_penalty, max_invalid_actions)
        if text_game is None:
            if self.text_game_class is None:
                raise TypeError(f"{type(self).__name__} needs text_game= (or text_game_class).")
            text_game = self.text_game_class()
        self.text_game = text_game
        known = ("ours", *text_game.published_rules)
        if answer_rules not in known:
            raise ValueError(
                f"answer_rules must be one of {known} for {text_game.title}, not {answer_rules!r}."
            )
        self.answer_rules = answer_rules
        self.game = text_game.game
        if forfeit_payoff is None:
            forfeit_payoff = self.game.min_utility()
        if not math.isfinite(forfeit_payoff):
            raise ValueError(f"forfeit_payoff must be a finite number, not {forfeit_payoff!r}.")
        self.forfeit_payoff = float(forfeit_payoff)
        if max_turns is not None and (type(max_turns) is not int or max_turns < 1):
            raise ValueError(f"max_turns must be a whole number >= 1 or None, not {max_turns!r}.")
        self.max_turns = max_turns
        self._turns = 0  # the learner's answers in this game
        if forfeit_winner_payoff is None:
            forfeit_winner_payoff = -self.forfeit_payoff
        if not math.isfinite(forfeit_winner_payoff):
            raise ValueError(
                f"forfeit_winner_payoff must be a finite number, not {forfeit_winner_payoff!r}."
            )
        self.forfeit_winner_payoff = float(forfeit_winner_payoff)
        self.self_play = isinstance(opponent, str) and opponent == SELF_PLAY
        self.population = as_population(None if self.self_play else opponent)
        # Built once, so a bad name fails here and CFR tables are not rebuilt per trial.
        self._members = self.population.build(self.game)
        self._member: int | None = None
        self.opponent = self._members[0]
        self.seat = seat
        self.reward_scale = float(reward_scale)
        self.render_mode = render_mode
        self.observation_space = text_space()
        self.action_space = text_space()
        self._seeded = SeededGenerator()
        self.views = ViewCache(text_game)
        """The learner's decision views, rendered once per information state (bounded)."""
        self._state: pyspiel.State | None = None
        self._player = 0
        self._view = View("", "")
        self._done = False
        self._stopped = False  # truncated after too many invalid answers
        self._invalid = InvalidStreak(self.invalid_rule)
        self._text = ""
        self.game_index = -1
        """Counts resets: tells agents that read :attr:`state` when a new game has begun."""
        self._shows_moves = text_game.opponent_moves_shown()
        self._opponent_moves: list[str] = []
        self._reader: PageReader | None = None

    # -- Gymnasium API -------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a new game: draw the seat, seed the opponent, play until the learner must act.

        Args:
            seed: Seeds the deal, the seat draw and the opponent (same seed, same game).
            options: ``{"seat": "first" | "second" | "random"}`` overrides the seat for this game;
                ``{"keep_opponent": True}`` keeps the population member of the previous reset;
                ``{"episode": k}``: this game is episode ``k`` of a trial (0, the default: a new
                trial), for an opponent that remembers its earlier games of the trial.

        Raises:
            OpponentFault: If a text opponent's backend gave no answer (no result).
        """
        if type(seed) is int and seed >= 0:
            # What gym.Env.reset(seed=seed) does, without building a new generator each time.
            self._np_random, self._np_random_seed = self._seeded.at(seed), seed
        else:
            super().reset(seed=seed)  # no seed, or one Gymnasium refuses with its own error
        rng = self.np_random  # the property once: it builds a generator only if none is set
        options = options or {}
        # Always draw, so that keeping the opponent does not shift the rest of the seeded stream
        # (the same seed must deal the same cards either way).
        drawn = self.population.draw(rng)
        if self._member is None or not options.get("keep_opponent", False):
            self._member = drawn
        self.opponent = self._members[self._member]
        self._player = self._draw_seat(options.get("seat", self.seat))
        self._reader = self.opponent if reads_page(self.opponent) else None
        if self._reader is not None:
            self._reader.begin_episode(int(options.get("episode", 0)))
        self.opponent.reset(draw_seed(rng), 1 - self._player)  # drawn in self-play too
        self._state = self.game.new_initial_state()
        self.game_index += 1
        self._invalid.clear()
        self._stopped = False
        self._turns = 0
        self._opponent_moves = []
        self._advance()
        return self._observe(), self._info(invalid=False)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Apply the learner's text move, then the opponent's replies.

        Raises:
            OpponentFault: If a text opponent's backend gave no answer (no result).
        """
        if self._state is None:
            raise RuntimeError("Call reset() before step().")
        if self._done or self._stopped:
            raise RuntimeError("The game is over: call reset() to start a new one.")
        self._opponent_moves = []
        self._turns += 1
        action_id = self._read(action)
        if action_id is None:
            return self._invalid_step()
        self._invalid.clear()
        mover = self._player
        if self.self_play and self._shows_moves:  # the next mover's opponent made this move
            self._opponent_moves = [self.text_game.move_name(self._state, mover, action_id)]
        self._state.apply_action(action_id)
        self._advance()
        if self.self_play and self._player == mover:  # the game ended: nobody else moved
            self._opponent_moves = []
        done = self._done
        reward = self._view.payoff * self.reward_scale if done else 0.0
        info = self._info(invalid=False)
        if not done and self._out_of_turns():
            self._stopped = True
            return self._observe(), self._forfeit(reward, info), False, True, info
        return self._observe(), float(reward), done, False, info

    def render(self) -> str | None:
        """Return (``ansi``) or print (``human``) the learner's current text."""
        return render_text(self._text, self.render_mode)

    @property
    def state(self) -> pyspiel.State | None:
        """A copy of the full OpenSpiel state: privileged, for referees, solvers and tests only.

        It holds hidden information (the opponent's card); never show it to the agent.
        """
        return None if self._state is None else self._state.clone()

    def ground_truth(self) -> dict[str, Any]:
        """What the learner may not see of this game (the whole deal), for analysis only.

        The text game's :meth:`~mage_envs.games.text_game.TextGame.ground_truth`; transcripts
        keep it apart from what the agent saw. Never show it to the agent.
        """
        if self._state is None:
            return {}
        return dict(self.text_game.ground_truth(self._state, self._player))

    # -- internals -----------------------------------------------------------------------------

    def _read(self, action: object) -> int | None:
        """The legal action id the answer names under the env's answer rules, or ``None``."""
        view = self._view
        if self.answer_rules == "ours":
            index = parse_action(action, view.names, view.aliases)
            return None if index is None else view.ids[index]
        if not isinstance(action, str):
            return None
        chosen = self.text_game.published_move(action, self.answer_rules, self._state, self._player)
        return chosen if chosen in view.ids else None

    def _legal_answers(self, view: View) -> list[str]:
        """The legal moves as answers: their names, or as the published projection reads them."""
        if self.answer_rules == "ours":
            return list(view.names)
        return [self.text_game.published_answer(a, self.answer_rules) for a in view.ids]

    def _draw_seat(self, seat: str) -> int:
        if seat not in SEATS:
            raise ValueError(f"seat must be one of {SEATS}, not {seat!r}.")
        if seat == "random":
            return int(self.np_random.integers(2))
        return SEATS.index(seat)

    def _advance(self) -> None:
        """Play chance and opponent moves until the learner must act or the game ends."""
        state, rng = self._state, self.np_random
        # current_player() alone tells chance, terminal and whose turn: one call per move.
        player = state.current_player()
        if self.self_play:
            while player == _CHANCE:
                state.apply_action(sample_chance(state, rng.random()))
                player = state.current_player()
            if player != _TERMINAL:  # the seat to move; at the end, the last mover stays
                self._player = player
        while player != self._player and player != _TERMINAL:
            if player == _CHANCE:
                state.apply_action(sample_chance(state, rng.random()))
            else:
                try:
                    self._apply_opponent_move(state, player)
                except OpponentForfeit as forfeit:
                    self._end_by_forfeit(state, player, forfeit)
                    return
            player = state.current_player()
        self._done = player == _TERMINAL
        self._view = self.views.view(state, self._player, self._done)
        if self._done and self._reader is not None:
            self._reader.end_game(self.views.view(state, 1 - self._player, True))

    def _end_by_forfeit(self, state: pyspiel.State, player: int, forfeit: OpponentForfeit) -> None:
        """The opponent named no legal move: the game ends, won by the learner."""
        payoff = -self.forfeit_payoff
        words = f"named no legal move in {forfeit.answers} answers and forfeits"
        text_game = self.text_game
        body = (
            f"{text_game.observation_text(state, self._player)}\nThe game is over. Your "
            f"opponent {words}: you are scored {payoff:+g}."
        )
        self._done = True
        self._view = View(body, fit_text(body), payoff=payoff, revealed={"opponent_forfeit": True})
        if self._reader is not None:
            own = f"{text_game.observation_text(state, player)}\nThe game is over. You {words}."
            self._reader.end_game(View(own, fit_text(own), payoff=-payoff))

    def _apply_opponent_move(self, state: pyspiel.State, player: int) -> None:
        page = self.views.view(state, player, False) if self._reader is not None else None
        reads_state = getattr(self.opponent, "reads_state", True)
        view = SeatView.from_state(state, player, self.game, page, reads_state)
        action = self.opponent.act(view)
        if action not in view.legal_actions:
            raise RuntimeError(
                f"Opponent {self.opponent.name!r} chose illegal action {action!r}; "
                f"legal: {list(view.legal_actions)}."
            )
        if self._shows_moves:  # by the name the learner would write for it
            self._opponent_moves.append(self.text_game.move_name(state, player, action))
        state.apply_action(action)

    def _out_of_turns(self) -> bool:
        return self.max_turns is not None and self._turns >= self.max_turns

    def _invalid_step(self) -> tuple[str, float, bool, bool, dict[str, Any]]:
        streak_ended = self._invalid.invalid()  # counted whatever the turn budget says
        truncated = self._stopped = streak_ended or self._out_of_turns()
        if self.answer_rules == "ours":
            reason = did_not_name(self._view.names)
        else:
            reason = self.text_game.published_hint(self.answer_rules)
        # the page of a game cut at max_turns reads as it did when a time limit cut it
        feedback = self.invalid_rule.feedback(reason, streak_ended)
        obs = self._observe(prefix=feedback + "\n\n")
        info, reward = self._info(invalid=True), self.invalid_rule.reward
        if truncated:
            reward = self._forfeit(reward, info)
        return obs, float(reward), False, truncated, info

    def _forfeit(self, reward: float, info: dict[str, Any]) -> float:
        """Score the game cut off now as lost: never better than playing it out."""
        payoff = self.forfeit_payoff
        info.update(payoff=payoff, success=payoff > 0, forfeit=True)
        if self.self_play:  # the other seat wins (what the forfeit loses, by default)
            payoffs = [self.forfeit_winner_payoff] * self.game.num_players()
            payoffs[self._player] = payoff
            info.update(self._seat_rewards(payoffs))
        return float(reward + payoff * self.reward_scale)

    def _observe(self, prefix: str = "") -> str:
        view = self._view
        self._text = fit_text(prefix + view.body) if prefix else view.text
        return self._text

    def _info(self, invalid: bool) -> dict[str, Any]:
        view = self._view
        info: dict[str, Any] = {
            "legal_actions": self._legal_answers(view),
            "legal_action_ids": list(view.ids),
            "seat": self.text_game.seat_name(self._player),
            "player": self._player,
            "opponent": SELF_PLAY if self.self_play else self.opponent.name,
            "invalid_action": invalid,
        }
        if self._reader is not None and self._reader.memory:
            info["opponent_remembers"] = True  # a replayed deal may be played anew
        if view.aliases and self.answer_rules == "ours":  # what the parser also accepts
            info["action_aliases"] = dict(view.aliases)
        if self._shows_moves:  # the opponent's moves since the learner's last one
            info["opponent_moves"] = self._opponent_moves  # a new list at every step: no copy
        if self._done:
            info.update(payoff=view.payoff, success=view.payoff > 0)
            info.update(view.revealed)
            if self.self_play:
                info.update(self._seat_rewards(self._state.returns()))
        return info

    def _seat_rewards(self, payoffs: list[float]) -> dict[str, Any]:
        """Every seat's reward at the end of a self-play game, by player id, and its seat name."""
        return {
            "seat_rewards": [float(p) * self.reward_scale for p in payoffs],
            "seat_names": [self.text_game.seat_name(p) for p in range(len(payoffs))],
        }


def sample_chance(state: pyspiel.State, u: float) -> int:
    """Return the chance outcome at quantile ``u`` in [0, 1) of ``state``'s outcome distribution.

    Example:
        >>> import pyspiel
        >>> state = pyspiel.load_game("kuhn_poker").new_initial_state()
        >>> sample_chance(state, 0.0), sample_chance(state, 0.5), sample_chance(state, 0.99)
        (0, 1, 2)
    """
    outcomes = state.chance_outcomes()
    for action, prob in outcomes:
        u -= prob
        if u < 0:
            return action
    return outcomes[-1][0]  # rounding left u a hair above the total


def _check_settings(seat: str, render_mode: str | None, modes: list[str]) -> None:
    if seat not in SEATS:
        raise ValueError(f"seat must be one of {SEATS}, not {seat!r}.")
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be None or one of {modes}, not {render_mode!r}.")

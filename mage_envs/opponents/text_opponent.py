"""Any text agent as an opponent: it reads its own seat's page and writes its move as text.

A :class:`TextOpponent` plays a seat of an OpenSpiel game through the same text the learner reads:
the env renders the page *of the opponent's seat* with the game's own renderer (its cards, its
legal moves; never the learner's private state) and hands it over in :attr:`SeatView.page
<mage_envs.opponents.SeatView.page>`. The answer is read with the envs' parser
(:func:`~mage_envs.parsing.parse_action`), so an agent means the same move in either seat.

The wrapped player is anything with ``name``, ``reset(seed)`` and ``act(observation, info)``
returning the text or a reply object with ``text``, ``error`` and ``faults`` (a
:class:`mage_agents.Agent` is one; mage_envs imports nothing of mage_agents). Three outcomes of a
turn, kept apart:

- a legal move: played;
- invalid text: re-asked with the env's invalid-move feedback, at most ``max_invalid_actions``
  times in a row; then the opponent forfeits (:class:`OpponentForfeit`): a loss *of its play*;
- no answer from its backend (a reply with ``faults > 0`` and an ``error``, or ``act`` raising):
  :class:`OpponentFault`. That says nothing about either player: the env lets it through, and the
  rollout engine voids the trial (``incomplete``), as it does when the learner's backend fails.

With ``memory=True`` it also learns within the trial: its page starts with its earlier games of
the trial (its moves and how each ended, as its own end page showed it), and its agent is reset
only when a new trial starts (the env's ``episode`` reset option, which
:class:`~mage_envs.MetaEpisodeWrapper` passes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from mage_envs.invalid import did_not_name
from mage_envs.opponents.base import SeatView
from mage_envs.parsing import parse_action

__all__ = [
    "TextOpponent",
    "TextPlayer",
    "PageReader",
    "OpponentFault",
    "OpponentForfeit",
    "MEMORY_HEADER",
    "reads_page",
]

MEMORY_HEADER = "Your earlier games in this trial:"
"""The first line of a :class:`TextOpponent`'s memory, when it has one."""


class OpponentFault(RuntimeError):
    """An opponent's backend gave no answer: no result for either player (the trial is void).

    Attributes:
        opponent: The opponent's name.
        reason: The backend's error.
    """

    def __init__(self, opponent: str, reason: str) -> None:
        super().__init__(f"opponent {opponent}: {reason}")
        self.opponent = opponent
        self.reason = reason


class OpponentForfeit(RuntimeError):
    """An opponent named no legal move in ``answers`` answers in a row: it loses the game.

    Attributes:
        opponent: The opponent's name.
        answers: The invalid answers it gave.
    """

    def __init__(self, opponent: str, answers: int) -> None:
        super().__init__(f"opponent {opponent} named no legal move in {answers} answers")
        self.opponent = opponent
        self.answers = answers


@runtime_checkable
class TextPlayer(Protocol):
    """What a :class:`TextOpponent` wraps: the agent protocol of :mod:`mage_agents.base`."""

    name: str

    def reset(self, seed: int | None = None) -> None:
        """Start a new trial."""

    def act(self, observation: str, info: Mapping[str, Any]) -> Any:
        """Return the answer text, or a reply with ``text``, ``error`` and ``faults``."""


@runtime_checkable
class PageReader(Protocol):
    """An opponent that reads its seat's text page; envs render it and tell it how games end."""

    reads_page: bool
    memory: bool
    """Whether it remembers earlier games of the trial (so it may play a replayed deal anew)."""

    def begin_episode(self, episode: int) -> None:
        """The next game is episode ``episode`` of a trial (0: a new trial)."""

    def end_game(self, page: Any) -> None:
        """The game is over; ``page`` is the seat's end page (outcome, what the rules reveal)."""


def reads_page(opponent: object) -> bool:
    """Whether ``opponent`` reads its seat's page (a :class:`PageReader`).

    An attribute test: ``isinstance`` against a runtime-checkable protocol costs microseconds,
    and envs ask at every reset.
    """
    return getattr(opponent, "reads_page", False) is True


class TextOpponent:
    """A text agent playing one seat from its own page (see the module docstring).

    Args:
        player: The agent (``name``, ``reset(seed)``, ``act(observation, info)``).
        name: The opponent's name in results (default: ``agent:<player name>``).
        memory: Show it its earlier games of the trial, and reset it once per trial only.
        max_invalid_actions: Invalid answers in a row after which it forfeits the game.

    Example:
        >>> import gymnasium as gym, mage_envs
        >>> class FirstMove:
        ...     name = "first"
        ...     def reset(self, seed=None): pass
        ...     def act(self, observation, info): return info["legal_actions"][0]
        >>> env = gym.make("mage/KuhnPoker-v0", opponent=TextOpponent(FirstMove()), seat="second")
        >>> obs, info = env.reset(seed=0)
        >>> info["opponent"], info["legal_actions"]
        ('agent:first', ['check', 'bet'])
    """

    reads_page = True

    def __init__(
        self,
        player: TextPlayer,
        name: str | None = None,
        *,
        memory: bool = False,
        max_invalid_actions: int = 5,
    ) -> None:
        if not isinstance(player, TextPlayer):
            raise TypeError(
                f"TextOpponent needs an agent with name, reset(seed) and act(observation, info), "
                f"not {type(player).__name__}."
            )
        if max_invalid_actions < 1:
            raise ValueError(f"max_invalid_actions must be >= 1, not {max_invalid_actions}.")
        self.player = player
        self.name = name or f"agent:{player.name}"
        self.memory = bool(memory)
        self.max_invalid_actions = int(max_invalid_actions)
        self._episode = 0
        self._started = False
        self._games: list[str] = []
        self._moves: list[str] = []
        self._seat = 0

    def begin_episode(self, episode: int) -> None:
        """The next game is episode ``episode`` of a trial (0 starts a new trial)."""
        self._episode = int(episode)

    def reset(self, seed: int | None, player: int) -> None:
        """Seat the agent for a new game; reset it (and its memory) unless the trial goes on."""
        self._seat, self._moves = player, []
        if self.memory and self._started and self._episode > 0:
            return
        self._games, self._started = [], True
        self._reset_player(seed)

    def act(self, view: SeatView) -> int:
        """Ask the agent for a move on its own page; re-ask after invalid text.

        Raises:
            ValueError: If the env gave no page (it does not render pages for opponents).
            OpponentFault: If the agent's backend gave no answer.
            OpponentForfeit: After ``max_invalid_actions`` invalid answers in a row.
        """
        page = view.page
        if page is None:
            raise ValueError(
                f"{self.name} reads its seat's text page, and this env gave none: play it in an "
                "env of the suite (gym.make('mage/...')) or the arena."
            )
        info = {
            "legal_actions": list(page.names),
            "legal_action_ids": list(page.ids),
            "player": view.player,
            "seat": "first" if view.player == 0 else "second",
            "phase": "play",
            "episode": self._episode,
        }
        if page.aliases:  # as the learner's info: what the parser also accepts
            info["action_aliases"] = dict(page.aliases)
        observation = self._memory_text() + page.text
        for _ in range(self.max_invalid_actions):
            text = self._answer(observation, info)
            index = parse_action(text, page.names, page.aliases)
            if index is not None:
                self._moves.append(page.names[index])
                return int(page.ids[index])
            feedback = f"Invalid move: {did_not_name(page.names)}"
            observation = f"{feedback}\n\n{self._memory_text()}{page.text}"
        raise OpponentForfeit(self.name, self.max_invalid_actions)

    def end_game(self, page: Any) -> None:
        """Remember how the game went (with ``memory``): its moves and its end page."""
        if self.memory:
            moves = ", ".join(self._moves) or "no move"
            self._games.append(f"Game {len(self._games) + 1}: you played {moves}.\n{page.text}")

    def _memory_text(self) -> str:
        if not (self.memory and self._games):
            return ""
        return MEMORY_HEADER + "\n" + "\n\n".join(self._games) + "\n\nThis game:\n"

    def _reset_player(self, seed: int | None) -> None:
        try:
            self.player.reset(seed)
        except Exception as error:  # a dead backend at reset is a fault, not a crash
            raise OpponentFault(self.name, f"reset: {type(error).__name__}: {error}") from error

    def _answer(self, observation: str, info: dict[str, Any]) -> str:
        """The agent's answer text; a backend failure raises :class:`OpponentFault`."""
        try:
            reply = self.player.act(observation, info)
        except Exception as error:
            raise OpponentFault(self.name, f"{type(error).__name__}: {error}") from error
        if isinstance(reply, str):
            return reply
        error = getattr(reply, "error", None)
        if error is not None and getattr(reply, "faults", 0) > 0:
            raise OpponentFault(self.name, str(error))
        text = getattr(reply, "text", None)
        return text if isinstance(text, str) else ""

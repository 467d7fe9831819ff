"""``mage/ALFWorld-v0`` and ``mage/ALFWorld-Generated-v0``: ALFWorld's engine as Gymnasium envs.

Both play ALFWorld games with the ``alfworld`` package's engine (``pip install
'mage-metarl[alfworld]'``): the observation is the game's text, the task, the turn and the
admissible commands (also in ``info["legal_actions"]``); the action is one command, written
as it is listed (an ``<action>`` tag and "put X in Y" for "move X to Y" are understood). Reward:
``success_reward`` (10, as in LaMer and MAGE) when the goal is reached, which ends the episode;
0 otherwise. Text that names no admissible command changes nothing, says so, sets
``info["invalid_action"]`` and costs ``invalid_action_penalty``; every call to ``step`` is a turn.

The two differ in where games come from: the official game files (:class:`ALFWorldEnv`), or our
generator over the shipped floor plans (:class:`ALFWorldGeneratedEnv`, not the official
distribution). ``reset(seed=s)`` always gives the same game for the same ``s``.

``answer_rules="lamer"`` (or ``"mage"``: the same code) plays an answer as LaMer's and MAGE's code
did (:func:`~mage_envs.projections.lamer_alfworld`): the content of the first ``<action>`` tag,
lower-cased, is sent to the game verbatim, so a command that is not admissible prints the game's
"Nothing happens." (reward 0, a valid answer); an answer without the tag sends its last 30
characters and is the invalid one (``invalid_action_penalty``; LaMer's trainer charged 0.5).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from mage_envs.alfworld.data import collect_games, split_folder
from mage_envs.alfworld.engine import AlfredEngine, EngineState
from mage_envs.alfworld.generator import GeneratorSettings
from mage_envs.alfworld.pages import ALFWORLD_PAGE
from mage_envs.alfworld.store import GameStore
from mage_envs.alfworld.tasks import UNSEEN_TASK_TYPES
from mage_envs.alfworld.tasks import task_types as select_task_types
from mage_envs.parsing import parse_action
from mage_envs.projections import action_tag, lamer_alfworld
from mage_envs.puzzles.puzzle_env import TextPuzzleEnv

__all__ = ["ALFWorldEnv", "ALFWorldGeneratedEnv", "ALFWorldGeneratedUnseenEnv", "INVALID_REASON"]
__all__ += ["ANSWER_RULES"]

ANSWER_RULES = ("ours", "lamer", "mage")
"""``answer_rules=``: our reading, or the published projection (LaMer's and MAGE's are one)."""

INVALID_REASON = "write one of the admissible actions listed below. Nothing happens."
"""Why an answer that names no admissible command is invalid (after the shared rule's prefix)."""

_MOVE = re.compile(r"move (.+) to (.+)")


class _AlfredTextEnv(TextPuzzleEnv):
    """The text env over one engine; subclasses say which game file a seed plays."""

    page_presets = {"lamer": ALFWORLD_PAGE, "mage": ALFWORLD_PAGE}  # the papers share it

    def __init__(
        self,
        max_steps: int = 30,
        success_reward: float = 10.0,
        invalid_action_penalty: float = 0.1,
        speedups: bool = True,
        render_mode: str | None = None,
        answer_rules: str = "ours",
    ) -> None:
        super().__init__(max_steps, invalid_action_penalty, render_mode)
        if answer_rules not in ANSWER_RULES:
            raise ValueError(f"answer_rules must be one of {ANSWER_RULES}, not {answer_rules!r}.")
        self.answer_rules = answer_rules
        self.success_reward = float(success_reward)
        self.speedups = bool(speedups)
        self.game_text = ""
        """The game's own text after the last command (its first text after a reset)."""
        self._engine: AlfredEngine | None = None
        self._view: EngineState | None = None
        self._game: Path | None = None
        self._task = ""

    def _game_file(self, game_seed: int) -> Path:
        raise NotImplementedError

    def _engine_ready(self) -> AlfredEngine:
        if self._engine is None:
            self._engine = AlfredEngine(cached=self.speedups)
        return self._engine

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start the game of ``seed`` (or ``options["game"]``, a ``game.tw-pddl`` path).

        Other options (the trial wrapper's ``seat``, for instance) are ignored.
        """
        game_seed = self._start(seed)
        custom = (options or {}).get("game")
        self._game = Path(custom) if custom is not None else self._game_file(game_seed)
        engine = self._engine_ready()
        engine.load(self._game)
        self._view = engine.reset()
        self.game_text = self._view.feedback
        self._task = _task_sentence(self._view.feedback)
        return self._reply(self._view.feedback, invalid=False)

    @property
    def admissible_commands(self) -> tuple[str, ...]:
        """The game's admissible commands now, in its order (``help`` included)."""
        return () if self._view is None else self._view.admissible_commands

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play the admissible command the text names; anything else is an invalid turn."""
        if self._view is None:
            raise RuntimeError("Call reset() before step().")
        self._begin_step()
        if self.answer_rules != "ours":
            command, valid = lamer_alfworld(action) if isinstance(action, str) else ("", False)
            return self._play(command, valid)
        legal = list(self._view.admissible_commands)
        chosen = parse_action(action, legal, _aliases(legal)) if isinstance(action, str) else None
        if chosen is None:
            truncated = self._out_of_turns(terminated=False)
            feedback = self.invalid_rule.feedback(INVALID_REASON)
            self.game_text = feedback
            obs, info = self._reply(feedback + _ending(False, truncated), invalid=True)
            return obs, self.invalid_rule.reward, False, truncated, info
        return self._play(legal[chosen], valid=True)

    def _play(self, command: str, valid: bool) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Send a command to the game (any text: the game prints "Nothing happens." for most)."""
        self._view = self._engine_ready().step(command)
        self.game_text = self._view.feedback
        won = self._view.won
        truncated = self._out_of_turns(terminated=won)
        text = self._view.feedback + _ending(won, truncated)
        if not valid:
            text = self.invalid_rule.feedback("write the command inside <action></action>. ") + text
        obs, info = self._reply(text, invalid=not valid, command=command)
        penalty = 0.0 if valid else self.invalid_rule.reward
        reward = (self.success_reward if won else 0.0) + penalty
        return obs, reward, won, truncated, info

    def _reply(
        self, feedback: str, invalid: bool, command: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        view = self._view
        legal = [] if self._over else list(view.admissible_commands)
        turn = f"Turn {self._turn + 1} of {self.max_steps}." if not self._over else "Game over."
        task = f"\n\nYour task is to: {self._task}" if self._task and self._turn else ""
        actions = ", ".join(legal) or "none"
        page = f"{feedback.strip()}{task}\n\n{turn} Admissible actions: {actions}."
        info = {
            # under the published rules an answer must be tagged, and so is each legal action
            "legal_actions": legal if self.answer_rules == "ours" else list(map(action_tag, legal)),
            "action_aliases": dict(_aliases(legal)) if self.answer_rules == "ours" else {},
            "invalid_action": invalid,
            "success": view.won,
            "won": view.won,
            "command": command,
            "task": self._task,
            "game_file": str(self._game),
            **self._turn_info(),
        }
        return self._show(page), info

    def close(self) -> None:
        """Release the engine's game."""
        if self._engine is not None:
            self._engine.close()
        super().close()


class ALFWorldEnv(_AlfredTextEnv):
    """The official ALFWorld games (``alfworld-download``), played by the real engine.

    ``reset(seed=s)`` plays game ``s % n`` of the split's ``n`` games (sorted by path), so seeds
    ``0 .. n-1`` visit every game once.

    Args:
        data_path: ALFWorld's data folder (holding ``json_2.1.1/``) or any folder of games;
            default ``$ALFWORLD_DATA`` (else ``~/.cache/alfworld``).
        split: ``train``, ``eval_in_distribution`` (valid_seen, 140 games) or
            ``eval_out_of_distribution`` (valid_unseen, 134 games).
        task_types: Which task types to play: ids 1-6, names, short names (``"cool"``) or
            ``"all"`` / ``"seen"`` / ``"unseen"``; default all six.
        **rules: The game's rules, by keyword: ``max_steps`` (turns per episode; LaMer and MAGE
            evaluate with 30), ``success_reward`` (reward when the goal is reached; 10 in LaMer
            and MAGE), ``invalid_action_penalty`` (cost of an answer that names no admissible
            command), ``speedups`` (cache template parses and PDDL translations: same output,
            faster), ``render_mode`` (``None``, ``"ansi"`` or ``"human"``) and ``answer_rules``
            (``"ours"``, the default, or ``"lamer"`` / ``"mage"``: module docstring).

    Raises:
        MissingDataError: If the game files are not there; the message says how to get them.
    """

    def __init__(
        self,
        data_path: str | os.PathLike | None = None,
        split: str = "train",
        task_types: Any = None,
        **rules: Any,
    ) -> None:
        super().__init__(**rules)
        self.task_types = select_task_types(task_types)
        folder = split_folder(data_path, split)
        self.games = list(_collect(str(folder.resolve()), self.task_types))

    def _game_file(self, game_seed: int) -> Path:
        return self.games[game_seed % len(self.games)]


class ALFWorldGeneratedEnv(_AlfredTextEnv):
    """Games made by our generator over the shipped floor plans (not the official distribution).

    Seed ``s`` plays game ``g = s`` (or ``s % num_games``): task type ``task_types[g % k]`` (of
    the ``k`` selected) in a game generated from ``g``, checked winnable by the package's expert
    and written once to the cache folder.

    Args:
        task_types: As for :class:`ALFWorldEnv`; default all six.
        scenes: ``"train"`` (ALFRED's training floor plans), ``"unseen"`` (its held-out plans)
            or ``"all"``.
        max_receptacles: Keep at most this many receptacles per room (``None``: whole rooms).
        max_objects: Place at most this many objects (``None``: every object type of the room).
        cache_dir: Where generated games are kept (default ``$MAGE_CACHE`` or ``~/.cache/mage``).
        num_games: Play only games ``0 .. num_games-1`` (a fixed pool, generated once);
            ``None``: every seed is its own game.
        **rules: The game's rules, as for :class:`ALFWorldEnv`.
    """

    def __init__(
        self,
        task_types: Any = None,
        scenes: str = "train",
        max_receptacles: int | None = None,
        max_objects: int | None = None,
        cache_dir: str | os.PathLike | None = None,
        num_games: int | None = None,
        **rules: Any,
    ) -> None:
        super().__init__(**rules)
        self.task_types = select_task_types(task_types)
        if num_games is not None and (not isinstance(num_games, int) or num_games < 1):
            raise ValueError(f"num_games must be None or a positive integer, not {num_games!r}.")
        self.num_games = num_games
        settings = GeneratorSettings(scenes, max_receptacles, max_objects)
        self.store = GameStore(settings, cache_dir, cached=self.speedups)

    def _game_file(self, game_seed: int) -> Path:
        if self.num_games is not None:
            game_seed %= self.num_games
        task_type = self.task_types[game_seed % len(self.task_types)]
        return self.store.game_file(game_seed, task_type)


class ALFWorldGeneratedUnseenEnv(ALFWorldGeneratedEnv):
    """Generated games of the two task types LaMer held out of training: cool, and pick two."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("task_types", UNSEEN_TASK_TYPES)
        super().__init__(**kwargs)


@lru_cache(maxsize=8)
def _collect(folder: str, types: tuple[str, ...]) -> tuple[Path, ...]:
    """The games of a folder (read once per process: the official train split has 3553)."""
    return tuple(collect_games(Path(folder), types))


def _task_sentence(intro: str) -> str:
    """The task from the game's first text ("Your task is to: put a cool apple in fridge.")."""
    marker = "Your task is to: "
    return intro.rsplit(marker, 1)[1].strip() if marker in intro else ""


@lru_cache(maxsize=256)
def _aliases_for(legal: tuple[str, ...]) -> dict[str, str]:
    aliases = {}
    for command in legal:
        match = _MOVE.fullmatch(command)
        if match:
            thing, place = match.groups()
            for word in ("in", "on", "in/on", "into", "onto"):
                aliases[f"put {thing} {word} {place}"] = command
    return aliases


def _aliases(legal: list[str]) -> dict[str, str]:
    """Other spellings of admissible commands: the "put X in/on Y" of ALFWorld's later versions."""
    return _aliases_for(tuple(legal))


def _ending(won: bool, truncated: bool) -> str:
    if won:
        return "\n\nTask complete: you reached the goal."
    if truncated:
        return "\n\nOut of turns: the episode is over."
    return ""

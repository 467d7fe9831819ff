"""The real ALFWorld text engine: TextWorld's PDDL backend with ALFWorld's object naming.

One :class:`AlfredEngine` holds one TextWorld ``PddlEnv`` (and so one copy of Fast Downward's
library, which TextWorld copies per env) and loads game after game into it. A game is loaded once
and then reset as often as needed: a same-task trial replays it without parsing it again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from mage_envs.alfworld import speedups as _speedups
from mage_envs.alfworld.data import ensure_alfworld_home

__all__ = ["AlfredEngine", "EngineState"]


@dataclass(frozen=True)
class EngineState:
    """What the engine says after a reset or a step.

    Attributes:
        feedback: The text the game prints.
        admissible_commands: The commands that do something now, sorted.
        won: Whether the task's goal holds.
    """

    feedback: str
    admissible_commands: tuple[str, ...]
    won: bool


class AlfredEngine:
    """Plays ALFWorld game files (``game.tw-pddl``) with the ``alfworld`` package's engine.

    Args:
        cached: Memoise TextWorld's template parses and PDDL translations (identical output,
            several times faster; see :mod:`mage_envs.alfworld.speedups`).
        facts: Also request the world's facts (the hand-coded expert reads them).
    """

    def __init__(self, cached: bool = True, facts: bool = False) -> None:
        ensure_alfworld_home()
        import textworld  # noqa: PLC0415 (the optional extra)
        from alfworld.agents.environment.alfred_tw_env import AlfredDemangler  # noqa: PLC0415
        from textworld.envs.pddl import PddlEnv  # noqa: PLC0415

        self.cached = bool(cached)
        infos = textworld.EnvInfos(won=True, admissible_commands=True, facts=facts)
        self._env = AlfredDemangler(PddlEnv(infos), shuffle=False)
        self._game: str | None = None
        self.state = None

    @property
    def game_file(self) -> str | None:
        """The loaded game file, or ``None``."""
        return self._game

    def load(self, game_file: str | os.PathLike) -> None:
        """Load a game (skipped when it is the game already loaded)."""
        path = str(Path(game_file).resolve())
        _speedups.use(self.cached)
        if path != self._game:
            self._game = None
            # read here: TextWorld's own loader leaves the file open
            self._env.load(json.loads(Path(path).read_text()))
            self._game = path

    def reset(self) -> EngineState:
        """Restart the loaded game from its initial state."""
        if self._game is None:
            raise RuntimeError("Load a game before reset().")
        _speedups.use(self.cached)
        self.state = self._env.reset()
        return self._view()

    def step(self, command: str) -> EngineState:
        """Play one command (an admissible one; others print "Nothing happens.")."""
        _speedups.use(self.cached)
        self.state, _, _ = self._env.step(command)
        return self._view()

    def _view(self) -> EngineState:
        state = self.state
        return EngineState(
            str(state["feedback"]), tuple(state["admissible_commands"]), bool(state["won"])
        )

    def close(self) -> None:
        """Release the game (TextWorld keeps the library loaded for the process)."""
        self._game = None
        self.state = None

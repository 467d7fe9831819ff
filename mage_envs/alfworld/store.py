"""The folder of generated games: each game is generated, checked by the expert, and written once.

A game's folder is ``<cache>/alfworld-generated/v<version>/<settings>/<task type>/seed-<seed>/``
with ``game.tw-pddl`` (its ``walkthrough`` is the expert's winning commands) and
``traj_data.json``. A game the expert cannot win within its step budget is never served: the
generator's next attempt for the same seed is tried instead, so a seed still names one game.
Folders are written under a temporary name and renamed into place, so two processes that generate
the same game at once both end up reading one complete copy.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from mage_envs.alfworld.data import cache_home
from mage_envs.alfworld.engine import AlfredEngine
from mage_envs.alfworld.expert import solve
from mage_envs.alfworld.generator import GENERATOR_VERSION, GeneratorSettings, generate_game

__all__ = ["GameStore", "MAX_ATTEMPTS"]

MAX_ATTEMPTS = 20
"""Games drawn for one seed before giving up (the expert wins most at the first attempt)."""


class GameStore:
    """Generated games on disk, made on first use.

    Args:
        settings: What the generator builds.
        cache_dir: The cache folder (default :func:`~mage_envs.alfworld.data.cache_home`).
        cached: Whether the expert's engine uses the speed-ups (see :class:`AlfredEngine`).
    """

    def __init__(
        self,
        settings: GeneratorSettings | None = None,
        cache_dir: str | os.PathLike | None = None,
        cached: bool = True,
    ) -> None:
        self.settings = settings or GeneratorSettings()
        base = Path(cache_dir).expanduser() if cache_dir is not None else cache_home()
        self.root = base / "alfworld-generated" / f"v{GENERATOR_VERSION}" / self.settings.key()
        self._cached = cached
        self._expert_engine: AlfredEngine | None = None

    def folder(self, seed: int, task_type: str) -> Path:
        """Where the game of ``seed`` and ``task_type`` lives (it may not exist yet)."""
        return self.root / task_type / f"seed-{seed}"

    def game_file(self, seed: int, task_type: str) -> Path:
        """Return the game file of ``seed`` and ``task_type``, generating it if needed.

        Raises:
            RuntimeError: If no attempt gives a game the expert wins (not seen in practice).
        """
        final = self.folder(seed, task_type)
        game = final / "game.tw-pddl"
        if game.is_file():
            return game
        final.parent.mkdir(parents=True, exist_ok=True)
        for attempt in range(MAX_ATTEMPTS):
            if self._try(seed, task_type, attempt, final):
                return game
        raise RuntimeError(
            f"No solvable {task_type} game for seed {seed} in {MAX_ATTEMPTS} attempts."
        )

    def _try(self, seed: int, task_type: str, attempt: int, final: Path) -> bool:
        made = generate_game(seed, task_type, self.settings, attempt)
        work = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
        try:
            files = made.files()
            for name, text in files.items():
                (work / name).write_text(text)
            walkthrough = solve(work / "game.tw-pddl", self._engine())
            if walkthrough is None:
                return False
            made.game["walkthrough"] = walkthrough
            (work / "game.tw-pddl").write_text(made.files()["game.tw-pddl"])
            try:
                os.rename(work, final)
            except OSError:
                if not (final / "game.tw-pddl").is_file():  # not a finished copy by another process
                    raise
            return True
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _engine(self) -> AlfredEngine:
        if self._expert_engine is None:
            self._expert_engine = AlfredEngine(cached=self._cached, facts=True)
        return self._expert_engine

    def task(self, seed: int, task_type: str) -> dict:
        """Return the ``traj_data.json`` of a game (generating the game if needed)."""
        return json.loads((self.game_file(seed, task_type).parent / "traj_data.json").read_text())

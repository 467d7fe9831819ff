"""What :class:`~mage_agents.training.MetaRLTrainer` keeps in a checkpoint beyond TRL's own.

A resumed run restores the best evaluation so far, TRL's count of micro-steps, a stateful
estimator's baselines, the league's snapshots and the rest of a generation's batch, so that it
trains on what the uninterrupted run would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from mage_agents.advantages import is_stateful
from mage_agents.training.league import LEAGUE_STATE_FILE, League
from mage_agents.training.library_noise import library_bars_off

__all__ = [
    "BUFFER_FILE",
    "ESTIMATOR_STATE_FILE",
    "STATE_FILE",
    "ResumableState",
]

STATE_FILE = "meta_rl_state.json"
"""Written into every checkpoint: the trainer's own state (best evaluation so far, TRL's count of
micro-steps, which places the step within its generation)."""

ESTIMATOR_STATE_FILE = "estimator_state_{}.json"
"""Written, per process, into every checkpoint of a run whose estimator keeps state (rae's
baselines, computed from that process's trials)."""

BUFFER_FILE = "generation_buffer_{}.pt"
"""Written, per process, into a checkpoint taken between the steps of one generation
(``steps_per_generation > 1``): the rest of its batch, which TRL keeps only in memory, so the
resumed run trains on what the uninterrupted one would."""


class ResumableState:
    """Mixed into a ``GRPOTrainer`` subclass, before it: saves and restores the trainer's state.

    The host trainer holds ``best``, ``estimator_state``, ``league`` and TRL's ``_step`` and
    ``_buffered_inputs``; :meth:`_restore` runs before TRL's own resume.
    """

    def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
        """TRL's ``save_model`` (checkpoints, the best model, ``final/``), without shard bars."""
        with library_bars_off():
            super().save_model(output_dir, _internal_call)

    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        # ours first: TRL's trainer_state.json, written last, marks a checkpoint complete
        folder = Path(self._get_output_dir(trial=trial)) / f"checkpoint-{self.state.global_step}"
        folder.mkdir(parents=True, exist_ok=True)
        generate_every = self.args.steps_per_generation * self.num_iterations
        if self._buffered_inputs is not None and self._step % generate_every != 0:
            buffer = folder / BUFFER_FILE.format(self.accelerator.process_index)
            torch.save(self._buffered_inputs, buffer)
        if is_stateful(self.args.estimator):
            estimator = folder / ESTIMATOR_STATE_FILE.format(self.accelerator.process_index)
            estimator.write_text(json.dumps(self.estimator_state, indent=1))
        if self.args.league_every:
            league = folder / LEAGUE_STATE_FILE.format(self.accelerator.process_index)
            league.write_text(self.league.to_json(self._run_folder()))
        if self.args.should_save:
            state = {"best": self.best, "micro_step": self._step}
            (folder / STATE_FILE).write_text(json.dumps(state, indent=1))
        super()._save_checkpoint(model, trial)

    def _run_folder(self) -> Path:
        """The run's folder, which holds its checkpoints and league (absolute)."""
        return Path(self.args.output_dir).resolve()

    def _restore(self, checkpoint: Path) -> None:
        """Restore what TRL's checkpoint lacks (best so far, generation, estimator, league)."""
        if (checkpoint / STATE_FILE).is_file():
            state = json.loads((checkpoint / STATE_FILE).read_text())
            self.best = state["best"]
            self._step = int(state.get("micro_step", 0))  # TRL restarts it at 0
        estimator = checkpoint / ESTIMATOR_STATE_FILE.format(self.accelerator.process_index)
        if estimator.is_file():
            self.estimator_state = json.loads(estimator.read_text())
        league = checkpoint / LEAGUE_STATE_FILE.format(self.accelerator.process_index)
        if league.is_file():
            self.league = League.from_json(league.read_text(), self._run_folder())
        buffer = checkpoint / BUFFER_FILE.format(self.accelerator.process_index)
        if buffer.is_file():
            device = self.accelerator.device
            self._buffered_inputs = torch.load(buffer, map_location=device, weights_only=True)

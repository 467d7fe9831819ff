"""A league of past selves: snapshots of the learner that join its opponents during training.

Every ``league_every`` optimizer steps the trained model is saved under
``OUTPUT/league/step-N`` (full weights, or the LoRA adapter of a PEFT model, which loads on its
base: the model folder the trainer was given) with its tokenizer and a ``league.json`` saying
how it plays. The last ``league_size`` snapshots are kept in the league (all stay on disk, for
the arena). At each training generation every group of trials meets, with
probability ``league_weight``, a snapshot instead of the config's opponent (its scripted opponent
or population); the draw comes from the step's own seeded generator (:func:`draw_opponents`),
and all trials of a group meet the same opponent, so the estimator compares them fairly.

A snapshot is the opponent ``league:PATH``, built by
:func:`baselines.opponents.league.league_opponent` through the
opponent registry's schemes, as ``agent:local:PATH`` is (``import baselines`` registers both:
a trainer with a league refuses to start without it, :func:`check_league_scheme`): a
:class:`~mage_envs.opponents.text_opponent.TextOpponent` reading only its own seat, on one loaded
model per snapshot shared by every trial (a snapshot that leaves the league is forgotten, so at
most ``league_size`` are loaded). Its name, in ``info["opponent"]`` and in the trajectory, is
``league:step-N``: MAGE's opponent-specific normalisation treats each snapshot as an opponent.

A snapshot plays greedily (its most probable legal move with ``action_choice: legal``, greedy
decoding otherwise): the local backend seeds its sampling by the count of batches it generated
in this process, which a resumed run restarts, so sampled play would make a resumed run meet
another opponent; greedy play depends only on the page and the snapshot's weights.

``league_sampling`` chooses the snapshot: ``uniform`` over the kept ones, or ``winrate``
(prioritised fictitious self-play, PFSP): weight ``(wins + ties / 2 + 1) / (games + 2)``, the
snapshot's Laplace-smoothed score against the learner so far, an episode the learner lost
(return below 0) counting 1 and a tie (return 0) counting 1/2 (a new snapshot starts at 1/2),
so the past selves the learner still loses to are met more often, and a snapshot the learner
only draws against sits in between. Worked example (step-2 won 2 of 4 episodes, tied 2):

>>> league = League(["league:step-2", "league:step-4"], {"league:step-2": [2, 2, 4]})
>>> [round(w, 3) for w in league.weights("winrate")]  # (2+1+1)/(4+2), (0+1)/(0+2), normalised
[0.571, 0.429]
>>> league.weights("uniform")
[0.5, 0.5]

The league's members and win counts are written into every checkpoint
(``league_state_<process>.json``) and read back on resume. The snapshots are written there
relative to the run folder (``league:league/step-20``), so a run folder moved or renamed resumes,
and a copy resumes from its own snapshots, not the original's. A state of an earlier version,
with absolute paths, is read too: a path inside the run folder as it is, and one outside it (the
folder moved or was copied since) as the snapshot of that name in the folder's ``league/``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from mage_agents.training.library_noise import library_bars_off

__all__ = [
    "LEAGUE_SCHEME",
    "LEAGUE_STATE_FILE",
    "SAMPLINGS",
    "League",
    "adapter_base",
    "check_league_scheme",
    "draw_opponents",
    "league_plans",
    "save_snapshot",
    "snapshot_name",
    "take_snapshot",
]

LEAGUE_SCHEME = "league"
"""The opponent scheme of snapshots: ``league:PATH``."""

LEAGUE_STATE_FILE = "league_state_{}.json"
"""Written, per process, into every checkpoint of a run with a league: its members, win counts."""

SAMPLINGS = ("uniform", "winrate")
"""How a league trial picks its snapshot (see the module docstring)."""

PLAY_FILE = "league.json"
"""In a snapshot's folder: how it plays (strategy, move choice, answer template, lengths)."""


def snapshot_name(spec: str) -> str:
    """The opponent name of the snapshot spec ``league:PATH``: ``league:<folder name>``.

    Example:
        >>> snapshot_name("league:/runs/a/league/step-20")
        'league:step-20'
    """
    return f"{LEAGUE_SCHEME}:{Path(spec.partition(':')[2]).name}"


def check_league_scheme() -> None:
    """Refuse a league before training if nothing registered the ``league:`` opponents.

    Raises:
        ValueError: If the scheme is not registered (``import baselines`` registers it).
    """
    from mage_envs.opponents import OPPONENT_SCHEMES

    if LEAGUE_SCHEME not in OPPONENT_SCHEMES:
        raise ValueError(
            f"league_every > 0 plays snapshots as {LEAGUE_SCHEME}:PATH opponents, which "
            "`import baselines` registers; import baselines first (python -m baselines.run "
            "train does)."
        )


@dataclass
class League:
    """The kept snapshots (oldest first) and each one's ``[wins, ties, games]`` against the learner.

    Attributes:
        specs: The snapshots' opponent specs, ``league:PATH``.
        record: Snapshot name -> ``[episodes it won, episodes tied, episodes played]`` (a
            checkpoint written before ties were counted holds ``[won, played]``: read as no
            ties, as that run counted them).
    """

    specs: list[str] = field(default_factory=list)
    record: dict[str, list[int]] = field(default_factory=dict)

    def add(self, spec: str, size: int) -> list[str]:
        """Add a snapshot, keep the last ``size``; return the specs that left the league."""
        if spec not in self.specs:
            self.specs.append(spec)
        dropped, self.specs = self.specs[:-size], self.specs[-size:]
        for old in dropped:
            self.record.pop(snapshot_name(old), None)
        return dropped

    def weights(self, sampling: str) -> list[float]:
        """The probability of meeting each kept snapshot in a league trial."""
        if sampling == "uniform":
            raw = [1.0] * len(self.specs)
        else:
            raw = [
                (wins + ties / 2 + 1) / (games + 2)
                for wins, ties, games in (self.tally(snapshot_name(s)) for s in self.specs)
            ]
        total = sum(raw)
        return [w / total for w in raw]

    def tally(self, name: str) -> tuple[int, int, int]:
        """The snapshot ``name``'s ``(wins, ties, games)`` so far (zeros before it played)."""
        entry = self.record.get(name, [0, 0, 0])
        wins, ties, games = entry if len(entry) == 3 else (entry[0], 0, entry[-1])
        return int(wins), int(ties), int(games)

    def count(self, trajectories: Sequence[Any]) -> None:
        """Add the episodes each snapshot played to its record.

        The snapshot won an episode where the learner's return is below 0, tied where it is 0.
        """
        for trajectory in trajectories:
            result = trajectory.result
            names = {o for o in result.opponents if o is not None}
            name = names.pop() if len(names) == 1 else None
            if name is None or not name.startswith(f"{LEAGUE_SCHEME}:"):
                continue
            wins, ties, games = self.tally(name)
            returns = list(result.returns)
            self.record[name] = [
                wins + sum(r < 0 for r in returns),
                ties + sum(r == 0 for r in returns),
                games + len(returns),
            ]

    def to_json(self, root: str | Path | None = None) -> str:
        """The league's state as JSON (what a checkpoint holds).

        Snapshots under ``root``, the run folder, are written relative to it.

        Example:
            >>> json.loads(League(["league:/runs/a/league/step-2"]).to_json("/runs/a"))["specs"]
            ['league:league/step-2']
        """
        specs = [_relative(spec, Path(root)) if root else spec for spec in self.specs]
        return json.dumps({"specs": specs, "record": self.record}, indent=1)

    @classmethod
    def from_json(cls, text: str, root: str | Path | None = None) -> League:
        """Read a state written by :meth:`to_json`, its snapshots found in ``root``.

        ``root`` is the run folder (see the module docstring for the absolute paths of
        earlier versions).

        Example:
            >>> state = '{"specs": ["league:/old/a/league/step-2"], "record": {}}'
            >>> League.from_json(state, "/runs/b").specs
            ['league:/runs/b/league/step-2']
        """
        state = json.loads(text)
        specs = [_in_folder(spec, Path(root)) if root else spec for spec in state["specs"]]
        return cls(specs, {k: list(v) for k, v in state["record"].items()})


def _relative(spec: str, root: Path) -> str:
    path = Path(spec.partition(":")[2])
    if not path.is_relative_to(root):
        return spec
    return f"{LEAGUE_SCHEME}:{path.relative_to(root).as_posix()}"


def _in_folder(spec: str, root: Path) -> str:
    path = Path(spec.partition(":")[2])
    if not path.is_absolute():
        path = root / path
    elif not path.is_relative_to(root):  # an earlier version's state; the folder moved since
        path = root / "league" / path.name
    return f"{LEAGUE_SCHEME}:{path}"


def draw_opponents(
    plans: Sequence[Any],
    group_size: int,
    league: League,
    weight: float,
    sampling: str,
    rng: np.random.Generator,
) -> list[Any]:
    """Give each group of ``plans`` a snapshot opponent with probability ``weight``.

    Every group draws from ``rng`` (two uniforms, whether or not it meets a snapshot, so one
    group's outcome never shifts the next one's draw); the trials of a group share the outcome.
    Plans that meet a snapshot get its spec as their opponent and a group id naming it.
    """
    if not league.specs:
        return list(plans)
    cumulative = np.cumsum(league.weights(sampling))
    out = []
    for start in range(0, len(plans), group_size):
        meets, which = rng.random(2)
        group = plans[start : start + group_size]
        if meets < weight:
            index = min(int(np.searchsorted(cumulative, which, side="right")), len(cumulative) - 1)
            spec = league.specs[index]
            group = [_against(plan, spec) for plan in group]
        out.extend(group)
    return out


def league_plans(
    league: League,
    plans: Sequence[Any],
    group_size: int,
    args: Any,
    step: Sequence[int],
    first: int = 0,
) -> list[Any]:
    """:func:`draw_opponents` with ``args``' league settings, from the step's own generator.

    The generator is seeded with ``stream_seed(args.seed, "league", *step)`` (the step and
    micro-step), never drawn from a global stream; ``first`` is the index of the first plan in
    the step's batch over all processes, so a group draws the same whatever the process count.
    """
    from mage_agents.training.streams import stream_seed

    rng = np.random.default_rng(stream_seed(args.seed, "league", *step))
    rng.random(2 * (first // group_size))  # the earlier processes' groups' draws
    return draw_opponents(plans, group_size, league, args.league_weight, args.league_sampling, rng)


def take_snapshot(trainer: Any) -> None:
    """Add the model to ``trainer.league`` if ``league_every`` steps passed since the last one.

    Saved under ``OUTPUT/league/step-N`` by the main process (:func:`save_snapshot`); a snapshot
    leaving the league stays on disk but its loaded model is dropped.
    """
    from mage_agents.shared_models import forget_model

    args, league = trainer.args, trainer.league
    step = trainer.state.global_step
    last = max((int(s.rpartition("step-")[2]) for s in league.specs), default=0)
    if step == 0 or step - last < args.league_every:
        return
    folder = (Path(args.output_dir) / "league" / f"step-{step}").resolve()
    if trainer.accelerator.is_main_process:
        save_snapshot(trainer, folder)
    trainer.accelerator.wait_for_everyone()
    for old in league.add(f"{LEAGUE_SCHEME}:{folder}", args.league_size):
        forget_model(old)


def _against(plan: Any, spec: str) -> Any:
    old = str(plan.opponent)
    return replace(plan, opponent=spec, group_id=plan.group_id.replace(f"|{old}|", f"|{spec}|"))


def adapter_base(model: Any) -> str | None:
    """The local base-model folder of a PEFT model's adapter; ``None`` for a full model.

    Raises:
        ValueError: For an adapter whose base is no local folder (built in code): its
            snapshots could not be loaded.
    """
    configs = getattr(model, "peft_config", None)
    if not configs:
        return None
    base = str(next(iter(configs.values())).base_model_name_or_path or "")
    if not (Path(base) / "config.json").is_file():
        raise ValueError(
            f"A league of LoRA snapshots saves adapters, which load on their base model, and "
            f"this one's base {base!r} is no local model folder: pass the model as a folder "
            "saved with save_pretrained."
        )
    return str(Path(base).resolve())


def save_snapshot(trainer: Any, folder: Path) -> None:
    """Save the trained model (or its LoRA adapter), its tokenizer and how it plays."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    folder.mkdir(parents=True, exist_ok=True)
    with library_bars_off():
        model.save_pretrained(folder)  # a PEFT model saves its adapter only
    trainer.processing_class.save_pretrained(folder)
    args = trainer.args
    play = {
        "base_model": adapter_base(model),
        "strategy": args.strategy,
        "action_choice": args.action_choice,
        "answer_template": args.answer_template,
        "max_new_tokens": args.max_completion_length,
        "temperature": args.temperature,  # scales the legal-move scores, as the learner's
        "chat_template_kwargs": dict(getattr(trainer, "chat_template_kwargs", None) or {}),
    }
    (folder / PLAY_FILE).write_text(json.dumps(play, indent=1))

"""``python -m benchmarks learning``: does a tiny model learn, reliably, on one CPU thread?

Trains the tiny transformer built in code (:func:`mage_agents.tiny_model.build_tiny_model`) from
scratch through :class:`~mage_agents.training.MetaRLTrainer`, one run per (variant, seed), on one
torch thread, and writes one JSON record per run (its curve of exact values with wall and process
CPU time) under ``--out``. ``report`` turns the records into the tables and PNG curves of
docs/learning.md.

Parts (``--part``):

* ``robustness``: single-episode Kuhn hands against the aggressive style, learner first. The score
  is the exact value of the greedy policy (:mod:`mage_agents.training.kuhn_policy`); a run
  succeeds when it reaches 80% of the best-response value (1/3 chip) within ``--budget`` seconds
  of process CPU time.
* ``signature``: 3-episode trials replaying the same deal against MAGE's training population,
  memory showing the earlier episodes (their showdowns reveal the opponent's card). The score is
  the exact return of each episode of the greedy policy per opponent, over the six deals.
* ``minesweeper``: LaMer vs GRPO on 4x4 boards with 2 mines and 4 turns, the same board in every
  attempt. The score is the greedy policy's pass@1..3 on 64 held-out boards, in trials of three
  attempts with memory (:mod:`benchmarks.learning_pass`); GRPO trains on single attempts
  with groups three times larger (LaMer's baselines: the same number of episodes).

Example:
    python -m benchmarks learning run --part robustness --variant default --seeds 0-9
    python -m benchmarks learning keep --out runs/learning   # commit them beside the page
    python -m benchmarks learning report                      # tables from the committed
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

from benchmarks import positive_float, positive_int
from benchmarks.learning_records import RECORDS
from mage_agents.training.small_model import SMALL_MODEL_DEFAULTS, SMALL_MODEL_INIT_STD
from mage_agents.yaml_bounds import load_yaml

__all__ = ["main", "VARIANTS", "parse_seeds", "run_one"]

SMALL_MODEL = {**SMALL_MODEL_DEFAULTS, "init_std": SMALL_MODEL_INIT_STD}
"""The settings that made learning robust (docs/learning.md): the small-model defaults."""

_ROBUST_BASE = {
    "estimator": "grpo",
    "env_id": "mage/KuhnPoker-v0",
    "env_kwargs": {"seat": "first", "max_invalid_actions": 2},
    "opponent": "aggressive",
    "trial": {"num_episodes": 1, "reflection": False},
    "invalid_action_penalty": 1.0,
    "num_generations": 8,
    "per_device_train_batch_size": 64,
    "max_completion_length": 8,
    "temperature": 1.0,
    "learning_rate": 1e-3,
    "beta": 0.0,
    "strategy": "terse",
}
_SIGNATURE_BASE = {
    **_ROBUST_BASE,
    **SMALL_MODEL,
    "estimator": "mage",
    "opponent": "mage-kuhn-train",
    "trial": {
        "num_episodes": 3,
        "reflection": False,
        "same_task": True,
        "stop_on_success": False,
        "memory": "history_only",
    },
    "per_device_train_batch_size": 32,  # 4 deals x 8 trials: a 3-episode step is ~6x a hand's
}

_MINES_BASE = {
    **_ROBUST_BASE,
    **SMALL_MODEL,
    "estimator": "lamer",
    "env_id": "mage/Minesweeper-v0",
    # a mine costs 0.1 (LaMer) so the memory marks the losing move with a negative reward
    "env_kwargs": {"height": 4, "width": 4, "num_mines": 2, "max_steps": 4, "mine_reward": -0.1},
    "opponent": None,
    "trial": {
        "num_episodes": 3,
        "reflection": False,
        "same_task": True,
        "stop_on_success": True,
        "memory": "history_only",
        # an attempt's moves and rewards, not its last board: the longest prompt is 325 tokens,
        # not 641
        "templates": {"final_observation": "End of the attempt."},
    },
    "traj_gamma": 0.6,
    "per_device_train_batch_size": 32,  # 4 boards x 8 trials
    "tokenizer_pages": 3,  # the tokenizer also learns from pages of 3-attempt trials
}

VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    "robustness": {
        "default": {**_ROBUST_BASE, **SMALL_MODEL},
        "no-entropy": {**_ROBUST_BASE, **SMALL_MODEL, "move_entropy_bonus": 0.0},
        "hf-init": {**_ROBUST_BASE, **SMALL_MODEL, "init_std": None},
        "no-floor": {**_ROBUST_BASE, **SMALL_MODEL, "exploration_floor": 0.0},
        "floor-corrected": {**_ROBUST_BASE, **SMALL_MODEL, "exploration_correction": True},
        "group-std": {**_ROBUST_BASE, **SMALL_MODEL, "scale_advantages": "group"},
        "group-std-no-floor": {
            **_ROBUST_BASE,
            **SMALL_MODEL,
            "scale_advantages": "group",
            "exploration_floor": 0.0,
        },
        "free-text": {**_ROBUST_BASE, **SMALL_MODEL, "action_choice": "generate"},
    },
    "signature": {
        "mage": dict(_SIGNATURE_BASE),
        "grpo": {**_SIGNATURE_BASE, "estimator": "grpo"},
        "mage-no-differential": {**_SIGNATURE_BASE, "differential_reward": False},
        "mage-single-opponent": {**_SIGNATURE_BASE, "opponent": "balanced"},
        "mage-no-opponent-norm": {**_SIGNATURE_BASE, "opponent_normalization": False},
    },
    "minesweeper": {
        "lamer": dict(_MINES_BASE),
        "grpo": {
            **_MINES_BASE,
            "estimator": "grpo",
            "trial": {**_MINES_BASE["trial"], "num_episodes": 1},
            "num_generations": 24,
            "per_device_train_batch_size": 96,  # 4 boards x 24 single attempts
        },
        "grpo-trials": {**_MINES_BASE, "estimator": "grpo"},
        # the memory renderings: each attempt's last board too (the default page), not only
        # its moves and rewards
        "lamer-board": {
            **_MINES_BASE,
            "trial": {k: v for k, v in _MINES_BASE["trial"].items() if k != "templates"},
            "tokenizer_trial": _MINES_BASE["trial"],  # lamer's tokenizer and init
        },
    },
}
"""Part -> variant name -> MetaRLConfig settings."""


def parse_seeds(text: str) -> list[int]:
    """Parse ``"0-9"`` or ``"0,2,5"`` (or a mix) into a list of seeds.

    Example:
        >>> parse_seeds("0-2,7")
        [0, 1, 2, 7]
    """
    seeds: list[int] = []
    for part in text.split(","):
        low, sep, high = part.strip().partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            raise ValueError(f"Seeds are like 0-9 or 0,2,5, not {text!r}.")
        seeds += list(range(int(low), int(high) + 1)) if sep else [int(low)]
    return seeds


def env_pages(settings: dict[str, Any], num_episodes: int, trials: int = 4) -> list[str]:
    """Return the observations of a few seeded random-legal trials of the settings' env.

    The tiny tokenizer learns its merges from them, so the env's prompts get about as many
    characters per token as a real tokenizer gives (Minesweeper: 225 tokens a prompt, not 397).
    ``num_episodes`` is the trials' length, the same for every variant of a part: their models
    then share one tokenizer, whatever each trains on; so do the trial templates, from
    ``tokenizer_trial`` when a variant renders its pages otherwise.
    """
    import random

    import mage_envs
    from mage_envs.meta import TrialConfig

    trial = {
        **settings.get("tokenizer_trial", settings.get("trial", {})),
        "num_episodes": num_episodes,
        "reflection": False,
    }
    env = mage_envs.make_trial(
        settings["env_id"], config=TrialConfig.from_mapping(trial), **settings.get("env_kwargs", {})
    )
    pages, rng = [], random.Random(0)
    try:
        for seed in range(trials):
            obs, info, done = *env.reset(seed=seed), False
            while not done:
                pages.append(obs)
                obs, _, terminated, truncated, info = env.step(rng.choice(info["legal_actions"]))
                done = terminated or truncated
    finally:
        env.close()
    return pages


def build_trainer(
    settings: dict[str, Any], seed: int, out: Path, callbacks: list, max_steps: int | None = None
) -> Any:
    """Return a :class:`MetaRLTrainer` on a fresh tiny model for one run.

    A decaying learning rate (``lr_scheduler_type`` other than ``constant``) decays over
    ``max_steps``, the run's step limit; a constant one never reads it (the callback stops the
    run), so the same seed trains the same model whatever the limit.
    """
    from mage_agents.tiny_model import build_tiny_model
    from mage_agents.training import MetaRLConfig, MetaRLTrainer

    settings = dict(settings)
    init_std = settings.pop("init_std", None)
    attempts = settings.pop("tokenizer_pages", 0)
    corpus = env_pages(settings, attempts) if attempts else ()
    settings.pop("tokenizer_trial", None)
    constant = settings.get("lr_scheduler_type", "linear") == "constant"
    model, tokenizer = build_tiny_model(seed=seed, init_std=init_std, extra_corpus=corpus)
    config = MetaRLConfig(
        output_dir=str(out),
        seed=seed,
        max_steps=10_000 if max_steps is None or constant else max_steps,
        logging_steps=10_000,
        save_strategy="no",
        report_to=[],
        disable_tqdm=True,
        use_cpu=True,
        gradient_checkpointing=False,
        **settings,
    )
    return MetaRLTrainer(model, config, processing_class=tokenizer, callbacks=callbacks)


def run_one(
    part: str,
    variant: str,
    seed: int,
    budget: float,
    every: int,
    out: Path,
    overrides: dict[str, Any] | None = None,
    name: str | None = None,
    max_steps: int | None = None,
) -> dict:
    """Train one run and return its record (also written to ``out/part/NAME/seedN.json``).

    ``overrides`` change the variant's settings; ``name`` (default: the variant) names the folder;
    ``max_steps`` stops the run at that many optimizer steps (a sample budget) if the CPU
    ``budget`` has not stopped it first.
    """
    import torch
    from transformers import PrinterCallback

    from benchmarks.learning_eval import ScoreCallback

    torch.set_num_threads(1)
    settings = {**VARIANTS[part][variant], **(overrides or {})}
    folder = out / part / (name or variant)
    folder.mkdir(parents=True, exist_ok=True)
    score = ScoreCallback(
        part, settings, every, budget, stop_at_target=part == "robustness", max_steps=max_steps
    )
    trainer = build_trainer(settings, seed, folder / f"trainer-seed{seed}", [score], max_steps)
    trainer.remove_callback(PrinterCallback)
    head = {"part": part, "variant": name or variant, "seed": seed, "settings": settings}
    head["budget_cpu_s"], head["max_steps"] = budget, max_steps

    def save(finished: bool) -> dict:
        record = {**head, "finished": finished, **score.summary()}
        (folder / f"seed{seed}.json").write_text(json.dumps(record, indent=1))
        return record

    score.bind(trainer, lambda: save(False))  # a run stopped early keeps its curve so far
    score.start()
    trainer.train()
    return save(True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks learning",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="train runs and write their records")
    run.add_argument("--part", choices=[*sorted(VARIANTS), "pretrained"], default="robustness")
    run.add_argument("--variant", default="default", help="a variant of the part (see VARIANTS)")
    run.add_argument("--seeds", default="0-9", help="seeds, e.g. 0-9 or 0,3")
    run.add_argument(
        "--budget", type=positive_float, default=300.0, help="CPU seconds per run (300)"
    )
    run.add_argument(
        "--every", type=positive_int, default=5, help="score every this many steps (5)"
    )
    run.add_argument(
        "--max-steps", type=positive_int, help="stop at this many steps (a sample budget)"
    )
    run.add_argument("--out", type=Path, default=Path("runs/learning"))
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting of the variant (YAML value), repeatable",
    )
    run.add_argument("--name", help="folder name of these runs (default: the variant)")
    run.add_argument(
        "--tasks",
        type=positive_int,
        default=12,
        help="pretrained: held-out tasks per opponent (12)",
    )
    probe = sub.add_parser("probe", help="can the tiny model read its memory? (supervised)")
    probe.add_argument("--part", choices=("signature", "minesweeper"), default="signature")
    probe.add_argument("--variant", help="the part's variant whose pages are probed")
    probe.add_argument("--seeds", default="0-2", help="seeds, e.g. 0-2")
    probe.add_argument(
        "--steps", type=positive_int, default=300, help="Adam steps of 16 pages (300)"
    )
    probe.add_argument("--out", type=Path, default=Path("runs/learning"))
    probe.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    probe.add_argument("--name", help="folder name of these probes (default: PART-VARIANT)")
    report = sub.add_parser("report", help="tables (Markdown) and PNG curves from the records")
    report.add_argument(
        "--out",
        type=Path,
        help="the records' folder (default: every committed set, docs/learning*/records)",
    )
    report.add_argument(
        "--figures",
        type=Path,
        help="where the PNGs go (default: beside a committed set; docs/learning for --out)",
    )
    keep = sub.add_parser("keep", help="commit a run folder's records beside the page (compact)")
    keep.add_argument("--out", type=Path, default=Path("runs/learning"), help="the run folder")
    keep.add_argument("--to", type=Path, default=RECORDS, help=f"default: {RECORDS}")
    return parser


def main(argv: list[str]) -> None:
    """Run the ``learning`` benchmark's command."""
    args = _parser().parse_args(argv)
    if args.command in ("report", "keep"):
        _records(args)
        return
    if args.command == "probe":
        _probe(args)
        return
    if args.part == "pretrained":
        _pretrained(args)
        return
    if args.variant not in VARIANTS[args.part]:
        raise SystemExit(
            f"Unknown variant {args.variant!r} of {args.part}: {', '.join(VARIANTS[args.part])}."
        )
    overrides = _overrides(args.set)
    for seed in parse_seeds(args.seeds):
        start = time.perf_counter()
        record = run_one(
            args.part,
            args.variant,
            seed,
            args.budget,
            args.every,
            args.out,
            overrides,
            args.name,
            args.max_steps,
        )
        print(
            f"{args.part}/{args.variant} seed {seed}: best {record['best']:.3f} "
            f"target step {record.get('target_step')} "
            f"({time.perf_counter() - start:.0f} s wall)",
            flush=True,
        )


def _records(args: argparse.Namespace) -> None:
    """Report the records of a folder, or keep a run folder's records beside the page.

    A folder without records, or a file there that is no record, is one line on stderr and
    exit status 2: a report of nothing must not pass for a report.
    """
    import sys

    from benchmarks.learning_records import NoRecords, keep, record_sets
    from benchmarks.learning_report import report

    try:
        if args.command == "report" and args.out is None:
            sets = record_sets()
            if not sets:
                raise NoRecords("No committed record sets (docs/learning*/records) here.")
            for records in sets:
                print(f"## {records}\n\n{report(records, args.figures or records.parent)}")
            return
        if args.command == "report":
            print(report(args.out, args.figures or Path("docs/learning")))
            return
        for path in keep(args.out, args.to):
            print(path)
    except (NoRecords, ValueError) as error:
        print(f"learning {args.command}: {error}", file=sys.stderr)
        raise SystemExit(2) from None


def _overrides(items: list[str]) -> dict[str, Any]:
    """Parse ``--set KEY=VALUE`` items (YAML values; ``1e-3`` is a number, as in Python).

    Example:
        >>> _overrides(["learning_rate=1e-3", "opponent=aggressive", "top_k=20"])
        {'learning_rate': 0.001, 'opponent': 'aggressive', 'top_k': 20}
    """
    overrides = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep:
            raise SystemExit(f"--set takes KEY=VALUE, not {item!r}.")
        overrides[key.strip()] = _number_or_value(load_yaml(text))
    return overrides


_EXPONENT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+")
"""A number in exponent notation, which YAML 1.1 reads as a string without a dot (``1e-3``)."""


def _number_or_value(value: Any) -> Any:
    """Return ``value``, or the float it spells in exponent notation.

    ``learning_rate=1e-3`` reached the optimizer as the string ``"1e-3"`` and failed there,
    after the run's first scores.
    """
    if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
        return float(value)
    return value


def _probe(args: argparse.Namespace) -> None:
    """Run the supervised memory probe (:mod:`benchmarks.learning_probe`) per seed."""
    import torch

    from benchmarks.learning_probe import run_probe

    torch.set_num_threads(1)
    variant = args.variant or {"signature": "mage", "minesweeper": "lamer"}[args.part]
    if variant not in VARIANTS[args.part]:
        raise SystemExit(f"Unknown variant {variant!r} of {args.part}.")
    folder = args.out / "probe" / (args.name or f"{args.part}-{variant}")
    folder.mkdir(parents=True, exist_ok=True)
    for seed in parse_seeds(args.seeds):
        settings = {**VARIANTS[args.part][variant], **_overrides(args.set)}
        pages = settings.get("tokenizer_pages")
        corpus = env_pages(settings, pages) if pages else ()
        record = run_probe(args.part, variant, seed, args.steps, settings, corpus)
        record["variant"] = args.name or record["variant"]
        (folder / f"seed{seed}.json").write_text(json.dumps(record, indent=1))
        shown = {k: record[k]["test"] for k in ("memory", "blind")}
        print(f"probe {record['variant']} seed {seed}: {shown}", flush=True)


def _pretrained(args: argparse.Namespace) -> None:
    """Train part 4's runs: a LoRA adapter on a pretrained model (``learning_pretrained``)."""
    from benchmarks import learning_pretrained

    if args.variant not in learning_pretrained.VARIANTS:
        names = ", ".join(learning_pretrained.VARIANTS)
        raise SystemExit(f"Unknown variant {args.variant!r} of pretrained: {names}.")
    for seed in parse_seeds(args.seeds):
        record = learning_pretrained.run_one(
            args.variant,
            seed,
            args.budget,
            args.every,
            args.out,
            args.max_steps,
            args.tasks,
            _overrides(args.set),
            args.name,
        )
        print(
            f"pretrained/{record['variant']} seed {seed}: {record['steps']} steps, "
            f"{record['train_cpu_s']:.0f} training CPU s",
            flush=True,
        )

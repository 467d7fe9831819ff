"""A run's evaluation: every agent of its settings planned, played, resumed and counted.

For each agent, :func:`~baselines.evaluate.planning.plan_run` plans the trials of the playable (env,
opponent) pairs (a lazy plan); what is already in the results file is counted from the file, the
plan only saying where each trial stands; :func:`~baselines.evaluate.runner.evaluate` plays the
rest. The :class:`~baselines.evaluate.run_report.Outcome` gathers what the report needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from baselines.agents import AgentFactory, build_agent_factory
from baselines.errors import print_warning
from baselines.evaluate.planning import plan_run
from baselines.evaluate.run_report import Outcome
from baselines.evaluate.runner import evaluate, in_plan_order
from baselines.outdir import TRANSCRIPTS_FILE, config_id, trial_prefix
from baselines.progress import RunProgress
from baselines.results import ResultsFile, missing_fields
from baselines.settings import RunSettings
from mage_agents.rollout import TranscriptFile

__all__ = ["run", "STOP_AFTER_FAILURES"]

STOP_AFTER_FAILURES = 5
"""An agent's trials stop being started after this many failed trials in a row (backend down)."""


def run(settings: RunSettings, console: Console) -> Outcome:
    """Evaluate every agent of ``settings``; return their finished and failed trials."""
    out = settings.out
    factories = [build_agent_factory(config) for config in settings.agents]
    _check_names(factories)
    results = ResultsFile(Path(out) / "results.jsonl" if out else None)
    damage = results.damage_note()
    if damage:  # the file keeps the lines; a trial recorded only there has no record
        print_warning(f"{damage}; a trial recorded only there is played again.")
    outcome = Outcome()
    if out and (settings.transcripts or (Path(out) / TRANSCRIPTS_FILE).exists()):
        # opened with the finished trials: a transcript without its results line is dropped
        outcome.transcripts = TranscriptFile(Path(out) / TRANSCRIPTS_FILE, results.finished())
        damage = outcome.transcripts.damage_note()
        if damage:
            print_warning(f"{damage}.")
    for factory in factories:
        _evaluate_agent(settings, factory, results, outcome, console)
    outcome.config = config_id(outcome.prefixes)
    saved = {trial_prefix(r["trial_id"]) for r in results.records() + results.failed()}
    outcome.other_configs = bool(saved - outcome.prefixes)
    return outcome


def _check_resumed(records: list[dict[str, Any]], results: ResultsFile) -> None:
    """Refuse, clearly, to resume from records the reports cannot read (an older format)."""
    for record in records:
        missing = missing_fields(record)
        if missing:
            raise ValueError(
                f"{results.path}: the record of trial {record['trial_id']!r} lacks "
                f"{', '.join(missing)} (written by an older version?). Move the file away, or "
                "give this run another --out, to play these trials again."
            )


def _check_names(factories: list[AgentFactory]) -> None:
    names = [factory.name for factory in factories]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:  # their trials would share ids and rows: each would be counted twice
        raise ValueError(
            f"Two agents are named {twice[0]!r}; evaluate each agent once, or tell them apart "
            "with a name, e.g. {kind: openai, model: M, temperature: 0, name: M-greedy}."
        )


def _evaluate_agent(
    settings: RunSettings,
    factory: AgentFactory,
    results: ResultsFile,
    outcome: Outcome,
    console: Console,
) -> None:
    """Plan and play one agent's trials, adding them to ``outcome``."""
    plans = plan_run(settings, factory, console)
    # what is done is read from the results; the plan only says where each trial stands
    resumed = in_plan_order(plans, results.records())
    _check_resumed(resumed, results)
    todo = len(plans) - len(resumed)
    if resumed:
        console.print(
            f"{factory.name}: {len(resumed):,} of {len(plans):,} trials resumed from "
            f"{results.path}; {todo:,} to play.",
            markup=False,  # the name is the user's text
        )
    with RunProgress(console, factory.name, todo) as progress:
        finished = evaluate(
            factory,
            plans,
            results,
            workers=settings.workers,
            batch_size=settings.batch_size or factory.batch_size(),
            on_record=progress.trial_ended,
            stop_after_failures=STOP_AFTER_FAILURES,
            transcripts=outcome.transcripts if settings.transcripts else None,
            on_answers=progress.answered,
        )
    outcome.records += finished
    outcome.prefixes |= set(plans.prefixes)
    failed = in_plan_order(plans, results.failed())
    outcome.failed += failed
    outcome.unplayed += len(plans) - len(failed) - len(finished)

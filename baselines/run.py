"""``python -m baselines.run``: evaluate agents on trials of the suite's envs and report results.

With no arguments it runs the embedded default: a random-legal agent plays 20 trials of 3 episodes
on every registered env against the env's default opponent, and prints the table (a few seconds).

Every setting comes from flags or from ``--config FILE.yaml`` (flags win); the ready configs of the
published settings are in ``baselines/configs/``. With ``--out DIR`` the run writes
``results.jsonl`` (one line per finished trial; rerunning the same command resumes and never
repeats a trial), ``summary.md``, ``summary.csv`` and plots.

``python -m baselines.run bounds [ARGS]`` prints the exact bounds of the opponents
("% of achievable").
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from baselines.achievable import achievable_interval
from baselines.agents import AgentFactory, agent_settings, build_agent_factory
from baselines.report import console_table, markdown_report, write_csv, write_plots
from baselines.results import ResultsFile
from baselines.runner import evaluate, plan_trials
from baselines.settings import DEFAULTS, merge_settings, ready_configs
from baselines.summary import summarize
from mage_agents.prompting import STRATEGIES
from mage_envs.meta.memory import MEMORY_MODES

__all__ = ["main", "load_settings", "DEFAULTS"]

PROGRESS_MIN_TRIALS = 50
"""Runs with at least this many trials to play show a progress bar (on a terminal)."""


CONFIG_KEYS_HELP = """\
config file keys (a YAML mapping; the flags above override them):
  agents, envs, opponents      lists (one item alone is fine) of agent specs or dicts
                               ({kind: openai, model: M, temperature: 0, name: ...}),
                               env ids, opponent names or population presets
  tasks, repeats, episodes, seed, workers, batch_size, out, plots, title
  trial                        MetaEpisodeWrapper arguments, e.g. {same_task: true,
                               stop_on_success: true, memory: reflection_only}
  env_kwargs                   env id (or "*", every env) -> its keyword arguments
See docs/runner.md for the figures of the table."""


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser (every option documented in ``--help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m baselines.run",
        description=__doc__,
        epilog=CONFIG_KEYS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_agent_options(parser.add_argument)
    add = parser.add_argument
    add(
        "--env",
        action="append",
        dest="envs",
        metavar="ID",
        help="env id to play (repeatable; default: every registered id)",
    )
    add(
        "--opponent",
        action="append",
        dest="opponents",
        metavar="SPEC",
        help="opponent or population to play against (repeatable; default: the env's own)",
    )
    add("--tasks", type=int, help="tasks (seeds) per env and opponent (default 20)")
    add("--games", type=int, dest="tasks", help=argparse.SUPPRESS)  # the first CLI's name
    add(
        "--repeats",
        type=int,
        help="trials per task with different agent seeds, for diversity (default 1)",
    )
    add("--episodes", type=int, help="episodes (attempts) per trial (default 3)")
    add("--seed", type=int, help="first task seed (default 0)")
    add(
        "--workers",
        type=int,
        help="processes playing trials in parallel, one trial at a time each, so --batch-size "
        "applies only with one worker (default 1; scripted agents)",
    )
    add(
        "--batch-size",
        type=int,
        help="trials stepped together, one batched generation per step (default 1)",
    )
    add(
        "--stop-on-success",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="end a trial at its first success (LaMer/MAGE evaluation; default: off)",
    )
    add(
        "--memory",
        choices=list(MEMORY_MODES),
        help="what earlier attempts leave in later observations (default reflection_only)",
    )
    add(
        "--env-kwargs",
        type=json.loads,
        metavar="JSON",
        help="keyword arguments for every env, merged over the config's (the flag wins), e.g. "
        '\'{"seat": "second", "reward_scale": 5}\'',
    )
    add("--out", type=Path, help="output folder: results.jsonl, summary.md, summary.csv, plots")
    add("--no-plots", action="store_false", dest="plots", default=None, help="skip the plots")
    add("--title", help="title of the tables")
    return parser


def _add_agent_options(add: Any) -> None:
    """The config file and the options of the agents."""
    add(
        "--config",
        type=Path,
        help="YAML file with any of the settings below (flags win), or the name of a ready "
        f"config: {', '.join(ready_configs())}",
    )
    add(
        "--agent",
        action="append",
        dest="agents",
        metavar="SPEC",
        help="agent to evaluate (repeatable): random, policy:NAME, best-response, openai:MODEL, "
        "local:PATH, tiny, python:MODULE:ATTR (default: random)",
    )
    add(
        "--base-url",
        help="OpenAI-compatible API root for openai:MODEL agents, e.g. "
        "http://127.0.0.1:8000/v1 (default: $OPENAI_BASE_URL)",
    )
    add(
        "--api-key-env",
        help="environment variable holding the API key (default OPENAI_API_KEY); "
        "the key itself is never printed or saved",
    )
    add(
        "--strategy",
        choices=list(STRATEGIES),
        help="prompting strategy of model agents (default zero-shot)",
    )
    add(
        "--agent-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="backend option of model agents, e.g. temperature=0.7, max_tokens=256 (YAML values)",
    )


def load_settings(argv: list[str] | None) -> dict[str, Any]:
    """Parse ``argv`` into one checked settings dict (see :mod:`baselines.settings`)."""
    return merge_settings(build_parser().parse_args(argv))


def accepts_opponent(env_id: str) -> bool:
    """Return True if the env's constructor takes an ``opponent`` argument."""
    entry = gym.spec(env_id).entry_point
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module), attr)
    try:
        return "opponent" in inspect.signature(entry).parameters
    except (TypeError, ValueError):
        return False


def _env_kwargs(settings: dict[str, Any]) -> dict[str, dict[str, Any]]:
    given = settings["env_kwargs"] or {}
    shared = given.get("*", {})
    return {e: {**shared, **given.get(e, {})} for e in settings["envs"]}


def _playable(env_id: str, kwargs: dict[str, Any], factory: AgentFactory) -> str | None:
    """Return why ``factory``'s agent cannot play ``env_id``, or ``None`` if it can."""
    try:
        env = gym.make(env_id, **kwargs)
    except Exception as error:  # one broken env must not hide the others' results
        return f"it cannot be built ({error})"
    try:
        agent = factory.new_agent()
        if callable(getattr(agent, "bind", None)):
            agent.bind(env)  # scripted agents check here that they can play this game
    except (ValueError, TypeError) as error:
        return f"{factory.name} cannot play it ({error})"
    finally:
        env.close()
    return None


def _plan(settings: dict[str, Any], factory: AgentFactory, console: Console) -> list:
    specs = []
    env_kwargs = _env_kwargs(settings)
    for env_id in settings["envs"]:
        reason = _playable(env_id, env_kwargs[env_id], factory)
        if reason:
            console.print(f"[yellow]Skipping {env_id}: {reason}.[/]")
            continue
        opponents = settings["opponents"] if accepts_opponent(env_id) else [None]
        specs += plan_trials(
            factory.name,
            [env_id],
            opponents,
            settings["tasks"],
            settings["repeats"],
            settings["episodes"],
            settings["seed"],
            env_kwargs,
            settings["trial"],
            agent_settings(factory.config),
        )
    return specs


def _progress(console: Console, total: int) -> Progress:
    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=total < PROGRESS_MIN_TRIALS or not console.is_terminal,
    )


def run(settings: dict[str, Any], console: Console) -> list[dict[str, Any]]:
    """Evaluate every agent of ``settings``; return all their trial records."""
    out = settings["out"]
    results = ResultsFile(Path(out) / "results.jsonl" if out else None)
    records = []
    factories = [build_agent_factory(config) for config in settings["agents"]]
    names = [factory.name for factory in factories]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:  # their trials would share ids and rows: each would be counted twice
        raise ValueError(
            f"Two agents are named {twice[0]!r}; evaluate each agent once, or tell them apart "
            "with a name, e.g. {kind: openai, model: M, temperature: 0, name: M-greedy}."
        )
    for factory in factories:
        specs = _plan(settings, factory, console)
        todo = sum(s.trial_id not in results for s in specs)
        if todo < len(specs):
            console.print(
                f"{factory.name}: {len(specs) - todo} of {len(specs)} trials resumed from "
                f"{results.path}; {todo} to play."
            )
        with _progress(console, todo) as progress:
            bar = progress.add_task(factory.name, total=todo)
            records += evaluate(
                factory,
                specs,
                results,
                workers=settings["workers"],
                batch_size=settings["batch_size"],
                on_record=lambda _, bar=bar: progress.advance(bar),
            )
    return records


def report(settings: dict[str, Any], records: list[dict[str, Any]], console: Console) -> None:
    """Print the table and, with ``out``, write summary.md, summary.csv and plots."""
    summaries = summarize(records, achievable=achievable_interval)
    console.print(console_table(summaries, settings["title"]))
    failed = sum(s.failed_steps for s in summaries)
    if failed:
        errors = next(r["errors"][0] for r in records if r["errors"])
        console.print(f"[yellow]{failed} failed steps (e.g. {errors}); see results.jsonl.[/]")
    out = settings["out"]
    if not out:
        return
    out = Path(out)
    (out / "summary.md").write_text(markdown_report(summaries, records, settings["title"]))
    write_csv(summaries, out / "summary.csv")
    written = ["results.jsonl", "summary.md", "summary.csv"]
    if settings["plots"] and importlib.util.find_spec("matplotlib") is None:
        console.print("No plots: matplotlib is missing (pip install 'mage-metarl[plots]').")
    elif settings["plots"]:
        written += [p.name for p in write_plots(summaries, records, out)]
    console.print(f"Wrote {', '.join(written)} to {out}.")


def _bounds(argv: list[str]) -> int:
    if importlib.util.find_spec("baselines.bounds_report") is None:
        print("The bounds report (baselines/bounds_report.py) is not available in this install.")
        return 2
    module = importlib.import_module("baselines.bounds_report")
    result = module.main(argv)
    return int(result or 0)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code (2 for bad settings, with the reason)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bounds"]:
        return _bounds(argv[1:])
    console = Console()
    if not console.is_terminal:  # pipes and captured output: keep the table's columns whole
        console = Console(width=200)
    try:
        settings = load_settings(argv)
        start = time.perf_counter()
        records = run(settings, console)
    except (ValueError, TypeError, OSError, yaml.YAMLError) as error:
        console.print(f"[red]error:[/] {error}", markup=True, highlight=False)
        return 2
    if not records:
        console.print("[red]error:[/] no trial could be played (see the messages above).")
        return 2
    report(settings, records, console)
    console.print(f"{len(records)} trials in {time.perf_counter() - start:.1f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

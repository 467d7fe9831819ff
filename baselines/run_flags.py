"""The options of ``python -m baselines.run`` (the ``run`` command), read from the registries.

The choices of ``--memory`` and ``--strategy`` are the registries' names when the parser is
built, after the ``--import`` plug-ins are loaded, so a name a plug-in registers is a choice too.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from baselines.settings import ready_configs
from mage_agents.prompting import STRATEGIES
from mage_envs.meta.memory import MEMORY_MODES

__all__ = [
    "add_arguments",
    "add_import_option",
    "add_threads_option",
    "json_value",
    "CONFIG_KEYS_HELP",
]

CONFIG_KEYS_HELP = """\
config file keys (a YAML mapping; the flags above override them):
  agents, envs, opponents      lists (one item alone is fine) of agent specs or dicts
                               ({kind: openai, model: M, temperature: 0, name: ...}),
                               env ids, opponent names or population presets
  tasks, repeats, seed, workers, batch_size, threads, out, plots, transcripts, title
  trial                        the trial settings (TrialConfig's fields), e.g.
                               {num_episodes: 3, same_task: true, stop_on_success: true,
                               memory: reflection_only, templates: mage}
  env_kwargs                   env id (or "*", every env) -> its keyword arguments
  model_options                options of every openai/local agent (an agent's own and
                               --agent-option win), e.g. {temperature: 0.7, top_p: 0.8,
                               top_k: 20, max_tokens: 1024, thinking: false}
See docs/runner.md for the figures of the table."""


def json_value(text: str) -> Any:
    """Parse a flag's JSON value; bad or too deeply nested JSON is a usage error, not a crash.

    Example:
        >>> json_value('{"seat": "second"}')
        {'seat': 'second'}
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise argparse.ArgumentTypeError("JSON nested too deeply to read") from None
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not valid JSON ({error})") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``run`` to ``parser`` (every one documented in ``--help``)."""
    _add_agent_options(parser.add_argument)
    add = parser.add_argument
    add(
        "--env",
        action="append",
        dest="envs",
        metavar="ID",
        help="env id to play (repeatable; default: every id of mage_envs.ENV_IDS; the slower "
        "ALFWorld ids, e.g. mage/ALFWorld-Generated-v0, only when named)",
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
        help="trials stepped together, one batched generation per step (default: for local and "
        "tiny agents the batch their device fits, 32 on a CPU, sized from free memory on a GPU; "
        "1 for other agents)",
    )
    add_threads_option(add)
    add(
        "--stop-on-success",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="end a trial at its first success (LaMer/MAGE evaluation; default: off)",
    )
    add(
        "--memory",
        choices=list(MEMORY_MODES),  # read now: modes registered by --import plug-ins too
        help="what earlier attempts leave in later observations (default reflection_only)",
    )
    add(
        "--env-kwargs",
        type=json_value,
        metavar="JSON",
        help="keyword arguments for every env, merged over the config's (the flag wins), e.g. "
        '\'{"seat": "second", "reward_scale": 5}\'',
    )
    add(
        "--out",
        type=Path,
        help="output folder: results.jsonl, transcripts.jsonl.gz, summary.md, summary.csv, "
        "plots, summary.html",
    )
    add("--no-plots", action="store_false", dest="plots", default=None, help="skip the plots")
    add(
        "--no-transcripts",
        action="store_false",
        dest="transcripts",
        default=None,
        help="keep no transcripts (what the agent read and wrote) in transcripts.jsonl.gz",
    )
    add("--title", help="title of the tables")
    add_import_option(add)


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
        help="backend option of model agents, e.g. temperature=0.7, max_tokens=256 (YAML values); "
        "the new-token budget max_tokens comes from here, else from the config's model_options "
        "(every ready config sets it), else 256 for local, 16 for tiny and 512 for openai agents",
    )


def add_threads_option(add: Any) -> None:
    """The ``--threads N`` option of the commands that generate (torch's CPU threads)."""
    add(
        "--threads",
        type=int,
        metavar="N",
        help="torch CPU threads per process for local models (default: $OMP_NUM_THREADS, else "
        "1: on a shared CPU more threads made generation slower, 405 s on two busy cores "
        "against 131 s on one)",
    )


def add_import_option(add: Any) -> None:
    """The ``--import MODULE`` option every command takes (plug-ins that register names)."""
    add(
        "--import",
        action="append",
        dest="imports",
        default=[],
        metavar="MODULE",
        help="import this module first (repeatable): a plug-in of yours that registers envs, "
        "opponents, memory modes, strategies or estimators, whose names then work here",
    )

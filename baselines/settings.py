"""The settings of ``python -m baselines.run``: :class:`RunSettings`, a config file, flags.

Every setting of a run is one field of :class:`RunSettings`, written with :func:`setting`: its
default, its help, and what its flag and its check need (bounds, choices, a check of its own).
From the fields come everything else (:mod:`mage_agents.setting_fields`): the flags, ``--help``
and its list of config keys, the keys a config file may give and the checks of every value. A
new setting is one field (plus its use).

:func:`merge_settings` turns parsed command-line arguments into one checked :class:`RunSettings`:
the defaults, then the config file (a YAML mapping of the fields), then the flags. A flag overrides
the key it names, except ``trial`` and ``env_kwargs``, whose flags are merged into the config's
mapping (flags win). The trial settings are :class:`~mage_envs.meta.TrialConfig`'s, spelled as its
fields: ``trial:`` in a config (``{num_episodes: 3, memory: reflection_only, ...}``),
``--episodes``, ``--memory`` and ``--stop-on-success`` on the command line; the settings hold one
``TrialConfig`` from the start. ``model_options`` (a config's sampling and budget:
``temperature``, ``top_p``, ``top_k``, ``max_tokens``, ``thinking``) are given to every ``openai``
and ``local`` agent; command-line model options win over them.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import yaml

import mage_envs
from baselines.agents import parse_agent_config
from baselines.threads import threads_setting
from mage_agents.setting_fields import (
    check_settings,
    default_of,
    given_settings,
    mapping_setting,
    merged_setting,
    setting,
    setting_kind,
    text_setting,
)
from mage_agents.yaml_bounds import load_yaml
from mage_envs.meta import TrialConfig
from mage_envs.meta.memory import MEMORY_MODES

__all__ = ["RunSettings", "CONFIG_DIR", "merge_settings", "ready_configs", "resolve_config"]
__all__ += ["setting", "text_setting"]


def _env_ids(envs: list[str] | None) -> list[str]:
    """The env ids to play: every one of ``mage_envs.ENV_IDS`` if none is named."""
    envs = envs or list(mage_envs.ENV_IDS)
    unknown = [e for e in envs if e not in gym.registry]
    if unknown:
        raise ValueError(
            f"Unknown env id(s) {unknown}. Registered: {', '.join(mage_envs.ENV_IDS)}."
        )
    return envs


def _some_agent(agents: list[Any] | None) -> list[Any]:
    if not agents:
        raise ValueError("No agent to evaluate: give --agent SPEC.")
    return agents


def _opponents(opponents: list[str | None] | None) -> list[str | None]:
    """The opponents to play against; ``None`` alone: the env's own."""
    return [None] if opponents is None else opponents


def _env_kwargs(value: Any) -> dict[str, dict[str, Any]]:
    """``env_kwargs`` maps an env id (or ``"*"``, every env) to its keyword arguments."""
    given = mapping_setting("env_kwargs", value)
    return {str(env): mapping_setting(f"env_kwargs[{env!r}]", kw) for env, kw in given.items()}


def _env_kwargs_over(configured: Any, flag: Any) -> dict[str, dict[str, Any]]:
    """``--env-kwargs`` merged over every env's keyword arguments of the config (the flag wins)."""
    flag = mapping_setting("--env-kwargs", flag)
    given = _env_kwargs(configured)
    return {e: {**kw, **flag} for e, kw in {"*": {}, **given}.items()}


@dataclass(frozen=True)
class RunSettings:
    """The settings of a run of ``python -m baselines.run``, checked when made.

    Each field is a flag (its help below is ``--help``'s), a config file key and a checked
    value (:mod:`mage_agents.setting_fields`). Lists may be given as one item alone.

    Raises:
        ValueError: For a value a setting does not take; the message names it and says why.

    Example:
        >>> settings = RunSettings(envs="mage/KuhnPoker-v0", trial={"num_episodes": 2})
        >>> settings.envs, settings.trial.num_episodes, settings.tasks
        (['mage/KuhnPoker-v0'], 2, 20)
        >>> RunSettings(tasks=0)
        Traceback (most recent call last):
        ...
        ValueError: tasks must be a positive integer, not 0.
    """

    agents: list[str | dict[str, Any]] = setting(
        ["random"],
        "agent to evaluate (repeatable): random, policy:NAME, best-response, openai:MODEL, "
        "local:PATH, tiny, python:MODULE:ATTR (default: {default})",
        flag="--agent",
        metavar="SPEC",
        check=_some_agent,
        config_help="a list (one item alone is fine) of agent specs or dicts ({kind: openai, "
        "model: M, temperature: 0, name: ...}), as --agent",
    )
    envs: list[str] | None = setting(
        None,
        "env id to play (repeatable; default: every id of mage_envs.ENV_IDS; the slower "
        "ALFWorld ids, e.g. mage/ALFWorld-Generated-v0, only when named)",
        flag="--env",
        metavar="ID",
        check=_env_ids,
        config_help="a list of env ids, as --env",
    )
    opponents: list[str | None] = setting(
        [None],
        "opponent or population to play against (repeatable; default: the env's own)",
        flag="--opponent",
        metavar="SPEC",
        check=_opponents,
        config_help="a list of opponent names or population presets, as --opponent",
    )
    tasks: int = setting(
        20,
        "tasks (seeds) per env and opponent (default {default})",
        minimum=1,
        aliases=("--games",),
    )
    repeats: int = setting(
        1,
        "trials per task with different agent seeds, for diversity (default {default})",
        minimum=1,
    )
    trial: TrialConfig = setting(
        TrialConfig(),
        flags={
            "num_episodes": {
                "flag": "--episodes",
                "help": "episodes (attempts) per trial (default {default})",
            },
            "stop_on_success": {
                "help": "end a trial at its first success (LaMer/MAGE evaluation; default: "
                "{default})",
            },
            "memory": {
                "help": "what earlier attempts leave in later observations (default {default})",
                "choices": MEMORY_MODES,
            },
        },
        config_help="the trial settings (TrialConfig's fields), e.g. {num_episodes: 3, "
        "same_task: true, stop_on_success: true, memory: reflection_only, templates: mage}",
    )
    seed: int = setting(0, "first task seed (default {default})", minimum=0)
    workers: int = setting(
        1,
        "processes playing trials in parallel, one trial at a time each, so --batch-size "
        "applies only with one worker (default {default}; scripted agents)",
        minimum=1,
    )
    batch_size: int | None = setting(
        None,
        "trials stepped together, one batched generation per step (default: for local and tiny "
        "agents the batch their device fits, 32 on a CPU, sized from free memory on a GPU; 1 "
        "for other agents)",
        minimum=1,
    )
    threads: int | None = setting(
        None,
        "torch CPU threads per process for local models (default: $OMP_NUM_THREADS, else 1: on "
        "a shared CPU more threads made generation slower, 405 s on two busy cores against "
        "131 s on one)",
        metavar="N",
        minimum=1,
        check=threads_setting,
    )
    env_kwargs: dict[str, dict[str, Any]] = setting(
        {},
        "keyword arguments for every env, merged over the config's (the flag wins), e.g. "
        '\'{"seat": "second", "reward_scale": 5}\'',
        metavar="JSON",
        check=_env_kwargs,
        merge=_env_kwargs_over,
        config_help='env id (or "*", every env) -> its keyword arguments',
    )
    model_options: dict[str, Any] = setting(
        {},
        flag=None,
        config_help="options of every openai/local agent (an agent's own and --agent-option "
        "win), e.g. {temperature: 0.7, top_p: 0.8, top_k: 20, max_tokens: 1024, thinking: false}",
    )
    out: Path | None = setting(
        None,
        "output folder: results.jsonl, transcripts.jsonl.gz, summary.md, summary.csv, plots, "
        "summary.html",
    )
    plots: bool = setting(True, "skip the plots")
    transcripts: bool = setting(
        True, "keep no transcripts (what the agent read and wrote) in transcripts.jsonl.gz"
    )
    title: str = setting("Evaluation", "title of the tables")

    def __post_init__(self) -> None:
        check_settings(self)


CONFIG_DIR = Path(__file__).parent / "configs"
"""The ready configs of the published settings (installed with the package)."""

MODEL_OPTIONS = ("base_url", "api_key_env", "strategy")
"""Flags that are options of model agents (scripted agents take none)."""


def ready_configs(directory: Path = CONFIG_DIR) -> list[str]:
    """Return the names of the ready configs in ``directory`` (the evaluation ones), sorted."""
    return sorted(p.stem for p in directory.glob("*.yaml"))


def resolve_config(path: Path, directory: Path = CONFIG_DIR, what: str = "config file") -> Path:
    """Return ``path``, or the ready config of that name (``mage_kuhn`` -> its packaged file).

    Args:
        path: A config file, or the bare name of a ready config in ``directory``.
        directory: Where the ready configs lie (evaluation ones by default).
        what: What the error calls a config (``"training config"`` for ``train``).

    Raises:
        ValueError: If neither exists; the message lists the ready configs.
    """
    if path.is_file():
        return path
    packaged = directory / f"{path.stem}.yaml"
    if packaged.is_file() and path.parent == Path("."):
        return packaged
    names = ", ".join(ready_configs(directory))
    raise ValueError(f"No {what} {path}. Ready configs (give the name alone): {names}.")


def merge_settings(args: argparse.Namespace, cls: type[RunSettings] = RunSettings) -> RunSettings:
    """Merge the defaults, the ``--config`` file and the flags into one checked ``cls``.

    Args:
        args: Parsed by a parser with ``cls``'s flags (:func:`~baselines.run_flags.add_arguments`).
        cls: The settings (:class:`RunSettings`, or a subclass with more fields).

    Raises:
        ValueError: If a setting is invalid; the message says which and why.
    """
    values = {} if args.config is None else _load_config(resolve_config(args.config), cls)
    given = given_settings(args, cls)
    for item in fields(cls):
        if item.name in given:
            kind, _ = setting_kind(cls, item.name)
            configured = values.get(item.name, default_of(item))
            values[item.name] = merged_setting(item, kind, configured, given[item.name])
    settings = cls(**values)
    options = _model_options(args)
    agents = [
        _with_options(_with_options(a, settings.model_options, ("openai", "local"), False), options)
        for a in settings.agents
    ]
    return replace(settings, agents=agents)


def _load_config(path: Path, cls: type[RunSettings]) -> dict[str, Any]:
    try:
        loaded = load_yaml(path.read_text()) or {}
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ValueError(f"{path}: not valid YAML{at}: {problem}.") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (a config is a YAML mapping).") from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: a config is a YAML mapping of settings.")
    moved = {k: MOVED[k] for k in loaded if k in MOVED}
    if moved:
        key, hint = next(iter(moved.items()))
        raise ValueError(f"{path}: {key!r} is no setting of its own any more: {hint}.")
    names = sorted(f.name for f in fields(cls))
    unknown = set(loaded) - set(names)
    if unknown:
        raise ValueError(f"{path}: unknown settings {sorted(unknown)}; valid: {names}.")
    return loaded


MOVED = {
    "episodes": "the episodes per trial are a trial setting, write trial: {num_episodes: N}",
}
"""Config keys of earlier versions, and where their setting is now."""


def _model_options(args: argparse.Namespace) -> dict[str, Any]:
    options = {k: getattr(args, k) for k in MODEL_OPTIONS if getattr(args, k, None)}
    for item in args.agent_option:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--agent-option needs KEY=VALUE, not {item!r}.")
        try:
            options[key.strip()] = load_yaml(value)
        except yaml.YAMLError:
            raise ValueError(f"--agent-option {item!r}: the value is not valid YAML.") from None
    return options


def _with_options(
    agent: Any,
    options: dict[str, Any],
    kinds: tuple[str, ...] = ("openai", "local", "tiny"),
    win: bool = True,
) -> Any:
    """Add model options to the agents of ``kinds`` (scripted agents take none).

    With ``win=False`` the agent's own options (those of an agent dict) win over ``options``.
    """
    if not options:
        return agent
    config = parse_agent_config(agent)
    if config["kind"] not in kinds:
        return agent
    return {**config, **options} if win else {**options, **config}

"""The settings of ``python -m baselines.run``: defaults, then a config file, then flags.

:func:`merge_settings` turns parsed command-line arguments into one checked settings dict. A config
file is a YAML mapping with the keys of :data:`DEFAULTS`; a flag overrides the key it names, except
``trial`` and ``env_kwargs``, whose flags are merged into the config's mapping (flags win). The
trial settings are :class:`~mage_envs.meta.TrialConfig`'s, spelled as its fields: ``trial:`` in a
config (``{num_episodes: 3, memory: reflection_only, ...}``), ``--episodes``, ``--memory`` and
``--stop-on-success`` on the command line; the merged settings hold one ``TrialConfig``.
``model_options`` (a config's sampling and budget: ``temperature``, ``top_p``, ``top_k``,
``max_tokens``, ``thinking``) are given to every ``openai`` and ``local`` agent; command-line model
options win over them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import gymnasium as gym
import yaml

import mage_envs
from baselines.agents import parse_agent_config
from baselines.threads import threads_setting
from mage_agents.yaml_bounds import load_yaml
from mage_envs.meta import TrialConfig

__all__ = ["DEFAULTS", "CONFIG_DIR", "merge_settings", "ready_configs", "resolve_config"]
__all__ += ["text_setting"]

DEFAULTS: dict[str, Any] = {
    "agents": ["random"],
    "envs": None,
    "opponents": [None],
    "tasks": 20,
    "repeats": 1,
    "seed": 0,
    "workers": 1,
    "batch_size": 1,
    "threads": None,
    "trial": {},
    "env_kwargs": {},
    "model_options": {},
    "out": None,
    "plots": True,
    "transcripts": True,
    "title": "Evaluation",
}
"""The embedded default; a config file and flags override it key by key."""

CONFIG_DIR = Path(__file__).parent / "configs"
"""The ready configs of the published settings (installed with the package)."""

MODEL_OPTIONS = ("base_url", "api_key_env", "strategy")
"""Flags that are options of model agents (scripted agents take none)."""

_FLAG_KEYS = ("agents", "envs", "opponents", "tasks", "repeats", "seed", "workers")
_FLAG_KEYS += ("batch_size", "threads", "out", "plots", "transcripts", "title")


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


def merge_settings(args: argparse.Namespace) -> dict[str, Any]:
    """Merge the defaults, the ``--config`` file and the flags into one checked settings dict.

    Raises:
        ValueError: If a setting is invalid; the message says which and why.
    """
    settings = dict(DEFAULTS)
    if args.config is not None:
        settings.update(_load_config(resolve_config(args.config)))
    settings["env_kwargs"] = _env_kwargs_setting(settings["env_kwargs"])
    settings.update({k: getattr(args, k) for k in _FLAG_KEYS if getattr(args, k) is not None})
    flags = {"num_episodes": args.episodes, "stop_on_success": args.stop_on_success}
    flags["memory"] = args.memory
    trial = {**_mapping("trial", settings["trial"]), **given_flags(flags)}
    settings["trial"] = TrialConfig.from_mapping(trial)
    if args.env_kwargs is not None:
        flag = _mapping("--env-kwargs", args.env_kwargs)
        given = settings["env_kwargs"]
        # the flag wins over the config's per-env keyword arguments too
        settings["env_kwargs"] = {e: {**kw, **flag} for e, kw in {"*": {}, **given}.items()}
    options = _model_options(args)
    configured = _mapping("model_options", settings["model_options"])
    settings["model_options"] = configured
    for key in ("agents", "envs", "opponents"):
        settings[key] = _as_list(key, settings[key])
    settings["agents"] = [
        _with_options(_with_options(a, configured, ("openai", "local"), win=False), options)
        for a in settings["agents"]
    ]
    _check_settings(settings)
    return settings


def _load_config(path: Path) -> dict[str, Any]:
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
    unknown = set(loaded) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"{path}: unknown settings {sorted(unknown)}; valid: {sorted(DEFAULTS)}.")
    return loaded


MOVED = {
    "episodes": "the episodes per trial are a trial setting, write trial: {num_episodes: N}",
}
"""Config keys of earlier versions, and where their setting is now."""


def given_flags(flags: dict[str, Any]) -> dict[str, Any]:
    """The flags given on the command line (argparse leaves the others ``None``)."""
    return {k: v for k, v in flags.items() if v is not None}


def _mapping(name: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be a mapping of keyword arguments, not {value!r}.")
    return dict(value)


def _env_kwargs_setting(value: Any) -> dict[str, dict[str, Any]]:
    """``env_kwargs`` maps an env id (or ``"*"``, every env) to its keyword arguments."""
    given = _mapping("env_kwargs", value)
    return {str(env): _mapping(f"env_kwargs[{env!r}]", kw) for env, kw in given.items()}


def _as_list(key: str, value: Any) -> list[Any] | None:
    """A list setting; one item alone (``agents: random``) is a list of one."""
    if value is None:
        return [None] if key == "opponents" else None
    if isinstance(value, str | dict):
        return [value]
    if not isinstance(value, list | tuple):
        raise ValueError(f"{key} must be a list, not {value!r}.")
    return list(value)


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


def _check_settings(settings: dict[str, Any]) -> None:
    for key in ("tasks", "repeats", "workers", "batch_size"):
        if not _is_int(settings[key]) or settings[key] < 1:
            raise ValueError(f"{key} must be a positive integer, not {settings[key]!r}.")
    for key in ("plots", "transcripts"):
        if not isinstance(settings[key], bool):
            raise ValueError(f"{key} must be true or false, not {settings[key]!r}.")
    settings["threads"] = threads_setting(settings["threads"])
    text_setting("title", settings["title"])
    if not _is_int(settings["seed"]) or settings["seed"] < 0:
        raise ValueError(f"seed must be a non-negative integer, not {settings['seed']!r}.")
    envs = settings["envs"] or list(mage_envs.ENV_IDS)
    unknown = [e for e in envs if e not in gym.registry]
    if unknown:
        raise ValueError(
            f"Unknown env id(s) {unknown}. Registered: {', '.join(mage_envs.ENV_IDS)}."
        )
    settings["envs"] = envs
    if not settings["agents"]:
        raise ValueError("No agent to evaluate: give --agent SPEC.")


def text_setting(name: str, value: Any) -> str:
    r"""Return ``value`` if it is text that can be written as UTF-8, else raise.

    Example:
        >>> text_setting("title", b"bad\xff".decode(errors="surrogateescape"))
        Traceback (most recent call last):
        ...
        ValueError: title must be UTF-8 text, not 'bad\udcff' (byte 0xff is not UTF-8).
    """
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text, not {value!r}.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:  # bytes the shell passed that are no UTF-8
        char = ord(value[error.start])
        byte = f"byte 0x{char - 0xDC00:02x}" if 0xDC80 <= char <= 0xDCFF else f"U+{char:04X}"
        raise ValueError(
            f"{name} must be UTF-8 text, not {value!r} ({byte} is not UTF-8)."
        ) from None
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)

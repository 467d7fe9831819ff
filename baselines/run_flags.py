"""The options of ``python -m baselines.run`` (the ``run`` command): the settings' and the others.

A flag per field of :class:`~baselines.settings.RunSettings` (its help, default and choices are
the field's), plus ``--config``, the options of model agents and ``--import``. The choices of
``--memory`` and ``--strategy`` are the registries' names when the parser is built, after the
``--import`` plug-ins are loaded, so a name a plug-in registers is a choice too.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from baselines.settings import RunSettings, ready_configs
from mage_agents.prompting import STRATEGIES
from mage_agents.setting_fields import add_setting_flags, config_keys_help

__all__ = ["add_arguments", "add_import_option", "add_threads_option", "json_value", "config_keys"]


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


def add_arguments(parser: argparse.ArgumentParser, cls: type[RunSettings] = RunSettings) -> None:
    """Add the options of ``run`` to ``parser``: a flag per field of ``cls``, and the others.

    Every one is documented in ``--help``; the settings' flags come from their fields
    (:func:`~mage_agents.setting_fields.add_setting_flags`), in the order of the fields, with
    the options of model agents after ``--agent``.
    """
    add = parser.add_argument
    add(
        "--config",
        type=Path,
        help="YAML file with any of the settings below (flags win), or the name of a ready "
        f"config: {', '.join(ready_configs())}",
    )
    add_setting_flags(add, cls, only=("agents",))
    _add_agent_options(add)
    rest = tuple(f.name for f in fields(cls) if f.name != "agents")
    add_setting_flags(add, cls, only=rest, mapping_type=json_value)
    add_import_option(add)


def config_keys(cls: type[RunSettings] = RunSettings) -> str:
    """The config file keys of ``cls`` for ``--help`` (its fields), and where the figures are."""
    return f"{config_keys_help(cls)}\nSee docs/runner.md for the figures of the table."


def _add_agent_options(add: Any) -> None:
    """The options of model agents (merged into their specs, not settings of their own)."""
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
    """The ``--threads N`` option of the commands that generate (``RunSettings.threads``')."""
    add_setting_flags(add, RunSettings, only=("threads",))


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

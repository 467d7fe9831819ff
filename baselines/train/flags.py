"""``train``'s flags, generated from ``MetaRLConfig``'s fields, and its config values checked.

Every field of :class:`~mage_agents.training.MetaRLConfig` (TRL's ``GRPOConfig`` and
``TrainingArguments`` included) is a flag, made by transformers' ``HfArgumentParser`` with the
field's own type, help and choices: ``--learning-rate 1e-4`` (or ``--learning_rate``),
``--estimator gigpo``, ``--trial '{num_episodes: 3}'``. A flag sets its field over the config
file's value (``--trial`` changes the trial settings it names, the config's others stay). The
same parsing reads ``--set KEY=VALUE`` and checks the config file's values, so ``traj_gamma: abc``
is refused naming the field and the type it takes, and ``1e-6`` (a string to YAML) reads as the
float the field wants. The choices of ``--estimator`` and ``--strategy`` are the registries'
names when the parser is built (plug-ins loaded by ``--import`` included).
"""

from __future__ import annotations

import argparse
import difflib
import warnings
from collections.abc import Mapping
from functools import cache
from typing import Any

import yaml

from mage_agents.yaml_bounds import load_yaml, yaml_problem

__all__ = ["add_field_flags", "field_values", "set_values", "checked_values", "field_actions"]

OWN_FLAGS = ("output_dir",)
"""Fields whose flag is the command's own (``--out`` is ``output_dir``)."""

MAPPING_FIELDS = ("env_kwargs", "trial")
"""Our mapping fields: a flag's value is YAML (``--trial '{num_episodes: 3}'``)."""


def _mapping(text: str) -> dict[str, Any]:
    try:
        value = load_yaml(text) if text.strip() else {}
    except yaml.YAMLError as error:
        raise argparse.ArgumentTypeError(f"not valid YAML: {yaml_problem(error)}") from None
    if not isinstance(value, Mapping):
        raise argparse.ArgumentTypeError(f"a YAML mapping, e.g. '{{key: value}}', not {text!r}")
    return dict(value)


@cache
def _generated() -> tuple[argparse.Action, ...]:
    """The flags ``HfArgumentParser`` makes of ``MetaRLConfig``'s fields (made once)."""
    from transformers import HfArgumentParser

    from mage_agents.training import MetaRLConfig

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a library's notes are not the user's to read here
        parser = HfArgumentParser(MetaRLConfig, add_help=False)
    actions = tuple(a for a in parser._actions if a.option_strings and a.dest not in OWN_FLAGS)
    for action in actions:
        action.default, action.required = argparse.SUPPRESS, False  # unset: the config's
        if action.dest in MAPPING_FIELDS:
            action.type, action.metavar = _mapping, "YAML"
    return actions


def field_actions() -> dict[str, argparse.Action]:
    """Field name -> its flag (the ``--no_x`` twins left out), the registries' choices now."""
    from mage_agents.advantages import ESTIMATORS
    from mage_agents.prompting import STRATEGIES

    actions: dict[str, argparse.Action] = {}
    for action in _generated():
        if action.dest not in actions and action.const is not False:
            actions[action.dest] = action
    # the registries as they are now (a plug-in's names included), not when the field was written
    actions["estimator"].choices = list(ESTIMATORS)
    actions["strategy"].choices = list(STRATEGIES)
    return actions


def add_field_flags(parser: argparse.ArgumentParser) -> None:
    """Add a flag per ``MetaRLConfig`` field to ``parser`` (unset flags leave the config's)."""
    field_actions()  # the choices of now
    group = parser.add_argument_group(
        "MetaRLConfig fields (TRL's GRPOConfig included); each flag sets its field over the "
        "config file's value"
    )
    own = {o for a in parser._actions for o in a.option_strings}
    for action in _generated():
        if not set(action.option_strings) & own:
            group._add_action(action)


def field_values(args: argparse.Namespace) -> dict[str, Any]:
    """The fields set by flags (``add_field_flags`` leaves the others out of ``args``)."""
    names = {action.dest for action in _generated()}
    return {name: getattr(args, name) for name in sorted(names) if hasattr(args, name)}


def set_values(items: list[str]) -> dict[str, Any]:
    """Read ``--set KEY=VALUE`` items with their field's flag (its type, its choices).

    Raises:
        ValueError: For a malformed item, an unknown field (with the closest names) or a
            value the field does not take (naming the field and what it takes).
    """
    values = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--set takes KEY=VALUE, not {item!r}.")
        values[key] = _parse(key, text, f"--set {item}")
    return values


def checked_values(values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Check a config file's field values against their fields' types; read numbers in text.

    Raises:
        ValueError: For an unknown field (with the closest names) or a value of another type,
            naming the field and what it takes.
    """
    checked = {}
    for key, value in values.items():
        action = _action(key)
        if isinstance(value, str) and action.type not in (str, _mapping, None):
            checked[key] = _parse(key, value, where)
        else:
            checked[key] = _check_type(key, value, action, where)
    return checked


def _action(key: str) -> argparse.Action:
    actions = field_actions()
    if key not in actions:
        close = difflib.get_close_matches(key, sorted(actions), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"Unknown training setting {key!r}.{hint}")
    return actions[key]


def _expected(action: argparse.Action) -> str:
    if action.choices:
        return "one of " + ", ".join(map(str, action.choices))
    kind = getattr(action.type, "__name__", "")
    words = {"int": "an integer", "float": "a number", "string_to_bool": "true or false"}
    words |= {"_mapping": "a mapping", "str": "a string"}
    many = " (or a list of them)" if action.nargs in ("+", "*") else ""
    return words.get(kind, kind or "a value") + many


NULLS = ("null", "none", "None", "~")
"""What ``--set KEY=...`` writes for ``None``, in a field that takes it (YAML's spellings)."""


@cache
def _optional_fields() -> frozenset[str]:
    """The ``MetaRLConfig`` fields that take ``None`` (``int | None``, ``Optional[str]``...).

    Read from the classes' annotations: ``HfArgumentParser`` rewrites a field's ``type`` to the
    type inside its ``Optional``.
    """
    from mage_agents.training import MetaRLConfig

    names = set()
    for cls in MetaRLConfig.__mro__:
        for name, kind in vars(cls).get("__annotations__", {}).items():
            if "None" in str(kind) or "Optional" in str(kind):
                names.add(name)
    return frozenset(names)


def _parse(key: str, text: str, where: str) -> Any:
    """``text`` read as the flag of field ``key`` reads it (``null``: ``None``, where taken)."""
    action = _action(key)
    if text.strip() in NULLS and key in _optional_fields():
        return None
    try:
        if action.nargs in ("+", "*"):
            items = load_yaml(text)
            items = items if isinstance(items, list) else [items]
            return [action.type(str(x)) if action.type else x for x in items]
        if action.type is None:
            return load_yaml(text)
        value = action.type(text)
    except (ValueError, TypeError, argparse.ArgumentTypeError, yaml.YAMLError):
        raise ValueError(f"{where}: {key} takes {_expected(action)}, not {text!r}.") from None
    if action.choices and value not in action.choices and str(value) not in action.choices:
        raise ValueError(f"{where}: {key} takes {_expected(action)}, not {text!r}.")
    return value


def _check_type(key: str, value: Any, action: argparse.Action, where: str) -> Any:
    """``value`` itself, if it is of the kind field ``key`` takes (``None`` always passes)."""
    kind = getattr(action.type, "__name__", "")
    ok = {
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "string_to_bool": lambda v: isinstance(v, bool),
        "_mapping": lambda v: isinstance(v, Mapping) or _is_trial_config(v),
    }.get(kind)
    if value is None or ok is None or action.nargs in ("+", "*") or ok(value):
        return value
    raise ValueError(f"{where}: {key} takes {_expected(action)}, not {value!r}.")


def _is_trial_config(value: Any) -> bool:
    from mage_envs.meta import TrialConfig

    return isinstance(value, TrialConfig)

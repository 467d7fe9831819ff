"""Settings dataclasses whose fields spell everything about a setting once: flag, help, check.

A field written with :func:`setting` carries, besides its type and default, what a command line
and a config file need: its help, its flag's name, bounds, choices, a check of its own. From the
fields come the flags (:func:`add_setting_flags`, argparse's, with the field's type), the values
the flags gave (:func:`given_settings`), the list of config keys in ``--help``
(:func:`config_keys_help`) and the checks of every value, whether from a flag, a config file or
Python (:func:`check_settings`, for a dataclass's ``__post_init__``). So a new setting is one
field, and it is a flag, a documented config key and a checked value at once.

The metadata keys are transformers' ``HfArgumentParser``'s where they mean the same (``help``,
``choices``), so a field reads like a ``MetaRLConfig`` one; unlike it, this needs no library, for
the commands that the core install runs without torch or transformers.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Settings:
    ...     tasks: int = setting(20, "tasks per env (default {default})", minimum=1)
    ...     def __post_init__(self):
    ...         check_settings(self)
    >>> Settings(tasks=0)
    Traceback (most recent call last):
    ...
    ValueError: tasks must be a positive integer, not 0.
"""

from __future__ import annotations

import argparse
import copy
import os
import textwrap
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, field, fields, is_dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["setting", "setting_kind", "check_settings", "add_setting_flags", "given_settings"]
__all__ += [
    "merged_setting",
    "config_keys_help",
    "default_of",
    "text_setting",
    "mapping_setting",
    "list_setting",
]


def setting(default: Any = None, help: str = "", **meta: Any) -> Any:
    """A dataclass field that is a setting: its default, its help and how its flag reads it.

    Args:
        default: The default (a list or dict is copied for each instance).
        help: The flag's help; ``{default}`` in it is replaced by the default.
        **meta: ``flag`` (the option, ``--name`` by default; ``None``: a config key only),
            ``aliases`` (earlier options, hidden from ``--help``), ``metavar``, ``choices``
            (a registry: its names when the parser is built, and what a value may be),
            ``minimum`` (the least number), ``check`` (value -> checked value, raising
            ``ValueError``; after the type's check), ``merge`` ((config value, flag value) ->
            value: a flag merged into the config's value instead of replacing it),
            ``config_help`` (the key's line in ``--help``'s config keys) and, for a field that
            is a dataclass itself (a ``TrialConfig``), ``flags``: its fields that have a flag,
            name -> ``{"flag": ..., "help": ..., "choices": ...}`` (their defaults are its own).
    """
    metadata = {"help": help, **meta}
    if isinstance(default, list | dict):
        return field(default_factory=lambda: copy.deepcopy(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def setting_kind(cls: type, name: str) -> tuple[Any, bool]:
    """The type of ``cls``'s field ``name`` (``list``, ``dict``, ``int``...), and if it takes None.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class S:
        ...     envs: list[str] | None = None
        >>> setting_kind(S, "envs")
        (<class 'list'>, True)
    """
    hint = _hints(cls)[name]
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(hint) if a is not type(None)]
        optional = len(rest) < len(typing.get_args(hint))
        hint = rest[0] if len(rest) == 1 else Any
    return typing.get_origin(hint) or hint, optional


@cache
def _hints(cls: type) -> dict[str, Any]:
    """The fields' types of ``cls``, read once (annotations may be strings to evaluate)."""
    return typing.get_type_hints(cls)


def default_of(item: Field) -> Any:
    """The default of a dataclass field (a fresh one where it has a factory)."""
    return item.default_factory() if item.default is MISSING else item.default


def check_settings(settings: Any) -> None:
    """Check every field of a (frozen) settings dataclass and keep the checked values.

    Each value is checked against its field's type (``None`` where it takes ``None``), then its
    ``minimum`` and ``choices``, then its own ``check``; a list setting may be one item alone
    and a dataclass setting a mapping of its fields.

    Raises:
        ValueError: For a value the field does not take; the message names it and says why.
    """
    for item in fields(settings):
        kind, optional = setting_kind(type(settings), item.name)
        value = _checked(item.name, kind, optional, item.metadata, getattr(settings, item.name))
        check = item.metadata.get("check")
        if check is not None:
            value = check(value)
        object.__setattr__(settings, item.name, value)


def _checked(name: str, kind: Any, optional: bool, meta: Mapping, value: Any) -> Any:
    if kind is list:
        return list_setting(name, value)
    if kind is dict:
        return mapping_setting(name, value)
    if is_dataclass(kind):
        if isinstance(value, kind):
            return value
        mapping = mapping_setting(name, value)
        read = getattr(kind, "from_mapping", None)
        return read(mapping) if read is not None else kind(**mapping)
    if value is None and optional:
        return None
    if kind is bool and not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, not {value!r}.")
    if kind is int and (not _is_int(value) or value < meta.get("minimum", value)):
        raise ValueError(f"{name} must be {_integer_words(meta.get('minimum'))}, not {value!r}.")
    if kind is float and (not _is_number(value) or value < meta.get("minimum", value)):
        least = meta.get("minimum")
        words = "a number" if least is None else f"a number >= {least}"
        raise ValueError(f"{name} must be {words}, not {value!r}.")
    if kind is str:
        text_setting(name, value)
    if kind is Path:
        value = Path(
            text_setting(name, os.fspath(value) if isinstance(value, os.PathLike) else value)
        )
    choices = meta.get("choices")
    if choices is not None and value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}, not {value!r}.")
    return value


def _integer_words(minimum: int | None) -> str:
    words = {0: "a non-negative integer", 1: "a positive integer"}
    return words.get(minimum, "an integer" if minimum is None else f"an integer >= {minimum}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def list_setting(name: str, value: Any) -> list[Any] | None:
    """A list setting; one item alone (``agents: random``) is a list of one, ``None`` stays."""
    if value is None:
        return None
    if isinstance(value, str | dict):
        return [value]
    if not isinstance(value, list | tuple):
        raise ValueError(f"{name} must be a list, not {value!r}.")
    return list(value)


def mapping_setting(name: str, value: Any) -> dict[str, Any]:
    """A mapping setting as a dict (``None``: empty)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a mapping of keyword arguments, not {value!r}.")
    return dict(value)


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


def add_setting_flags(
    add: Callable[..., Any],
    cls: type,
    only: tuple[str, ...] | None = None,
    mapping_type: Callable[[str], Any] | None = None,
) -> None:
    """Add the flag of every field of ``cls`` (or of the fields ``only`` names) with ``add``.

    A flag's destination is its field's name (``trial.num_episodes`` for a flag of a
    dataclass field's field) and it is left ``None`` when not given, so that a config file's
    value stays. A list field's flag repeats; a ``bool`` field that is on by default is
    ``--no-NAME``, one that is off ``--NAME``/``--no-NAME``; a mapping field's flag reads its
    value with ``mapping_type``.
    """
    for item in fields(cls):
        if only is not None and item.name not in only:
            continue
        kind, _ = setting_kind(cls, item.name)
        if is_dataclass(kind):
            own = {f.name: f for f in fields(kind)}
            for name, meta in item.metadata.get("flags", {}).items():
                sub_kind, _ = setting_kind(kind, name)
                dest = f"{item.name}.{name}"
                _add_flag(add, name, dest, sub_kind, default_of(own[name]), meta, mapping_type)
        elif item.metadata.get("flag", "") is not None:
            default = default_of(item)
            _add_flag(add, item.name, item.name, kind, default, item.metadata, mapping_type)


def _add_flag(
    add: Callable[..., Any],
    name: str,
    dest: str,
    kind: Any,
    default: Any,
    meta: Mapping[str, Any],
    mapping_type: Callable[[str], Any] | None,
) -> None:
    flag = meta.get("flag") or "--" + name.replace("_", "-")
    options: dict[str, Any] = {"dest": dest, "help": _help(meta.get("help", ""), default)}
    if kind is bool:  # on by default: --no-NAME turns it off; off: --NAME / --no-NAME
        flag = "--no-" + flag.removeprefix("--") if default else flag
        options.update(default=None)
        options["action"] = "store_false" if default else argparse.BooleanOptionalAction
    elif kind is list:
        options["action"] = "append"
    elif kind is dict:
        options["type"] = mapping_type
    elif kind in (int, float, str, Path):
        options["type"] = kind
    if meta.get("metavar"):
        options["metavar"] = meta["metavar"]
    elif kind is not bool and meta.get("choices") is None:  # --episodes N: EPISODES, not TRIAL.X
        options["metavar"] = flag.removeprefix("--").replace("-", "_").upper()
    if meta.get("choices") is not None:
        options["choices"] = list(meta["choices"])  # read now: a plug-in's names too
    add(flag, **options)
    for alias in meta.get("aliases", ()):
        add(alias, **{**options, "help": argparse.SUPPRESS})


def _help(text: str, default: Any) -> str:
    if isinstance(default, bool):
        shown = "on" if default else "off"
    elif isinstance(default, list | tuple):
        shown = ", ".join(map(str, default))
    else:
        shown = str(default)
    return text.replace("{default}", shown)


def given_settings(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    """The settings the flags of :func:`add_setting_flags` gave (a dataclass field's: a dict)."""
    given: dict[str, Any] = {}
    for item in fields(cls):
        kind, _ = setting_kind(cls, item.name)
        if is_dataclass(kind):
            names = item.metadata.get("flags", {})
            own = {n: getattr(args, f"{item.name}.{n}", None) for n in names}
            own = {n: v for n, v in own.items() if v is not None}
            if own:
                given[item.name] = own
        elif getattr(args, item.name, None) is not None:
            given[item.name] = getattr(args, item.name)
    return given


def merged_setting(item: Field, kind: Any, configured: Any, flag: Any) -> Any:
    """A flag's value over a config's: replacing it, merged by ``merge``, or field by field."""
    merge = item.metadata.get("merge")
    if merge is not None:
        return merge(configured, flag)
    if is_dataclass(kind):
        if isinstance(configured, kind):
            return replace(configured, **flag)
        return {**mapping_setting(item.name, configured), **flag}
    return flag


def config_keys_help(cls: type, width: int = 31) -> str:
    """The config keys of ``cls`` for ``--help``: those read as their flags, then the others."""
    plain = [f.name for f in fields(cls) if "config_help" not in f.metadata]
    lines = ["config file keys (a YAML mapping; the flags above override them):"]
    lines += textwrap.wrap(", ".join(plain), 92, initial_indent="  ", subsequent_indent="  ")
    for item in fields(cls):
        if "config_help" in item.metadata:
            lines += _columns(item.name, item.metadata["config_help"], width)
    return "\n".join(lines)


def _columns(key: str, text: str, width: int, columns: int = 92) -> list[str]:
    """``key`` and ``text`` in two columns, ``text`` from column ``width``."""
    body = textwrap.wrap(text, columns - width, break_on_hyphens=False)
    if len(key) + 3 > width:  # a key wider than its column: the text starts below it
        return [f"  {key}", *(" " * width + line for line in body)]
    return [f"  {key:<{width - 3}} {body[0]}", *(" " * width + line for line in body[1:])]

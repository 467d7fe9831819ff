"""Agents from configs: a spec string (``"random"``, ``"openai:MODEL"``) or a dict with options.

=========================  ================================================================
spec                       agent
=========================  ================================================================
``random``                 :class:`~mage_agents.scripted.RandomLegalAgent`
``policy:NAME``            the opponent policy ``NAME`` in the learner's seat (``cfr``, ...)
``best-response``          OpenSpiel's exact best response to the env's opponent policy
``openai:MODEL``           an OpenAI-compatible endpoint (``base_url`` option or
                           ``$OPENAI_BASE_URL``; or ``openai:MODEL@URL``), with a
                           prompting ``strategy``
``local:PATH``             a local Hugging Face model directory, with a ``strategy``
``tiny``                   a tiny random model built in code (smoke runs, benchmarks)
``python:MODULE:ATTR``     your own code: a class (one instance per concurrent trial) or a
                           callable ``f(observation, info) -> str``
=========================  ================================================================

As a dict, ``{"kind": "openai", "model": "qwen3-4b", "base_url": ..., "strategy": "react"}``; every
other key is an option of the backend (``temperature``, ``top_p``, ``max_tokens``, ...), except
``parse`` (``lenient`` or ``strict``: see :func:`~mage_agents.prompting.read_move`). The options
mean the same for ``openai``, ``local`` and ``tiny`` agents: ``max_tokens`` and ``stop`` are
accepted by the local backend too (its ``max_new_tokens`` and ``stop_strings``).
"""

from __future__ import annotations

import copy
import importlib
import inspect
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mage_agents.base import Agent, as_agent
from mage_agents.prompting import PARSE_MODES, STRATEGIES, LLMAgent
from mage_agents.scripted import BestResponseAgent, PolicyAgent, RandomLegalAgent

__all__ = [
    "AgentFactory",
    "build_agent_factory",
    "parse_agent_config",
    "agent_settings",
    "AGENT_KINDS",
]

AGENT_KINDS = ("random", "policy", "best-response", "openai", "local", "tiny", "python")

_MODEL_AT_URL = re.compile(r"(.+?)@(https?://.+)")
"""``MODEL@URL`` in an openai spec: the model and the endpoint's base URL."""

TRANSPORT_OPTIONS = frozenset(
    {"base_url", "api_key_env", "max_concurrency", "timeout_s", "max_retries", "backoff_s"}
    | {"max_backoff_s", "batch_size", "device", "hub_kernels", "adaptive_concurrency", "server"}
)
"""Options that change how answers are fetched, not what the agent plays."""


@dataclass
class AgentFactory:
    """Builds the agents of one evaluation (one per concurrent trial), sharing any backend.

    Attributes:
        name: The agent's name in results.
        new_agent: Returns a fresh agent.
        config: The config it was built from (``None`` when built from an object), so that worker
            processes can rebuild it.
        backend: The generation backend its agents share (model agents), else ``None``.
    """

    name: str
    new_agent: Callable[[], Agent]
    config: Any = None
    backend: Any = None

    def notes(self) -> list[str]:
        """What the backend could not do as asked, and what it did instead (empty if nothing)."""
        return list(getattr(self.backend, "notes", None) or [])


def parse_agent_config(config: str | dict[str, Any]) -> dict[str, Any]:
    """Turn a spec string or dict into ``{"kind": ..., "arg": ..., **options}``.

    Example:
        >>> parse_agent_config("openai:qwen3-4b")
        {'kind': 'openai', 'arg': 'qwen3-4b'}
        >>> parse_agent_config({"kind": "local", "path": "/models/q", "strategy": "react"})
        {'kind': 'local', 'strategy': 'react', 'arg': '/models/q'}
        >>> parse_agent_config("openai:qwen3-4b@http://127.0.0.1:8000/v1")
        {'kind': 'openai', 'arg': 'qwen3-4b', 'base_url': 'http://127.0.0.1:8000/v1'}
    """
    if isinstance(config, str):
        kind, _, arg = config.partition(":")
        options: dict[str, Any] = {"kind": kind.strip()}
        if arg:
            options["arg"] = arg.strip()
    elif isinstance(config, dict):
        options = dict(config)
        if "kind" not in options:
            raise ValueError(f"An agent dict needs a 'kind' (one of {', '.join(AGENT_KINDS)}).")
        for alias in ("model", "path", "policy", "target"):
            if alias in options and "arg" not in options:
                options["arg"] = options.pop(alias)
    else:
        raise TypeError(f"An agent config is a string or a dict, not {type(config).__name__}.")
    if options["kind"] == "random-legal":
        options["kind"] = "random"
    name = options.get("name")
    if name is not None and not (isinstance(name, str) and name.strip()):
        raise ValueError(f"An agent's name is text, e.g. name: qwen-greedy; not {name!r}.")
    at_url = _MODEL_AT_URL.fullmatch(str(options.get("arg", "")))
    if options["kind"] == "openai" and at_url and "base_url" not in options:
        options["arg"], options["base_url"] = at_url.group(1), at_url.group(2)
    if options["kind"] not in AGENT_KINDS:
        raise ValueError(
            f"Unknown agent kind {options['kind']!r}. Valid kinds: {', '.join(AGENT_KINDS)}."
        )
    return options


def agent_settings(config: Any) -> dict[str, Any]:
    """Return the options of an agent config that change how it plays (for the trial ids).

    The kind, the model or path and the strategy are already in the agent's name; where answers
    come from (URL, concurrency, retries, batch size, device) does not change a trial.

    Example:
        >>> agent_settings({"kind": "openai", "model": "m", "temperature": 0, "max_retries": 9})
        {'temperature': 0}
        >>> agent_settings("random")
        {}
    """
    if not isinstance(config, str | dict):
        return {}
    options = parse_agent_config(config)
    ignored = {"kind", "arg", "name", "strategy"} | TRANSPORT_OPTIONS
    return {k: v for k, v in options.items() if k not in ignored}


def build_agent_factory(config: Any) -> AgentFactory:
    """Build the :class:`AgentFactory` of an agent config, agent object or callable."""
    if isinstance(config, AgentFactory):
        return config
    if not isinstance(config, str | dict):
        return _object_factory(config)
    options = parse_agent_config(config)
    kind = options.pop("kind")
    name = options.pop("name", None)
    builder = _BUILDERS[kind]
    factory = builder(options.pop("arg", None), options)
    if name:
        factory.name = name
    factory.config = config
    return factory


def _object_factory(obj: Any) -> AgentFactory:
    agent = as_agent(obj)
    made = [0]

    def new_agent() -> Agent:
        made[0] += 1
        return agent if made[0] == 1 else copy.deepcopy(agent)  # each concurrent trial its own

    return AgentFactory(agent.name, new_agent)


def _check_options(kind: str, backend: type, options: dict[str, Any]) -> None:
    """Name the option and the type it needs, before the backend trips over a wrong value.

    The expected type is read from the backend's own default (``max_retries=4``: an integer).
    """
    parameters = inspect.signature(backend).parameters
    valid = [p for p in parameters if p not in ("model", "tokenizer", "base_url", "name")]
    for key, value in options.items():
        if key not in parameters:
            raise ValueError(
                f"Unknown option {key!r} for {kind} agents. Valid options: {', '.join(valid)}."
            )
        default = parameters[key].default
        if default is None:  # an optional number (timeout_s: float | None): its annotation
            default = _ANNOTATED.get(str(parameters[key].annotation).split(" ")[0])
            if value is None or default is None:
                continue
        for kinds, wanted in _OPTION_TYPES:
            if type(default) in kinds and type(value) not in kinds:
                raise ValueError(
                    f"Agent option {key} must be {wanted} (like its default {default!r}), "
                    f"not {value!r}."
                )


_ANNOTATED = {"float": 1.0, "int": 1, "bool": False, "str": ""}
"""An example value of each annotated type, for options whose default is ``None``."""

_OPTION_TYPES = (
    ((bool,), "true or false"),
    ((int,), "an integer"),
    ((float, int), "a number"),
    ((str,), "a string"),
)


def _no_options(kind: str, options: dict[str, Any]) -> None:
    if options:
        raise ValueError(f"Agent kind {kind!r} takes no options; got {sorted(options)}.")


def _random(arg: str | None, options: dict[str, Any]) -> AgentFactory:
    _no_options("random", options)
    return AgentFactory("random-legal", RandomLegalAgent)


def _policy(arg: str | None, options: dict[str, Any]) -> AgentFactory:
    _no_options("policy", options)
    if not arg:
        raise ValueError("policy needs a name, e.g. 'policy:cfr' (see opponent_names()).")
    return AgentFactory(f"policy:{arg}", lambda: PolicyAgent(arg))


def _best_response(arg: str | None, options: dict[str, Any]) -> AgentFactory:
    _no_options("best-response", options)
    return AgentFactory("best-response", BestResponseAgent)


def _llm_factory(backend: Any, strategy: str, parse: str) -> AgentFactory:
    if strategy not in STRATEGIES:
        raise ValueError(f"Unknown strategy {strategy!r}. Valid: {', '.join(STRATEGIES)}.")
    name = LLMAgent(backend, strategy, parse=parse).name
    return AgentFactory(
        name, lambda: LLMAgent(backend, strategy, name=name, parse=parse), backend=backend
    )


def _prompting(options: dict[str, Any]) -> tuple[str, str]:
    """Pop the options of the prompting agent: its strategy and how it parses moves."""
    strategy = options.pop("strategy", "zero-shot")
    parse = options.pop("parse", "lenient")
    if parse not in PARSE_MODES:
        raise ValueError(
            f"Agent option parse must be one of {', '.join(PARSE_MODES)}, not {parse!r}."
        )
    return strategy, parse


def _openai(arg: str | None, options: dict[str, Any]) -> AgentFactory:
    from mage_agents.openai_client import OpenAIChatBackend

    strategy, parse = _prompting(options)
    base_url = options.pop("base_url", None) or os.environ.get("OPENAI_BASE_URL")
    if not arg or not base_url:
        raise ValueError(
            "openai needs a model and a base URL: 'openai:MODEL' with base_url=... "
            "(or $OPENAI_BASE_URL), e.g. base_url=http://127.0.0.1:8000/v1."
        )
    if "stop" in options:
        options["stop"] = _stop_strings(options["stop"])
    _check_options("openai", OpenAIChatBackend, options)
    return _llm_factory(OpenAIChatBackend(base_url, arg, **options), strategy, parse)


def _local(arg: str | None, options: dict[str, Any]) -> AgentFactory:
    from mage_agents.local_model import LocalModelBackend

    strategy, parse = _prompting(options)
    if not arg:
        raise ValueError(
            "local needs a model: 'local:/path/to/folder', 'local:/path/to/model.gguf' or "
            "'local:smollm2-135m' (python -m baselines.models list)."
        )
    _local_names(options)
    _check_options("local", LocalModelBackend, options)
    return _llm_factory(LocalModelBackend(arg, **options), strategy, parse)


def _tiny(arg: str | None, options: dict[str, Any]) -> AgentFactory:
    from mage_agents.local_model import LocalModelBackend
    from mage_agents.tiny_model import build_tiny_model

    strategy, parse = _prompting(options)
    model_seed = options.pop("model_seed", 0)
    model, tokenizer = build_tiny_model(seed=model_seed)
    _local_names(options)
    options.setdefault("max_new_tokens", 16)
    _check_options("tiny", LocalModelBackend, options)
    backend = LocalModelBackend(model, tokenizer, name="tiny", **options)
    return _llm_factory(backend, strategy, parse)


def _local_names(options: dict[str, Any]) -> None:
    """The endpoint's option names (as in the paper configs) for the local backend's own.

    ``max_tokens`` is ``max_new_tokens`` here, ``stop`` is ``stop_strings``.
    """
    for endpoint, local in (("max_tokens", "max_new_tokens"), ("stop", "stop_strings")):
        if endpoint in options:
            if local in options:
                raise ValueError(f"Give {endpoint} or {local}, not both.")
            options[local] = options.pop(endpoint)
    if "stop_strings" in options:
        options["stop_strings"] = _stop_strings(options["stop_strings"])


def _stop_strings(value: Any) -> tuple[str, ...]:
    """A stop option: a string or a list of strings (an empty list: no stop strings)."""
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"Agent option stop must be a string or a list of strings, not {value!r}.")
    return tuple(value)


def _python(arg: str | None, options: dict[str, Any]) -> AgentFactory:
    module_name, _, attr = (arg or "").partition(":")
    if not module_name or not attr:
        raise ValueError("python needs 'python:MODULE:ATTR', e.g. 'python:my_agents:MyAgent'.")
    target = _import_attribute(module_name, attr)
    if isinstance(target, type):
        probe = target(**options)
        return AgentFactory(
            getattr(probe, "name", attr), lambda: as_agent(target(**copy.deepcopy(options)))
        )
    _no_options("python (callable)", options)
    return _object_factory(target)


def _import_attribute(module_name: str, attr: str) -> Any:
    """``module.attr``, with a clear error naming what is missing (no traceback)."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise ValueError(
            f"python:{module_name}:{attr}: no module named {error.name!r} (is it on PYTHONPATH, "
            "or in the folder you run from?)."
        ) from None
    except Exception as error:  # the module itself failed while importing
        raise ValueError(
            f"python:{module_name}:{attr}: importing {module_name} failed: "
            f"{type(error).__name__}: {error}"
        ) from None
    try:
        return getattr(module, attr)
    except AttributeError:
        public = sorted(n for n in dir(module) if not n.startswith("_"))[:12]
        raise ValueError(
            f"python:{module_name}:{attr}: module {module_name} has no attribute {attr!r} "
            f"(it has: {', '.join(public)}{', ...' if len(public) == 12 else ''})."
        ) from None


_BUILDERS: dict[str, Callable[[str | None, dict[str, Any]], AgentFactory]] = {
    "random": _random,
    "policy": _policy,
    "best-response": _best_response,
    "openai": _openai,
    "local": _local,
    "tiny": _tiny,
    "python": _python,
}

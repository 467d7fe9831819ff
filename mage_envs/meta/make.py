"""``make_trial``: ``gym.make`` an env id and wrap it into trials, in one call."""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import (
    EnvSpec,
    find_highest_version,
    get_env_id,
    load_env_creator,
    parse_env_id,
)

from mage_envs.meta.config import UNSET, TrialConfig
from mage_envs.meta.convert import TextConversion
from mage_envs.meta.wrapper import MetaEpisodeWrapper

__all__ = ["make_trial"]

_ENV_RULES = ("invalid_action_penalty", "max_invalid_actions")

_WRAPPER_ARGS = (TrialConfig.field_names() | TextConversion.field_names() | {"config"}) - {
    "learner",
    "opponents",
}


def make_trial(env_id: str, num_episodes: int = UNSET, **kwargs: Any) -> MetaEpisodeWrapper:
    """Make ``env_id`` with ``gym.make`` and wrap it in a :class:`MetaEpisodeWrapper`.

    Keyword arguments that :class:`MetaEpisodeWrapper` takes (``same_task``, ``memory``,
    ``config``, ...) go to the wrapper; all others (``opponent``, ``seat``, ``reward_scale``, ...)
    go to ``gym.make``. ``num_episodes`` is 3 unless a ``config`` given says otherwise.
    ``invalid_action_penalty`` and ``max_invalid_actions`` go to ``gym.make`` where the env takes
    them (the suite's envs do), else to the wrapper.

    Example:
        >>> import mage_envs
        >>> env = mage_envs.make_trial("mage/KuhnPoker-v0", num_episodes=3, opponent="random")
        >>> obs, info = env.reset(seed=0)
        >>> obs.splitlines()[0], info["opponent"]
        ('Attempt 1 of 3.', 'random')
    """
    wrapper_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in _WRAPPER_ARGS}
    # The suite's text envs apply their own invalid-answer rules: these settings are theirs.
    # Decided from the registered creator, before the env is built (once).
    spec = _registered_spec(env_id)
    entry = spec.entry_point  # a "module:attr" string, or the creator itself
    creator = entry if callable(entry) else load_env_creator(entry)
    taken = [k for k in _ENV_RULES if k in wrapper_kwargs and _takes(creator, k)]
    kwargs.update({k: wrapper_kwargs.pop(k) for k in taken})
    ours = getattr(creator, "__module__", "").startswith("mage_envs.")
    if ours and spec.id in _CHECKED:
        kwargs.setdefault("disable_env_checker", True)
    env = gym.make(env_id, **kwargs)
    if ours:
        _CHECKED.add(spec.id)
    return MetaEpisodeWrapper(env, num_episodes, **wrapper_kwargs)


_CHECKED: set[str] = set()
"""The suite's own env ids (``mage_envs``) built here once already, through Gymnasium's checker.

Gymnasium's passive checker checks an env's first reset and step, then stays as one more layer
on every call. The suite's envs are checked by its tests; in a process, the first build of each id
still goes through the checker and the later ones (a runner builds an env per trial) skip it.
Anyone else's env is checked at every build, as ``gym.make`` does.
"""


def _registered_spec(env_id: str) -> EnvSpec:
    """The spec ``gym.make(env_id)`` builds from (a ``module:`` prefix imports the module)."""
    module, _, name = env_id.rpartition(":")
    if module:
        importlib.import_module(module)
    namespace, base, version = parse_env_id(name)
    if version is None:  # gym.make takes the highest version (and warns)
        version = find_highest_version(namespace, base)
    return gym.spec(get_env_id(namespace, base, version))


@functools.cache  # inspect.signature costs more than building a small env
def _takes(creator: Any, name: str) -> bool:
    """Whether ``creator`` takes keyword ``name``, following ``**kwargs`` up to the base classes."""
    inits = [c.__dict__["__init__"] for c in inspect.getmro(creator) if "__init__" in c.__dict__]
    for function in inits if isinstance(creator, type) else [creator]:
        parameters = inspect.signature(function).parameters
        if name in parameters:
            return True
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            return False
    return False

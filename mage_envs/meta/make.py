"""``make_trial``: ``gym.make`` an env id and wrap it into trials, in one call."""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import (
    EnvSpec,
    find_highest_version,
    get_env_id,
    load_env_creator,
    parse_env_id,
)

from mage_envs.invalid import INVALID_ANSWER_SETTINGS
from mage_envs.meta.config import TrialConfig
from mage_envs.meta.convert import TextConversion
from mage_envs.meta.wrapper import MetaEpisodeWrapper

__all__ = ["make_trial"]

_WRAPPER_SETTINGS = (TrialConfig.field_names() | TextConversion.field_names() | {"config"}) - {
    "learner",
    "opponents",
}
"""What ``make_trial`` gives the wrapper: its configs' fields except PettingZoo's ``learner`` and
``opponents`` (a registered id is a Gymnasium env, which takes its opponent when it is made)."""


def make_trial(env_id: str, **kwargs: Any) -> MetaEpisodeWrapper:
    """Make ``env_id`` with ``gym.make`` and wrap it in a :class:`MetaEpisodeWrapper`.

    Keyword arguments that are fields of :class:`~mage_envs.meta.config.TrialConfig` or
    :class:`~mage_envs.meta.convert.TextConversion` (``num_episodes``, ``same_task``,
    ``memory``, ...) and ``config`` go to the wrapper; all others (``opponent``, ``seat``,
    ``reward_scale``, ...) go to ``gym.make``. ``invalid_action_penalty`` and
    ``max_invalid_actions`` go to ``gym.make`` where the env declares them in
    ``metadata["invalid_answer_settings"]`` (the suite's envs do), else to the wrapper.

    Example:
        >>> import mage_envs
        >>> env = mage_envs.make_trial("mage/KuhnPoker-v0", num_episodes=3, opponent="random")
        >>> obs, info = env.reset(seed=0)
        >>> obs.splitlines()[0], info["opponent"]
        ('Attempt 1 of 3.', 'random')
    """
    wrapper_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in _WRAPPER_SETTINGS}
    # The suite's text envs apply their own invalid-answer rules: these settings are theirs.
    # Decided from the registered creator, before the env is built (once).
    spec = _registered_spec(env_id)
    entry = spec.entry_point  # a "module:attr" string, or the creator itself
    creator = entry if callable(entry) else load_env_creator(entry)
    declared = (getattr(creator, "metadata", None) or {}).get("invalid_answer_settings", ())
    taken = [k for k in INVALID_ANSWER_SETTINGS if k in wrapper_kwargs and k in declared]
    kwargs.update({k: wrapper_kwargs.pop(k) for k in taken})
    ours = getattr(creator, "__module__", "").startswith("mage_envs.")
    if ours and spec.id in _CHECKED:
        kwargs.setdefault("disable_env_checker", True)
    env = gym.make(env_id, **kwargs)
    if ours:
        _CHECKED.add(spec.id)
    return MetaEpisodeWrapper(env, **wrapper_kwargs)


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

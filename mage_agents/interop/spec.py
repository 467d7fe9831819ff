"""What a served trial is: an env id and its settings, and which settings a client may choose.

The server's operator names the env ids and settings at start (trusted: any keyword
:func:`mage_envs.make_trial` takes). A client may pick another served env id and change a few
settings at ``reset`` (untrusted: only the keys of :data:`CLIENT_SETTINGS`, plain JSON scalars,
bounded episode counts, and no opponent scheme such as ``agent:local:PATH`` that would load a
model or call an endpoint). This module imports neither OpenEnv nor torch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

import mage_envs

__all__ = ["CLIENT_SETTINGS", "MAX_CLIENT_EPISODES", "TrialSpec", "make_env"]

CLIENT_SETTINGS = frozenset(
    {
        "num_episodes",
        "opponent",
        "seat",
        "same_task",
        "stop_on_success",
        "reflection",
        "memory",
        "seat_rotation",
        "invalid_action_penalty",
        "max_invalid_actions",
    }
)
"""The settings a client may change at ``reset``; the server's command line sets any other."""

MAX_CLIENT_EPISODES = 64
"""The most episodes a client may ask for in one trial (the trial's record grows with them)."""

_MAX_MCTS_SIMULATIONS = 10_000
_MCTS = re.compile(r"mcts-(\d+)")


@dataclass(frozen=True)
class TrialSpec:
    """One served env: its id, its settings, and whether it is wrapped into trials.

    Args:
        env_id: A registered Gymnasium id, e.g. ``"mage/KuhnPoker-v0"``.
        settings: Keyword arguments of :func:`mage_envs.make_trial` (or of ``gym.make`` for a
            plain env).
        plain: Serve the env as it is (``gym.make``), one episode a reset, no trial pages.
    """

    env_id: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    plain: bool = False

    def with_client_choice(
        self, served: tuple[str, ...], env_id: str | None, settings: Any
    ) -> TrialSpec:
        """Return this spec with a client's env id and settings, checked; raise ValueError."""
        chosen = self.env_id if env_id is None else env_id
        if not isinstance(chosen, str) or chosen not in served:
            raise ValueError(f"unknown env id {chosen!r}: this server serves {', '.join(served)}.")
        if settings is None:
            settings = {}
        if not isinstance(settings, Mapping):
            raise ValueError("settings must be an object of setting names to values.")
        _check_client_settings(settings)
        return TrialSpec(chosen, {**self.settings, **settings}, self.plain)


def _check_client_settings(settings: Mapping[str, Any]) -> None:
    unknown = sorted(str(k) for k in settings if k not in CLIENT_SETTINGS)
    if unknown:
        raise ValueError(
            f"setting(s) {', '.join(unknown)} cannot be chosen by a client; "
            f"the ones that can: {', '.join(sorted(CLIENT_SETTINGS))}."
        )
    for key, value in settings.items():
        if value is not None and not isinstance(value, str | int | float | bool):
            raise ValueError(f"setting {key} must be a string, number or boolean.")
    episodes = settings.get("num_episodes")
    if episodes is not None and not (
        isinstance(episodes, int) and 1 <= episodes <= MAX_CLIENT_EPISODES
    ):
        raise ValueError(f"num_episodes must be an integer from 1 to {MAX_CLIENT_EPISODES}.")
    opponent = settings.get("opponent")
    if isinstance(opponent, str):
        if ":" in opponent:
            raise ValueError(
                f"opponent {opponent!r}: agent opponents are set by the server's operator, "
                "not by a client."
            )
        mcts = _MCTS.fullmatch(opponent)
        if mcts and int(mcts.group(1)) > _MAX_MCTS_SIMULATIONS:
            raise ValueError(f"opponent {opponent!r}: at most mcts-{_MAX_MCTS_SIMULATIONS}.")


def make_env(spec: TrialSpec) -> gym.Env:
    """Make the env of ``spec``; any failure is a ValueError with a one-line reason.

    Example:
        >>> env = make_env(TrialSpec("mage/KuhnPoker-v0", {"num_episodes": 2}))
        >>> env.reset(seed=0)[0].splitlines()[0]
        'Attempt 1 of 2.'
    """
    settings = dict(spec.settings)
    try:
        if spec.plain:
            return gym.make(spec.env_id, **settings)
        return mage_envs.make_trial(spec.env_id, **settings)
    except Exception as error:  # any bad setting: gym, the env, the wrapper
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ValueError(f"cannot make {spec.env_id} with {settings}: {reason}") from None

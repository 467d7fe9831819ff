"""A mage trial on an OpenEnv server as TRL's ``environment_factory`` (TRL's OpenEnv way).

The same surface as the in-process :class:`~mage_agents.training.TrialEnvironment` (``reset``,
one ``move`` tool, ``get_reward``) and the same text, but every step goes over OpenEnv's
WebSocket client to a server (``python -m baselines.run serve-env``), so the envs run where the
server runs::

    from trl import GRPOTrainer
    from mage_agents.interop import openenv_trial_environment

    factory = openenv_trial_environment("http://127.0.0.1:8000", opponent="always-pass")
    trainer = GRPOTrainer(model, args=..., train_dataset=rows_with_a_seed_column,
                          environment_factory=factory)

Each instance holds one session on the server: start it with ``--max-sessions`` at least the
number of rollouts of a generation batch.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from mage_agents.interop.openenv_client import MageTrialClient
from mage_agents.interop.openenv_models import MAX_ACTION_CHARS, MageAction
from mage_agents.training.environment import TOOL_INSTRUCTION

__all__ = ["OpenEnvTrialEnvironment", "openenv_trial_environment"]


class OpenEnvTrialEnvironment:
    """One session on a mage OpenEnv server as a TRL environment, with a single ``move`` tool.

    Args:
        base_url: The server, e.g. ``"http://127.0.0.1:8000"``.
        env_id: One of the server's env ids (default: the server's first).
        unfinished_penalty: Added to the reward of a rollout that stopped calling ``move``
            before the trial ended, as in :class:`~mage_agents.training.TrialEnvironment`.
        **settings: Settings a client may choose (``opponent``, ``num_episodes``, ...; see
            :data:`mage_agents.interop.CLIENT_SETTINGS`).

    Only ``reset``, ``move`` and ``get_reward`` are public: TRL offers every other public
    method to the model as a tool.
    """

    def __init__(
        self,
        base_url: str,
        env_id: str | None = None,
        unfinished_penalty: float = -1.0,
        **settings: Any,
    ) -> None:
        self._client = MageTrialClient(base_url=base_url).sync()
        self._client.connect()
        self._choice = {"env_id": env_id, "settings": settings}
        self._penalty = float(unfinished_penalty)
        self._return = 0.0
        self._done = True
        self._trial: dict[str, Any] | None = None

    def reset(self, seed: int | None = None, **row: Any) -> str:
        """Start a trial of the task ``seed`` (a dataset column); return its first observation.

        Other dataset columns (``prompt``, ...) are ignored.
        """
        result = self._client.reset(seed=None if seed is None else int(seed), **self._choice)
        self._return, self._done, self._trial = 0.0, False, None
        return f"{result.observation.page}\n\n{TOOL_INSTRUCTION}"

    def move(self, move: str) -> str:
        """Play one move in the game (or give the reflection when asked for one).

        Args:
            move: Exactly one of the legal moves listed in the observation, e.g. "bet".

        Returns:
            What happens next: the next observation, or the end of the trial.
        """
        if self._done:
            return "The trial is over: no more moves."
        result = self._client.step(MageAction(text=str(move)[:MAX_ACTION_CHARS]))
        self._return += float(result.reward or 0.0)
        if result.done:
            self._done, self._trial = True, result.observation.trial
            return f"{result.observation.page}\n\nThe trial is over."
        return result.observation.page

    def get_reward(self) -> float:
        """Return the trial's total reward so far (plus the penalty if it was left unfinished)."""
        return self._return + (0.0 if self._done else self._penalty)

    @property
    def trial(self) -> dict[str, Any] | None:
        """The finished trial's summary (returns per episode, pass@k, ...), else ``None``."""
        return self._trial


def openenv_trial_environment(
    base_url: str, **kwargs: Any
) -> Callable[[], OpenEnvTrialEnvironment]:
    """Return a zero-argument factory of :class:`OpenEnvTrialEnvironment`, as TRL expects.

    One instance is made and reset here, so an unreachable server, an unknown env id or a bad
    setting fails before TRL starts.
    """
    OpenEnvTrialEnvironment(base_url, **kwargs).reset(seed=0)
    return partial(OpenEnvTrialEnvironment, base_url, **kwargs)

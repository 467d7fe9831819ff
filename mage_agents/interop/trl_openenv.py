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
from mage_agents.training.environment import ToolTrial

__all__ = ["OpenEnvTrialEnvironment", "openenv_trial_environment"]


class OpenEnvTrialEnvironment(ToolTrial):
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
        super().__init__(unfinished_penalty)
        self._client = MageTrialClient(base_url=base_url).sync()
        self._client.connect()
        self._choice = {"env_id": env_id, "settings": settings}

    def _start(self, seed: int | None) -> str:
        return self._client.reset(seed=seed, **self._choice).observation.page

    def _play(self, text: str) -> tuple[str, float, bool, dict[str, Any] | None]:
        result = self._client.step(MageAction(text=text[:MAX_ACTION_CHARS]))
        trial = result.observation.trial if result.done else None
        return result.observation.page, float(result.reward or 0.0), bool(result.done), trial


def openenv_trial_environment(
    base_url: str, **kwargs: Any
) -> Callable[[], OpenEnvTrialEnvironment]:
    """Return a zero-argument factory of :class:`OpenEnvTrialEnvironment`, as TRL expects.

    One instance is made and reset here, so an unreachable server, an unknown env id or a bad
    setting fails before TRL starts.
    """
    OpenEnvTrialEnvironment(base_url, **kwargs).reset(seed=0)
    return partial(OpenEnvTrialEnvironment, base_url, **kwargs)

"""The client of a mage OpenEnv server: OpenEnv's own ``EnvClient``, typed for our trials.

Example (a server started with ``python -m baselines.run serve-env mage/KuhnPoker-v0``)::

    from mage_agents.interop import MageAction, MageTrialClient

    with MageTrialClient(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(seed=0, settings={"opponent": "aggressive"})
        while not result.done:
            result = env.step(MageAction(text=result.observation.legal_moves[0]))
        print(result.observation.trial["returns"], env.state().record)
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from mage_agents.interop.openenv_models import MageAction, MageObservation, MageState

__all__ = ["MageTrialClient"]


class MageTrialClient(EnvClient[MageAction, MageObservation, MageState]):
    """One session on a mage OpenEnv server (async; ``.sync()`` for the blocking wrapper)."""

    def _step_payload(self, action: MageAction) -> dict[str, Any]:
        return action.model_dump()

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[MageObservation]:
        observation = MageObservation(
            **payload.get("observation", {}),
            reward=payload.get("reward"),
            done=payload.get("done", False),
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=observation.done
        )

    def _parse_state(self, payload: dict[str, Any]) -> MageState:
        return MageState(**payload)

"""Our trials as a ``verifiers`` (v1) environment: the env owns the trial's loop.

``verifiers`` 0.4 finds an environment by id: ``vf-eval mage-verifiers ...`` imports the
top-level package :mod:`mage_verifiers`, which exports the classes defined here:

- :class:`MageTrials`, the taskset: one task a seed, each a trial of ``env_id`` made with
  :func:`mage_envs.make_trial` and ``settings`` (opponent, memory, ``stop_on_success``, ...).
- :class:`MageTrialEnv`, the environment: its ``run`` resets the trial with the task's seed and
  hands every page to the ``player`` agent, one turn a page, until the trial ends (all its
  episodes, or an early stop); it records the trial's return as the reward and pass@k, the
  final return and the invalid answers as metrics.
- :class:`PageHarness`, the player's default harness: one chat completion a turn, in this
  process, through verifiers' interception (which records the trace). It sends only the newest
  page: the page carries the trial's memory (reflection-only by default), as in
  ``MetaRLTrainer``, so the earlier transcript stays out of the context. verifiers' own chat
  harnesses (``null``, ``bash``) prepare a program with ``uv`` and the network; this one needs
  neither.

Needs the ``verifiers`` extra; see docs/interop.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import verifiers.v1 as vf
from pydantic import Field, model_validator

from mage_agents.interop.spec import TrialSpec, make_env

__all__ = [
    "MageTrialData",
    "MageTrialEnv",
    "MageTrialEnvConfig",
    "MageTrialTask",
    "MageTrials",
    "MageTrialsConfig",
    "PageHarness",
    "PageHarnessConfig",
]

# Our bound on one answer; verifiers has its own per stage (`--env.player.timeout.*`).
_TURN_TIMEOUT_S = 600.0


class MageTrialData(vf.TaskData):
    """A task's data: the seed its trial resets with."""

    seed: int


class MageTrialTask(vf.Task[MageTrialData, vf.State, vf.TaskConfig]):
    """One trial of the taskset's env and settings, named by its seed."""


class MageTrialsConfig(vf.TasksetConfig):
    """The taskset's settings (``--env.taskset.*`` on ``vf-eval``).

    Attributes:
        env_id: A registered Gymnasium id, e.g. ``"mage/KuhnPoker-v0"``.
        settings: Keyword arguments of :func:`mage_envs.make_trial`: ``num_episodes``,
            ``opponent``, ``seat``, ``memory``, ``stop_on_success``, env settings, ...
        first_seed: The seed of the first task.
        num_trials: How many tasks (seeds ``first_seed`` onwards).
    """

    env_id: str = "mage/KuhnPoker-v0"
    settings: dict[str, Any] = {}
    first_seed: int = 0
    num_trials: int = Field(16, ge=1)

    @model_validator(mode="after")
    def _makes_a_trial(self) -> MageTrialsConfig:
        # A bad id or setting stops the run as the command line is read, in one line.
        make_env(TrialSpec(self.env_id, self.settings)).close()
        return self


class MageTrials(vf.Taskset[MageTrialTask, MageTrialsConfig]):
    """The taskset: ``num_trials`` seeds of one env id and its trial settings.

    Example:
        >>> config = MageTrialsConfig(settings={"num_episodes": 2}, first_seed=5, num_trials=2)
        >>> [(task.data.name, task.data.seed) for task in MageTrials(config)]
        [('mage/KuhnPoker-v0#5', 5), ('mage/KuhnPoker-v0#6', 6)]
    """

    def load(self) -> Iterator[MageTrialTask]:
        """Yield one task a seed."""
        for seed in range(self.config.first_seed, self.config.first_seed + self.config.num_trials):
            data = MageTrialData(name=f"{self.config.env_id}#{seed}", prompt=None, seed=seed)
            yield MageTrialTask(data, self.config.task)


class PageHarnessConfig(vf.HarnessConfig):
    """The page harness has no settings of its own (sampling is ``vf-eval``'s)."""


class PageHarness(vf.Harness[PageHarnessConfig]):
    """One chat completion a turn, in process, with the newest page as the only message."""

    EXECUTES_CODE = False
    NEEDS_CONTAINER = False
    SUPPORTS_RESUME = True

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        """Ask the model through the interception at ``endpoint``; the trace records the call."""
        _, prompt = self.resolve_prompt(data)
        if isinstance(prompt, str):
            messages = [{"role": "user", "content": prompt}]
        else:
            messages = [{"role": m.role, "content": m.content} for m in prompt or []]
        request = {"model": ctx.model, "messages": messages}
        headers = {"Authorization": f"Bearer {secret}"}
        async with httpx.AsyncClient(timeout=_TURN_TIMEOUT_S) as client:
            try:
                answer = await client.post(
                    f"{endpoint}/chat/completions", json=request, headers=headers
                )
            except httpx.HTTPError as error:
                return vf.ProgramResult(1, "", f"no answer from the model: {error}")
        if answer.status_code != 200:
            reason = " ".join(answer.text.split())[:500]
            return vf.ProgramResult(
                1, "", f"the model answered HTTP {answer.status_code}: {reason}"
            )
        return vf.ProgramResult(0, "", "")

    async def resume(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        messages: vf.Messages,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        """Answer the new page alone: the page, not the transcript, is the agent's memory."""
        fresh = data.model_copy(update={"prompt": messages, "system_prompt": None})
        return await self.launch(ctx, trace, runtime, endpoint, secret, mcp_urls, fresh)


class MageTrialEnvConfig(vf.EnvConfig):
    """The environment's one role, ``player``; it runs on this host (no sandbox needed)."""

    player: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class MageTrialEnv(vf.Env[MageTrialEnvConfig]):
    """Plays one trial an episode: every page to the player, its answer to the trial."""

    async def run(self, task: MageTrialTask, agents: vf.Agents) -> None:
        """Play the task's trial to its end and record its return, pass@k and figures."""
        taskset = self.taskset.config
        env = make_env(TrialSpec(taskset.env_id, taskset.settings))
        try:
            page, _ = env.reset(seed=task.data.seed)
            total, done = 0.0, False
            async with agents.player.interaction(task) as interaction:
                while not done:
                    segment = await interaction.turn(page)
                    if segment.terminated:  # the agent's run ended (an error, a limit)
                        break  # its trace says why; an unfinished trial scores nothing
                    page, reward, terminated, truncated, info = env.step(_answer(segment))
                    total += float(reward)
                    done = terminated or truncated
                if done:  # scored before the run closes, so verifiers' own log shows it
                    _score(interaction.trace, total, info.get("trial"))
        finally:
            env.close()


def _score(trace: vf.Trace, total: float, figures: dict[str, Any] | None) -> None:
    """Record the trial's return as the reward, and pass@k and its figures as metrics."""
    trace.record_reward("trial_return", total)
    if figures:
        for k, value in enumerate(figures["pass_at_k"], start=1):
            trace.record_metric(f"pass_at_{k}", float(value))
        trace.record_metric("final_return", float(figures["final_return"]))
        trace.record_metric("invalid_actions", float(figures["invalid_actions"]))
        trace.info["trial"] = figures


def _answer(segment: vf.Segment) -> str:
    """The agent's answer as the model wrote it (``Segment.last_reply`` strips it)."""
    for message in reversed(segment.messages):
        if isinstance(message, vf.AssistantMessage):
            return message.content if isinstance(message.content, str) else ""
    return ""

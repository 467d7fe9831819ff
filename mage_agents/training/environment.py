"""Our envs and trials in the shape of TRL's ``GRPOTrainer(environment_factory=...)``.

TRL's environment protocol: the factory is called with no arguments and returns an object with
``reset(**row)`` (the dataset row's columns; it returns the first observation, appended to the
row's prompt), public methods that the model calls as tools, and optionally ``get_reward()``
(the environment owns the reward). TRL runs the whole multi-turn rollout as one sequence with the
tool results masked out of the loss, and compares the rollouts of a group by their reward.

:class:`TrialEnvironment` exposes one trial of any registered env id through a single tool,
``move``. A plain TRL user trains on our envs with TRL unchanged::

    from trl import GRPOConfig, GRPOTrainer
    from mage_agents.training import trial_environment

    factory = trial_environment("mage/KuhnPoker-v0", num_episodes=1, opponent="aggressive")
    trainer = GRPOTrainer(model, args=GRPOConfig(...), train_dataset=rows_with_a_seed_column,
                          environment_factory=factory)

TRL needs a chat template that renders tool calls and a parser for the model's calls: a
pretrained model's (TRL knows Qwen3's, Llama 3's, ...), or the tiny model's own
(:mod:`mage_agents.tiny_model`, which calls ``move`` as ``<|call|><action>MOVE</action>``), so
the tiny model trains this way as built (``examples/train_with_plain_trl.py``).

For one sample per model turn with per-turn advantages (LaMer, MAGE, GiGPO), use
:class:`~mage_agents.training.MetaRLTrainer` instead.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import mage_envs

__all__ = ["ToolTrial", "TrialEnvironment", "trial_environment"]

TOOL_INSTRUCTION = (
    "Play by calling the `move` tool with exactly one legal move (or, when asked to reflect, "
    "with your reflection)."
)


class ToolTrial:
    """One trial behind a single ``move`` tool: what every door into TRL shares.

    A subclass says how a trial starts (:meth:`_start`) and how a move is played
    (:meth:`_play`), in process or over a wire; the text the model reads, the tool's contract
    and the reward are the same through every door.

    Args:
        unfinished_penalty: Added to the reward of a rollout that stopped calling ``move``
            before the trial ended (otherwise a model that never plays would score 0, which
            beats losing).

    Only ``reset``, ``move`` and ``get_reward`` are public: TRL offers every other public
    method to the model as a tool.
    """

    def __init__(self, unfinished_penalty: float = -1.0) -> None:
        self._penalty = float(unfinished_penalty)
        self._return = 0.0
        self._done = True
        self._trial: dict[str, Any] | None = None

    def _start(self, seed: int | None) -> str:
        """Start a trial of task ``seed``; return its first page."""
        raise NotImplementedError

    def _play(self, text: str) -> tuple[str, float, bool, dict[str, Any] | None]:
        """Play ``text``; return the next page, the reward, whether the trial ended, its record."""
        raise NotImplementedError

    def reset(self, seed: int | None = None, **row: Any) -> str:
        """Start a trial of the task ``seed`` (a dataset column); return its first observation.

        Other dataset columns (``prompt``, ...) are ignored.
        """
        page = self._start(None if seed is None else int(seed))
        self._return, self._done, self._trial = 0.0, False, None
        return f"{page}\n\n{TOOL_INSTRUCTION}"

    def move(self, move: str) -> str:
        """Play one move in the game (or give the reflection when asked for one).

        Args:
            move: Exactly one of the legal moves listed in the observation, e.g. "bet".

        Returns:
            What happens next: the next observation, or the end of the trial.
        """
        if self._done:
            return "The trial is over: no more moves."
        page, reward, done, trial = self._play(str(move))
        self._return += reward
        if done:
            self._done, self._trial = True, trial
            return f"{page}\n\nThe trial is over."
        return page

    def get_reward(self) -> float:
        """Return the trial's total reward so far (plus the penalty if it was left unfinished)."""
        return self._return + (0.0 if self._done else self._penalty)

    @property
    def trial(self) -> dict[str, Any] | None:
        """The finished trial's summary (returns per episode, pass@k, ...), else ``None``."""
        return self._trial


class TrialEnvironment(ToolTrial):
    """One trial of a registered env as a TRL environment, with a single ``move`` tool.

    Args:
        env_id: A registered Gymnasium id, e.g. ``"mage/KuhnPoker-v0"``.
        num_episodes: Episodes per trial (default 1, plain episodes; or ``config``'s, when a
            ``config=`` is among ``trial_kwargs``).
        unfinished_penalty: Added to the reward of a rollout that stopped calling ``move``
            before the trial ended (otherwise a model that never plays would score 0, which
            beats losing).
        **trial_kwargs: Passed to :func:`mage_envs.make_trial` (``opponent``, ``same_task``,
            ``memory``, env keyword arguments such as ``seat`` or ``reward_scale``).

    Only ``reset``, ``move`` and ``get_reward`` are public: TRL offers every other public
    method to the model as a tool.
    """

    def __init__(
        self,
        env_id: str,
        num_episodes: int | None = None,
        unfinished_penalty: float = -1.0,
        **trial_kwargs: Any,
    ) -> None:
        super().__init__(unfinished_penalty)
        if num_episodes is not None or "config" not in trial_kwargs:  # a config's N stands
            trial_kwargs["num_episodes"] = 1 if num_episodes is None else num_episodes
        self._env = mage_envs.make_trial(env_id, **trial_kwargs)

    def _start(self, seed: int | None) -> str:
        observation, _ = self._env.reset(seed=seed)
        return observation

    def _play(self, text: str) -> tuple[str, float, bool, dict[str, Any] | None]:
        observation, reward, terminated, truncated, info = self._env.step(text)
        return observation, float(reward), terminated or truncated, info.get("trial")


def trial_environment(env_id: str, **kwargs: Any) -> Callable[[], TrialEnvironment]:
    """Return a zero-argument factory of :class:`TrialEnvironment`, as TRL expects.

    Building one here checks the settings at once, so a bad env id or keyword fails before TRL
    starts.

    Example:
        >>> factory = trial_environment("mage/KuhnPoker-v0", opponent="always-pass")
        >>> env = factory()
        >>> env.reset(seed=0).splitlines()[0]
        'Attempt 1 of 1.'
        >>> env.move("bet").endswith("The trial is over.") and env.get_reward()
        1.0
    """
    TrialEnvironment(env_id, **kwargs)
    return partial(TrialEnvironment, env_id, **kwargs)

"""``MetaEpisodeWrapper``: any Gymnasium or PettingZoo env as reflection-carrying trials.

One wrapper episode is one trial of ``num_episodes`` inner episodes. The phases of a trial:
play episode 1, then for each later episode a reflection step (``info["phase"] == "reflect"``; the
agent's answer is stored as its reflection, reward 0) and the next episode's play steps. Play
observations carry "Attempt k of N", the memory of earlier attempts, and the inner observation.
At the end of the trial ``info["trial"]`` holds the figures of :class:`~mage_envs.meta.TrialResult`.

Non-text envs are converted by a :class:`~mage_envs.meta.TextAdapter`; PettingZoo envs by
:class:`~mage_envs.meta.pettingzoo_env.PettingZooTextEnv` (the learner against opponents).
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
from gymnasium import spaces
from pettingzoo.utils.env import AECEnv, ParallelEnv

from mage_envs.meta.memory import (
    EpisodeRecord,
    Step,
    cut_head,
    extract_reflection,
    outcome,
    render_memory,
    render_steps,
    shown_action,
)
from mage_envs.meta.pettingzoo_env import PettingZooTextEnv
from mage_envs.meta.settings import SEAT_ROTATIONS, check_settings
from mage_envs.meta.templates import DEFAULT_TEMPLATES, Templates, check_templates
from mage_envs.meta.text_adapter import TextAdapter, TextWrapper, fit_text, text_space
from mage_envs.meta.trial import TrialResult
from mage_envs.text import MAX_TEXT_CHARS

__all__ = ["MetaEpisodeWrapper", "SEAT_ROTATIONS", "default_success"]

MAX_OBSERVATION_CHARS = 2 * MAX_TEXT_CHARS
"""Default bound on a trial observation (memory is cut from its oldest end to fit)."""


def default_success(episode_return: float, info: dict[str, Any]) -> bool:
    """The default success predicate: the env's ``info["success"]`` if it has one, else return > 0.

    Example:
        >>> default_success(-1.0, {"success": True}), default_success(0.5, {})
        (True, True)
    """
    if "success" in info:
        return bool(info["success"])
    return episode_return > 0


_INVALID_ANSWER_RULES = {"invalid_action_penalty": 0.0, "max_invalid_actions": 5}
"""Settings of the invalid-answer rules the wrapper applies to envs it converts, with defaults."""


def _with_defaults(text_kwargs: dict[str, Any]) -> dict[str, Any]:
    unset = {k: v for k, v in _INVALID_ANSWER_RULES.items() if text_kwargs.get(k) is None}
    return {**text_kwargs, **unset}


def as_text_env(env: Any, learner: str | None, opponents: Any, **text_kwargs: Any) -> gym.Env:
    """Return ``env`` as a text Gymnasium env: PettingZoo envs and non-text spaces are converted."""
    if isinstance(env, AECEnv | ParallelEnv):
        return PettingZooTextEnv(
            env, learner=learner, opponents=opponents, **_with_defaults(text_kwargs)
        )
    if learner is not None or opponents is not None:
        raise TypeError(
            "learner= and opponents= apply to PettingZoo envs; a Gymnasium env takes its "
            "opponent when it is made (e.g. gym.make(id, opponent=...))."
        )
    if not isinstance(env, gym.Env):
        raise TypeError(f"Expected a Gymnasium or PettingZoo env, not {type(env).__name__}.")
    text = isinstance(env.observation_space, spaces.Text) and isinstance(
        env.action_space, spaces.Text
    )
    if text and text_kwargs.get("adapter") is None:
        given = [k for k in _INVALID_ANSWER_RULES if text_kwargs.get(k) is not None]
        if given:
            raise ValueError(
                f"{' and '.join(given)}: only for envs the wrapper converts to text. This env "
                f"is already text and applies its own invalid-answer rules: set them where it "
                f"is made, e.g. gym.make(id, invalid_action_penalty=...) (make_trial does that "
                f"for the settings the env takes)."
            )
        return env
    return TextWrapper(env, **_with_defaults(text_kwargs))


class MetaEpisodeWrapper(gym.Wrapper[str, str, str, str], gym.utils.RecordConstructorArgs):
    """Turns an env into trials of ``num_episodes`` episodes with reflections and memory.

    Args:
        env: A Gymnasium env (text or not), or a PettingZoo AEC / parallel env.
        num_episodes: Episodes per trial (N). LaMer and MAGE used 3.
        learner: PettingZoo only: the learner's agent id (default: the first agent).
        opponents: PettingZoo only: ``None`` (random legal moves), one policy for every other
            agent, a dict agent id -> policy, a ``Population`` (one member per trial) or an
            opponent or preset name (see :mod:`mage_envs.meta.pettingzoo_env`).
        same_task: True (default, as LaMer and MAGE): every episode restarts from the same initial
            state, by replaying the trial's reset seed (same Kuhn deal, same board). False: a new
            seed per episode (fresh task), with the same opponent.
        stop_on_success: End the trial at the first successful episode. Default False: all N
            episodes are played, which training needs for cross-episode returns. LaMer's and
            MAGE's evaluation stopped at the first win; pass@k is the same either way.
        reflection: Ask for a reflection after every non-final episode (default True, as LaMer
            and MAGE).
        memory: ``"reflection_only"`` (default, LaMer's format), ``"history_only"`` or
            ``"history_and_reflection"``: what earlier episodes leave in later observations.
        max_reflection_chars: Stored reflections are cut to this length (2000, as LaMer).
        max_history_chars: Each earlier episode's history in memory is cut to this length.
        history_steps: Past steps of the current episode shown above its observation (default 0:
            the suite's envs already show the game so far; verl-agent shows a few).
        seat_rotation: ``None`` (default: the env's own seat), ``"episode"`` (alternate seats
            within a trial, starting seat drawn from the seed) or ``"trial"`` (one seat per trial,
            drawn from the seed; MAGE mixed seats across trials in tic-tac-toe).
        success_fn: ``f(episode_return, final_info) -> bool`` (default :func:`default_success`).
        templates: The text templates (default :data:`~mage_envs.meta.templates.DEFAULT_TEMPLATES`).
        reflection_prompt: Shortcut to replace only ``templates.reflection_prompt``.
        adapter: A :class:`~mage_envs.meta.TextAdapter` for non-text envs (default: built from
            the spaces, with known action names).
        invalid_action_penalty: For envs the wrapper converts to text (non-text and PettingZoo
            envs): penalty of an invalid answer (default 0). A text env applies its own rules, so
            setting this for one raises: set it where the env is made.
        max_invalid_actions: For envs the wrapper converts to text: invalid answers in a row that
            truncate the episode (default 5). A text env raises, as above.
        pass_options: Whether the inner env takes ``reset(options={"seat", "keep_opponent"})``.
            Default: True for the suite's envs, False otherwise (a plain env may reject options).
        max_observation_chars: Bound on an observation; the oldest memory is cut to fit.

    Example:
        >>> import gymnasium as gym
        >>> env = MetaEpisodeWrapper(gym.make("FrozenLake-v1"), num_episodes=2)
        >>> obs, info = env.reset(seed=0)
        >>> obs.splitlines()[0], info["phase"], info["episode_index"], info["legal_actions"]
        ('Attempt 1 of 2.', 'play', 0, ['left', 'down', 'right', 'up'])
    """

    def __init__(
        self,
        env: Any,
        num_episodes: int = 3,
        *,
        learner: str | None = None,
        opponents: Any = None,
        same_task: bool = True,
        stop_on_success: bool = False,
        reflection: bool = True,
        memory: str = "reflection_only",
        max_reflection_chars: int = 2000,
        max_history_chars: int = 2000,
        history_steps: int = 0,
        seat_rotation: str | None = None,
        success_fn: Callable[[float, dict[str, Any]], bool] | None = None,
        templates: Templates = DEFAULT_TEMPLATES,
        reflection_prompt: str | None = None,
        adapter: TextAdapter | None = None,
        invalid_action_penalty: float | None = None,
        max_invalid_actions: int | None = None,
        pass_options: bool | None = None,
        max_observation_chars: int = MAX_OBSERVATION_CHARS,
    ) -> None:
        recorded = {k: v for k, v in locals().items() if k not in ("self", "env", "__class__")}
        gym.utils.RecordConstructorArgs.__init__(self, **recorded)
        check_settings(recorded)
        inner = as_text_env(
            env,
            learner,
            opponents,
            adapter=adapter,
            invalid_action_penalty=invalid_action_penalty,
            max_invalid_actions=max_invalid_actions,
        )
        super().__init__(inner)
        self.num_episodes = int(num_episodes)
        self.same_task = bool(same_task)
        self.stop_on_success = bool(stop_on_success)
        self.reflection = bool(reflection)
        self.memory = memory
        self.max_reflection_chars = int(max_reflection_chars)
        self.max_history_chars = int(max_history_chars)
        self.history_steps = int(history_steps)
        self.seat_rotation = seat_rotation
        self.success_fn = success_fn or default_success
        if reflection_prompt is not None:
            templates = Templates(**{**templates.__dict__, "reflection_prompt": reflection_prompt})
        check_templates(templates)
        # Templates are cleaned once, so composed observations need no per-step charset scan.
        self.templates = Templates(**{k: fit_text(v) for k, v in vars(templates).items()})
        self.pass_options = _accepts_options(inner) if pass_options is None else bool(pass_options)
        if seat_rotation is not None and not self.pass_options:
            raise ValueError(
                "seat_rotation needs an env whose reset takes options={'seat': ...}; pass "
                "pass_options=True if yours does."
            )
        self.max_observation_chars = int(max_observation_chars)
        self.observation_space = text_space(self.max_observation_chars)
        self.action_space = text_space()
        self._rng = None
        self._phase = "done"
        self._warned_restart = False

    # -- Gymnasium API -------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a trial; ``seed`` (0 included) fixes every episode, seat and opponent draw in it.

        Args:
            seed: Seeds the trial. Without one, the trial draws from the wrapper's generator.
            options: Forwarded to every inner reset (merged with ``seat`` / ``keep_opponent``).
        """
        if seed is not None or self._rng is None:
            # The stdlib generator: a trial pays for its seeding, and numpy's costs twice as much.
            self._rng = random.Random(seed)
        count = self.num_episodes
        if self.same_task:
            # The trial's seed is the task's seed: trial s replays what env.reset(seed=s) deals.
            task = seed if seed is not None else self._rng.getrandbits(31)
            self._seeds = [task] * count
        else:
            self._seeds = [self._rng.getrandbits(31) for _ in range(count)]
        self._seats = self._draw_seats()
        self._user_options = dict(options or {})
        self._records: list[EpisodeRecord] = []
        self._reflections: list[str] = []
        self._invalid = 0
        self._first_observation = None
        obs, info = self._start_episode(0)
        return obs, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play one step, or store a reflection in the reflection phase."""
        if self._phase == "done":
            raise RuntimeError("The trial is over (or never started): call reset().")
        if self._phase == "reflect":
            answer = extract_reflection(
                action, self.templates.reflection_tag, self.max_reflection_chars
            )
            self._reflections.append(answer)
            obs, info = self._start_episode(len(self._records))
            return obs, 0.0, False, False, info
        return self._play(action)

    # -- play ----------------------------------------------------------------------------------

    def _play(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        seen, record = self._inner_obs, self._current
        obs, reward, terminated, truncated, inner_info = self.env.step(action)
        reward = float(reward)
        record.steps.append(Step(seen, shown_action(action), reward))
        record.episode_return += reward
        self._invalid += int(bool(inner_info.get("invalid_action", False)))
        self._inner_obs, self._inner_info = fit_text(obs), inner_info
        index = len(self._records)
        if not (terminated or truncated):
            return self._play_observation(), reward, False, False, self._info(index, "play")
        record.final_observation = self._inner_obs
        record.success = bool(self.success_fn(record.episode_return, inner_info))
        self._records.append(record)
        info = self._info(index, "play")
        info.update(
            episode_return=record.episode_return,
            episode_success=record.success,
            episode_truncated=bool(truncated),
        )
        if index == self.num_episodes - 1 or (self.stop_on_success and record.success):
            self._phase = "done"
            info["trial"] = self.result().to_dict()
            return self._final_observation(), reward, True, False, info
        if self.reflection:
            self._phase = "reflect"
            info["phase"] = "reflect"
            return self._reflection_observation(), reward, False, False, info
        next_obs, next_info = self._start_episode(index + 1)
        next_info.update(
            {k: info[k] for k in ("episode_return", "episode_success", "episode_truncated")}
        )
        next_info.update(
            episode_info=inner_info, episode_final_observation=record.final_observation
        )
        return next_obs, reward, False, False, next_info

    def _start_episode(self, index: int) -> tuple[str, dict[str, Any]]:
        options = dict(self._user_options)
        if self.pass_options:
            if self._seats[index] is not None:
                options["seat"] = self._seats[index]
            # A replayed seed already redraws the same opponent; keep_opponent is only needed
            # when episodes have different seeds (and would change the env's random stream).
            if index > 0 and not self.same_task:
                options["keep_opponent"] = True
        obs, inner_info = self.env.reset(seed=self._seeds[index], options=options or None)
        self._inner_obs, self._inner_info = fit_text(obs), inner_info
        self._current = EpisodeRecord(
            opponent=_as_name(inner_info.get("opponent")), seat=_as_name(inner_info.get("seat"))
        )
        self._phase = "play"
        # Fixed for the whole episode: rendered once, not at every step.
        self._header = self.templates.attempt.format(
            attempt=index + 1, num_episodes=self.num_episodes
        )
        self._memory_text = render_memory(
            self._records, self._reflections, self.memory, self.templates, self.max_history_chars
        )
        self._check_restart(index)
        return self._play_observation(), self._info(index, "play")

    def _check_restart(self, index: int) -> None:
        """Warn once if replaying the seed did not give the same first observation."""
        if index == 0:
            self._first_observation = self._inner_obs
            return
        restarted = self._inner_obs == self._first_observation
        if self.same_task and self.seat_rotation != "episode" and not restarted:
            if not self._warned_restart:
                warnings.warn(
                    "same_task=True but the inner env's first observation changed between "
                    "episodes of a trial: its reset is not determined by the seed.",
                    stacklevel=3,
                )
                self._warned_restart = True

    # -- results -------------------------------------------------------------------------------

    def result(self) -> TrialResult:
        """Return the figures of the episodes played so far in this trial.

        Mid-trial, episodes not played yet count as unsolved in ``pass_at_k``.

        Raises:
            RuntimeError: If no episode of the trial has finished yet.
        """
        if not self._records:
            raise RuntimeError("No episode of this trial has finished yet.")
        records = self._records
        return TrialResult.from_episodes(
            [r.episode_return for r in records],
            [r.success for r in records],
            num_episodes=self.num_episodes,
            opponents=[r.opponent for r in records],
            seats=[r.seat for r in records],
            invalid_actions=self._invalid,
            reflections=list(self._reflections),
            lengths=[len(r.steps) for r in records],
            stopped_early=self._phase == "done" and len(records) < self.num_episodes,
        )

    # -- text ----------------------------------------------------------------------------------

    def _info(self, index: int, phase: str) -> dict[str, Any]:
        info = dict(self._inner_info)
        info.update(phase=phase, episode_index=index, step_in_episode=len(self._current.steps))
        return info

    def _play_observation(self) -> str:
        t, header, memory = self.templates, self._header, self._memory_text
        recent = ""
        steps = self._current.steps[-self.history_steps :] if self.history_steps else []
        if steps:
            first = len(self._current.steps) - len(steps) + 1
            recent = t.recent_header.format(n=len(steps)) + "\n" + render_steps(steps, t, first)
        if not memory and not recent:
            return self._fit(header + "\n\n", "", self._inner_obs)
        before = "\n\n".join(p for p in (memory, recent) if p)
        return self._fit(header + "\n", before, "\n\n" + t.current + "\n" + self._inner_obs)

    def _reflection_observation(self) -> str:
        t, record = self.templates, self._records[-1]
        trajectory = "\n".join(
            p
            for p in (
                render_steps(record.steps, t),
                t.final_observation.format(observation=record.final_observation),
            )
            if p
        )
        prompt = t.reflection_prompt.format(
            attempt=len(self._records),
            num_episodes=self.num_episodes,
            outcome=outcome(record, t),
            trajectory="{trajectory}",
            next_start=t.same_task if self.same_task else t.new_task,
            max_chars=self.max_reflection_chars,
        )
        head, found, tail = prompt.partition("{trajectory}")
        return self._fit(head, trajectory if found else "", tail)

    def _final_observation(self) -> str:
        header = self.templates.attempt.format(
            attempt=len(self._records), num_episodes=self.num_episodes
        )
        return self._fit(header + "\n\n", "", self._inner_obs)

    def _fit(self, head: str, middle: str, tail: str) -> str:
        """Join the parts; cut ``middle`` (memory) from its oldest end, then ``tail``, to fit."""
        limit = self.max_observation_chars
        if len(head) + len(middle) + len(tail) <= limit:  # the common case
            return head + middle + tail
        tail = tail[: max(limit - len(head), 0)]
        middle = cut_head(middle, max(limit - len(head) - len(tail), 0))
        return (head + middle + tail)[:limit]

    def _draw_seats(self) -> list[str | None]:
        if self.seat_rotation is None:
            return [None] * self.num_episodes
        first = self._rng.getrandbits(1)
        if self.seat_rotation == "trial":
            return [("first", "second")[first]] * self.num_episodes
        return [("first", "second")[(first + k) % 2] for k in range(self.num_episodes)]


TRIAL_RESET_OPTIONS = ("seat", "keep_opponent")
"""Reset options the wrapper passes to envs that declare them in ``metadata["reset_options"]``."""


def _accepts_options(env: gym.Env) -> bool:
    declared = (getattr(env.unwrapped, "metadata", None) or {}).get("reset_options", ())
    return set(TRIAL_RESET_OPTIONS) <= set(declared)


def _as_name(value: Any) -> str | None:
    return None if value is None else str(value)

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
from dataclasses import dataclass, field, replace
from typing import Any

import gymnasium as gym

from mage_envs.meta.config import MAX_OBSERVATION_CHARS, SEAT_ROTATIONS, TrialConfig
from mage_envs.meta.convert import TextConversion
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
from mage_envs.meta.trial import TrialResult
from mage_envs.text import fit_text, text_space

__all__ = [
    "MAX_OBSERVATION_CHARS",
    "MetaEpisodeWrapper",
    "SEAT_ROTATIONS",
    "TrialState",
    "default_success",
]


def default_success(episode_return: float, info: dict[str, Any]) -> bool:
    """The default success predicate: the env's ``info["success"]`` if it has one, else return > 0.

    Example:
        >>> default_success(-1.0, {"success": True}), default_success(0.5, {})
        (True, True)
    """
    if "success" in info:
        return bool(info["success"])
    return episode_return > 0


class MetaEpisodeWrapper(gym.Wrapper[str, str, str, str], gym.utils.RecordConstructorArgs):
    """Turns an env into trials of ``num_episodes`` episodes with reflections and memory.

    The settings are those of :class:`~mage_envs.meta.config.TrialConfig` (how the trial runs)
    and of :class:`~mage_envs.meta.convert.TextConversion` (how a non-text or PettingZoo env
    becomes text), given one by one as below, or built beforehand and passed as ``config=`` and
    ``conversion=``.

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
            Default: what the env declares in ``metadata["reset_options"]`` (the suite's games and
            PettingZoo envs do; a plain env may reject options).
        max_observation_chars: Bound on an observation; the oldest memory is cut to fit.
        config: A ready :class:`~mage_envs.meta.config.TrialConfig` (instead of its settings).
        conversion: A ready :class:`~mage_envs.meta.convert.TextConversion`.

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
        config: TrialConfig | None = None,
        conversion: TextConversion | None = None,
        **settings: Any,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, num_episodes=num_episodes, config=config, conversion=conversion, **settings
        )
        config, conversion = _split_settings(num_episodes, config, conversion, settings)
        inner = conversion.apply(env)
        super().__init__(inner)
        self.config = config
        self.success_fn = config.success_fn or default_success
        self.templates = config.templates
        self.pass_options = (
            _accepts_options(inner) if config.pass_options is None else bool(config.pass_options)
        )
        if config.seat_rotation is not None and not self.pass_options:
            raise ValueError(
                "seat_rotation needs an env whose reset takes options={'seat': ...}; pass "
                "pass_options=True if yours does."
            )
        self.observation_space = text_space(config.max_observation_chars)
        self.action_space = text_space()
        # Fixed by the config: written once, not per episode.
        count = config.num_episodes
        self._headers = tuple(
            self.templates.attempt.format(attempt=k + 1, num_episodes=count) for k in range(count)
        )
        self._reflection_prompts: dict[tuple[int, str], tuple[str, bool, str]] = {}
        self._rng: _LazyRandom | None = None
        self._trial: TrialState | None = None
        self._warned_restart = False

    @property
    def num_episodes(self) -> int:
        """Episodes per trial (from :attr:`config`)."""
        return self.config.num_episodes

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
            # The stdlib generator, seeded at its first draw: a seeded same-task trial with the
            # env's own seat draws nothing, and seeding costs as much as a few steps.
            self._rng = _LazyRandom(seed)
        count = self.config.num_episodes
        if self.config.same_task:
            # The trial's seed is the task's seed: trial s replays what env.reset(seed=s) deals.
            task = seed if seed is not None else self._rng.getrandbits(31)
            seeds = [task] * count
        else:
            seeds = [self._rng.getrandbits(31) for _ in range(count)]
        self._trial = TrialState(seeds, self._draw_seats(), dict(options or {}))
        return self._start_episode(0)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play one step, or store a reflection in the reflection phase."""
        trial = self._trial
        if trial is None or trial.phase == "done":
            raise RuntimeError("The trial is over (or never started): call reset().")
        if trial.phase == "reflect":
            answer = extract_reflection(
                action, self.templates.reflection_tag, self.config.max_reflection_chars
            )
            trial.reflections.append(answer)
            obs, info = self._start_episode(len(trial.records))
            return obs, 0.0, False, False, info
        return self._play(action)

    # -- play ----------------------------------------------------------------------------------

    def _play(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        trial = self._trial
        seen, record = trial.inner_obs, trial.current
        obs, reward, terminated, truncated, inner_info = self.env.step(action)
        reward = float(reward)
        record.steps.append(Step(seen, shown_action(action), reward))
        record.episode_return += reward
        trial.invalid += int(bool(inner_info.get("invalid_action", False)))
        trial.inner_obs, trial.inner_info = fit_text(obs), inner_info
        index = len(trial.records)
        if not (terminated or truncated):
            return self._play_observation(), reward, False, False, self._info(index, "play")
        record.final_observation = trial.inner_obs
        record.success = bool(self.success_fn(record.episode_return, inner_info))
        trial.records.append(record)
        info = self._info(index, "play")
        info.update(
            episode_return=record.episode_return,
            episode_success=record.success,
            episode_truncated=bool(truncated),
        )
        if index == self.num_episodes - 1 or (self.config.stop_on_success and record.success):
            trial.phase = "done"
            info["trial"] = self.result().to_dict()
            return self._final_observation(), reward, True, False, info
        if self.config.reflection:
            trial.phase = "reflect"
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
        trial, config = self._trial, self.config
        options = dict(trial.user_options)
        if self.pass_options:
            if trial.seats[index] is not None:
                options["seat"] = trial.seats[index]
            # A replayed seed already redraws the same opponent; keep_opponent is only needed
            # when episodes have different seeds (and would change the env's random stream).
            if index > 0 and not config.same_task:
                options["keep_opponent"] = True
        obs, inner_info = self.env.reset(seed=trial.seeds[index], options=options or None)
        trial.inner_obs, trial.inner_info = fit_text(obs), inner_info
        trial.current = EpisodeRecord(
            opponent=_as_name(inner_info.get("opponent")), seat=_as_name(inner_info.get("seat"))
        )
        trial.phase = "play"
        trial.header = self._headers[index]
        trial.memory_text = render_memory(
            trial.records,
            trial.reflections,
            config.memory,
            self.templates,
            config.max_history_chars,
        )
        self._check_restart(index)
        return self._play_observation(), self._info(index, "play")

    def _check_restart(self, index: int) -> None:
        """Warn once if replaying the seed did not give the same first observation."""
        trial = self._trial
        if index == 0:
            trial.first_observation = trial.inner_obs
            return
        restarted = trial.inner_obs == trial.first_observation
        replays = self.config.same_task and self.config.seat_rotation != "episode"
        if replays and not restarted and not self._warned_restart:
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
        trial = self._trial
        if trial is None or not trial.records:
            raise RuntimeError("No episode of this trial has finished yet.")
        records = trial.records
        return TrialResult.from_episodes(
            [r.episode_return for r in records],
            [r.success for r in records],
            num_episodes=self.num_episodes,
            opponents=[r.opponent for r in records],
            seats=[r.seat for r in records],
            invalid_actions=trial.invalid,
            reflections=list(trial.reflections),
            lengths=[len(r.steps) for r in records],
            stopped_early=trial.phase == "done" and len(records) < self.num_episodes,
        )

    # -- text ----------------------------------------------------------------------------------

    def _info(self, index: int, phase: str) -> dict[str, Any]:
        trial = self._trial
        steps = len(trial.current.steps)
        return {
            **trial.inner_info,
            "phase": phase,
            "episode_index": index,
            "step_in_episode": steps,
        }

    def _play_observation(self) -> str:
        trial, t, history_steps = self._trial, self.templates, self.config.history_steps
        header, memory, played = trial.header, trial.memory_text, trial.current.steps
        recent = ""
        steps = played[-history_steps:] if history_steps else []
        if steps:
            first = len(played) - len(steps) + 1
            recent = t.recent_header.format(n=len(steps)) + "\n" + render_steps(steps, t, first)
        if not memory and not recent:
            return self._fit(header + "\n\n", "", trial.inner_obs)
        before = "\n\n".join(p for p in (memory, recent) if p)
        return self._fit(header + "\n", before, "\n\n" + t.current + "\n" + trial.inner_obs)

    def _reflection_observation(self) -> str:
        t, records = self.templates, self._trial.records
        record = records[-1]
        trajectory = "\n".join(
            p
            for p in (
                render_steps(record.steps, t),
                t.final_observation.format(observation=record.final_observation),
            )
            if p
        )
        head, found, tail = self._reflection_prompt(len(records), outcome(record, t))
        return self._fit(head, trajectory if found else "", tail)

    def _reflection_prompt(self, attempt: int, outcome_words: str) -> tuple[str, bool, str]:
        """Return the reflection prompt around its trajectory: (head, has a trajectory, tail)."""
        key = (attempt, outcome_words)
        parts = self._reflection_prompts.get(key)
        if parts is None:
            t = self.templates
            prompt = t.reflection_prompt.format(
                attempt=attempt,
                num_episodes=self.num_episodes,
                outcome=outcome_words,
                trajectory="{trajectory}",
                next_start=t.same_task if self.config.same_task else t.new_task,
                max_chars=self.config.max_reflection_chars,
            )
            head, found, tail = prompt.partition("{trajectory}")
            if len(self._reflection_prompts) >= 256:  # outcomes with many returns: stay small
                self._reflection_prompts.clear()
            parts = self._reflection_prompts[key] = head, bool(found), tail
        return parts

    def _final_observation(self) -> str:
        trial = self._trial
        return self._fit(self._headers[len(trial.records) - 1] + "\n\n", "", trial.inner_obs)

    def _fit(self, head: str, middle: str, tail: str) -> str:
        """Join the parts; cut ``middle`` (memory) from its oldest end, then ``tail``, to fit."""
        limit = self.config.max_observation_chars
        if len(head) + len(middle) + len(tail) <= limit:  # the common case
            return head + middle + tail
        tail = tail[: max(limit - len(head), 0)]
        middle = cut_head(middle, max(limit - len(head) - len(tail), 0))
        return (head + middle + tail)[:limit]

    def _draw_seats(self) -> list[str | None]:
        rotation, count = self.config.seat_rotation, self.config.num_episodes
        if rotation is None:
            return [None] * count
        first = self._rng.getrandbits(1)
        if rotation == "trial":
            return [("first", "second")[first]] * count
        return [("first", "second")[(first + k) % 2] for k in range(count)]


@dataclass
class TrialState:
    """Everything one trial changes, created at ``reset`` (the wrapper keeps only its settings).

    Attributes:
        seeds: The reset seed of each episode.
        seats: The seat of each episode (``None``: the env's own).
        user_options: The options given to ``reset``, forwarded to every inner reset.
        records: The finished episodes.
        reflections: The reflection written after each finished non-final episode.
        invalid: Invalid answers so far.
        phase: ``"play"``, ``"reflect"`` or ``"done"``.
        current: The episode being played.
        inner_obs: The inner env's last observation, within the charset.
        inner_info: The inner env's last info.
        first_observation: The first observation of episode 1 (to check that seeds replay).
        header: The "Attempt k of N" line of the current episode.
        memory_text: The memory shown during the current episode.
    """

    seeds: list[int]
    seats: list[str | None]
    user_options: dict[str, Any]
    records: list[EpisodeRecord] = field(default_factory=list)
    reflections: list[str] = field(default_factory=list)
    invalid: int = 0
    phase: str = "play"
    current: EpisodeRecord = field(default_factory=EpisodeRecord)
    inner_obs: str = ""
    inner_info: dict[str, Any] = field(default_factory=dict)
    first_observation: str | None = None
    header: str = ""
    memory_text: str = ""


class _LazyRandom:
    """``random.Random(seed)``, seeded at its first draw (the same stream, drawn or not)."""

    __slots__ = ("_seed", "_rng")

    def __init__(self, seed: int | None) -> None:
        self._seed, self._rng = seed, None

    def getrandbits(self, k: int) -> int:
        """Return ``k`` random bits, as ``random.Random(seed).getrandbits`` would."""
        if self._rng is None:
            self._rng = random.Random(self._seed)
        return self._rng.getrandbits(k)


TRIAL_RESET_OPTIONS = ("seat", "keep_opponent")
"""Reset options the wrapper passes to envs that declare them in ``metadata["reset_options"]``."""


def _accepts_options(env: gym.Env) -> bool:
    declared = (getattr(env.unwrapped, "metadata", None) or {}).get("reset_options", ())
    return set(TRIAL_RESET_OPTIONS) <= set(declared)


def _split_settings(
    num_episodes: int,
    config: TrialConfig | None,
    conversion: TextConversion | None,
    settings: dict[str, Any],
) -> tuple[TrialConfig, TextConversion]:
    """Route keyword settings to the trial config and the text conversion (a typo is an error)."""
    trial_names, text_names = TrialConfig.field_names(), TextConversion.field_names()
    unknown = sorted(set(settings) - trial_names - text_names)
    if unknown:
        raise TypeError(
            f"MetaEpisodeWrapper got unknown settings {unknown}. Trial settings: "
            f"{', '.join(sorted(trial_names))}; text conversion: {', '.join(sorted(text_names))}."
        )
    trial = {k: v for k, v in settings.items() if k in trial_names}
    text = {k: v for k, v in settings.items() if k in text_names}
    if config is None:
        config = TrialConfig(num_episodes=num_episodes, **trial)
    elif trial or num_episodes != 3:
        config = replace(config, num_episodes=num_episodes, **trial)
    conversion = TextConversion(**text) if conversion is None else replace(conversion, **text)
    return config, conversion


def _as_name(value: Any) -> str | None:
    return None if value is None else str(value)

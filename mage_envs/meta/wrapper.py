"""``MetaEpisodeWrapper``: any Gymnasium or PettingZoo env as reflection-carrying trials.

One wrapper episode is one trial of ``num_episodes`` inner episodes. The phases of a trial:
play episode 1, then for each later episode a reflection step (``info["phase"] == "reflect"``; the
agent's answer is stored as its reflection, reward 0) and the next episode's play steps. Play
observations carry "Attempt k of N", the memory of earlier attempts, and the inner observation.
At the end of the trial ``info["trial"]`` holds the figures of :class:`~mage_envs.meta.TrialResult`.
Every info also carries ``info["inner_observation"]``, the inner env's observation as it is
(no header, no memory): the anchor-state key of step-level advantage groups.

Non-text envs are converted by a :class:`~mage_envs.meta.TextAdapter`; PettingZoo envs by
:class:`~mage_envs.meta.pettingzoo_env.PettingZooTextEnv` (the learner against opponents).
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import gymnasium as gym

from mage_envs.meta.config import SEAT_ROTATIONS, UNSET, TrialConfig, given
from mage_envs.meta.convert import TextConversion
from mage_envs.meta.memory import EpisodeRecord, Step, shown_action
from mage_envs.meta.observations import ComposedLayout
from mage_envs.meta.page import PageLayout
from mage_envs.meta.state import TrialState
from mage_envs.meta.templates import Templates
from mage_envs.meta.text_adapter import TextAdapter
from mage_envs.meta.trial import TrialResult
from mage_envs.seeds import draw_seed
from mage_envs.text import fit_text, text_space

__all__ = ["MetaEpisodeWrapper", "SEAT_ROTATIONS", "default_success"]


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
    ``conversion=``; a keyword given beside them changes that setting, one not given (its
    default is :data:`~mage_envs.meta.config.UNSET`) keeps the config's.

    Args:
        env: A Gymnasium env (text or not), or a PettingZoo AEC / parallel env.
        num_episodes: Episodes per trial (N; 3 unless ``config`` says otherwise). LaMer and
            MAGE used 3.
        learner: PettingZoo only: the learner's agent id (default: the first agent).
        opponents: PettingZoo only: ``None`` (random legal moves), one policy for every other
            agent, a dict agent id -> policy, a ``Population`` (one member per trial) or an
            opponent or preset name (see :mod:`mage_envs.meta.pettingzoo_env`).
        same_task: True (default, as LaMer and MAGE): every episode restarts from the same initial
            state, by replaying the trial's reset seed (same Kuhn deal, same board). False: a new
            seed per episode (fresh task), with the same opponent.
        stop_on_success: End the trial at the first successful episode. LaMer's and MAGE's
            rollouts stop at the first win in training and in evaluation alike (their
            ``metarl_rollout_loop``); :data:`~mage_envs.meta.presets.PAPER_TRIAL_SETTINGS` sets
            it. Default False: all N episodes are played, so that returns after a success
            (keeping it up) are seen too. pass@k is the same either way.
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
            drawn from the seed; MAGE mixed seats in tic-tac-toe training, and evaluated first).
        success_fn: ``f(episode_return, final_info) -> bool`` (default :func:`default_success`).
        templates: The text templates (default :data:`~mage_envs.meta.templates.DEFAULT_TEMPLATES`),
            or a preset name: ``"lamer"`` / ``"mage"`` (the published prompts of the env, see
            :mod:`mage_envs.meta.presets`) or ``"default"``.
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
        num_episodes: int = UNSET,
        *,
        same_task: bool = UNSET,
        stop_on_success: bool = UNSET,
        reflection: bool = UNSET,
        memory: str = UNSET,
        max_reflection_chars: int = UNSET,
        max_history_chars: int = UNSET,
        history_steps: int = UNSET,
        seat_rotation: str | None = UNSET,
        success_fn: Callable[[float, dict[str, Any]], bool] | None = UNSET,
        templates: Templates | str | Mapping[str, Any] = UNSET,
        reflection_prompt: str | None = UNSET,
        pass_options: bool | None = UNSET,
        max_observation_chars: int = UNSET,
        learner: str | None = UNSET,
        opponents: Any = UNSET,
        adapter: TextAdapter | None = UNSET,
        invalid_action_penalty: float | None = UNSET,
        max_invalid_actions: int | None = UNSET,
        config: TrialConfig | None = None,
        conversion: TextConversion | None = None,
    ) -> None:
        trial = given(
            {
                "num_episodes": num_episodes,
                "same_task": same_task,
                "stop_on_success": stop_on_success,
                "reflection": reflection,
                "memory": memory,
                "max_reflection_chars": max_reflection_chars,
                "max_history_chars": max_history_chars,
                "history_steps": history_steps,
                "seat_rotation": seat_rotation,
                "success_fn": success_fn,
                "templates": templates,
                "reflection_prompt": reflection_prompt,
                "pass_options": pass_options,
                "max_observation_chars": max_observation_chars,
            }
        )
        text = given(
            {
                "learner": learner,
                "opponents": opponents,
                "adapter": adapter,
                "invalid_action_penalty": invalid_action_penalty,
                "max_invalid_actions": max_invalid_actions,
            }
        )
        gym.utils.RecordConstructorArgs.__init__(
            self, config=config, conversion=conversion, **trial, **text
        )
        # A keyword given beside a ready config replaces that setting; one not given keeps it.
        config = TrialConfig.from_mapping(trial, base=config)
        conversion = replace(conversion or TextConversion(), **text)
        inner = conversion.apply(env)
        super().__init__(inner)
        self.config = config = config.for_env(inner)  # a preset name picks the env's prompts
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
        # The one choice of layout: a published preset's whole page, or our composed one. Our
        # pages are ASCII; a published preset's hold the paper's own characters.
        self._layout = ComposedLayout if self.templates.page is None else PageLayout
        self.observation_space = self._layout.space(config.max_observation_chars)
        self.action_space = text_space()
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
            task = seed if seed is not None else draw_seed(self._rng)
            seeds = [task] * count
        else:
            seeds = [draw_seed(self._rng) for _ in range(count)]
        layout = self._layout(self.config, self.env.unwrapped)
        self._trial = TrialState(seeds, self._draw_seats(), dict(options or {}), layout=layout)
        return self._start_episode(0)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play one step, or store a reflection in the reflection phase."""
        trial = self._trial
        if trial is None or trial.phase == "done":
            raise RuntimeError("The trial is over (or never started): call reset().")
        if trial.phase == "reflect":
            trial.reflections.append(trial.layout.stored_reflection(action))
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
        trial.layout.record(trial, action)
        index = len(trial.records)
        if not (terminated or truncated):
            return trial.layout.play(trial), reward, False, False, self._info(index, "play")
        record.final_observation = trial.inner_obs
        record.success = bool(self.success_fn(record.episode_return, inner_info))
        record.forfeit = bool(inner_info.get("forfeit", False))
        trial.records.append(record)
        trial.ground_truth.append(self._inner_truth())
        trial.layout.finish(trial)
        info = self._info(index, "play")
        info.update(
            episode_return=record.episode_return,
            episode_success=record.success,
            episode_truncated=bool(truncated),
        )
        if index == self.num_episodes - 1 or (self.config.stop_on_success and record.success):
            trial.phase = "done"
            info["trial"] = self.result().to_dict()
            return trial.layout.final(trial), reward, True, False, info
        if self.config.reflection:
            trial.phase = "reflect"
            info["phase"] = "reflect"
            return trial.layout.reflection(trial), reward, False, False, info
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
        trial.layout.start(trial)
        self._check_restart(index)
        return trial.layout.play(trial), self._info(index, "play")

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
            forfeits=[r.forfeit for r in records],
            stopped_early=trial.phase == "done" and len(records) < self.num_episodes,
        )

    def ground_truth(self) -> list[dict[str, Any]]:
        """Return, per episode of this trial, what the inner env knew and the agent was not shown.

        For analysis only (transcripts keep it apart from the agent's view): the whole deal of a
        card game, the mines of Minesweeper. Each entry is the inner env's ``ground_truth()`` at
        the end of its episode, and one more for an episode still being played; empty entries
        where the env reports nothing. Never part of an observation or an info.

        Example:
            >>> import mage_envs
            >>> env = mage_envs.make_trial("mage/KuhnPoker-v0", num_episodes=1)
            >>> obs, info = env.reset(seed=0)
            >>> sorted(env.ground_truth()[0])
            ['opponent_card', 'your_card']
        """
        trial = self._trial
        if trial is None:
            return []
        truths = [dict(t) for t in trial.ground_truth]
        if trial.phase == "play":
            truths.append(self._inner_truth())
        return truths

    def _inner_truth(self) -> dict[str, Any]:
        truth = getattr(self.env.unwrapped, "ground_truth", None)
        return dict(truth()) if callable(truth) else {}

    # -- text ----------------------------------------------------------------------------------

    def _info(self, index: int, phase: str) -> dict[str, Any]:
        trial = self._trial
        shown = {
            "phase": phase,
            "episode_index": index,
            "step_in_episode": len(trial.current.steps),
            # The inner env's own observation, without attempt header or memory: equal states of
            # different trials share it (GiGPO's anchor-state key).
            "inner_observation": trial.inner_obs,
        }
        return {**trial.inner_info, **shown}

    def _draw_seats(self) -> list[str | None]:
        rotation, count = self.config.seat_rotation, self.config.num_episodes
        if rotation is None:
            return [None] * count
        first = self._rng.getrandbits(1)
        if rotation == "trial":
            return [("first", "second")[first]] * count
        return [("first", "second")[(first + k) % 2] for k in range(count)]


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


def _as_name(value: Any) -> str | None:
    return None if value is None else str(value)

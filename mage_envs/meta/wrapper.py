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

import warnings
from dataclasses import replace
from typing import Any

import gymnasium as gym

from mage_envs.meta.config import SEAT_ROTATIONS, TrialConfig
from mage_envs.meta.convert import TextConversion
from mage_envs.meta.memory import EpisodeRecord, Step, shown_action
from mage_envs.meta.observations import ComposedLayout
from mage_envs.meta.page import PageLayout
from mage_envs.meta.state import LazyRandom, TrialState, draw_episodes
from mage_envs.meta.trial import TrialResult
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

    The settings are the fields of two frozen dataclasses, which hold their defaults, their docs
    and their checks: :class:`~mage_envs.meta.config.TrialConfig` (how the trial runs:
    ``num_episodes``, ``same_task``, ``memory``, ...) and
    :class:`~mage_envs.meta.convert.TextConversion` (how a non-text or PettingZoo env becomes
    text: ``learner``, ``opponents``, ...). Give ready ones as ``config=`` / ``conversion=``, or
    their fields as keywords; a keyword beside a ready config changes that setting only.

    Args:
        env: A Gymnasium env (text or not), or a PettingZoo AEC / parallel env.
        config: A ready :class:`~mage_envs.meta.config.TrialConfig` (default: its defaults).
        conversion: A ready :class:`~mage_envs.meta.convert.TextConversion`.
        **settings: Fields of either, by name.

    Raises:
        TypeError: For a keyword that is neither's field (the message lists those that are), or
            a ``config`` / ``conversion`` of another type.
        ValueError: For a bad value (the dataclass's message names the setting).

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
        *,
        config: TrialConfig | None = None,
        conversion: TextConversion | None = None,
        **settings: Any,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, config=config, conversion=conversion, **settings
        )
        config, conversion = _configs(config, conversion, settings)
        inner = conversion.apply(env)
        super().__init__(inner)
        self.config = config = config.for_env(inner)  # a preset name picks the env's prompts
        self.success_fn = config.success_fn or default_success
        self.templates = config.templates
        self.pass_options = (
            _accepts_options(inner) if config.pass_options is None else bool(config.pass_options)
        )
        # Told which episode of the trial a game is, an opponent can remember the trial so far.
        self._passes_episode = "episode" in _declared_options(inner)
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
        self._rng: LazyRandom | None = None
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
            self._rng = LazyRandom(seed)
        seeds, seats = draw_episodes(self.config, seed, self._rng)
        layout = self._layout(self.config, self.env.unwrapped)
        self._trial = TrialState(seeds, seats, dict(options or {}), layout=layout)
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
        if self._passes_episode:
            options["episode"] = index
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
        replays = replays and not trial.inner_info.get("opponent_remembers", False)
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


TRIAL_RESET_OPTIONS = ("seat", "keep_opponent")
"""Reset options the wrapper passes to envs that declare them in ``metadata["reset_options"]``."""


def _declared_options(env: gym.Env) -> tuple[str, ...]:
    return tuple((getattr(env.unwrapped, "metadata", None) or {}).get("reset_options", ()))


def _accepts_options(env: gym.Env) -> bool:
    return set(TRIAL_RESET_OPTIONS) <= set(_declared_options(env))


def _as_name(value: Any) -> str | None:
    return None if value is None else str(value)


def _configs(
    config: TrialConfig | None, conversion: TextConversion | None, settings: dict[str, Any]
) -> tuple[TrialConfig, TextConversion]:
    """Return the wrapper's two configs: those given, with the keywords given beside them."""
    trial_names, text_names = TrialConfig.field_names(), TextConversion.field_names()
    unknown = sorted(set(settings) - trial_names - text_names)
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        raise TypeError(
            f"MetaEpisodeWrapper got an unexpected keyword argument{plural} "
            f"{', '.join(map(repr, unknown))}; it takes config=, conversion= and their fields: "
            f"{', '.join(sorted(trial_names))} (TrialConfig); {', '.join(sorted(text_names))} "
            f"(TextConversion)."
        )
    for name, value, kind in (
        ("config", config, TrialConfig),
        ("conversion", conversion, TextConversion),
    ):
        if value is not None and not isinstance(value, kind):
            raise TypeError(f"{name} must be a {kind.__name__}, not {type(value).__name__}.")
    # A ready config is used as it is (not rebuilt) unless a keyword changes one of its settings.
    trial = {k: v for k, v in settings.items() if k in trial_names}
    text = {k: v for k, v in settings.items() if k in text_names}
    config = TrialConfig.from_mapping(trial, base=config)
    if conversion is None:
        return config, TextConversion(**text)
    return config, replace(conversion, **text) if text else conversion

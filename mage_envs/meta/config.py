"""The settings of a trial, as one frozen dataclass that rejects bad values when it is made.

:class:`TrialConfig` is what :class:`~mage_envs.meta.MetaEpisodeWrapper` reads; every error names
the setting, the accepted values and the value given. The settings that convert an env to text
(``learner``, ``opponents``, ``adapter``, the invalid-answer rule) belong to
:class:`~mage_envs.meta.convert.TextConversion`, not here.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields, replace
from typing import Any

from mage_envs.meta.memory import MEMORY_MODES
from mage_envs.meta.page import PAGE_MEMORY_MODES
from mage_envs.meta.presets import TEMPLATE_PRESETS, template_preset
from mage_envs.meta.templates import DEFAULT_TEMPLATES, Templates, check_templates
from mage_envs.text import MAX_TEXT_CHARS, fit_text

__all__ = [
    "SEAT_ROTATIONS",
    "INTEGER_SETTINGS",
    "BOOLEAN_SETTINGS",
    "MAX_OBSERVATION_CHARS",
    "TrialConfig",
]


SEAT_ROTATIONS = (None, "episode", "trial")
"""``seat_rotation=``: keep the env's seat, alternate it every episode, or draw it per trial."""

MAX_OBSERVATION_CHARS = 2 * MAX_TEXT_CHARS
"""Default bound on a trial observation (memory is cut from its oldest end to fit)."""

INTEGER_SETTINGS = {
    "num_episodes": 1,
    "max_reflection_chars": 0,
    "max_history_chars": 0,
    "history_steps": 0,
    "max_observation_chars": 1,
}
"""The integer settings of a trial and their smallest allowed values."""

BOOLEAN_SETTINGS = ("same_task", "stop_on_success", "reflection")
"""The true-or-false settings of a trial."""


@dataclass(frozen=True)
class TrialConfig:
    """How a trial runs: its episodes, reflections, memory, seats and texts.

    Attributes:
        num_episodes: Episodes per trial (N). LaMer and MAGE used 3.
        same_task: True (as LaMer and MAGE): every episode restarts from the same initial state,
            by replaying the trial's reset seed (same Kuhn deal, same board). False: a new seed
            per episode (fresh task), with the same opponent.
        stop_on_success: End the trial at the first successful episode, as LaMer's and MAGE's
            rollouts do in training and evaluation alike (their ``metarl_rollout_loop``;
            :data:`~mage_envs.meta.presets.PAPER_TRIAL_SETTINGS` sets it). Default False: all N
            episodes are played, so that returns after a success (keeping it up) are seen too.
            pass@k is the same either way.
        reflection: Ask for a reflection after every non-final episode (as LaMer and MAGE).
        memory: What earlier episodes leave in later observations: a name in
            :data:`~mage_envs.meta.memory.MEMORY_MODES`: ``"reflection_only"`` (LaMer's
            format), ``"history_only"``, ``"history_and_reflection"`` or one registered.
        max_reflection_chars: Stored reflections are cut to this length (2000, as LaMer).
        max_history_chars: Each earlier episode's history in memory is cut to this length.
        history_steps: Past steps of the current episode shown above its observation (0: the
            suite's envs already show the game so far; verl-agent shows a few).
        seat_rotation: ``None`` (the env's own seat), ``"episode"`` (alternate within a trial,
            first seat drawn from the seed) or ``"trial"`` (one seat per trial, drawn from the
            seed; MAGE mixed seats in tic-tac-toe training, and evaluated first).
        success_fn: ``f(episode_return, final_info) -> bool`` (``None``:
            :func:`~mage_envs.meta.wrapper.default_success`).
        templates: Every text the wrapper adds (cleaned to the charset once, here), or a preset
            name in :data:`~mage_envs.meta.presets.TEMPLATE_PRESETS`: ``"default"`` (ours),
            ``"lamer"`` / ``"mage"`` (the paper's published pages, kept as a name until
            :meth:`for_env` asks the env class for its page preset), a name added with
            :func:`~mage_envs.meta.presets.register_templates`, or a mapping of the fields to
            replace in the default templates (what a YAML config can write), e.g.
            ``{"final_observation": "End of the attempt."}``.
        reflection_prompt: Shortcut to replace only ``templates.reflection_prompt``.
        pass_options: Whether the inner env takes ``reset(options={"seat", "keep_opponent"})``;
            ``None``: what the env declares in ``metadata["reset_options"]`` (the suite's games
            and PettingZoo envs do; a plain env may reject options).
        max_observation_chars: Bound on an observation; the oldest memory is cut to fit.

    Raises:
        ValueError: If a setting has a value it does not accept (the message says which).
        TypeError: If ``success_fn`` is not callable.

    Example:
        >>> TrialConfig(num_episodes=0)
        Traceback (most recent call last):
        ...
        ValueError: num_episodes must be an int >= 1, not 0.
    """

    num_episodes: int = 3
    same_task: bool = True
    stop_on_success: bool = False
    reflection: bool = True
    memory: str = "reflection_only"
    max_reflection_chars: int = 2000
    max_history_chars: int = 2000
    history_steps: int = 0
    seat_rotation: str | None = None
    success_fn: Callable[[float, dict[str, Any]], bool] | None = None
    templates: Templates | str | Mapping[str, Any] = DEFAULT_TEMPLATES
    reflection_prompt: str | None = None
    pass_options: bool | None = None
    max_observation_chars: int = MAX_OBSERVATION_CHARS

    def __post_init__(self) -> None:
        for name, lowest in INTEGER_SETTINGS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lowest:
                raise ValueError(f"{name} must be an int >= {lowest}, not {value!r}.")
            object.__setattr__(self, name, int(value))
        if self.memory not in MEMORY_MODES:
            raise ValueError(f"memory must be one of {tuple(MEMORY_MODES)}, not {self.memory!r}.")
        if self.seat_rotation not in SEAT_ROTATIONS:
            raise ValueError(
                f"seat_rotation must be one of {SEAT_ROTATIONS}, not {self.seat_rotation!r}."
            )
        if self.success_fn is not None and not callable(self.success_fn):
            raise TypeError("success_fn must be a function (episode_return, final_info) -> bool.")
        for name in BOOLEAN_SETTINGS:
            value = getattr(self, name)
            if value not in (True, False):  # True, False, 1, 0 and numpy's booleans
                raise ValueError(f"{name} must be true or false, not {value!r}.")
            object.__setattr__(self, name, bool(value))
        if isinstance(self.templates, Mapping):
            object.__setattr__(self, "templates", _replaced_defaults(self.templates))
        if isinstance(self.templates, str):
            if self.templates not in TEMPLATE_PRESETS:
                raise ValueError(
                    f"templates must be a Templates, a mapping or one of "
                    f"{tuple(TEMPLATE_PRESETS)}, not {self.templates!r}."
                )
            preset = TEMPLATE_PRESETS[self.templates]
            if preset is None:
                return  # a page preset: each env declares its own, resolved by for_env
            object.__setattr__(self, "templates", preset)
        elif not isinstance(self.templates, Templates):
            raise ValueError(
                f"templates must be a Templates, a mapping or a preset name, not "
                f"{type(self.templates).__name__}."
            )
        object.__setattr__(self, "templates", self._cleaned_templates())

    def _cleaned_templates(self) -> Templates:
        templates = self.templates
        if self.reflection_prompt is not None:
            templates = replace(templates, reflection_prompt=self.reflection_prompt)
        check_templates(templates)
        if templates.page is not None and not templates.page.lays_out(self.memory):
            laid_out = [mode for mode in PAGE_MEMORY_MODES if templates.page.lays_out(mode)]
            raise ValueError(
                f"memory={self.memory!r} has no page layout in this published preset (the "
                f"paper's prompt has none); it lays out {laid_out}."
            )
        # Cleaned once, so composed observations need no per-step charset scan (a page layout
        # is cleaned where its pages are rendered).
        return Templates(
            **{k: fit_text(v) if isinstance(v, str) else v for k, v in vars(templates).items()}
        )

    def for_env(self, env: Any) -> TrialConfig:
        """Return this config with a preset name resolved to the templates it means for ``env``.

        Raises:
            ValueError: If the paper published no prompt for ``env`` (the message lists them).
        """
        if not isinstance(self.templates, str):
            return self
        return replace(self, templates=template_preset(self.templates, env))

    @classmethod
    def field_names(cls) -> frozenset[str]:
        """Return the setting names (the keywords ``MetaEpisodeWrapper`` forwards here)."""
        return frozenset(f.name for f in fields(cls))

    @classmethod
    def from_mapping(
        cls, settings: Mapping[str, Any], base: TrialConfig | None = None, what: str = "trial"
    ) -> TrialConfig:
        """Return the config of a mapping of settings (a YAML ``trial:``), over ``base``.

        Args:
            settings: Setting name -> value.
            base: The config whose other settings are kept (default: ``TrialConfig()``).
            what: How the error names the mapping (``"trial"``, ``"--trial"``, ...).

        Raises:
            ValueError: For a key that is no trial setting (named as such, with the settings),
                a mapping that is not one, or a bad value (named).

        Example:
            >>> TrialConfig.from_mapping({"num_episodes": 2, "episodes": 3})
            Traceback (most recent call last):
            ...
            ValueError: trial: unknown trial setting 'episodes'; the trial settings are ...
        """
        if not isinstance(settings, Mapping):
            raise ValueError(f"{what} must be a mapping of trial settings, not {settings!r}.")
        names = cls.field_names()
        unknown = sorted(str(k) for k in settings if k not in names)
        if unknown:
            plural = "s" if len(unknown) > 1 else ""
            raise ValueError(
                f"{what}: unknown trial setting{plural} {', '.join(map(repr, unknown))}; the "
                f"trial settings are {', '.join(sorted(names))}."
            )
        if base is None:
            return cls(**settings)
        return replace(base, **settings) if settings else base

    def non_defaults(self) -> dict[str, Any]:
        """Return the settings whose value is not the default, by name (what a digest reads).

        Example:
            >>> TrialConfig(num_episodes=2, memory="reflection_only").non_defaults()
            {'num_episodes': 2}
        """
        defaults = _DEFAULTS
        changed = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name not in defaults or value != defaults[f.name]:
                changed[f.name] = value
        return changed


def _replaced_defaults(changes: Mapping[str, Any]) -> Templates:
    """Return the default templates with ``changes`` applied; unknown fields are an error."""
    known = {f.name for f in fields(Templates)}
    unknown = sorted(str(name) for name in changes if name not in known)
    if unknown:
        raise ValueError(
            f"templates has no field {', '.join(map(repr, unknown))}; the fields are "
            f"{', '.join(sorted(known))}."
        )
    return replace(DEFAULT_TEMPLATES, **changes)


_DEFAULTS = {f.name: f.default for f in fields(TrialConfig) if f.default is not MISSING}
_DEFAULTS["templates"] = TrialConfig().templates  # the default templates, cleaned

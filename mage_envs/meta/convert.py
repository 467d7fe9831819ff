"""How a trial's env becomes a text env: the converter and its settings.

:class:`TextConversion` holds the settings that only matter when the wrapper converts an env
(``learner`` and ``opponents`` for PettingZoo envs, the ``adapter`` for non-text spaces, and the
invalid-answer rule of converted envs); :meth:`TextConversion.apply` returns the text env. An env
that is already text is returned as it is: it applies its own invalid-answer rule.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import gymnasium as gym
from gymnasium import spaces
from pettingzoo.utils.env import AECEnv, ParallelEnv

from mage_envs.meta.pettingzoo_env import PettingZooTextEnv
from mage_envs.meta.text_adapter import TextAdapter, TextWrapper

__all__ = ["TextConversion"]

_RULE_DEFAULTS = {"invalid_action_penalty": 0.0, "max_invalid_actions": 5}


@dataclass(frozen=True)
class TextConversion:
    """The settings of the conversion to text (all optional).

    Attributes:
        learner: PettingZoo only: the learner's agent id (default: the first agent).
        opponents: PettingZoo only: who plays the other agents: ``None`` (random legal moves),
            one policy for every other agent, a dict agent id -> policy, a ``Population`` (one
            member per trial) or an opponent or preset name (see
            :class:`~mage_envs.meta.PettingZooTextEnv`).
        adapter: A :class:`~mage_envs.meta.TextAdapter` for non-text envs (default: built from
            the spaces, with known action names).
        invalid_action_penalty: For converted envs: penalty of an invalid answer (default 0).
            A text env applies its own rules, so setting this for one raises: set it where the
            env is made.
        max_invalid_actions: For converted envs: invalid answers in a row that truncate the
            episode (default 5). A text env raises, as above.
    """

    learner: str | None = None
    opponents: Any = None
    adapter: TextAdapter | None = None
    invalid_action_penalty: float | None = None
    max_invalid_actions: int | None = None

    @classmethod
    def field_names(cls) -> frozenset[str]:
        """Return the setting names (the keywords ``MetaEpisodeWrapper`` forwards here)."""
        return frozenset(f.name for f in fields(cls))

    def apply(self, env: Any) -> gym.Env:
        """Return ``env`` as a text Gymnasium env: PettingZoo envs and non-text spaces converted.

        Raises:
            TypeError: If ``env`` is not an env, or PettingZoo settings are given for a Gym env.
            ValueError: If invalid-answer settings are given for an env that is already text.
        """
        if isinstance(env, AECEnv | ParallelEnv):
            return PettingZooTextEnv(
                env, self.learner, self.opponents, self.adapter, **self._rule()
            )
        if self.learner is not None or self.opponents is not None:
            raise TypeError(
                "learner= and opponents= apply to PettingZoo envs; a Gymnasium env takes its "
                "opponent when it is made (e.g. gym.make(id, opponent=...))."
            )
        if not isinstance(env, gym.Env):
            raise TypeError(f"Expected a Gymnasium or PettingZoo env, not {type(env).__name__}.")
        text = isinstance(env.observation_space, spaces.Text) and isinstance(
            env.action_space, spaces.Text
        )
        if text and self.adapter is None:
            given = [k for k in _RULE_DEFAULTS if getattr(self, k) is not None]
            if given:
                raise ValueError(
                    f"{' and '.join(given)}: only for envs the wrapper converts to text. This env "
                    f"is already text and applies its own invalid-answer rules: set them where it "
                    f"is made, e.g. gym.make(id, invalid_action_penalty=...) (make_trial does that "
                    f"for the settings the env declares in metadata['invalid_answer_settings'])."
                )
            return env
        return TextWrapper(env, adapter=self.adapter, **self._rule())

    def _rule(self) -> dict[str, Any]:
        given = {k: getattr(self, k) for k in _RULE_DEFAULTS}
        return {k: _RULE_DEFAULTS[k] if v is None else v for k, v in given.items()}

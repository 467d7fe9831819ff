"""Turn a non-text env into a text env: observations to text, text answers to actions.

:class:`TextAdapter` does the conversion for the common spaces: ``Text``, ``Discrete``,
``MultiDiscrete``, ``MultiBinary``, small ``Box`` and ``Dict`` / ``Tuple`` of those. Discrete
actions are named (``left``, ``down``, ... where the env is known, else their numbers); other
action spaces are written as numbers, one per component, in order.

:class:`TextWrapper` applies an adapter to a Gymnasium env with the suite's invalid-answer rule
(:class:`~mage_envs.invalid.InvalidAnswerRule`): text that does not name exactly one legal action
leaves the state unchanged, returns feedback, ``info["invalid_action"] = True`` and a penalty, and
``max_invalid_actions`` invalid answers in a row truncate the episode.

Subclass :class:`TextAdapter` (override :meth:`TextAdapter.observation_text` and
:meth:`TextAdapter.parse`) or pass ``observation_text=`` to change either side.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mage_envs.invalid import InvalidAnswerRule, InvalidStreak, did_not_name
from mage_envs.opponents.random_legal import legal_mask
from mage_envs.parsing import extract_tagged, parse_action
from mage_envs.text import fit_text, text_space

__all__ = ["TextAdapter", "TextWrapper", "ACTION_NAMES", "fit_text", "legal_mask", "text_space"]

ACTION_NAMES: dict[str, tuple[str, ...]] = {
    "FrozenLakeEnv": ("left", "down", "right", "up"),
    "CliffWalkingEnv": ("up", "right", "down", "left"),
    "TaxiEnv": ("south", "north", "east", "west", "pickup", "dropoff"),
    "BlackjackEnv": ("stick", "hit"),
    "CartPoleEnv": ("push left", "push right"),
    "MountainCarEnv": ("accelerate left", "do not accelerate", "accelerate right"),
    "rps_v2": ("rock", "paper", "scissors"),
}
"""Action names of known envs, keyed by the env class name (Gymnasium) or ``metadata["name"]``
(PettingZoo). Used only when the number of names equals the number of actions."""

MAX_ELEMENTS = 256
"""Largest array (in elements) the default adapter writes out as text."""

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_LEAVES = (spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary, spaces.Box)


def known_action_names(env: Any) -> tuple[str, ...] | None:
    """Return the action names of a known Gymnasium or PettingZoo env, else ``None``."""
    unwrapped = getattr(env, "unwrapped", env)
    if hasattr(unwrapped, "get_action_meanings"):
        return tuple(str(m).lower() for m in unwrapped.get_action_meanings())
    name = (getattr(unwrapped, "metadata", None) or {}).get("name")
    return ACTION_NAMES.get(type(unwrapped).__name__) or ACTION_NAMES.get(str(name))


class TextAdapter:
    """Converts observations of ``observation_space`` to text and text to ``action_space`` actions.

    Args:
        observation_space: The env's observation space.
        action_space: The env's action space.
        action_names: Names of the ``Discrete`` actions, in order (default: their numbers).
        observation_text: A function observation -> text, replacing the default rendering.
        max_elements: Largest array written out by the default rendering.

    Raises:
        TypeError: If a space is not supported by default; the message says what to pass instead.

    Example:
        >>> from gymnasium import spaces
        >>> names = ["stick", "hit"]
        >>> adapter = TextAdapter(spaces.Discrete(16), spaces.Discrete(2), action_names=names)
        >>> adapter.observation_text(3), adapter.legal_actions()
        ('3', ['stick', 'hit'])
        >>> adapter.parse("I will <action>hit</action>", adapter.legal_actions())
        1
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        action_names: Sequence[str] | None = None,
        observation_text: Callable[[Any], str] | None = None,
        max_elements: int = MAX_ELEMENTS,
    ) -> None:
        self.observation_space = observation_space
        self.action_space = action_space
        self.max_elements = int(max_elements)
        self._custom_text = observation_text
        if observation_text is None:
            _check_observation_space(observation_space, self.max_elements)
        _check_action_space(action_space, self.max_elements)
        self.names = self._action_names(action_names)

    @classmethod
    def for_env(cls, env: Any, **kwargs: Any) -> TextAdapter:
        """Build the default adapter for a Gymnasium env, with its known action names if any."""
        names = kwargs.pop("action_names", None) or known_action_names(env)
        if names is not None and not _names_fit(env.action_space, names):
            names = None
        return cls(env.observation_space, env.action_space, action_names=names, **kwargs)

    def observation_text(self, observation: Any) -> str:
        """Return the text of one observation (an ``action_mask`` entry of a Dict is left out)."""
        if self._custom_text is not None:
            return self._custom_text(observation)
        return _render(self.observation_space, observation)

    def legal_actions(self, mask: np.ndarray | None = None) -> list[str]:
        """Return the names of the legal ``Discrete`` actions (all unless ``mask`` says otherwise).

        Non-discrete action spaces have no list of names: the answer is written as numbers.
        """
        if self.names is None:
            return []
        if mask is None:
            return list(self.names)
        return [n for n, ok in zip(self.names, np.asarray(mask).ravel(), strict=False) if ok]

    def action_id(self, name: str) -> int:
        """Return the ``Discrete`` action of a legal action name."""
        return int(self.action_space.start) + self.names.index(name)

    def answer_format(self) -> str:
        """Describe how to write an action, for action spaces without names."""
        if self.names is not None:
            return ""
        count = _leaf_count(self.action_space)
        if count == 1:
            return "Answer with 1 number."
        return f"Answer with {count} numbers, separated by spaces."

    def parse(self, text: object, legal: Sequence[str]) -> Any | None:
        """Return the action the text names, or ``None`` if it names no valid action.

        Args:
            text: The agent's answer (anything that is not a ``str`` is rejected).
            legal: The legal action names now (from :meth:`legal_actions`).
        """
        if not isinstance(text, str):
            return None
        if self.names is not None:
            index = parse_action(text, legal)
            return None if index is None else self.action_id(legal[index])
        numbers = [float(x) for x in _NUMBER.findall(extract_tagged(text[-2000:]))]
        if not all(math.isfinite(x) for x in numbers):
            return None  # "1e999" reads as infinity: no action is infinite
        try:
            action, rest = _build(self.action_space, numbers)
        except (ValueError, OverflowError):  # not an integer, or too large for the dtype
            return None
        return action if not rest and self.action_space.contains(action) else None

    def _action_names(self, names: Sequence[str] | None) -> tuple[str, ...] | None:
        space = self.action_space
        if not isinstance(space, spaces.Discrete):
            if names is not None:
                raise TypeError("action_names only apply to a Discrete action space.")
            return None
        if names is None:
            return tuple(str(int(space.start) + i) for i in range(int(space.n)))
        if not _names_fit(space, names):
            raise ValueError(f"Expected {int(space.n)} distinct action names, got {list(names)}.")
        return tuple(str(n) for n in names)


def _names_fit(space: spaces.Space, names: Sequence[str]) -> bool:
    lowered = {str(n).strip().lower() for n in names}
    return isinstance(space, spaces.Discrete) and len(lowered) == len(names) == int(space.n)


def _check_observation_space(space: spaces.Space, max_elements: int) -> None:
    if isinstance(space, spaces.Text):
        return
    if isinstance(space, spaces.Tuple):
        for sub in space.spaces:
            _check_observation_space(sub, max_elements)
        return
    if isinstance(space, spaces.Dict):
        for sub in space.spaces.values():
            _check_observation_space(sub, max_elements)
        return
    _check_leaf(space, max_elements, "observation")


def _check_action_space(space: spaces.Space, max_elements: int) -> None:
    if isinstance(space, spaces.Tuple | spaces.Dict):
        subs = space.spaces.values() if isinstance(space, spaces.Dict) else space.spaces
        for sub in subs:
            _check_leaf(sub, max_elements, "action")
        return
    _check_leaf(space, max_elements, "action")


def _check_leaf(space: spaces.Space, max_elements: int, role: str) -> None:
    if not isinstance(space, _LEAVES):
        raise TypeError(
            f"The default TextAdapter cannot write a {type(space).__name__} {role} space as text. "
            "Pass adapter=TextAdapter(..., observation_text=your_function) or a subclass."
        )
    if isinstance(space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
        size = int(np.prod(space.shape))
        if size > max_elements:
            raise TypeError(
                f"The {role} space {space} has {size} elements, more than max_elements="
                f"{max_elements}: pass your own TextAdapter (or raise max_elements)."
            )


def _render(space: spaces.Space, value: Any) -> str:
    if isinstance(space, spaces.Text):
        return str(value)
    if isinstance(space, spaces.Discrete):
        return str(int(value))
    if isinstance(space, spaces.Tuple):
        return (
            "(" + ", ".join(_render(s, v) for s, v in zip(space.spaces, value, strict=True)) + ")"
        )
    if isinstance(space, spaces.Dict):
        lines = [
            f"{k}: {_render(s, value[k])}" for k, s in space.spaces.items() if k != "action_mask"
        ]
        return "\n".join(lines)
    array = np.asarray(value)
    if array.size == 1 and array.ndim <= 1:
        return _scalar(array.ravel()[0])
    return np.array2string(
        array, precision=4, separator=", ", suppress_small=True, threshold=10**6, max_line_width=100
    )


def _scalar(value: Any) -> str:
    if np.issubdtype(type(value), np.integer) or isinstance(value, int | np.bool_):
        return str(int(value))
    return f"{float(value):.4g}"


def _leaf_count(space: spaces.Space) -> int:
    if isinstance(space, spaces.Tuple):
        return sum(_leaf_count(s) for s in space.spaces)
    if isinstance(space, spaces.Dict):
        return sum(_leaf_count(s) for s in space.spaces.values())
    if isinstance(space, spaces.Discrete):
        return 1
    return int(np.prod(space.shape))


def _build(space: spaces.Space, numbers: list[float]) -> tuple[Any, list[float]]:
    """Consume numbers from the front to build an action of ``space``; return it and the rest."""
    if isinstance(space, spaces.Tuple):
        parts = []
        for sub in space.spaces:
            part, numbers = _build(sub, numbers)
            parts.append(part)
        return tuple(parts), numbers
    if isinstance(space, spaces.Dict):
        out = {}
        for key, sub in space.spaces.items():
            out[key], numbers = _build(sub, numbers)
        return out, numbers
    count = _leaf_count(space)
    if len(numbers) < count:
        raise ValueError("too few numbers")
    head, rest = numbers[:count], numbers[count:]
    integral = not isinstance(space, spaces.Box) or np.issubdtype(space.dtype, np.integer)
    if integral and any(x != int(x) for x in head):
        raise ValueError("not an integer")
    if isinstance(space, spaces.Discrete):
        return np.int64(head[0]), rest
    if integral:
        bounds = np.iinfo(space.dtype)
        if not all(bounds.min <= x < bounds.max for x in head):  # a cast would wrap around
            raise OverflowError("too large for the action dtype")
    with np.errstate(over="ignore"):  # a float too large for float32 becomes inf: rejected below
        action = np.asarray(head, dtype=space.dtype).reshape(space.shape)
    if not integral and not np.all(np.isfinite(action)):
        raise OverflowError("too large for the action dtype")
    return action, rest


class TextWrapper(gym.Wrapper[str, str, Any, Any], gym.utils.RecordConstructorArgs):
    """A Gymnasium env with non-text spaces, as a text env (observation and action are ``str``).

    Args:
        env: The env to wrap.
        adapter: The conversion (default: :meth:`TextAdapter.for_env`).
        invalid_action_penalty: Subtracted from the reward of an invalid answer.
        max_invalid_actions: Consecutive invalid answers that end the episode as truncated.

    Example:
        >>> import gymnasium as gym
        >>> env = TextWrapper(gym.make("FrozenLake-v1"))
        >>> obs, info = env.reset(seed=0)
        >>> info["legal_actions"]
        ['left', 'down', 'right', 'up']
        >>> obs, reward, terminated, truncated, info = env.step("go north")
        >>> info["invalid_action"], truncated
        (True, False)
    """

    def __init__(
        self,
        env: gym.Env,
        adapter: TextAdapter | None = None,
        invalid_action_penalty: float = 0.0,
        max_invalid_actions: int = 5,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self,
            adapter=adapter,
            invalid_action_penalty=invalid_action_penalty,
            max_invalid_actions=max_invalid_actions,
        )
        super().__init__(env)
        self.invalid_rule = InvalidAnswerRule(invalid_action_penalty, max_invalid_actions)
        self.adapter = adapter or TextAdapter.for_env(env)
        self.observation_space = text_space()
        self.action_space = text_space()
        spec = getattr(env, "spec", None)
        self._title = f"Environment: {spec.id}.\n" if spec is not None else ""
        self._last: tuple[Any, dict] = (None, {})
        self._streak = InvalidStreak(self.invalid_rule)
        self._text = ""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Reset the inner env and return its first observation as text."""
        observation, info = self.env.reset(seed=seed, options=options)
        self._streak.clear()
        return self._observe(observation, info, invalid=False)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Parse the text; apply the action, or return feedback if the text names none."""
        observation, info = self._last
        legal = self.adapter.legal_actions(legal_mask(observation, info))
        chosen = self.adapter.parse(action, legal)
        if chosen is None:
            return self._invalid(legal)
        self._streak.clear()
        observation, reward, terminated, truncated, info = self.env.step(chosen)
        done = bool(terminated or truncated)
        text, info = self._observe(observation, info, invalid=False, done=done)
        return text, float(reward), bool(terminated), bool(truncated), info

    def _invalid(self, legal: list[str]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        truncated = self._streak.invalid()
        reason = did_not_name(legal, self.adapter.answer_format())
        feedback = self.invalid_rule.feedback(reason, truncated)
        observation, info = self._last
        # The unchanged state's info again, as a copy: callers may keep and mutate what they got.
        info = copy.deepcopy(info)
        text, info = self._observe(observation, info, invalid=True, prefix=feedback + "\n\n")
        return text, self.invalid_rule.reward, False, truncated, info

    def _observe(
        self, observation: Any, info: dict, invalid: bool, prefix: str = "", done: bool = False
    ) -> tuple[str, dict[str, Any]]:
        self._last = (observation, info)
        legal = [] if done else self.adapter.legal_actions(legal_mask(observation, info))
        body = f"{self._title}Observation: {self.adapter.observation_text(observation)}\n"
        if done:
            body += "The episode is over."
        elif legal:
            body += f"Legal actions: {', '.join(legal)}."
        else:
            body += self.adapter.answer_format()
        self._text = fit_text(prefix + body)
        info = dict(info)
        info.update(legal_actions=legal, invalid_action=invalid)
        if self.adapter.names is not None:
            info["legal_action_ids"] = [self.adapter.action_id(n) for n in legal]
        return self._text, info

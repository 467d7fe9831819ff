"""What an env declares to be shown as the papers showed it: its page presets.

LaMer's and MAGE's code rebuilt one whole page per step (the rules, the first board, the memory
of earlier attempts, the last steps, the instruction). An env class that was in a paper says so
beside its rules, in a class attribute::

    class SokobanEnv(TextPuzzleEnv):
        page_presets = {"lamer": LAMER_SOKOBAN}

A :class:`PagePreset` is the paper's wording (a TOML file next to the env's module) and the
rest of a page layout: how the env's state becomes the paper's observation text, how an answer
is shown in the memory, the facts the wording names, the history windows. Subclass variants
(``SokobanLargeEnv``, ``ShopSimOODEnv``, ...) inherit their presets; ``templates="lamer"`` on a
trial asks its env for them (:func:`page_presets_of`), and the trial layer imports no env.

The step lines of the published memories (``memory.py`` of each env in the papers' code) are
here too, shared by the envs' presets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["PagePreset", "page_presets_of", "LAMER_STEPS", "LAMER_TEXT_STEPS", "MAGE_STEPS"]


@dataclass(frozen=True)
class PagePreset:
    """One published prompt of an env: its wording and how the env is drawn on its pages.

    Attributes:
        wording: The TOML file of the paper's words (``play``, ``reflect``, the memory entries,
            ...; the keys are :class:`~mage_envs.meta.page.PageTemplates` fields).
        layout: The other ``PageTemplates`` fields: ``observation``, ``action`` and ``facts``
            (module functions of the env's package, so that a trial pickles), the step lines,
            the windows, ``reflection_from``, ...
    """

    wording: Path
    layout: Mapping[str, Any] = field(default_factory=dict)


def page_presets_of(env: Any) -> dict[str, PagePreset]:
    """The page presets an env (or env class, or a wrapper of one) declares, by name.

    Example:
        >>> from mage_envs.puzzles.sokoban_env import SokobanLargeEnv
        >>> sorted(page_presets_of(SokobanLargeEnv))  # inherited from SokobanEnv
        ['lamer']
    """
    target = env if isinstance(env, type) else type(getattr(env, "unwrapped", env))
    return dict(getattr(target, "page_presets", None) or {})


LAMER_STEPS = {
    "step": "Action {step}: {action}\nObservation {step}:\n{observation}",
    "step_elided": "Action {step}: {action}\nObservation {step}: ...",
}
"""LaMer's Sokoban and Minesweeper ``SimpleMemory.fetch``."""

LAMER_TEXT_STEPS = {"step": "Action {step}: {action}\nObservation {step}: {observation}"}
"""LaMer's ALFWorld and WebShop ``SimpleMemory.fetch`` (the observation on the same line)."""

MAGE_STEPS = {
    "step": "Step {step} - Action: {action}\nObservation:\n{observation}",
    "step_elided": "Step {step} - Action: {action}",
}
"""MAGE's Kuhn poker and tic-tac-toe ``fetch``."""

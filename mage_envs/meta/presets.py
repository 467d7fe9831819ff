"""Template presets: the published prompts of LaMer and MAGE, per env, by name.

``MetaEpisodeWrapper(env, templates="lamer")`` (or ``"mage"``) shows the agent the pages the
paper's code built, byte for byte (each env declares them beside its rules: the wording in a
TOML file of its package, the renderers and history windows in a
:class:`~mage_envs.page_presets.PagePreset`): the rules and symbols legend,
"The initial state of the game is:" with the first board in the paper's symbols, the memory line
"On trial #k, the task is NOT successfully completed. Your reflection is: ...", the last steps of
the current attempt, and the reflection prompt that asks for the answer inside
``<remark></remark>``; the reflection is read from that tag as the paper's code read it (empty
without it). ``"default"`` gives our own templates.

An env class declares its presets in its ``page_presets`` attribute (its variants inherit them):
``lamer`` for Sokoban and Minesweeper, ``mage`` for Kuhn poker and tic-tac-toe, both for WebShop
(and ShopSim) and ALFWorld (official and generated games), whose prompts the two papers share.
The trial layer only asks the env (:func:`~mage_envs.page_presets.page_presets_of`). Where we
differ from the published code, on purpose, ``docs/published_settings.md`` lists it.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from mage_envs.meta.page import PageTemplates
from mage_envs.meta.templates import DEFAULT_TEMPLATES, Templates
from mage_envs.page_presets import PagePreset, page_presets_of

__all__ = [
    "TEMPLATE_PRESETS",
    "PAPER_TRIAL_SETTINGS",
    "register_templates",
    "page_presets",
    "preset_templates",
    "template_preset",
]

TEMPLATE_PRESETS: dict[str, Templates | None] = {
    "default": DEFAULT_TEMPLATES,
    "lamer": None,
    "mage": None,
}
"""The names ``templates=`` accepts: the same templates for every env, or ``None`` for a page
preset that each env declares for itself (LaMer's and MAGE's published pages). Read at call time:
a name added with :func:`register_templates` works in ``TrialConfig``, configs and the CLI."""


def register_templates(name: str, templates: Templates | None = None) -> None:
    """Make ``templates=name`` available to the wrapper, ``TrialConfig`` and every config.

    Args:
        name: The preset's name.
        templates: The templates it stands for on every env; ``None``: a page preset, which
            each env that has it declares (the ``page_presets`` of its class).

    Raises:
        TypeError: If ``templates`` is neither a ``Templates`` nor ``None``.
    """
    if templates is not None and not isinstance(templates, Templates):
        raise TypeError(f"templates must be a Templates or None, not {type(templates).__name__}.")
    TEMPLATE_PRESETS[name] = templates


_PAPER_TRIAL = {
    "num_episodes": 3,
    "same_task": True,
    "stop_on_success": True,
    "reflection": True,
    "memory": "reflection_only",
    "max_reflection_chars": 2000,
}
PAPER_TRIAL_SETTINGS: dict[str, dict[str, Any]] = {
    "lamer": {**_PAPER_TRIAL, "templates": "lamer"},
    "mage": {**_PAPER_TRIAL, "templates": "mage"},
}
"""The trial settings of LaMer's and MAGE's rollouts, in training and evaluation alike.

``mage_envs.make_trial(env_id, **PAPER_TRIAL_SETTINGS["lamer"])``: 3 attempts at the same task,
a reflection between them (cut at 2000 characters, reflections only in memory), the papers'
prompts, and the trial stops at the first win: both papers' rollout loops mark a won trial done
before the next reflection and restart, when they train as when they evaluate.
"""


@cache
def _wording(file: Path) -> dict[str, str]:
    return tomllib.loads(file.read_text(encoding="utf-8"))


def preset_templates(preset: PagePreset) -> Templates:
    """Build the templates of one page preset: its wording and its env's renderers.

    Raises:
        ValueError: If a template of the preset is malformed (the message names it).
    """
    words = dict(_wording(Path(preset.wording)))
    reflect = words.pop("reflect")
    # LaMer wrote no reflection prompt for a solved attempt: it never reflects after a win.
    solved = words.pop("reflect_solved", None) or reflect.replace(
        "The task is NOT successfully completed.", "The task is successfully completed."
    )
    page = PageTemplates(reflect=reflect, reflect_solved=solved, **words, **preset.layout)
    page.check()
    return Templates(reflection_tag="remark", reflection_without_tag="empty", page=page)


def page_presets(env: Any) -> dict[str, PagePreset]:
    """The page presets an env (or env class) declares: preset name -> :class:`PagePreset`."""
    return page_presets_of(env)


def template_preset(name: str, env: Any) -> Templates:
    """Return the templates a preset name stands for on ``env``.

    Args:
        name: A name of :data:`TEMPLATE_PRESETS`: ``"default"`` (our templates), ``"lamer"``,
            ``"mage"``, or one registered.
        env: The env the wrapper wraps (its class's ``page_presets`` hold the page presets).

    Raises:
        ValueError: If the name is unknown, or the paper published no prompt for this env.
    """
    if name not in TEMPLATE_PRESETS:
        raise ValueError(
            f"templates must be a Templates or one of {tuple(TEMPLATE_PRESETS)}, not {name!r}."
        )
    if TEMPLATE_PRESETS[name] is not None:
        return TEMPLATE_PRESETS[name]
    presets = page_presets(env)
    if name not in presets:
        kind = type(getattr(env, "unwrapped", env)).__name__
        offered = f"it has {sorted(presets)}" if presets else "the papers published none for it"
        raise ValueError(
            f"No {name!r} template preset for {kind}: {offered} (LaMer: Sokoban, Minesweeper, "
            "WebShop, ALFWorld; MAGE: Kuhn poker, tic-tac-toe, WebShop, ALFWorld). Use "
            "templates='default' or pass your own Templates."
        )
    return preset_templates(presets[name])

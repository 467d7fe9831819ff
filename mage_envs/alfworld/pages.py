r"""LaMer's (and MAGE's, the same code) ALFWorld page: the game's own text and its 15-step window.

Sources (LaMer @9a4756c, ``agent_system/environments/alfworld/``; MAGE @9b2e588 has the same
``prompt.py``, ``memory.py``, ``projection.py`` and ``env_manager.py``): the page starts from the
game's first text, shows the last 15 ``Action k`` / ``Observation k`` pairs of the attempt in full
(``fetch(history_length=15)``, on play and reflection pages and in the memory alike), and lists
the admissible commands without ``help``, each quoted, joined by ``",\n "``. The memory writes
the command the projection sent (lower-cased, or the last 30 characters of an untagged answer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mage_envs.page_presets import LAMER_TEXT_STEPS, PagePreset
from mage_envs.projections import lamer_alfworld
from mage_envs.text import shown_action

__all__ = ["ALFWORLD_PAGE"]

WINDOW = 15
"""Steps an ALFWorld page shows (``history_length=15``)."""


def alfworld_observation(text: str, info: dict[str, Any], env: Any) -> str:
    """The game's text after the last command (its first text at a reset), as the game wrote it."""
    return env.game_text


def alfworld_action(answer: object, info: dict[str, Any], env: Any) -> str:
    """The command as the memory writes it: the one sent to the game.

    Under LaMer's answer rules, its projection (``go to desk 1``, or the last 30 characters of
    an untagged answer, lower-cased); under ours, the admissible command played, or the answer
    itself when none was.
    """
    if getattr(env, "answer_rules", "ours") != "ours":
        return lamer_alfworld(answer)[0] if isinstance(answer, str) else ""
    return info.get("command") or shown_action(answer)


def alfworld_facts(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    """The admissible commands now, quoted, ``help`` left out, one per line."""
    commands = env.admissible_commands
    return {"admissible_actions": ",\n ".join(f"'{c}'" for c in commands if c != "help")}


ALFWORLD_PAGE = PagePreset(
    Path(__file__).parent / "prompts" / "alfworld.toml",
    {
        **LAMER_TEXT_STEPS,
        "observation": alfworld_observation,
        "action": alfworld_action,
        "facts": alfworld_facts,
        "window_play": WINDOW,
        "window_reflect": WINDOW,
        "window_memory": WINDOW,
        "shown_play": WINDOW,
        "shown_reflect": WINDOW,
        "shown_memory": WINDOW,
        "reflection_from": "last",
    },
)
"""The ALFWorld page of both papers (the page presets ``lamer`` and ``mage`` of ALFWorld)."""

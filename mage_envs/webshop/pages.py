"""LaMer's (and MAGE's, the same code) WebShop page: the instruction, recent pages, the clickables.

Sources (LaMer @9a4756c, ``agent_system/environments/webshop/``; MAGE @9b2e588 has the same
``prompt.py``, ``memory.py``, ``projection.py`` and ``env_manager.py``):

- ``format_obs``: a page is WebShop's text page after the instruction, each part quoted and
  joined by ``" [SEP] "`` (a page without the instruction, the purchase page, stays as it is);
- ``build_text_obs``: a play page shows the last 5 steps, a reflection page the last 20, an
  earlier attempt its last 3; every page but the last of a window is cut to its first 15 parts
  (6 in the memory), ``" ... (N more)"`` (``SimpleMemory.fetch(max_to_show=...)``); the
  admissible actions are WebShop's ``get_available_actions`` (``search[<your query>]`` where the
  page has a search box, then ``click[x]`` for every clickable), each quoted with a comma, one a
  line; a page over 20000 characters is made again with ``get_webshop_prompt_short``;
- ``get_webshop_prompt``: the page is not stripped, and the first attempt's memory is empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mage_envs.page_presets import LAMER_TEXT_STEPS, PagePreset
from mage_envs.projections import lamer_webshop
from mage_envs.text import shown_action

__all__ = ["WEBSHOP_PAGE", "webshop_observation", "webshop_shorten"]

SEP = " [SEP] "
MAX_PARTS = {"current": 15, "memory": 6}
"""Parts of a page kept when it is not the last of its window (``max_to_show``)."""


def webshop_observation(text: str, info: dict[str, Any], env: Any) -> str:
    """The page as LaMer's ``format_obs`` writes it: the parts after the instruction, quoted."""
    session = env.session
    page = session.page_text()
    parts = page.split(SEP)
    try:
        index = parts.index(session.goal.instruction)
    except ValueError:
        return page
    return SEP.join(f"'{part}'" for part in parts[index + 1 :])


def webshop_shorten(observation: str, where: str) -> str:
    """Cut a page to its first 15 parts (6 in the memory), as ``SimpleMemory.fetch`` does.

    Example:
        >>> webshop_shorten(" [SEP] ".join("abcdefgh"), "memory")
        'a [SEP] b [SEP] c [SEP] d [SEP] e [SEP] f ... (2 more)'
    """
    limit = MAX_PARTS[where]
    parts = observation.split(SEP)
    if len(parts) < limit:
        return observation
    return SEP.join(parts[:limit]) + f" ... ({len(parts) - limit} more)"


def webshop_action(answer: object, info: dict[str, Any], env: Any) -> str:
    """The action as the memory writes it: the one sent to the shop.

    Under LaMer's answer rules, its projection (lower-cased; the last 20 characters of an
    untagged answer); under ours, the answer as memory shows it.
    """
    if getattr(env, "answer_rules", "ours") != "ours":
        return lamer_webshop(answer)[0] if isinstance(answer, str) else ""
    return shown_action(answer)


def webshop_facts(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    """The instruction and the admissible actions of the page, as ``build_text_obs`` lists them."""
    available = env.webshop_available_actions()
    actions = ["search[<your query>]"] if available["has_search_bar"] else []
    actions += [f"click[{name}]" for name in available["clickables"]]
    return {
        "task_description": env.session.goal.instruction,
        "admissible_actions": "\n".join(f"'{action}'," for action in actions),
    }


WEBSHOP_PAGE = PagePreset(
    Path(__file__).parent / "prompts" / "webshop.toml",
    {
        **LAMER_TEXT_STEPS,
        "observation": webshop_observation,
        "action": webshop_action,
        "facts": webshop_facts,
        "shorten": webshop_shorten,
        "window_play": 5,
        "window_reflect": 20,
        "window_memory": 3,
        "shown_play": 5,
        "shown_reflect": 20,
        "shown_memory": 3,
        "memory_none": "",
        "strip": False,
        "short_page": 20_000,
        "reflection_from": "last",
    },
)
"""The WebShop page of both papers (the page presets ``lamer`` and ``mage`` of the shops)."""

"""A scripted shopper that knows the goal: the upper reference of a shop, and a test of its pages.

It reads the goal from the env (privileged: no agent sees it), searches the target's title,
opens the target (paging on when it is not on the current page), picks the product's option
value closest to each goal option, and buys. On a generated ShopSim task that scores 1.0; on
WebShop's real goals less where the annotated attributes are not in the product text.
"""

from __future__ import annotations

from typing import Any

from mage_envs.webshop.reward import fuzzy_score, normalize_color
from mage_envs.webshop.session import BUY, NEXT, ShopSession

__all__ = ["expert_move"]


def _best_value(values: tuple[str, ...], wanted: str) -> str:
    """The option value that matches ``wanted`` best (as the reward compares them)."""
    target = normalize_color(wanted)
    clickable = [v for v in values if v]  # an empty value is not on the page
    return max(clickable, key=lambda v: (fuzzy_score(normalize_color(v), target), v == wanted))


def _option_moves(session: ShopSession) -> list[str]:
    product = session.catalogue.product(session.goal.asin)
    moves = []
    for wanted in session.goal.options:
        scored = [
            (fuzzy_score(normalize_color(_best_value(vs, wanted)), normalize_color(wanted)), name)
            for name, vs in product.options.items()
            if any(vs)
        ]
        if not scored:
            continue
        _, name = max(scored)
        value = _best_value(product.options[name], wanted)
        if session.selected.get(name) != value:
            moves.append(f"click[{value}]")
    return moves


def expert_move(env: Any) -> str:
    """Return the next move of the scripted expert in ``env`` (a shop env, wrapped or not)."""
    session: ShopSession = env.unwrapped.session
    target = session.goal.asin.lower()
    if session.page == "search":
        return f"search[{session.catalogue.product(target).title}]"
    if session.page == "results":
        shown = [session.catalogue.products[i].asin.lower() for i in session.shown_results()]
        if target in shown:
            return f"click[{target}]"
        return f"click[{NEXT}]" if len(session.results) > len(shown) else "click[back to search]"
    if session.page != "item" or session.asin.lower() != target:
        return "click[back to search]"
    moves = _option_moves(session)
    return moves[0] if moves else f"click[{BUY}]"

"""Does the gain of later episodes come from reading the memory? Part 2's per-deal analysis.

A trial replays one Kuhn deal, and a showdown in an earlier episode shows the opponent's card. In
the first episode the learner cannot tell apart the two deals that give it the same card; in a
later one, a learner that reads its memory can. Against a deterministic style, a deal is an
*information deal* when no single plan of the learner (check then fold, check then call, or
bet) is best for both deals that share its card: only knowing the opponent's card lets it play
both best. If later episodes gain on information deals and not elsewhere, the memory is read; a
gain spread over every deal is a better policy, not a memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

__all__ = ["PLANS", "plan_returns", "information_deals", "deal_gains"]

PLANS = (("check", "fold"), ("check", "call"), ("bet",))
"""The learner's pure plans when it acts first: its first move, then its answer to a bet."""


@cache
def plan_returns(style: str) -> dict[str, dict[tuple[str, ...], float]]:
    """Return, per deal (``"QK"``: learner Q, opponent K), the return of each plan vs ``style``."""
    import mage_envs
    from benchmarks.learning_common import DEALS, deal_seeds

    env = mage_envs.make_trial("mage/KuhnPoker-v0", num_episodes=1, opponent=style, seat="first")
    table: dict[str, dict[tuple[str, ...], float]] = {}
    try:
        for deal, seed in zip(DEALS, deal_seeds(), strict=True):
            for plan in PLANS:
                _, info = env.reset(seed=seed)
                total, done, moves = 0.0, False, iter(plan)
                while not done:
                    move = next(m for m in moves if m in info["legal_actions"])
                    _, reward, terminated, truncated, info = env.step(move)
                    total, done = total + float(reward), terminated or truncated
                table.setdefault(deal, {})[plan] = total
    finally:
        env.close()
    return table


def information_deals(style: str) -> dict[str, float]:
    """Return the information deals vs ``style``, each with its best return knowing the card."""
    table = plan_returns(style)
    found = {}
    for deal, returns in table.items():
        twin = next(d for d in table if d[0] == deal[0] and d != deal)
        best = max(returns.values())
        twin_best = max(table[twin].values())
        if not any(returns[p] == best and table[twin][p] == twin_best for p in PLANS):
            found[deal] = best
    return found


def deal_gains(deals: dict[str, dict[str, Sequence[float]]]) -> dict[str, Any]:
    """Return one scored policy's final - first gains on information deals and on the others.

    Args:
        deals: Per style, per deal, the return of each episode (a record's ``deals``).

    Returns:
        ``info_gain`` and ``other_gain`` (mean final - first return over the (style, deal)
        pairs of each kind), and ``info_best_first`` / ``info_best_final``: the share of
        information deals played as well as knowing the opponent's card allows.
    """
    info, other, best_first, best_final = [], [], [], []
    for style, by_deal in deals.items():
        known = information_deals(style)
        for deal, returns in by_deal.items():
            gain = float(returns[-1]) - float(returns[0])
            if deal in known:
                info.append(gain)
                best_first.append(float(returns[0]) >= known[deal])
                best_final.append(float(returns[-1]) >= known[deal])
            else:
                other.append(gain)
    return {
        "info_gain": sum(info) / len(info),
        "other_gain": sum(other) / len(other),
        "info_best_first": sum(best_first) / len(best_first),
        "info_best_final": sum(best_final) / len(best_final),
    }

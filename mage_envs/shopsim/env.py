"""``mage/ShopSim-v0`` and ``mage/ShopSimOOD-v0``: a generated shop with WebShop's protocol.

The catalogue and its instructions come from :func:`~mage_envs.shopsim.generator.generate_shop`
(seeded, no download, built in well under a second for the default 500 products); pages, moves
and reward are WebShop's (:mod:`mage_envs.webshop`). ``mage/ShopSim-v0`` asks for products of six
categories; ``mage/ShopSimOOD-v0`` searches the same catalogue for the two held-out categories
(garden, toys), whose products an agent trained on ShopSim-v0 has never been asked for.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from typing import Any

from mage_envs.shopsim.generator import generate_shop
from mage_envs.shopsim.kinds import CATEGORIES, HELD_OUT_CATEGORIES
from mage_envs.webshop.catalogue import Catalogue
from mage_envs.webshop.goals import human_goals
from mage_envs.webshop.products import parse_products
from mage_envs.webshop.reward import Goal
from mage_envs.webshop.shop_env import ShopEnv

__all__ = ["ShopSimEnv", "ShopSimOODEnv", "IN_DOMAIN_CATEGORIES", "build_shop"]

IN_DOMAIN_CATEGORIES = tuple(c for c in CATEGORIES if c not in HELD_OUT_CATEGORIES)
"""The categories ``mage/ShopSim-v0`` asks for."""

SPLITS = ("all", "train", "test")


@functools.lru_cache(maxsize=8)
def build_shop(shop_seed: int, num_products: int) -> tuple[Catalogue, tuple[Goal, ...]]:
    """Return the catalogue and every goal of the shop of ``shop_seed`` (cached per process)."""
    records, attributes, human = generate_shop(shop_seed, num_products)
    products = parse_products(records, attributes)
    catalogue = Catalogue.build(products, price_seed=shop_seed)
    rng = random.Random(f"shopsim-goals-{shop_seed}")
    return catalogue, tuple(human_goals(products, human, catalogue.prices, rng))


class ShopSimEnv(ShopEnv):
    """A generated shop: find and buy what the instruction describes (never called WebShop).

    Args:
        shop_seed: Seed of the catalogue and its instructions (the task seed of ``reset``
            picks the goal).
        num_products: Products in the catalogue (default 500).
        categories: The categories goals are drawn from (default: the six in-domain ones).
        split: ``"all"`` (default), ``"train"`` (four goals in five) or ``"test"`` (the fifth).
        **rules: The shop's rules, as :class:`~mage_envs.webshop.shop_env.ShopEnv` takes them
            (``max_steps``, ``reward_mode``, ``reward``, ``reward_scale``,
            ``invalid_action_penalty``, ``render_mode``, ``answer_rules``). ShopSim's goals are
            human-style (option values only), which both ``reward`` rules score the same.

    Example:
        >>> import gymnasium as gym, mage_envs
        >>> env = gym.make("mage/ShopSim-v0")
        >>> obs, info = env.reset(seed=0)
        >>> obs.split(" [SEP] ")[:2], info["page"]
        (['ShopSim', 'Instruction:'], 'search')
    """

    def __init__(
        self,
        shop_seed: int = 0,
        num_products: int = 500,
        categories: Sequence[str] | None = None,
        split: str = "all",
        **rules: Any,
    ) -> None:
        catalogue, goals = build_shop(int(shop_seed), int(num_products))
        wanted = tuple(IN_DOMAIN_CATEGORIES if categories is None else categories)
        unknown = sorted(set(wanted) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"Unknown categories {unknown}; ShopSim has {list(CATEGORIES)}.")
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, not {split!r}.")
        chosen = [g for g in goals if g.category in wanted]
        if split != "all":
            chosen = [g for i, g in enumerate(chosen) if (i % 5 == 4) == (split == "test")]
        super().__init__(catalogue, chosen, "ShopSim", **rules)
        self.categories, self.split = wanted, split


class ShopSimOODEnv(ShopSimEnv):
    """``mage/ShopSimOOD-v0``: ShopSim's catalogue, goals from the held-out categories only.

    Any :class:`ShopSimEnv` argument overrides the defaults.
    """

    DEFAULTS: dict[str, Any] = {"categories": HELD_OUT_CATEGORIES}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**self.DEFAULTS, **kwargs})

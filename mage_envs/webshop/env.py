"""``mage/WebShop-v0``: WebShop over its real product and instruction files.

WebShop (Yao et al., 2022) asks an agent to buy the product an instruction describes in a shop of
real Amazon products, by searching and clicking. This env plays its text protocol and its
reward (:mod:`mage_envs.webshop.reward`) over its files (:mod:`mage_envs.webshop.data`), with
the goal splits of its agents (test 0-499, eval 500-1499, train 1500 and on). It needs neither
the Java search server nor spaCy: search is BM25 through ``bm25s`` and title nouns come from a
word list. ``docs/webshop.md`` lists every difference from the original.
"""

from __future__ import annotations

import os
from typing import Any

from mage_envs.webshop.data import find_data_files, load_shop
from mage_envs.webshop.goals import split_goals
from mage_envs.webshop.shop_env import ShopEnv

__all__ = ["WebShopEnv"]


class WebShopEnv(ShopEnv):
    """WebShop's shop over its data files.

    Args:
        data_path: The folder with the data files (default: ``$MAGE_WEBSHOP_DATA``).
        catalogue: ``"small"`` (default: the 1,000-product set) or ``"all"`` (the full set).
        goals: ``"human"`` (default: the human instructions) or ``"synthetic"``.
        split: ``"test"`` (default, goals 0-499), ``"eval"`` (500-1499), ``"train"`` (1500 on),
            ``"train_and_eval"`` (500 on: LaMer's and MAGE's training goals) or ``"all"``.
        num_products: Keep only the first this many products of the file.
        price_seed: Seed of the prices of range-priced products and of the price bounds.
        **rules: The shop's rules, as :class:`~mage_envs.webshop.shop_env.ShopEnv` takes them
            (``max_steps``, ``reward_mode``, ``reward``, ``reward_scale``,
            ``invalid_action_penalty``, ``render_mode``, ``answer_rules``), with WebShop's own
            defaults: its score, its option rule, no invalid-move cost.

    Raises:
        WebShopDataError: If the data files are not found (the message names them).
    """

    def __init__(
        self,
        data_path: str | os.PathLike | None = None,
        catalogue: str = "small",
        goals: str = "human",
        split: str = "test",
        num_products: int | None = None,
        price_seed: int = 0,
        **rules: Any,
    ) -> None:
        files = find_data_files(data_path, catalogue, goals)
        shop, goal_list = load_shop(files, goals, num_products, price_seed)
        super().__init__(shop, split_goals(list(goal_list), split), "WebShop", **rules)
        self.split = split

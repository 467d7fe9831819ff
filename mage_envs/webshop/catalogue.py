"""A shop's catalogue: the products, their prices in this shop, and the search index."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from mage_envs.webshop.goals import product_prices
from mage_envs.webshop.products import Product
from mage_envs.webshop.search import SearchIndex

__all__ = ["Catalogue"]


@dataclass(frozen=True, eq=False)
class Catalogue:
    """The products of a shop with everything an episode reads from them.

    Attributes:
        products: The products, in file order.
        by_asin: Upper-case asin -> index into ``products``.
        prices: Asin -> the price a purchase pays (a range is drawn once, from the seed).
        index: The keyword search over ``products``.
    """

    products: tuple[Product, ...]
    by_asin: dict[str, int]
    prices: dict[str, float]
    index: SearchIndex

    @classmethod
    def build(cls, products: Sequence[Product], price_seed: int = 0) -> Catalogue:
        """Index ``products`` and fix their prices (range prices drawn from ``price_seed``).

        Raises:
            ValueError: If there is no product.
        """
        if not products:
            raise ValueError("A catalogue needs at least one product.")
        products = tuple(products)
        prices = product_prices(products, random.Random(price_seed))
        by_asin = {p.asin.upper(): i for i, p in enumerate(products)}
        return cls(products, by_asin, prices, SearchIndex(products))

    def product(self, asin: str) -> Product:
        """Return the product with ``asin`` (any case)."""
        return self.products[self.by_asin[asin.upper()]]

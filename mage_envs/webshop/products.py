"""Products in WebShop's file format: reading the scraped records and their attribute files.

A product file (``items_shuffle_1000.json``, ``items_shuffle.json``) is a JSON list of records with
``asin``, ``name``, ``product_category`` (``"A › B › C"``), ``category``, ``query``, ``pricing``
(``"$12.99"``, ``"$5.00 - $9.00"`` or ``""``), ``small_description`` (the bullet points),
``full_description`` and ``customization_options`` (``{name: [{"value": ..., "image": ...}]}``).
An attribute file (``items_ins_v2*.json``) maps an asin to ``{"attributes": [...], "instruction":
..., "instruction_attributes": [...]}``. :func:`parse_products` turns both into :class:`Product`
objects the way WebShop's loader does: records with a bad or repeated asin are skipped, option
names and values are lower-cased (``/`` becomes ``" | "``; repeats are kept, as WebShop keeps
them), a missing price counts as $100.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Product", "parse_products", "parse_pricing"]

MISSING_PRICE = 100.0
"""Price of a product whose record has none (WebShop's rule)."""

DUMMY_ATTRIBUTE = "DUMMY_ATTR"
"""Attribute list of a product the attribute file does not know (WebShop's placeholder)."""

_NOT_PRICE = re.compile(r"[^\d.]")


@dataclass(frozen=True, eq=False)
class Product:
    """One product as the shop shows it and the reward reads it.

    Attributes:
        asin: The product id (shown upper-case, clicked lower-case).
        title: The product name.
        category: The top-level category (e.g. ``"beauty"``).
        query: The search query the product was scraped with (lower-case).
        product_category: The category path, ``"A › B › C"``.
        pricing: One price, or the low and high end of a range.
        price_tag: The price as shown: ``"$12.99"`` or ``"$5.0 to $9.0"``.
        bullets: The feature bullet points.
        description: The full description.
        options: Option name -> the values one can pick (lower-case), in page order.
        attributes: The product's attribute phrases (from the attribute file).
        instruction: The synthetic instruction from the attribute file (``None`` without one).
        instruction_attributes: The attributes that instruction asks for.
    """

    asin: str
    title: str
    category: str
    query: str
    product_category: str
    pricing: tuple[float, ...]
    price_tag: str
    bullets: tuple[str, ...]
    description: str
    options: dict[str, tuple[str, ...]]
    attributes: tuple[str, ...]
    instruction: str | None = None
    instruction_attributes: tuple[str, ...] = field(default=())


def parse_pricing(text: Any) -> tuple[tuple[float, ...], str]:
    """Return the prices in a record's ``pricing`` text and the tag the shop shows.

    Example:
        >>> parse_pricing("$1,299.50")
        ((1299.5,), '$1299.5')
        >>> parse_pricing("$5.00 - $9.00")
        ((5.0, 9.0), '$5.0 to $9.0')
        >>> parse_pricing("")
        ((100.0,), '$100.0')
    """
    prices = []
    for part in str(text or "").split("$")[1:]:
        digits = _NOT_PRICE.sub("", part)
        try:
            prices.append(float(digits))
        except ValueError:
            continue
    if not prices:
        return (MISSING_PRICE,), f"${MISSING_PRICE}"
    if len(prices) == 1:
        return (prices[0],), f"${prices[0]}"
    return (prices[0], prices[1]), f"${prices[0]} to ${prices[1]}"


def _options(raw: Any) -> dict[str, tuple[str, ...]]:
    options: dict[str, tuple[str, ...]] = {}
    for name, contents in (raw or {}).items():
        if contents is None:
            continue
        # kept as WebShop keeps them (repeats, empty lists): synthetic goals are their product
        values = [str(c.get("value", "")).strip().replace("/", " | ").lower() for c in contents]
        options[str(name).lower()] = tuple(values)
    return options


def _bullets(raw: Any) -> tuple[str, ...]:
    if isinstance(raw, list):
        return tuple(str(b) for b in raw)
    return (str(raw or ""),)


def _product(record: dict[str, Any], attributes: dict[str, Any]) -> Product:
    asin = str(record["asin"])
    pricing, tag = parse_pricing(record.get("pricing"))
    known = attributes.get(asin) or {}
    return Product(
        asin=asin,
        title=str(record.get("name") or ""),
        category=str(record.get("category") or ""),
        query=str(record.get("query") or "").lower().strip(),
        product_category=str(record.get("product_category") or ""),
        pricing=pricing,
        price_tag=tag,
        bullets=_bullets(record.get("small_description")),
        description=str(record.get("full_description") or ""),
        options=_options(record.get("customization_options")),
        attributes=tuple(known.get("attributes") or (DUMMY_ATTRIBUTE,)),
        instruction=known.get("instruction"),
        instruction_attributes=tuple(known.get("instruction_attributes") or ()),
    )


def parse_products(
    records: list[dict[str, Any]],
    attributes: dict[str, Any] | None = None,
    num_products: int | None = None,
) -> list[Product]:
    """Return the products of a product file's records, as WebShop's loader keeps them.

    Args:
        records: The JSON list of a product file.
        attributes: The attribute file's mapping (asin -> attributes and instruction).
        num_products: Keep only the first this many records (the files are pre-shuffled).

    Raises:
        ValueError: If ``records`` is not a list of records with an ``asin``.
    """
    if not isinstance(records, list):
        raise ValueError("A WebShop product file holds a JSON list of product records.")
    products, seen = [], set()
    for record in records[:num_products]:
        if not isinstance(record, dict) or "asin" not in record:
            raise ValueError("Every product record needs an 'asin' (WebShop's product format).")
        asin = str(record["asin"])
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        products.append(_product(record, attributes or {}))
    return products

"""Products in WebShop's file format: reading the scraped records and their attribute files.

A product file (``items_shuffle_1000.json``, ``items_shuffle.json``) is a JSON list of records with
``asin``, ``name``, ``product_category`` (``"A › B › C"``), ``category``, ``query``, ``pricing``
(``"$12.99"``, ``"$5.00 - $9.00"`` or ``""``), ``small_description`` (the bullet points),
``full_description``, ``customization_options`` (``{name: [{"value": ..., "image": ...}]}``) and
``images``. An attribute file (``items_ins_v2*.json``) maps an asin to ``{"attributes": [...],
"instruction": ..., "instruction_attributes": [...]}``. :func:`parse_products` turns both into
:class:`Product` objects the way WebShop's loader does: records with a bad or repeated asin are
skipped, option names and values are lower-cased (``/`` becomes ``" | "``; repeats are kept, as
WebShop keeps them), a missing price counts as $100, a product the attribute file does not know
gets WebShop's placeholder attribute. Every field it reads is checked (:mod:`.records`).
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from decimal import Decimal, InvalidOperation
from typing import Any

from mage_envs.webshop.records import (
    DataFormatError,
    bullet_texts,
    field,
    option_values,
    text,
    texts,
)

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
    instruction_attributes: tuple[str, ...] = dataclass_field(default=())


def parse_pricing(text: Any) -> tuple[tuple[float, ...], str]:
    """Return the prices in a record's ``pricing`` text and the tag the shop shows.

    As WebShop: no pricing (a false value) is $100; each ``$`` starts a price, read after
    deleting every character but digits and dots; a range keeps its first two prices.

    Raises:
        ValueError: If a price cannot be read, or a text has none (WebShop's loader fails too).

    Example:
        >>> parse_pricing("$1,299.50")
        ((1299.5,), '$1299.5')
        >>> parse_pricing("$5.00 - $9.00")
        ((5.0, 9.0), '$5.0 to $9.0')
        >>> parse_pricing("")
        ((100.0,), '$100.0')
    """
    if not text:
        return (MISSING_PRICE,), f"${MISSING_PRICE}"
    if not isinstance(text, str):
        raise ValueError(f"must be a price text like '$12.99', not {type(text).__name__} {text!r}")
    prices = []
    for part in text.split("$")[1:]:
        digits = _NOT_PRICE.sub("", part)
        try:
            prices.append(float(Decimal(digits)))
        except InvalidOperation:
            raise ValueError(f"holds {'$' + part.strip()!r}, which is not a price") from None
    if not prices:
        raise ValueError(f"is {text!r}: no '$' price in it")
    if len(prices) == 1:
        return (prices[0],), f"${prices[0]}"
    return (prices[0], prices[1]), f"${prices[0]} to ${prices[1]}"


def _options(raw: Any, file: Any, where: str) -> dict[str, tuple[str, ...]]:
    if not raw:  # WebShop: no options (None, {}, "")
        return {}
    if not isinstance(raw, dict):
        raise DataFormatError(
            file, where, "customization_options", f"must be an object, not {type(raw).__name__}"
        )
    options: dict[str, tuple[str, ...]] = {}
    for name, contents in raw.items():
        values = option_values(contents, file, where, name)
        if values is not None:  # an option without values (None) is skipped, as in WebShop
            options[name.lower()] = values
    return options


def _images(record: dict[str, Any], file: Any, where: str) -> None:
    images = field(record, "images", file, where)
    if not isinstance(images, list) or not images:
        raise DataFormatError(
            file, where, "images", "must be a non-empty list (WebShop reads its first image)"
        )


def _known(
    attributes: dict[str, Any], asin: str, file: Any, synthetic: bool
) -> tuple[tuple[str, ...], str | None, tuple[str, ...]]:
    """The product's attributes, and with ``synthetic`` its instruction and its attributes."""
    where = f"asin {asin}"
    if asin not in attributes:
        if synthetic:  # WebShop's synthetic goals read attributes[asin] for every product
            raise DataFormatError(
                file, where, None, "has no entry, which synthetic goals need for every product"
            )
        return (DUMMY_ATTRIBUTE,), None, ()
    entry = attributes[asin]
    if not isinstance(entry, dict):
        raise DataFormatError(file, where, None, f"must be an object, not {type(entry).__name__}")
    # WebShop: no "attributes" field is the placeholder; an empty list stays empty
    have = (DUMMY_ATTRIBUTE,)
    if "attributes" in entry:
        have = texts(entry["attributes"], file, where, "attributes")
    instruction = entry.get("instruction") if synthetic else None
    if instruction is None:  # no synthetic goal for this product (WebShop's .get)
        return have, None, ()
    instruction = text(instruction, file, where, "instruction")
    wanted = field(entry, "instruction_attributes", file, where)
    wanted = texts(wanted, file, where, "instruction_attributes")
    if not wanted:
        raise DataFormatError(
            file, where, "instruction_attributes", "is empty; an instruction needs one or more"
        )
    return have, instruction, wanted


def _product(
    record: dict[str, Any], where: str, attributes: dict[str, Any], files: dict, synthetic: bool
) -> Product:
    file = files["products"]
    asin = record["asin"]
    try:
        pricing, tag = parse_pricing(record.get("pricing"))  # .get: WebShop allows no pricing
    except ValueError as error:
        raise DataFormatError(file, where, "pricing", str(error)) from None
    options = _options(field(record, "customization_options", file, where), file, where)
    _images(record, file, where)
    have, instruction, wanted = _known(attributes, asin, files["attributes"], synthetic)
    return Product(
        asin=asin,
        title=text(field(record, "name", file, where), file, where, "name"),
        category=text(field(record, "category", file, where), file, where, "category"),
        query=text(field(record, "query", file, where), file, where, "query").lower().strip(),
        product_category=text(
            field(record, "product_category", file, where), file, where, "product_category"
        ),
        pricing=pricing,
        price_tag=tag,
        bullets=bullet_texts(field(record, "small_description", file, where), file, where),
        description=text(
            field(record, "full_description", file, where), file, where, "full_description"
        ),
        options=options,
        attributes=have,
        instruction=instruction,
        instruction_attributes=wanted,
    )


def parse_products(
    records: Any,
    attributes: Any = None,
    num_products: int | None = None,
    synthetic: bool = False,
    files: dict[str, Any] | None = None,
) -> list[Product]:
    """Return the products of a product file's records, as WebShop's loader keeps them.

    Args:
        records: The JSON list of a product file.
        attributes: The attribute file's mapping (asin -> attributes and instruction).
        num_products: Keep only the first this many records (the files are pre-shuffled).
        synthetic: Read each product's synthetic instruction too (``goals="synthetic"``): then
            every product needs an entry in ``attributes``, as in WebShop.
        files: What to call the two sources in errors (``{"products": path, "attributes":
            path}``; default: "the product records", "the attribute file").

    Raises:
        DataFormatError: If a record lacks a field WebShop reads or has it malformed; the
            message names the file, the record and the field.
        ValueError: If ``num_products`` is not ``None`` or a positive integer.
    """
    if num_products is not None and (
        isinstance(num_products, bool)
        or not isinstance(num_products, numbers.Integral)
        or num_products < 1
    ):
        raise ValueError(
            f"num_products must be None or a positive integer, not {num_products!r} (a slice "
            "bound like -1 would drop products from the end)."
        )
    files = {**_SOURCES, **(files or {})}
    if not isinstance(records, list):
        problem = f"must be a JSON list of product records, not {_kind(records)}"
        raise DataFormatError(files["products"], "the file", None, problem)
    if attributes is None:
        attributes = {}
    if not isinstance(attributes, dict):
        problem = f"must be a JSON object (asin -> attributes), not {_kind(attributes)}"
        raise DataFormatError(files["attributes"], "the file", None, problem)
    for index, record in enumerate(records):  # WebShop cleans the keys of every record first
        if not isinstance(record, dict):
            problem = f"must be an object, not {_kind(record)}"
            raise DataFormatError(files["products"], f"record {index}", None, problem)
    products, seen = [], set()
    for index, record in enumerate(records[:num_products]):
        where = f"record {index}"
        asin = text(
            field(record, "asin", files["products"], where), files["products"], where, "asin"
        )
        if asin == "nan" or len(asin) > 10 or asin in seen:  # skipped unread, as in WebShop
            continue
        seen.add(asin)
        products.append(_product(record, f"{where} (asin {asin})", attributes, files, synthetic))
    return products


_SOURCES = {"products": "the product records", "attributes": "the attribute file"}


def _kind(value: Any) -> str:
    return "a JSON " + {dict: "object", list: "list", str: "string"}.get(type(value), "value")

"""ShopSim's catalogue and instructions, generated from a seed in WebShop's file formats.

:func:`generate_shop` returns three JSON-ready objects: the product records (the format of
``items_shuffle_1000.json``), the attribute file (``items_ins_v2_1000.json``) and the human
instruction file (``items_human_ins.json``); :func:`write_shop_files` writes them under those
names, so a generated shop also runs through ``mage/WebShop-v0``'s real-data path. The same seed
and size give the same files, byte for byte.

Each product has a made-up brand, a kind (:mod:`mage_envs.shopsim.kinds`), three attributes, a
few values of each option and a price (one in six a price range). Each instruction asks for one
or two of its product's attributes and one value of each option, in words drawn from several
phrasings: the product's noun or a synonym, six sentence templates, and three ways to state the
options (``with color: red, and size: 8``, ``in red, size 8``, ``size 8, red``).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from mage_envs.shopsim.kinds import KINDS, ProductKind
from mage_envs.webshop.reward import options_match

__all__ = ["generate_shop", "write_shop_files", "SHOP_FILES"]

SHOP_FILES = ("items_shuffle_1000.json", "items_ins_v2_1000.json", "items_human_ins.json")
"""The names :func:`write_shop_files` writes (WebShop's small-catalogue file names)."""

_SYLLABLES = "vel or ka mi zu tor ben lu sa rim ko na ter ax do fi".split()
_TEMPLATES = (
    "i need {attrs} {noun}{opts}",
    "i am looking for {article} {noun} that is {attrs}{opts}",
    "find me {attrs} {noun}{opts}",
    "i want to buy {article} {noun} which is {attrs}{opts}",
    "looking for {noun} that is {attrs}{opts}",
    "can you get me {article} {noun}? it should be {attrs}{opts}",
)


def _brands(rng: random.Random, count: int = 40) -> list[str]:
    names: dict[str, None] = {}
    while len(names) < count:
        names["".join(rng.sample(_SYLLABLES, 2)).capitalize()] = None
    return list(names)


def _price(rng: random.Random, kind: ProductKind) -> str:
    low, high = kind.price
    first = round(rng.uniform(low, high)) - 0.01
    if rng.random() < 1 / 6:  # a price range, as some WebShop products have
        return f"${first:.2f} - ${first + rng.randint(2, 15):.2f}"
    return f"${first:.2f}"


def _title(brand: str, modifier: str, kind: ProductKind, attributes: list[str]) -> str:
    words = " ".join(w.capitalize() for w in f"{modifier} {kind.noun}".split())
    return f"{brand} {words} - {attributes[0].title()}, {attributes[1].title()}"


def _distinct_values(rng: random.Random, pool: tuple[str, ...], count: int) -> set[str]:
    """Up to ``count`` values of ``pool`` that WebShop's option matching tells apart.

    The reward matches options leniently (token-set ratio above 85 after the colour mapping:
    "small" matches "x-small", "12 inch" matches "18 inch"). Two such values on one product would
    let a wrong pick score as the right one, so a product only offers values that do not match
    each other.
    """
    picked: list[str] = []
    for value in rng.sample(pool, len(pool)):
        if len(picked) == count:
            break
        if not any(options_match(value, other) for other in picked):
            picked.append(value)
    return set(picked)


def _record(asin: str, title: str, kind: ProductKind, rng: random.Random, attributes) -> dict:
    options = {}
    for name, pool in kind.options.items():
        picked = _distinct_values(rng, pool, rng.randint(2, min(4, len(pool))))
        options[name] = [{"value": v, "image": None} for v in pool if v in picked]
    return {
        "asin": asin,
        "name": title,
        "category": kind.category,
        "query": kind.query,
        "product_category": " › ".join(kind.path),
        "pricing": _price(rng, kind),
        "small_description": [f"{a.capitalize()}." for a in attributes]
        + [f"Our {kind.noun} comes with a one year satisfaction guarantee."],
        "full_description": (
            f"This {kind.noun} is {attributes[0]}, {attributes[1]} and {attributes[2]}. "
            f"It is made for everyday use and ships in recyclable packaging."
        ),
        "customization_options": options,
        "images": [""],
    }


def _options_text(rng: random.Random, chosen: dict[str, str]) -> str:
    if not chosen:
        return ""
    style = rng.randrange(3)
    if style == 0:
        return " with " + ", and ".join(f"{n}: {v}" for n, v in chosen.items())
    if style == 1:
        return " in " + ", ".join(v if n == "color" else f"{n} {v}" for n, v in chosen.items())
    return ", " + ", ".join(f"{n} {v}" for n, v in reversed(chosen.items()))


def _instruction(rng: random.Random, kind: ProductKind, record: dict, attributes) -> dict:
    asked = rng.sample(attributes, rng.randint(1, 2))
    chosen = {n: rng.choice(vs)["value"] for n, vs in record["customization_options"].items()}
    noun = rng.choice((kind.noun, *kind.synonyms))
    text = rng.choice(_TEMPLATES).format(
        attrs=" and ".join(asked),
        noun=noun,
        article="an" if noun[0] in "aeiou" else "a",
        opts=_options_text(rng, chosen),
    )
    return {
        "instruction": text,
        "instruction_attributes": asked,
        "instruction_options": list(chosen.values()),
    }


def generate_shop(seed: int = 0, num_products: int = 500, instructions_per_product: int = 2):
    """Return ``(products, attributes, human_instructions)`` of a shop, in WebShop's formats.

    Args:
        seed: The shop's seed.
        num_products: Products in the catalogue (every kind gets about the same number).
        instructions_per_product: Instructions written for each product.

    Example:
        >>> products, attributes, human = generate_shop(seed=0, num_products=24)
        >>> len(products), sorted(products[0])[:3], len(human[products[0]["asin"]])
        (24, ['asin', 'category', 'customization_options'], 2)
    """
    if num_products < 1:
        raise ValueError(f"num_products must be >= 1, not {num_products}.")
    rng = random.Random(f"shopsim-{seed}")  # a str seed hashes the same in every process
    brands = _brands(rng)
    records, attributes, human, titles, asins = [], {}, {}, set(), set()
    for i in range(num_products):
        kind = KINDS[i % len(KINDS)]
        while True:  # titles differ in their words, so each title finds its own product
            attrs = rng.sample(kind.attributes, 3)
            title = _title(rng.choice(brands), rng.choice(kind.modifiers), kind, attrs)
            asin = "B0" + "".join(rng.choices("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", k=8))
            words = frozenset(re.findall(r"\w+", title.lower()))
            if words not in titles and asin not in asins:
                break
        titles.add(words)
        asins.add(asin)
        record = _record(asin, title, kind, rng, attrs)
        records.append(record)
        attributes[asin] = {"attributes": attrs, "instruction": None, "instruction_attributes": []}
        human[asin] = [
            _instruction(rng, kind, record, attrs) for _ in range(instructions_per_product)
        ]
    rng.shuffle(records)  # WebShop's files are shuffled too
    return records, attributes, human


def write_shop_files(folder: str | Path, seed: int = 0, num_products: int = 500) -> Path:
    """Write a generated shop in WebShop's file formats and names (:data:`SHOP_FILES`).

    Returns:
        The folder, ready for ``gym.make("mage/WebShop-v0", data_path=folder, split="all")``.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in zip(SHOP_FILES, generate_shop(seed, num_products), strict=True):
        (folder / name).write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n")
    return folder

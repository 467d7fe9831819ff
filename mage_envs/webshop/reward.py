"""WebShop's purchase reward (its ``engine/goal.py``), term by term.

``R = r_type * (N_attr + N_opt + [price <= price_upper]) / (|attributes| + |options| + 1)``

- ``N_attr``: goal attributes that a product attribute matches with a fuzzy token-set ratio above
  85, or that appear in the lower-cased title, bullet points or description.
- ``N_opt``: goal options matched (ratio above 85) by one of the chosen option values, both sides
  first mapped to the first colour word of :data:`COLOR_WORDS` they contain.
- ``r_type``: 1, or 0.5 when neither the query, nor two category levels, nor more than a fifth of
  the goal title's nouns match; 0.1 when fewer than a tenth of the nouns match; 0 when none do.

Success is ``R == 1``. Fuzzy ratios are rapidfuzz's ``token_set_ratio`` over the same processed
strings as ``thefuzz`` (its default ``force_ascii``: code points 128-255 deleted; then lower-cased,
punctuation to spaces), rounded to an integer as ``thefuzz`` returns them. Title nouns come from
:func:`~mage_envs.webshop.nouns.title_nouns`, not spaCy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from rapidfuzz import fuzz, utils

from mage_envs.webshop.nouns import title_nouns

__all__ = [
    "COLOR_WORDS",
    "FUZZY_THRESHOLD",
    "Goal",
    "Reward",
    "fuzzy_score",
    "normalize_color",
    "options_match",
    "purchase_reward",
    "type_reward",
]

FUZZY_THRESHOLD = 85
"""A fuzzy token-set ratio above this is a match."""

# thefuzz's ``force_ascii`` deletes only the Latin-1 supplement, not every non-ASCII character.
_LATIN1 = dict.fromkeys(range(128, 256))

COLOR_WORDS = tuple(
    """alabaster apricot aqua ash asphalt azure banana beige black blue blush bordeaux bronze
    brown burgundy camel camo caramel champagne charcoal cheetah chestnut chocolate christmas
    coffee cognac copper coral cranberry cream crystal dark denim eggplant elephant espresso
    fuchsia gold granite grape graphite grass gray green grey heather indigo ivory ivy khaki
    lavender lemon leopard light lilac lime magenta maroon mauve merlot midnight mint mocha
    multicolor mushroom mustard natural navy nude olive orange peach pewter pink plum purple
    rainbow red rose royal rust sand sapphire seashell silver skull slate steel stone stonewash
    sunflower tan taupe teal tiger turquoise violet walnut wheat white wine yellow""".split()
)
"""WebShop's base colour words, in its order (the first one found in an option wins)."""


@dataclass(frozen=True)
class Goal:
    """What one instruction asks for, and how the purchase is scored.

    Attributes:
        asin: The target product.
        instruction: The instruction text the agent reads.
        attributes: The attribute phrases the purchase should have.
        options: The option values the purchase should have chosen.
        price_upper: The price bound (a purchase at or under it gets the price point).
        title: The target product's name (for the title-noun share).
        query: The target product's query (lower-case).
        product_category: The target's category path, ``"A › B › C"``.
        category: The target's top-level category.
        weight: Sampling weight (WebShop's, for draws without a goal index).
    """

    asin: str
    instruction: str
    attributes: tuple[str, ...]
    options: tuple[str, ...]
    price_upper: float
    title: str
    query: str
    product_category: str
    category: str = ""
    weight: float = 1.0


@dataclass(frozen=True)
class Reward:
    """A purchase's reward and its terms (``reward`` is the score in [0, 1])."""

    reward: float
    r_type: float
    r_attr: float
    r_option: float | None
    r_price: bool
    attribute_matches: int
    option_matches: int
    query_match: bool
    category_match: bool
    title_score: float

    def as_dict(self) -> dict[str, Any]:
        """Return the terms as a plain dict (for ``info``)."""
        return asdict(self)


def fuzzy_score(a: str, b: str) -> int:
    """Return ``thefuzz``'s token-set ratio of two strings, 0 to 100.

    Example:
        >>> fuzzy_score("x-small", "small"), fuzzy_score("9.5", "9"), fuzzy_score("red", "blue")
        (100, 100, 29)
        >>> fuzzy_score("crème", "crme")
        100
    """
    a, b = str(a).translate(_LATIN1), str(b).translate(_LATIN1)
    return round(fuzz.token_set_ratio(a, b, processor=utils.default_process))


def normalize_color(text: str) -> str:
    """Return the first of :data:`COLOR_WORDS` that ``text`` contains, else ``text``.

    A substring test, as in WebShop: ``"standard"`` contains ``"tan"``.

    Example:
        >>> normalize_color("navy blue"), normalize_color("light pink"), normalize_color("xl")
        ('blue', 'light', 'xl')
    """
    for color in COLOR_WORDS:
        if color in text:
            return color
    return text


def type_reward(product: Any, goal: Goal) -> tuple[float, bool, bool, float]:
    """Return ``(r_type, query_match, category_match, title_score)`` of buying ``product``."""
    query_match = product.query == goal.query
    bought = {part.strip() for part in product.product_category.split("›")}
    wanted = {part.strip() for part in goal.product_category.split("›")}
    category_match = len(bought & wanted) >= 2
    goal_nouns = title_nouns(goal.title)
    if goal_nouns:
        title_score = len(set(title_nouns(product.title)) & set(goal_nouns)) / len(goal_nouns)
    else:
        title_score = 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return r_type, query_match, category_match, title_score


def _attribute_matches(product: Any, attributes: Iterable[str]) -> int:
    text = None
    matches = 0
    for wanted in attributes:
        if any(fuzzy_score(have, wanted) > FUZZY_THRESHOLD for have in product.attributes):
            matches += 1
            continue
        if text is None:  # built once, only when a fuzzy match fails
            text = (product.title, " ".join(product.bullets), product.description)
            text = tuple(t.lower() for t in text)
        if any(wanted in t for t in text):
            matches += 1
    return matches


def options_match(chosen: str, wanted: str) -> bool:
    """Whether a chosen option value counts as the wanted one (colour mapping, then fuzzy match).

    Example:
        >>> options_match("x-small", "small"), options_match("red", "navy blue")
        (True, False)
    """
    return fuzzy_score(normalize_color(chosen), normalize_color(wanted)) > FUZZY_THRESHOLD


def _option_matches(chosen: Iterable[str], wanted: Iterable[str]) -> int:
    chosen = list(chosen)
    return sum(any(options_match(c, option) for c in chosen) for option in wanted)


def purchase_reward(product: Any, goal: Goal, price: float, chosen: Iterable[str]) -> Reward:
    """Score buying ``product`` at ``price`` with the ``chosen`` option values, for ``goal``.

    Args:
        product: The bought :class:`~mage_envs.webshop.products.Product`.
        goal: The goal of the episode.
        price: The product's price in this shop.
        chosen: The option values selected on the item page.
    """
    r_type, query_match, category_match, title_score = type_reward(product, goal)
    n_attr = _attribute_matches(product, goal.attributes)
    n_opt = _option_matches(list(chosen), goal.options)
    r_price = price <= goal.price_upper
    total = len(goal.attributes) + len(goal.options) + 1
    return Reward(
        reward=(n_attr + n_opt + int(r_price)) / total * r_type,  # WebShop's float order
        r_type=r_type,
        r_attr=n_attr / len(goal.attributes) if goal.attributes else 0.0,
        r_option=n_opt / len(goal.options) if goal.options else None,
        r_price=bool(r_price),
        attribute_matches=n_attr,
        option_matches=n_opt,
        query_match=query_match,
        category_match=category_match,
        title_score=title_score,
    )

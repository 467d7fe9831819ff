"""Title nouns without a language model: what replaces spaCy in WebShop's type reward.

WebShop tags the goal's and the purchased product's titles with spaCy's ``en_core_web_sm`` and
keeps the words tagged NOUN or PROPN. That model is a separate download, so here the nouns of a
title are its *content words*: lower-cased alphabetic words of two letters or more that are not
function words (articles, pronouns, prepositions, conjunctions, auxiliaries), not numbers (digits
never form a word), not adverbs (``-ly``) and not among the adjectives and participles common in
product titles (a fixed list below, plus the suffixes ``-able``, ``-ible``, ``-ful``, ``-ous``,
``-less``).

How that changes the type term: product titles are mostly noun phrases, and spaCy tags most of
their capitalised words PROPN, so both sets are close. Ours keeps some modifiers spaCy would
drop (colours, materials such as "leather") and drops the listed adjectives and suffixed words
even where spaCy calls them PROPN or NOUN ("family" ends in -ly). The title score is a share of
the goal title's nouns, so an extra word on the goal side lowers it a little and a missing one
raises it; the thresholds (0.1, 0.2) act on the same share as before.
"""

from __future__ import annotations

import re

__all__ = ["title_nouns", "FUNCTION_WORDS", "TITLE_ADJECTIVES"]

FUNCTION_WORDS = frozenset(
    """a an the and or nor but so yet for of in on at to by with from into onto over under
    up down out off about above below between through during before after without within
    per via vs than as if then that this these those it its it's he she they them their his her
    we our you your my me i is are was were be been being am do does did has have had can could
    will would shall should may might must not no all any each every both either neither some
    such more most less least very too also just only own same other another what which who whom
    whose where when why how here there""".split()
)
"""Words that are never nouns (English function words)."""

TITLE_ADJECTIVES = frozenset(
    """new premium portable adjustable waterproof lightweight comfortable soft large small big
    little mini extra high low long short wide narrow thick thin heavy light durable strong
    professional compatible universal natural organic original classic modern vintage cute
    casual elegant fashion fashionable stylish sexy slim fit easy fast quick best great good
    perfect ideal hot cold warm cool dry wet clean fresh pure real genuine full half double
    single multi multiple non anti ultra super deluxe luxury cheap safe smart wireless
    rechargeable electric automatic manual digital unisex womens mens women's men's kids
    girls boys baby adult cotton""".split()
)
"""Adjectives and participles frequent in product titles, which spaCy rarely tags as nouns.

(``cotton`` is here because titles use it as a modifier; ``women`` / ``men`` stay nouns.)
"""

_ADJECTIVE_SUFFIXES = ("ly", "able", "ible", "ful", "ous", "less")
_WORD = re.compile(r"[a-z][a-z'-]*[a-z]|[a-z]")


def title_nouns(title: str) -> list[str]:
    """Return the words of ``title`` that stand in for spaCy's NOUN / PROPN tokens, in order.

    Example:
        >>> title_nouns("Men's Slim Fit Cotton Dress Shirt, Long Sleeve, 2 Pack - Navy Blue")
        ['dress', 'shirt', 'sleeve', 'pack', 'navy', 'blue']
    """
    words = []
    for word in _WORD.findall(title.lower()):
        if len(word) < 2 or word in FUNCTION_WORDS or word in TITLE_ADJECTIVES:
            continue
        if word.endswith(_ADJECTIVE_SUFFIXES) and len(word) > 5:
            continue
        words.append(word)
    return words

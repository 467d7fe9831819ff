"""WebShop as a text env: ``mage/WebShop-v0`` over its real files, and the parts ShopSim uses.

Modules: :mod:`~mage_envs.webshop.products` (the product file format), :mod:`.goals`
(instructions, price bounds, splits), :mod:`.reward` (the purchase reward), :mod:`.nouns` (title
nouns without spaCy), :mod:`.search` (BM25), :mod:`.session` (pages and moves),
:mod:`.shop_env` (the Gymnasium env), :mod:`.data` and :mod:`.env` (the real files and
``mage/WebShop-v0``), :mod:`.expert` (a scripted shopper that knows the goal).
See ``docs/webshop.md``.
"""

try:  # the optional libraries, named in one clear message instead of a bare import error
    import bm25s  # noqa: F401
    import rapidfuzz  # noqa: F401
    import snowballstemmer  # noqa: F401
except ImportError as error:  # pragma: no cover - the dev install has them
    raise ImportError(
        f"WebShop and ShopSim need the 'webshop' extra ({error.name} is missing): "
        "pip install 'mage-metarl[webshop]'."
    ) from error

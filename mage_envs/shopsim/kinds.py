"""The kinds of product ShopSim generates: categories, product types, attributes and options.

Each type names its search query, its category path, the words a title and an instruction use
for it, the attribute phrases its products draw from, its options and its price range. The last
two categories (``garden`` and ``toys``) are the held-out ones of ``mage/ShopSimOOD-v0``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ProductKind", "KINDS", "CATEGORIES", "HELD_OUT_CATEGORIES"]

COLORS = ("black", "white", "navy blue", "grey", "red", "green", "beige", "pink", "light blue")
CLOTHING_SIZES = ("x-small", "small", "medium", "large", "x-large", "xx-large")
SHOE_SIZES = ("6", "6.5", "7", "7.5", "8", "8.5", "9", "10", "11", "12")
PACKS = ("1 pack", "2 pack", "3 pack", "6 pack")


@dataclass(frozen=True)
class ProductKind:
    """One type of product.

    Attributes:
        category: The top-level category.
        path: The category path below the top level (joined with ``" › "``).
        query: The search query of the type (WebShop's ``query`` field).
        noun: The head noun phrase used in titles.
        synonyms: Other words for it that instructions may use (paraphrase).
        modifiers: Words that titles put before the noun.
        attributes: Attribute phrases, of which each product gets a few.
        options: Option name -> the values products draw from.
        price: The price range, low and high.
    """

    category: str
    path: tuple[str, ...]
    query: str
    noun: str
    synonyms: tuple[str, ...]
    modifiers: tuple[str, ...]
    attributes: tuple[str, ...]
    options: dict[str, tuple[str, ...]]
    price: tuple[float, float]


def _k(category, path, query, noun, synonyms, modifiers, attributes, options, price):
    """A kind from its table row: paths split on " / ", word lists on ", "."""
    words = [tuple(text.split(", ")) for text in (synonyms, modifiers, attributes)]
    return ProductKind(category, tuple(path.split(" / ")), query, noun, *words, options, price)


KINDS: tuple[ProductKind, ...] = (
    _k(
        "fashion",
        "Clothing / Shoes / Running",
        "running shoes",
        "running shoes",
        "jogging sneakers, trainers for running",
        "lightweight, breathable, cushioned",
        "non slip, arch support, memory foam, rubber sole, machine washable, wide toe box",
        {"color": COLORS, "size": SHOE_SIZES},
        (25.0, 140.0),
    ),
    _k(
        "fashion",
        "Clothing / Men / Shirts",
        "men t-shirt",
        "t-shirt",
        "tee, short sleeve shirt",
        "classic, slim, relaxed",
        "cotton, moisture wicking, machine washable, crew neck, quick dry, tagless",
        {"color": COLORS, "size": CLOTHING_SIZES},
        (8.0, 35.0),
    ),
    _k(
        "fashion",
        "Clothing / Women / Coats",
        "women winter jacket",
        "winter jacket",
        "warm coat, puffer coat",
        "hooded, quilted, long",
        "water resistant, faux fur, zip closure, down alternative, packable, fleece lined",
        {"color": COLORS, "size": CLOTHING_SIZES},
        (40.0, 220.0),
    ),
    _k(
        "beauty",
        "Beauty / Hair Care / Shampoo",
        "sulfate free shampoo",
        "shampoo",
        "hair wash, cleansing shampoo",
        "moisturizing, clarifying, volumizing",
        "sulfate free, paraben free, cruelty free, for dry hair, argan oil, natural ingredients",
        {"size": ("8 fl oz", "12 fl oz", "16 fl oz", "33.8 fl oz")},
        (6.0, 38.0),
    ),
    _k(
        "beauty",
        "Beauty / Skin Care / Face",
        "face moisturizer",
        "face moisturizer",
        "facial cream, face lotion",
        "daily, hydrating, oil free",
        "hyaluronic acid, fragrance free, for sensitive skin, spf 30, vegan, non comedogenic",
        {"size": ("1.7 oz", "2.5 oz", "4 oz")},
        (9.0, 65.0),
    ),
    _k(
        "beauty",
        "Beauty / Makeup / Lips",
        "long lasting lipstick",
        "lipstick",
        "lip color, lip stick",
        "matte, satin, creamy",
        "long lasting, cruelty free, vitamin e, paraben free, waterproof, highly pigmented",
        {"color": ("red", "pink", "nude", "coral", "plum", "mauve", "berry")},
        (5.0, 30.0),
    ),
    _k(
        "grocery",
        "Grocery / Beverages / Tea",
        "green tea bags",
        "green tea",
        "tea bags, herbal tea",
        "organic, loose leaf, jasmine",
        "caffeine free, gluten free, non gmo, kosher, sugar free, individually wrapped",
        {"flavor name": ("mint", "lemon", "honey", "ginger", "original"), "size": PACKS},
        (4.0, 28.0),
    ),
    _k(
        "grocery",
        "Grocery / Snacks / Chocolate",
        "dark chocolate bar",
        "dark chocolate",
        "chocolate bar, cocoa bar",
        "rich, creamy, bittersweet",
        "sugar free, keto friendly, fair trade, gluten free, low carb, dairy free",
        {"flavor name": ("sea salt", "almond", "orange", "mint", "raspberry"), "size": PACKS},
        (3.0, 30.0),
    ),
    _k(
        "grocery",
        "Grocery / Coffee / Whole Bean",
        "whole bean coffee",
        "coffee beans",
        "whole bean coffee, coffee",
        "dark roast, medium roast, single origin",
        "fair trade, organic, low acid, kosher, non gmo, freshly roasted",
        {"size": ("12 ounce", "2 pound", "5 pound")},
        (9.0, 60.0),
    ),
    _k(
        "home",
        "Home / Bedding / Sheets",
        "queen bed sheets",
        "bed sheet set",
        "sheets, bedding set",
        "soft, deep pocket, cooling",
        "machine washable, wrinkle free, easy care, hypoallergenic, breathable, fade resistant",
        {"color": COLORS, "size": ("twin", "full", "queen", "king")},
        (20.0, 120.0),
    ),
    _k(
        "home",
        "Home / Decor / Pillows",
        "decorative throw pillow",
        "throw pillow",
        "cushion, accent pillow",
        "decorative, velvet, boho",
        "hidden zipper, machine washable, double sided, insert included, fade resistant",
        {"color": COLORS, "size": ("16 x 16 inch", "18 x 18 inch", "20 x 20 inch")},
        (10.0, 45.0),
    ),
    _k(
        "home",
        "Home / Lighting / Lamps",
        "bedside table lamp",
        "table lamp",
        "desk lamp, bedside lamp",
        "modern, minimalist, ceramic",
        "usb charging port, dimmable, touch control, energy efficient, bulb included",
        {"color": ("black", "white", "gold", "silver", "wood")},
        (18.0, 90.0),
    ),
    _k(
        "electronics",
        "Electronics / Audio / Headphones",
        "wireless headphones",
        "wireless headphones",
        "bluetooth earphones, headset",
        "over ear, noise cancelling, foldable",
        "bluetooth 5.0, long battery life, built in microphone, fast charging, hands free",
        {"color": ("black", "white", "blue", "rose gold")},
        (20.0, 200.0),
    ),
    _k(
        "electronics",
        "Electronics / Phones / Cases",
        "iphone case",
        "phone case",
        "phone cover, protective case",
        "slim, clear, rugged",
        "shockproof, wireless charging compatible, scratch resistant, anti yellowing, "
        "drop protection",
        {"color": COLORS, "size": ("iphone 13", "galaxy s23", "pixel 8")},
        (7.0, 40.0),
    ),
    _k(
        "electronics",
        "Electronics / Power / Chargers",
        "usb c charger",
        "usb c charger",
        "wall charger, power adapter",
        "compact, dual port, fast",
        "fast charging, foldable plug, overheat protection, travel friendly, 65w output",
        {"color": ("black", "white"), "size": ("1 pack", "2 pack")},
        (10.0, 50.0),
    ),
    _k(
        "sports",
        "Sports / Fitness / Yoga",
        "yoga mat",
        "yoga mat",
        "exercise mat, workout mat",
        "thick, extra long, eco friendly",
        "non slip, carrying strap, easy to clean, high density, tear resistant, latex free",
        {"color": COLORS, "size": ("4mm thin", "6mm standard", "10mm extra thick")},
        (15.0, 80.0),
    ),
    _k(
        "sports",
        "Sports / Outdoor / Bottles",
        "insulated water bottle",
        "water bottle",
        "drinking bottle, flask",
        "insulated, stainless steel, wide mouth",
        "bpa free, leak proof, keeps cold 24 hours, dishwasher safe, straw lid, sweat proof",
        {"color": COLORS, "size": ("18 oz", "24 oz", "32 oz", "40 oz")},
        (10.0, 45.0),
    ),
    _k(
        "sports",
        "Sports / Fitness / Weights",
        "adjustable dumbbells",
        "dumbbell set",
        "hand weights, free weights",
        "adjustable, neoprene, hex",
        "anti slip grip, space saving, quick adjust, rust resistant, includes rack",
        {"size": ("5 lb", "10 lb", "15 lb", "25 lb")},
        (20.0, 300.0),
    ),
    _k(
        "garden",
        "Patio / Garden / Planters",
        "ceramic plant pot",
        "plant pot",
        "planter, flower pot",
        "ceramic, hanging, self watering",
        "drainage hole, saucer included, indoor outdoor, frost resistant, uv protected",
        {
            "color": ("white", "black", "terracotta", "green", "grey"),
            "size": ("4 inch", "6 inch", "8 inch", "10 inch"),
        },
        (8.0, 55.0),
    ),
    _k(
        "garden",
        "Patio / Garden / Watering",
        "expandable garden hose",
        "garden hose",
        "water hose, hose pipe",
        "expandable, flexible, heavy duty",
        "kink free, brass fittings, spray nozzle included, lightweight design, leak proof",
        {"size": ("25 ft", "50 ft", "75 ft", "100 ft")},
        (15.0, 70.0),
    ),
    _k(
        "garden",
        "Patio / Garden / Birding",
        "hanging bird feeder",
        "bird feeder",
        "feeding station, seed feeder",
        "hanging, metal, squirrel proof",
        "weatherproof, easy to fill, easy to clean, large capacity, rust resistant",
        {"color": ("green", "black", "copper", "red")},
        (12.0, 60.0),
    ),
    _k(
        "toys",
        "Toys / Building / Blocks",
        "building blocks set",
        "building blocks",
        "construction bricks, block set",
        "classic, creative, magnetic",
        "bpa free, storage box included, for ages 3 and up, compatible with major brands, stem",
        {"size": ("100 piece starter", "250 pieces", "500 piece set", "1000 brick kit")},
        (12.0, 90.0),
    ),
    _k(
        "toys",
        "Toys / Puzzles / Jigsaw",
        "jigsaw puzzle for adults",
        "jigsaw puzzle",
        "puzzle, picture puzzle",
        "challenging, landscape, colorful",
        "thick pieces, no dust, poster included, interlocking pieces, recycled cardboard",
        {"size": ("300 pieces small", "1000 pieces", "2000 piece deluxe")},
        (10.0, 40.0),
    ),
    _k(
        "toys",
        "Toys / Stuffed Animals / Plush",
        "plush teddy bear",
        "teddy bear",
        "stuffed animal, plush toy",
        "soft, giant, cuddly",
        "hypoallergenic, machine washable, safety eyes, for ages 3 and up, gift ready",
        {"color": ("brown", "white", "pink", "beige"), "size": ("12 inch", "18 inch", "36 inch")},
        (9.0, 70.0),
    ),
)
"""Every kind of product, grouped by category."""

CATEGORIES = tuple(dict.fromkeys(kind.category for kind in KINDS))
"""The top-level categories, in order."""

HELD_OUT_CATEGORIES = ("garden", "toys")
"""The categories whose goals only ``mage/ShopSimOOD-v0`` asks for."""

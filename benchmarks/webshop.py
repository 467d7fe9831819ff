"""Benchmark: WebShop and ShopSim load, reset, step and search times.

A 1,000-product catalogue is generated and written in WebShop's file format (the size of its
development set, ``items_shuffle_1000.json``), then:

- load s: the first ``gym.make("mage/WebShop-v0", data_path=...)`` (read, parse, index; later
  makes in the process reuse it) and the first ``gym.make("mage/ShopSim-v0")`` (generate, index).
- reset ms: mean wall time of ``env.reset(seed=i)`` over fresh seeds.
- steps/s: ``env.step`` calls per second of a random agent choosing among
  ``info["legal_actions"]``, and of the scripted expert (search, open, options, buy), resets
  not timed.
- reward: microseconds per purchase of the target with the goal's options
  (``purchase_reward``, WebShop's rule and ``thefuzz`` 0.19's matcher), and the matcher's
  decisions over the same (bought, wanted) pairs with the fast test (``token_set_match``: a
  longest-common-subsequence bound spares most ``difflib`` calls) against the plain one
  (``token_set_ratio(...) > 85``, every pair through ``difflib``), in the same run.
- search ms: mean and 95th percentile of one BM25 query over the catalogue (the goals'
  instructions as queries, as an agent that searches the instruction would), against a linear
  scan in the same run that only counts the query words found in each product's text.
  The project's target is under 5 ms a query.

Usage: ``python -m benchmarks webshop [--resets N] [--seconds S] [--queries Q]
[--products P]`` (``--products`` changes the catalogue size, 1,000 by default).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time

import gymnasium as gym
import numpy as np

import mage_envs  # noqa: F401  (registers the ids)
from benchmarks import positive_float, positive_int
from mage_envs.shopsim.generator import write_shop_files
from mage_envs.webshop.expert import expert_move
from mage_envs.webshop.fuzzy import token_set_match, token_set_ratio
from mage_envs.webshop.reward import goal_option, normalize_color, purchase_reward
from mage_envs.webshop.search import document_text

PRODUCTS = 1000


def reset_ms(env: gym.Env, resets: int) -> float:
    """Mean milliseconds per seeded reset over ``resets`` fresh seeds."""
    start = time.perf_counter()
    for seed in range(resets):
        env.reset(seed=seed)
    return (time.perf_counter() - start) / resets * 1000


def steps_per_second(env: gym.Env, seconds: float, expert: bool) -> float:
    """Steps per second of random legal play (or the expert's), resets not counted."""
    rng, steps, busy, seed = random.Random(0), 0, 0.0, 0
    while busy < seconds:
        _, info = env.reset(seed=seed)
        seed, done = seed + 1, False
        start = time.perf_counter()
        while not done:
            move = expert_move(env) if expert else rng.choice(info["legal_actions"])
            _, _, terminated, truncated, info = env.step(move)
            steps, done = steps + 1, terminated or truncated
        busy += time.perf_counter() - start
    return steps / busy


def search_ms(env: gym.Env, queries: int) -> tuple[float, float, float]:
    """Mean and p95 ms of a BM25 query, and mean ms of the linear word-count scan."""
    shop = env.unwrapped
    texts = [g.instruction for g in shop.goals][:queries]
    texts = (texts * (queries // max(len(texts), 1) + 1))[:queries]
    index = shop.catalogue.index
    times = []
    for text in texts:
        start = time.perf_counter()
        index.search(text)
        times.append(time.perf_counter() - start)
    documents = [set(document_text(p).split()) for p in shop.catalogue.products]
    start = time.perf_counter()
    for text in texts:
        words = text.lower().split()
        sorted(range(len(documents)), key=lambda i: -sum(w in documents[i] for w in words))[:50]
    scan = (time.perf_counter() - start) / len(texts) * 1000
    return float(np.mean(times)) * 1000, float(np.percentile(times, 95)) * 1000, scan


def reward_us(env: gym.Env, purchases: int) -> tuple[float, float, float]:
    """Microseconds per purchase, and per matcher decision with the fast and plain tests."""
    shop = env.unwrapped
    goals = (list(shop.goals) * (purchases // len(shop.goals) + 1))[:purchases]
    bought = [(shop.catalogue.product(g.asin), g) for g in goals]
    start = time.perf_counter()
    for product, goal in bought:
        purchase_reward(product, goal, shop.catalogue.prices[goal.asin], goal.options)
    per_purchase = (time.perf_counter() - start) / len(bought) * 1e6
    pairs = [(have, want) for p, g in bought for want in g.attributes for have in p.attributes]
    pairs += [
        (normalize_color(chosen), goal_option(g, i))
        for _, g in bought
        for i in range(len(g.options))
        for chosen in g.options
    ]
    timed = []
    for decide in (token_set_match, lambda a, b: token_set_ratio(a, b) > 85):
        start = time.perf_counter()
        for a, b in pairs:
            decide(a, b)
        timed.append((time.perf_counter() - start) / len(pairs) * 1e6)
    return per_purchase, timed[0], timed[1]


def main(argv: list[str]) -> None:
    """Print the figures of both envs over a generated catalogue (1,000 products by default)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks webshop")
    parser.add_argument(
        "--resets", type=positive_int, default=300, help="seeded resets timed per env"
    )
    parser.add_argument(
        "--seconds", type=positive_float, default=1.0, help="time per step-rate figure"
    )
    parser.add_argument("--queries", type=positive_int, default=1000, help="search queries timed")
    parser.add_argument("--products", type=positive_int, default=PRODUCTS, help="catalogue size")
    args = parser.parse_args(argv)
    products = args.products
    with tempfile.TemporaryDirectory() as folder:
        write_shop_files(folder, seed=0, num_products=products)
        start = time.perf_counter()
        webshop = gym.make("mage/WebShop-v0", data_path=folder, split="all")
        loads = {"mage/WebShop-v0": time.perf_counter() - start}
    start = time.perf_counter()
    shopsim = gym.make("mage/ShopSim-v0", num_products=products)
    loads["mage/ShopSim-v0"] = time.perf_counter() - start
    print(f"{products} products in WebShop's file format.")
    print(f"{'env':18} {'load s':>7} {'reset ms':>9} {'random steps/s':>15}", end=" ")
    print(f"{'expert steps/s':>15}")
    for env_id, env in (("mage/WebShop-v0", webshop), ("mage/ShopSim-v0", shopsim)):
        ms = reset_ms(env, args.resets)
        rand = steps_per_second(env, args.seconds, expert=False)
        best = steps_per_second(env, args.seconds, expert=True)
        print(f"{env_id:18} {loads[env_id]:7.2f} {ms:9.3f} {rand:15,.0f} {best:15,.0f}")
    purchase, fast, plain = reward_us(webshop, args.queries)
    print(
        f"reward: {purchase:.0f} us a purchase; a match decision {fast:.1f} us with the fast "
        f"test, {plain:.1f} us all through difflib ({plain / fast:.1f}x)."
    )
    mean, p95, scan = search_ms(webshop, args.queries)
    print(
        f"search over {products} products, {args.queries} instruction queries: BM25 {mean:.2f} ms "
        f"mean, {p95:.2f} ms p95 (target < 5 ms); linear word-count scan {scan:.2f} ms."
    )

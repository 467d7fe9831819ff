r"""Benchmark: the action parser on typical and adversarial answers, against one linear pass.

Reference, in the same run: ``text.lower().split()`` over the same answer, a single linear pass
that any parser must at least make. The ratio shows whether parsing stays linear on answers built
to make a careless parser slow (tag floods, number runs, repeated move names); the typical answers
show the per-step cost an env pays. *full rules* times the same answer through every rule, without
the fast path that :func:`parse_action` takes for an answer that is exactly a legal move, bare or
in one tag (same result, by test); their ratio is what the fast path saves, measured in one run.

A second table times WebShop's own action reading (``parse_action``'s ``re.match(r"(.+)\[(.+)\]")``,
which the published rules apply) as :func:`~mage_envs.projections.webshop_action` reads it, against
that regex itself on the same bracket floods (the regex backtracks quadratically; same result, by
test).

Usage: ``python -m benchmarks parser [--repeats N]``
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable

from benchmarks import positive_int
from mage_envs.parsing import _full_parse, parse_action
from mage_envs.projections import webshop_action

KUHN = ["check", "bet"]
GRID = [f"({r}, {c})" for r in range(1, 20) for c in range(1, 20)]
ANSWERS = {
    "bare move": "bet",
    "tagged move": "<action>bet</action>",
    "sentence": "I hold the King, so I will bet.",
    "long reasoning + tag": "Let me think. " * 500 + "<action>check</action>",
    "<action> flood": "<action>" * 3_000,
    "unclosed <answer> flood": "<answer>x" * 3_000,
    "move names repeated": "bet check " * 2_000,
    "negations repeated": "bet no. " * 2_500,
    "number run": "1 " * 10_000,
    "open parens": "(" * 20_000,
}
BRACKET_FLOODS = {f"'[' x {n:,}": "[" * n for n in (1_000, 4_000, 16_000)}
BRACKET_FLOODS["'a[' + '[' x 16,000 + ']'"] = "a[" + "[" * 16_000 + "]"
WEBSHOP_PATTERN = re.compile(r"(.+)\[(.+)\]")


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """Return the best wall time of ``fn`` over ``repeats`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str]) -> None:
    """Print parse time, the reference time and their ratio per answer."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks parser")
    parser.add_argument(
        "--repeats", type=positive_int, default=20, help="timed calls (best counts)"
    )
    args = parser.parse_args(argv)
    print(
        f"{'answer':26} {'chars':>7} {'parse µs':>10} {'one pass µs':>12} {'ratio':>7}"
        f" {'full rules µs':>14} {'full/parse':>11}"
    )
    for name, text in ANSWERS.items():
        legal = GRID if name in ("number run", "open parens") else KUHN
        ours = best_time(
            lambda t=text, lg=legal: parse_action(t, lg, {"pass": "check"}), args.repeats
        )
        reference = best_time(lambda t=text: t.lower().split(), args.repeats)
        full = best_time(
            lambda t=text, lg=legal: _full_parse(t, lg, {"pass": "check"}), args.repeats
        )
        print(
            f"{name:26} {len(text):7,} {ours * 1e6:10.1f} {reference * 1e6:12.1f}"
            f" {ours / reference:7.1f} {full * 1e6:14.1f} {full / ours:11.1f}"
        )
    print_projection_table()


def print_projection_table() -> None:
    """Print WebShop's action reading: ours against its regex, on bracket floods."""
    print(f"\n{'webshop action':28} {'chars':>7} {'ours µs':>9} {'regex µs':>12} {'ratio':>9}")
    for name, text in BRACKET_FLOODS.items():
        ours = best_time(lambda t=text: webshop_action(t), 20)
        regex = best_time(lambda t=text: WEBSHOP_PATTERN.match(t), 1)
        print(f"{name:28} {len(text):7,} {ours * 1e6:9.1f} {regex * 1e6:12.1f} {regex / ours:9.0f}")

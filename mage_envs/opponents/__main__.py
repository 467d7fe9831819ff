"""``python -m mage_envs.opponents [--write PAGE | --check PAGE]``: the registry's tables.

The tables of ``docs/opponents.md`` (the opponents, the population presets) are generated from
the registry, never copied by hand: on the page each stands between ``<!-- generated: NAME -->``
and ``<!-- end generated -->``. Without options this prints them; ``--write PAGE`` rewrites
those blocks of the page, and ``--check PAGE`` exits 1, saying which is stale, if the page
differs from the registry (the docs tests run it).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from mage_envs.opponents.population import populations_markdown
from mage_envs.opponents.registry import opponents_markdown

TABLES = {"opponents": opponents_markdown, "presets": populations_markdown}
"""Block name -> function returning its table."""

_BLOCK = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(.*?)(<!-- end generated -->)", re.DOTALL)


def fill_tables(page: str) -> str:
    """Return ``page`` with each generated block holding its table as the registry makes it now.

    Raises:
        ValueError: If a block names no table of :data:`TABLES`.
    """

    def table(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in TABLES:
            raise ValueError(f"Unknown generated block {name!r}; tables: {', '.join(TABLES)}.")
        return f"{match.group(1)}{TABLES[name]()}\n{match.group(4)}"

    return _BLOCK.sub(table, page)


def main(argv: list[str] | None = None) -> int:
    """Print the tables, or write or check a page's generated blocks; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m mage_envs.opponents", description=__doc__)
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", metavar="PAGE", type=Path, help="rewrite the page's tables")
    action.add_argument("--check", metavar="PAGE", type=Path, help="exit 1 if they are stale")
    args = parser.parse_args(argv)
    page = args.write or args.check
    if page is None:
        print("\n\n".join(make() for make in TABLES.values()))
        return 0
    text = page.read_text()
    filled = fill_tables(text)
    if args.write:
        page.write_text(filled)
        return 0
    if filled != text:
        print(
            f"{page}: its opponent tables differ from the registry; regenerate them with "
            f"python -m mage_envs.opponents --write {page}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

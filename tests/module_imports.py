"""The modules a source file imports, read from its syntax tree (for the layering tests)."""

import ast
from collections.abc import Iterator
from pathlib import Path


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line, module)`` of each ``import`` and ``from ... import`` in ``path``, nested too.

    Args:
        path: a Python source file.
    """
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module

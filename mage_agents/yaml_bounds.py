r"""YAML read with bounds: no "billion laughs", no nesting deep enough to exhaust the stack.

``yaml.safe_load`` builds no arbitrary objects, but it keeps two doors open to a small file: an
alias repeats its anchor without copying it, so ten nested levels of ten aliases make a
structure of 10^10 nodes from a 1 KB file, which the first copy, hash or ``json.dumps`` of it
expands (minutes, gigabytes); and each level of nesting costs the composer Python frames, so a
file nested 50,000 levels deep ends in a ``RecursionError``. :func:`load_yaml` reads as
``safe_load`` does, and refuses, with a :class:`YAMLBoundError` naming the line, a document
nested deeper than :data:`MAX_DEPTH` or whose nodes, aliases expanded, number more than
:data:`MAX_NODES` (an alias inside its own anchor, an endless structure, too).

Example:
    >>> load_yaml("a: &x [1, 2]\nb: *x")
    {'a': [1, 2], 'b': [1, 2]}
    >>> try:
    ...     load_yaml("[" * 200 + "]" * 200)
    ... except YAMLBoundError as error:
    ...     print(error)
    nested deeper than 100 levels (line 1, column 101)
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

__all__ = ["MAX_DEPTH", "MAX_NODES", "YAMLBoundError", "load_yaml", "yaml_problem"]

MAX_DEPTH = 100
"""The deepest nesting read (a config nests a few levels)."""

MAX_NODES = 100_000
"""The most nodes a document may hold with its aliases expanded (a config holds hundreds)."""


class YAMLBoundError(yaml.MarkedYAMLError):
    """A YAML document beyond :data:`MAX_DEPTH` or :data:`MAX_NODES`; ``str`` is one line."""

    def __str__(self) -> str:
        return yaml_problem(self)


def load_yaml(text: str) -> Any:
    """Read one YAML document as ``yaml.safe_load`` does, within the bounds.

    Raises:
        YAMLBoundError: The document nests too deeply or expands to too many nodes.
        yaml.YAMLError: It is not valid YAML.
    """
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def yaml_problem(error: yaml.YAMLError) -> str:
    """What is wrong with a YAML text, in one line: the problem and where.

    Example:
        >>> try:
        ...     load_yaml("a: [1")
        ... except yaml.YAMLError as error:
        ...     print(yaml_problem(error))
        expected ',' or ']', but got '<stream end>' (line 1, column 6)
    """
    if isinstance(error, yaml.MarkedYAMLError) and error.problem:
        mark = error.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return f"{error.problem}{where}"
    return " ".join(str(error).split())


class _BoundedLoader(yaml.SafeLoader):
    """``SafeLoader`` counting depth and expanded nodes as it composes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[int, int] = {}  # id(node) -> its node count, aliases expanded

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            anchored = self.anchors.get(event.anchor)
            if anchored is not None and id(anchored) not in self._sizes:
                raise self._error("an alias inside its own anchor (an endless structure)", event)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise self._error(f"nested deeper than {MAX_DEPTH} levels", event)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if id(node) not in self._sizes:
            self._sizes[id(node)] = 1 + sum(self._sizes[id(c)] for c in _children(node))
        if self._sizes[id(node)] > MAX_NODES:
            raise self._error(
                f'more than {MAX_NODES:,} values once its aliases are expanded (a "billion '
                'laughs"?)',
                event,
            )
        return node

    @staticmethod
    def _error(problem: str, event: Any) -> YAMLBoundError:
        return YAMLBoundError(problem=problem, problem_mark=event.start_mark)


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [child for pair in node.value for child in pair]
    return []

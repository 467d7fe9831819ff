"""Markdown tables and sections of a docs page, for the tests that compare a page with a run."""

import re


def tables(markdown):
    """Each Markdown table of ``markdown`` (its lines, joined), with the line it starts at."""
    found, lines = [], markdown.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("|") and (number == 0 or not lines[number - 1].startswith("|")):
            end = number
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            found.append((number, "\n".join(lines[number:end])))
    return found


def section_before(lines, number):
    """The page's text from the heading above line ``number`` down to it (a ``#`` comment in
    a fenced code block is no heading)."""
    start, fenced = 0, False
    for i in range(number):
        fenced ^= lines[i].startswith("```")
        if not fenced and re.match(r"#{1,4} ", lines[i]):
            start = i
    return "\n".join(lines[start:number])

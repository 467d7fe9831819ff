"""The Markdown tables of a docs page, for the tests that compare a page with a run."""


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

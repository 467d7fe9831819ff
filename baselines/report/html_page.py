"""The static report page: one HTML file with its data, scripts and plots inside.

The page (``baselines/report/page/``: the HTML skeleton, its style and a plain script, no library)
reads one JSON value embedded in it and draws sortable tables, the plots and a trial browser.
Nothing is fetched: no server, no network (its Content-Security-Policy forbids both), so it
opens from disk in any browser and can be mailed as it is. A trial's transcript travels as the
gzip member of ``transcripts.jsonl.gz`` it was stored as (base64), and the browser inflates it
when the trial is opened (``DecompressionStream``), so a page costs about what its transcripts do.

The data (:func:`render_page`):

- ``title``, ``notes``: the heading and lines under it; ``links``: ``{"title", "href"}`` each,
  the folder's files (relative links);
- ``tables``: ``{"title", "columns", "rows", "note", "text_columns"}`` each, cells as text;
- ``images``: ``{"title", "src", "wide"}`` each (``src`` a ``data:`` URI, :func:`png_data_uri`;
  ``wide``: the whole width);
- ``trials``: ``{"columns", "filters", "rows"}``, each row ``{"id", "cells", "filters"}``;
- ``transcripts``: trial id -> base64 gzip member; ``transcripts_note``, ``no_transcript_note``.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

from mage_agents.atomic_file import write_atomic

__all__ = ["render_page", "write_page", "png_data_uri", "embedded_data", "PAGE_DIR"]

PAGE_DIR = Path(__file__).parent / "page"
"""The page's skeleton, style and script."""

_MARKER = re.compile(r"__(TITLE|STYLE|SCRIPT|DATA)__")
_SAFE = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}


def _json_for_script(data: Any) -> str:
    r"""JSON that cannot end the ``<script>`` element it sits in, whatever text it carries.

    Example:
        >>> _json_for_script({"answer": "</script><b>"})
        '{"answer": "\\u003c/script\\u003e\\u003cb\\u003e"}'
    """
    return json.dumps(data, allow_nan=False).translate(_SAFE)  # ASCII: any text is safe


def render_page(data: dict[str, Any]) -> str:
    """Return the page's HTML with ``data`` embedded (see the module's docstring for its keys)."""
    html = (PAGE_DIR / "page.html").read_text(encoding="utf-8")
    parts = {
        "__STYLE__": (PAGE_DIR / "page.css").read_text(encoding="utf-8"),
        "__SCRIPT__": (PAGE_DIR / "page.js").read_text(encoding="utf-8"),
        "__TITLE__": _escape(str(data.get("title", "Report"))),
        "__DATA__": _json_for_script(data),
    }
    # one pass over the skeleton: text put in is never read again for markers
    return _MARKER.sub(lambda found: parts[found.group(0)], html)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_page(path: str | Path, data: dict[str, Any]) -> Path:
    """Write the page to ``path`` at once (a reader never sees half a page); return the path."""
    return write_atomic(path, render_page(data))


def png_data_uri(png: bytes) -> str:
    """Return a PNG as a ``data:`` URI for the page's ``images``."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def embedded_data(html: str) -> dict[str, Any]:
    """Return the data a page carries (the inverse of :func:`render_page`; tests, tools).

    Example:
        >>> embedded_data(render_page({"title": "<t>", "tables": []}))["title"]
        '<t>'
    """
    start = html.index('<script id="mage-data" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start : html.index("</script>", start)])

"""Open a report page in headless Chromium: its DOM after the scripts ran, its console, a picture.

The checks of ``summary.html`` in a real browser (the browser test and ``python -m benchmarks
report``) use Chromium's own command line, nothing else: ``--dump-dom`` prints the DOM once the
page's scripts have run (``--virtual-time-budget`` lets the asynchronous ones finish first),
``--screenshot`` saves a PNG, and ``--enable-logging=stderr`` prints every console message as an
``INFO:CONSOLE`` line. The page writes nothing to the console, so any such line (an exception, a
refused fetch) is a fault. The profile is a fresh empty folder, and the network is off.
(``--dump-dom`` crashes on a DOM holding a lone UTF-16 surrogate, a Chromium fault; the report
page shows each as U+FFFD, so its DOM never holds one.)
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

__all__ = ["chromium", "BrowserPage", "open_page", "page_url"]

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # nothing on the network answers
    "--enable-logging=stderr",
    "--v=0",
)
_CONSOLE = re.compile(r"INFO:CONSOLE[^\]]*\] (.*)")
_LISTED = re.compile(r'<tr data-trial-id="([^"]*)"')


def chromium() -> str | None:
    """Return the Chromium executable on the PATH (Debian's ``chromium``), or ``None``."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def page_url(path: str | Path, trial_id: str | None = None) -> str:
    """The ``file://`` URL of a page, opening ``trial_id`` when given."""
    url = Path(path).resolve().as_uri()
    return url if trial_id is None else f"{url}#trial={quote(trial_id, safe='')}"


@dataclass
class BrowserPage:
    """What Chromium made of a page.

    Attributes:
        dom: The DOM after the scripts ran, as HTML.
        console: Every console message, one line each (the page writes none).
    """

    dom: str
    console: list[str]

    def listed_trials(self) -> list[str]:
        """The trial ids of the trial browser's rows, in order."""
        return [html.unescape(found) for found in _LISTED.findall(self.dom)]


def _run(
    executable: str, url: str, extra: list[str], timeout: float
) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="mage-chromium-") as profile:
        command = [executable, *FLAGS, f"--user-data-dir={profile}", *extra, url]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def open_page(
    url: str,
    screenshot: str | Path | None = None,
    window: tuple[int, int] = (1400, 1000),
    wait_ms: int = 5000,
    timeout: float = 120.0,
) -> BrowserPage:
    """Load ``url`` in headless Chromium; return its DOM and console (and save a screenshot).

    Raises:
        FileNotFoundError: Without Chromium on the PATH.
        RuntimeError: If Chromium fails (its exit code and last output lines say why).
    """
    executable = chromium()
    if executable is None:
        raise FileNotFoundError("Chromium is not installed (Debian: apt-get install chromium).")
    budget = f"--virtual-time-budget={wait_ms}"
    size = f"--window-size={window[0]},{window[1]}"  # the DOM's layout is laid out at that size
    dumped = _run(executable, url, [budget, size, "--dump-dom"], timeout)
    if dumped.returncode != 0:
        tail = "\n".join(dumped.stderr.splitlines()[-5:])
        raise RuntimeError(f"Chromium exited with {dumped.returncode}: {tail}")
    console = [m.group(1) for m in map(_CONSOLE.search, dumped.stderr.splitlines()) if m]
    if screenshot is not None:
        shot = _run(executable, url, [budget, size, f"--screenshot={screenshot}"], timeout)
        console += [m.group(1) for m in map(_CONSOLE.search, shot.stderr.splitlines()) if m]
        if shot.returncode != 0 or not Path(screenshot).is_file():
            raise RuntimeError(f"Chromium saved no screenshot (exit {shot.returncode}).")
    return BrowserPage(dumped.stdout, console)

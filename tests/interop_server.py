"""Start ``python -m baselines.run serve-env`` on 127.0.0.1 in a subprocess, for tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def served(*args: str, timeout_s: float = 120.0) -> Iterator[str]:
    """Run ``serve-env ARGS --port 0`` and yield its base URL; stop it afterwards."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "baselines.run", "serve-env", *args, "--port", "0"]
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = process.stdout.readline()
        if not line.startswith("serving "):
            process.kill()
            raise RuntimeError(f"serve-env did not start: {line}{process.stderr.read()}")
        yield line.split(" on ")[-1].strip()
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log = process.stderr.read()
        process.stdout.close()
        process.stderr.close()
    # whatever the clients did, the server said nothing but its own words
    assert "Traceback" not in log, log

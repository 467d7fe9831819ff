"""Start ``transformers serve`` (transformers' own OpenAI-compatible server) on a local model.

A real server, in its own process, on 127.0.0.1: what the tests drive the runner's
``--agent openai:`` against, and what ``python -m benchmarks serve`` measures. It needs the
``serve`` extra (FastAPI and uvicorn: ``pip install 'mage-metarl[serve]'``); nothing is
downloaded (``HF_HUB_OFFLINE=1``): the model is a local folder.

The server is pinned to the folder it was started with and answers only requests whose
``model`` is that folder's path, as given (:attr:`TransformersServer.model`). Without continuous
batching it generates one request at a time (with ``continuous_batching=True`` it batches, with
paged attention, on any device). On Linux the server ends with the process that started it, even
one killed without cleaning up (more exactly, with the thread that called :meth:`start`).

A sketch (it needs a model folder, and starts in seconds)::

    with TransformersServer("/path/to/model") as server:
        backend = OpenAIChatBackend(server.base_url, server.model)
"""

from __future__ import annotations

import ctypes
import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["TransformersServer", "serve_available"]

PR_SET_PDEATHSIG = 1
"""Linux's ``prctl`` option: the signal a process gets when its parent dies."""


def serve_available() -> bool:
    """Whether ``transformers serve`` can run here (FastAPI, uvicorn and pydantic installed)."""
    try:
        from transformers.utils.import_utils import is_serve_available
    except ImportError:
        return False
    return bool(is_serve_available())


def _ends_with_parent() -> Callable[[], None] | None:
    """What the child runs before the server: ask for SIGTERM when the parent dies (Linux).

    The server runs in its own session (so that :meth:`TransformersServer.stop` ends it and any
    worker it starts), so nothing else ends it when the parent dies without cleaning up: a
    ``kill -9``, or the SIGTERM of a CI timeout, which runs no ``finally``. Everything is looked
    up here, in the parent: the child only calls it (no import between fork and exec).
    """
    if not sys.platform.startswith("linux"):
        return None  # stop() and the context manager remain
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent, getppid, leave = os.getpid(), os.getppid, os._exit

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if getppid() != parent:  # the parent died before the signal was asked for
            leave(1)

    return arm


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class TransformersServer:
    """``transformers serve MODEL`` in a child process; use it as a context manager.

    Args:
        model: The local model folder (saved with ``save_pretrained``).
        port: The port (default: a free one).
        continuous_batching: Batch concurrent requests (``--continuous-batching``).
        threads: Torch threads of the server (``OMP_NUM_THREADS``).
        device: The server's ``--device``: ``auto`` (a GPU when there is one), ``cpu``,
            ``cuda:0``, ...
        hub_kernels: Let the server swap layers for kernels fetched from the Hub (off:
            ``USE_HUB_KERNELS=0``, so a machine without network serves the model as it is).
        start_timeout_s: How long to wait for the server to answer ``/health``.
        log: Where the server's output goes (default: discarded).
    """

    def __init__(
        self,
        model: str | Path,
        port: int | None = None,
        continuous_batching: bool = False,
        threads: int = 1,
        start_timeout_s: float = 120.0,
        log: Path | None = None,
        device: str = "auto",
        hub_kernels: bool = False,
    ) -> None:
        self.model = str(model)
        self.port = port or _free_port()
        self.continuous_batching = continuous_batching
        self.threads = threads
        self.device, self.hub_kernels = device, hub_kernels
        self.start_timeout_s = start_timeout_s
        self.log = log
        self.startup_s: float | None = None
        """Seconds from starting the process to the first healthy answer."""
        self._process: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        """The server process's id (``None`` when it is not running)."""
        return None if self._process is None else self._process.pid

    @property
    def base_url(self) -> str:
        """The API root to give a client: ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> TransformersServer:
        """Start the server and wait until it is healthy.

        Raises:
            RuntimeError: If the extra is missing, the process exits or it is not healthy in time.
        """
        if not serve_available():
            raise RuntimeError(
                "transformers serve needs the serve extra: pip install 'mage-metarl[serve]'."
            )
        command = [sys.executable, "-m", "transformers.cli.transformers", "serve", self.model]
        command += ["--host", "127.0.0.1", "--port", str(self.port), "--device", self.device]
        command += ["--log-level", "warning"]
        if self.continuous_batching:
            command.append("--continuous-batching")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": str(self.threads)}
        env["USE_HUB_KERNELS"] = "1" if self.hub_kernels else "0"
        output = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115
        start = time.perf_counter()
        self._process = subprocess.Popen(
            command,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_ends_with_parent(),
        )
        if self.log:
            output.close()  # the child keeps its own handle
        try:
            self._wait_healthy(start)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.perf_counter() - start
        return self

    def _wait_healthy(self, start: float) -> None:
        while time.perf_counter() - start < self.start_timeout_s:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"transformers serve exited with code {self._process.returncode} "
                    f"before answering (model {self.model})."
                )
            if self._healthy():
                return
            time.sleep(0.2)
        raise RuntimeError(f"transformers serve was not healthy within {self.start_timeout_s} s.")

    def _healthy(self) -> bool:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
        try:
            connection.request("GET", "/health")
            return connection.getresponse().status == 200
        except OSError:
            return False
        finally:
            connection.close()

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)  # its own session: any worker it started too
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def __enter__(self) -> TransformersServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

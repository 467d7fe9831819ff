"""``python -m baselines.run serve-env``: serve env ids and trials to other trainers over OpenEnv.

Starts OpenEnv's server (FastAPI, one WebSocket session per client) on 127.0.0.1 and prints one
line, ``serving ENV_IDS on http://HOST:PORT``, once it listens (``--port 0`` picks a free port).
A client connects with OpenEnv's client classes (``mage_agents.interop.MageTrialClient``) or TRL's
``environment_factory`` (``mage_agents.interop.openenv_trial_environment``); docs/interop.md.

Settings given here (``--set KEY=VALUE``, any keyword of ``mage_envs.make_trial``) are the
defaults of every reset; a client may pick another of the served ids and change a few settings
(``mage_agents.interop.CLIENT_SETTINGS``). Needs the ``openenv`` extra.
"""

from __future__ import annotations

import argparse
import socket
from typing import Any

import yaml

from baselines.errors import EXIT_OK, EXIT_SETTINGS, print_error, print_warning
from baselines.run_flags import add_import_option

__all__ = ["add_arguments", "command", "describe", "parse_settings"]

MAX_MESSAGE_BYTES = 1 << 20
"""The largest WebSocket message the server reads; a bigger one closes that session only."""


def describe(parser: argparse.ArgumentParser) -> None:
    """Give ``serve-env``'s parser this module's words as its ``--help`` page."""
    parser.description = __doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``serve-env``'s options to ``parser``."""
    add = parser.add_argument
    add("env_ids", nargs="+", metavar="ENV_ID", help="env ids to serve (the first is the default)")
    add(
        "--set",
        action="append",
        default=[],
        dest="settings",
        metavar="KEY=VALUE",
        help="a setting of every trial (repeatable; VALUE is read as YAML): num_episodes=3, "
        "opponent=aggressive, same_task=true, ...",
    )
    add("--plain", action="store_true", help="serve the envs as they are, not wrapped in trials")
    add("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    add("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    add("--max-sessions", type=int, default=64, help="most sessions at once (default 64)")
    add(
        "--session-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="close sessions idle this long (default 600)",
    )
    add_import_option(add)


def parse_settings(pairs: list[str]) -> dict[str, Any]:
    """Read ``KEY=VALUE`` pairs (values as YAML); raise ValueError on a malformed one.

    Example:
        >>> parse_settings(["num_episodes=3", "opponent=aggressive", "same_task=true"])
        {'num_episodes': 3, 'opponent': 'aggressive', 'same_task': True}
    """
    settings = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set {pair!r}: write KEY=VALUE, e.g. --set num_episodes=3.")
        settings[key.strip()] = yaml.safe_load(value) if value else ""
    return settings


def command(args: argparse.Namespace, argv: list[str]) -> int:
    """Serve until interrupted; return the exit code."""
    try:
        from mage_agents.interop import TrialSpec, serve_app
    except ImportError as error:
        print_error(
            f'serve-env needs the openenv extra: pip install "mage-metarl[openenv]" ({error})'
        )
        return EXIT_SETTINGS
    import uvicorn

    try:
        if args.max_sessions < 1:
            raise ValueError("--max-sessions must be at least 1.")
        spec = TrialSpec(args.env_ids[0], parse_settings(args.settings), args.plain)
        app = serve_app(spec, tuple(args.env_ids[1:]), args.max_sessions, args.session_timeout)
        listener = socket.create_server((args.host, args.port))
    except (ValueError, yaml.YAMLError) as error:
        print_error(str(error))
        return EXIT_SETTINGS
    except OSError as error:
        print_error(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}")
        return EXIT_SETTINGS
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print_warning(f"serving on {args.host}: reachable beyond this machine, without auth.")
    host, port = listener.getsockname()[:2]
    print(f"serving {', '.join(args.env_ids)} on http://{host}:{port}", flush=True)
    config = uvicorn.Config(app, ws_max_size=MAX_MESSAGE_BYTES, log_level="warning")
    try:
        uvicorn.Server(config).run(sockets=[listener])
    except KeyboardInterrupt:
        pass
    return EXIT_OK

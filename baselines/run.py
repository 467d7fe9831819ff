"""``python -m baselines.run``: evaluate agents on trials of the suite's envs and report results.

With no arguments it runs the embedded default: a random-legal agent plays 20 trials of 3 episodes
on every env of ``mage_envs.ENV_IDS`` against the env's default opponent, and prints the table (a
few seconds). The ALFWorld ids, registered but slower, play when named with ``--env``.

Every setting comes from flags or from ``--config FILE.yaml`` (flags win); the ready configs of the
published settings are in ``baselines/configs/``. With ``--out DIR`` the run writes
``results.jsonl`` (one line per finished trial; rerunning the same command resumes and never
repeats a trial), ``transcripts.jsonl.gz`` (what the agent read and wrote, per trial),
``summary.md``, ``summary.csv``, plots and ``summary.html`` (tables, plots and every trial's
transcript, to open in a browser).

It is a set of commands, listed at the end of ``--help``: ``run`` is the default (so
``python -m baselines.run --env ...`` is ``run``), ``train`` trains a model on trials
(``train --help``, docs/training.md), ``arena`` plays agents against each other and rates them
(docs/arena.md), ``bounds`` prints the exact bounds of the opponents,
``report`` rebuilds the page of a run or training folder, ``serve-env`` serves env ids and
trials to other trainers over OpenEnv (docs/interop.md). Every command takes
``--import MODULE``: a plug-in of yours whose import registers envs, opponents, memory modes,
strategies or estimators (docs/architecture.md). Errors are one line on stderr; exit codes:
0 done, 2 bad settings, 3 trials the backend failed, 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import shlex
import sys
import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from baselines.errors import (
    EXIT_FAILED_TRIALS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SETTINGS,
    SETTINGS_ERRORS,
    os_error_words,
    print_error,
    settings_error,
)
from baselines.evaluate.run_agents import run
from baselines.evaluate.run_report import print_failures, report
from baselines.folder_lock import FolderLock
from baselines.run_flags import add_arguments, config_keys
from baselines.settings import RunSettings, merge_settings
from baselines.threads import use_threads
from mage_envs.plugins import load_plugins

__all__ = [
    "COMMANDS",
    "add_arguments",
    "command",
    "main",
    "build_parser",
    "build_cli",
    "load_settings",
    "run",
    "RunSettings",
    "EXIT_FAILED_TRIALS",
    "EXIT_INTERRUPTED",
    "EXIT_SETTINGS",
]

PROG = "python -m baselines.run"


@dataclass(frozen=True)
class Command:
    """A subcommand: the module that adds its options and runs it, and its line of help.

    The module has ``add_arguments(parser)`` and ``command(args, argv) -> exit code``; it is
    imported only when its command is the one asked for (``train``'s loads torch and TRL).
    ``module=None`` is this module (``run``).
    """

    module: str | None
    help: str

    def load(self) -> Any:
        """Import the command's module."""
        return (
            sys.modules[__name__] if self.module is None else importlib.import_module(self.module)
        )


COMMANDS: dict[str, Command] = {
    "run": Command(None, "evaluate agents on trials and report (the default)"),
    "train": Command("baselines.train.command", "train a model on trials (MetaRLTrainer on TRL)"),
    "arena": Command(
        "baselines.arena.command", "play agents against agents in both seats, and rate them"
    ),
    "bounds": Command("baselines.bounds.command", "print the exact bounds of the opponents"),
    "report": Command("baselines.report.command", "rebuild the page of a run or training folder"),
    "serve-env": Command("baselines.serve.command", "serve env ids and trials over OpenEnv"),
}
"""The subcommands, by name, in the order ``--help`` lists them (one line adds one)."""


def build_parser(cls: type[RunSettings] = RunSettings) -> argparse.ArgumentParser:
    """Return the parser of ``run``, the default command (every option documented in --help).

    Args:
        cls: The settings whose fields are its flags (a subclass of :class:`RunSettings` adds
            its own).
    """
    parser = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    describe(parser, cls)
    add_arguments(parser, cls)
    return parser


def commands_help() -> str:
    """The commands' lines of ``--help``, from :data:`COMMANDS` (a command added is listed)."""
    width = max(len(name) for name in COMMANDS)
    lines = [f"  {name:<{width}} {command.help}" for name, command in COMMANDS.items()]
    return f"commands ({PROG} COMMAND --help for each):\n" + "\n".join(lines)


def build_cli(name: str) -> argparse.ArgumentParser:
    """Return the command line's parser, with the options of command ``name`` (only its own).

    Every command is a subparser (``--help`` lists them); the options of the others are not
    built, since a command's module may be slow to import.
    """
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for key, command in COMMANDS.items():
        sub = commands.add_parser(
            key,
            help=command.help,
            prog=PROG if key == "run" else f"{PROG} {key}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if key == name:
            module = command.load()
            describe = getattr(module, "describe", None)
            if callable(describe):
                describe(sub)
            module.add_arguments(sub)
    return parser


def describe(parser: argparse.ArgumentParser, cls: type[RunSettings] = RunSettings) -> None:
    """Give ``run``'s parser the page its ``--help`` shows: these words, the keys, the commands."""
    parser.description = __doc__
    parser.epilog = f"{config_keys(cls)}\n\n{commands_help()}"


def _command_name(argv: list[str]) -> str:
    """The command ``argv`` asks for: its first word if it names one, else ``run``."""
    return argv[0] if argv and argv[0] in COMMANDS else "run"


def _load_plugins(argv: list[str]) -> None:
    """Import the ``--import`` modules before any parser reads a registry for its choices."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--import", action="append", dest="imports", default=[])
    load_plugins(early.parse_known_args(argv)[0].imports)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code (see :mod:`baselines.errors`)."""
    given = sys.argv[1:] if argv is None else list(argv)
    name = _command_name(given)
    words = given if given[:1] == [name] else [name, *given]
    try:
        _load_plugins(words)
    except ValueError as error:
        print_error(str(error))
        return EXIT_SETTINGS
    args = build_cli(name).parse_args(words)
    return COMMANDS[name].load().command(args, given)


def load_settings(argv: list[str] | None, cls: type[RunSettings] = RunSettings) -> RunSettings:
    """Parse ``run``'s ``argv`` into one checked :class:`RunSettings` (or ``cls``)."""
    return merge_settings(build_parser(cls).parse_args(argv), cls)


def command(args: argparse.Namespace, argv: list[str]) -> int:
    """Run ``run`` with its parsed ``args`` (``argv``: the command line, for the resume line)."""
    console = Console()
    if not console.is_terminal:  # pipes and captured output: keep the table's columns whole
        console = Console(width=200)
    try:
        settings = merge_settings(args)
        use_threads(settings.threads)
        with _locked(settings.out):
            return _run_and_report(settings, console)
    except KeyboardInterrupt:
        # one line, like the errors: a command cut by rich's wraps would not paste back whole
        console.print(_interrupted_line(argv), highlight=False, soft_wrap=True)
        return EXIT_INTERRUPTED
    except SETTINGS_ERRORS as error:
        return settings_error(error)


def _locked(out: Any) -> contextlib.AbstractContextManager:
    return FolderLock(out, "run") if out else contextlib.nullcontext()


def _interrupted_line(argv: list[str]) -> str:
    again = f"{PROG} " + " ".join(shlex.quote(a) for a in argv)
    return (
        "Interrupted: every finished trial is saved; run the same command again to resume: "
        f"{again.strip()}"
    )


def _run_and_report(settings: RunSettings, console: Console) -> int:
    start = time.perf_counter()
    outcome = run(settings, console)
    if not outcome.records:
        print_failures(outcome, console)
        print_error("no trial could be played (see the messages above).")
        return EXIT_FAILED_TRIALS if outcome.failed else EXIT_SETTINGS
    try:
        report(settings, outcome, console)
    except OSError as error:  # a read-only or full disk: the results themselves are safe
        print_error(
            f"the report could not be written to {settings.out} ({os_error_words(error)}); "
            "the finished trials are saved in results.jsonl: free the space or fix the "
            "permissions, then run the same command again to write the report."
        )
        return EXIT_SETTINGS
    console.print(f"{len(outcome.records)} trials in {time.perf_counter() - start:.1f} s.")
    return EXIT_FAILED_TRIALS if outcome.failed or outcome.unplayed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

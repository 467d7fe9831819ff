"""What the command line says when it stops: exit codes, error lines, file problems in words.

Every error is one line on stderr, ``error: <what was wrong and what to do>``, whatever its
length (a path, a trial id): the terminal wraps it, not rich. So are the warnings a user must see
(a pair skipped, trials the backend failed). Results, tables and progress go to stdout, so
``python -m baselines.run ... > table.txt`` keeps the errors in sight. The exit codes (documented
in docs/runner.md):

- ``0``: done;
- ``2``: bad settings or input (argparse's code for a bad flag, too): nothing was played;
- ``3``: some planned trials could not be played (backend faults); the others are saved;
- ``130``: interrupted (Ctrl-C); every finished trial is saved.
"""

from __future__ import annotations

import errno
from pathlib import Path

import yaml
from rich.console import Console
from rich.markup import escape

__all__ = [
    "SETTINGS_ERRORS",
    "settings_error",
    "EXIT_OK",
    "EXIT_SETTINGS",
    "EXIT_FAILED_TRIALS",
    "EXIT_INTERRUPTED",
    "print_error",
    "print_warning",
    "os_error_words",
    "folder_error",
]

EXIT_OK = 0
"""The command did what it was asked."""

EXIT_SETTINGS = 2
"""Bad settings or input, with the reason on stderr; nothing was played or trained."""

EXIT_FAILED_TRIALS = 3
"""Some planned trials could not be played (backend faults); the rerun plays them."""

EXIT_INTERRUPTED = 130
"""Interrupted by Ctrl-C (the shell's convention: 128 + SIGINT)."""


SETTINGS_ERRORS = (ValueError, TypeError, OSError, yaml.YAMLError)
"""What bad settings or input raise: each is answered with one line and ``EXIT_SETTINGS``."""


def settings_error(error: BaseException) -> int:
    """Print the line of a settings error (a file problem in words); return ``EXIT_SETTINGS``."""
    print_error(os_error_words(error) if isinstance(error, OSError) else str(error))
    return EXIT_SETTINGS


def print_error(message: str) -> None:
    """Print ``error: message`` on stderr, as one line (red on a terminal)."""
    console = Console(stderr=True)
    console.print(f"[red]error:[/] {message}", markup=True, highlight=False, soft_wrap=True)


def print_warning(message: str, style: str = "yellow") -> None:
    """Print one line a user must see even with stdout in a file (a skipped pair, failures)."""
    console = Console(stderr=True)
    console.print(f"[{style}]{escape(message)}[/]", markup=True, highlight=False, soft_wrap=True)


def os_error_words(error: OSError) -> str:
    """What a failed file operation means, in words (no bare ``[Errno N]``).

    Example:
        >>> os_error_words(FileNotFoundError(2, "No such file or directory", "runs/x.yaml"))
        'runs/x.yaml does not exist'
    """
    name = error.filename
    where = str(name) if name is not None else "the file"
    words = {
        errno.ENOENT: f"{where} does not exist",
        errno.EEXIST: f"{where} is a file, where a folder should be",
        errno.ENOTDIR: f"a file is in the way: {where} is not under a folder",
        errno.EISDIR: f"{where} is a folder, where a file should be",
        errno.EACCES: f"no permission to write or read {where}",
        errno.EPERM: f"no permission to write or read {where}",
        errno.ENOSPC: f"the disk is full (writing {where})",
        errno.EROFS: f"{where} is on a read-only file system",
    }
    return words.get(error.errno, f"{where}: {error.strerror or error}")


def folder_error(flag: str, folder: Path | str, error: OSError) -> ValueError:
    """The error of an output folder that cannot be made or written, naming its flag.

    Example:
        >>> print(folder_error("--out", "r/x", NotADirectoryError(20, "Not a directory", "r/x")))
        --out r/x: a file is in the way: r/x is not under a folder; give a folder that can be made.
    """
    return ValueError(f"{flag} {folder}: {os_error_words(error)}; give a folder that can be made.")

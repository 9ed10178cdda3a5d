"""The ``ksched`` command line.

Every error is one line on standard error, ``ksched: ...``, with exit status 2: usage errors
(argparse's included), bad option values, missing or unreadable files, invalid objects;
each of ksched's warnings is one line too, ``ksched: warning: ...``.
Standard input (``-``) is read once. Everything a command needs is checked before its work
starts (option values, empty names and comma-list items, output paths, the plot's matplotlib),
and output files are written only once the command has succeeded, each through a temporary
file renamed over the target.

The commands live in :mod:`ksched.cli.commands` (scheduling) and :mod:`ksched.cli.planning`
(capacity planning); :mod:`ksched.cli.common` holds what they share.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ksched.cli import cluster_capacity, commands, perf, planning, sweep
from ksched.cli.common import Parser, UsageError, with_live_cluster
from ksched.errors import KschedError, KschedWarning

__all__ = ["UsageError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``ksched`` parser: one subcommand per command module's ``add_parsers``."""
    parser = Parser(prog="ksched", description=(
        "What kube-scheduler v1.35 would do with your pods, fast."))
    sub = parser.add_subparsers(dest="command", required=True)
    commands.add_parsers(sub)
    planning.add_parsers(sub)
    cluster_capacity.add_parser(sub)
    sweep.add_parsers(sub)
    perf.add_parsers(sub)
    return parser


def _one_line(message: str) -> str:
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def _os_error(exc: OSError) -> str:
    """``PATH: no such file or directory``, ``PATH: is a directory``, ..."""
    if exc.filename is None:  # raised with its own message (ksched.io's missing paths)
        return str(exc)
    return f"{exc.filename}: {(exc.strerror or str(exc)).lower()}"


def _show_warning(show_other: Callable[..., None], message: Warning | str,
                  category: type[Warning], filename: str, lineno: int, file: Any = None,
                  line: str | None = None) -> None:
    """ksched's warnings as one line, ``ksched: warning: <message>``; others as
    ``show_other`` (the printer in place before) shows them."""
    if issubclass(category, KschedWarning):
        print(f"ksched: warning: {_one_line(str(message))}", file=sys.stderr)
    else:
        show_other(message, category, filename, lineno, file, line)


def main(argv: Sequence[str] | None = None) -> int:
    with warnings.catch_warnings(), _notes_on_stderr():
        # catch_warnings puts the printer in place before back afterwards
        warnings.showwarning = functools.partial(_show_warning, warnings.showwarning)
        return _main(argv)


@contextlib.contextmanager
def _notes_on_stderr() -> Iterator[None]:
    """The ``ksched`` logger's notes (INFO and up: e.g. that a first run is compiling its
    kernels) as ``ksched: <note>`` lines on standard error, for the command's duration."""
    logger = logging.getLogger("ksched")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("ksched: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _main(argv: Sequence[str] | None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(
            with_live_cluster(parser, sys.argv[1:] if argv is None else argv))
        return args.func(args)
    except (KschedError, KschedWarning) as exc:  # a warning too, under ``-W error``
        message = str(exc)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):  # the reader went away (``ksched ... | head``)
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps Python's exit flush quiet
            return 0
        if exc.filename is None and not isinstance(exc, FileNotFoundError):
            raise  # not about a path the user gave: a bug to see in full
        message = _os_error(exc)
    except KeyboardInterrupt:  # Ctrl-C: stop quietly, as a shell expects
        return 130
    print(f"ksched: {_one_line(message)}", file=sys.stderr)
    return 2

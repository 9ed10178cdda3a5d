"""The ``ksched`` command line.

Every error is one line on standard error, ``ksched: ...``, with exit status 2: usage errors
(argparse's included), bad option values, missing or unreadable files, invalid objects.
Standard input (``-``) is read once. Output files are written only once the command has
succeeded, each through a temporary file renamed over the target.

The commands live in :mod:`ksched.cli.commands` (scheduling) and :mod:`ksched.cli.planning`
(capacity planning); :mod:`ksched.cli.common` holds what they share.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ksched.cli import commands, planning, sweep
from ksched.cli.common import Parser, UsageError, with_live_cluster
from ksched.errors import KschedError

__all__ = ["UsageError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``ksched`` parser: one subcommand per command module's ``add_parsers``."""
    parser = Parser(prog="ksched", description=(
        "What kube-scheduler v1.35 would do with your pods, fast."))
    sub = parser.add_subparsers(dest="command", required=True)
    commands.add_parsers(sub)
    planning.add_parsers(sub)
    sweep.add_parsers(sub)
    return parser


def _one_line(message: str) -> str:
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def _os_error(exc: OSError) -> str:
    """``PATH: no such file or directory``, ``PATH: is a directory``, ..."""
    if exc.filename is None:  # raised with its own message (ksched.io's missing paths)
        return str(exc)
    return f"{exc.filename}: {(exc.strerror or str(exc)).lower()}"


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(
            with_live_cluster(parser, sys.argv[1:] if argv is None else argv))
        return args.func(args)
    except KschedError as exc:
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

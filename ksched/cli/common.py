"""What every ``ksched`` command shares: option value types, the input sources (read once;
standard input at most once; ``kube:`` for a live cluster), the scheduler configuration, and
output files written whole or not at all."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import math
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from ksched.errors import KschedError
from ksched.files import written_whole
from ksched.limits import MAX_NODES, MAX_PODS, MAX_SCALE  # noqa: F401 (re-exported)

#: The arguments that name standard input.
STDIN = "-"

#: The CLUSTER that stands for the live cluster of ``--kubeconfig`` / ``--context``.
LIVE = "kube:"

#: The commands that read a CLUSTER (and so take ``--kubeconfig`` / ``--context``).
LIVE_COMMANDS = ("schedule", "explain", "simulate", "capacity", "headroom", "plan",
                 "cluster-capacity")
CONFIG_HELP = "a KubeSchedulerConfiguration file (YAML or JSON)"
SOURCE_HELP = "JSON/YAML file, folder of them, or - for standard input"


class UsageError(KschedError):
    """A bad command line: an unknown option, a bad value, a path that cannot be used."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """argparse prints the usage and the message on two lines; ours is one line."""
        raise UsageError(message)

# ---------------------------------------------------------------------------- option values


def integer(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: a whole number in ``[low, high]``."""
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            bound = f"from {low} to {high:,}" if high is not None else f">= {low}"
            raise argparse.ArgumentTypeError(f"must be an integer {bound}, got {text!r}")
        return value
    return parse


def number(low: float, *, above: bool = False, high: float | None = None
            ) -> Callable[[str], float]:
    """An argparse ``type``: a finite number ``>= low`` (``> low`` with ``above``) and
    ``<= high``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < low or (above and value == low) \
                or (high is not None and value > high):
            bound = f"{'>' if above else '>='} {low:g}" + (f" and <= {high:g}" if high else "")
            raise argparse.ArgumentTypeError(f"must be a finite number {bound}, got {text!r}")
        return value
    return parse


SEED = integer(0)

PERCENTAGE = integer(0, 100)


def nonempty(what: str) -> Callable[[str], str]:
    """An argparse ``type``: any text but the empty one, which would silently stand for
    "not given" (or, as a path, for the current folder); ``what`` names what it holds."""
    def parse(value: str) -> str:
        if not value:
            raise argparse.ArgumentTypeError(f"expected {what}, got ''")
        return value
    return parse


#: An argparse ``type`` for file and folder arguments.
PATH = nonempty("a file or folder name")


def comma_list(value: str, what: str = "names") -> list[str]:
    """An argparse ``type``: ``a,b,c`` as a list of non-empty ``what``; an empty list or an
    empty item (``a,,b``, ``a,``) is refused."""
    items = [item.strip() for item in value.split(",")]
    if not all(items):
        problem = " (an empty item)" if len(items) > 1 else ""
        raise argparse.ArgumentTypeError(f"expected comma-separated {what}, got {value!r}"
                                         + problem)
    return items


def node_choice(value: str) -> str | list[str]:
    """An argparse ``type`` for ``--without`` / ``--remove-nodes``: a label selector
    (``key=value``, ``key in (a,b)``; the library parses it, here its values are checked) or
    comma-separated node names."""
    if "=" in value:
        return value
    _, within, values = value.partition(" in ")
    if not within:
        return comma_list(value)
    values = values.strip()
    if values.startswith("(") and values.endswith(")"):
        comma_list(values[1:-1], f"label values in {value!r}")
    return value


def file_and_number(parse_number: Callable[[str], Any], what: str, *, last: bool = False,
                    optional: bool = False) -> Callable[[str], tuple[str, Any]]:
    """An argparse ``type``: ``FILE=NUMBER`` as ``(FILE, NUMBER)``, split at the first ``=``
    (the last with ``last``); with ``optional``, ``FILE`` alone is ``(FILE, None)``."""
    form = f"FILE[={what.upper()}]" if optional else f"FILE={what.upper()}"

    def parse(value: str) -> tuple[str, Any]:
        path, equals, number_text = (value.rpartition if last else value.partition)("=")
        if not equals and optional:
            path = value
        if not path or not (equals or optional):
            raise argparse.ArgumentTypeError(f"expected {form}, got {value!r}")
        if not equals:
            return path, None
        try:
            return path, parse_number(number_text)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{value}: {what} {exc}") from None
    return parse

# ---------------------------------------------------------------------------- inputs


class Inputs:
    """The command's input sources, each read once; standard input (``-``) at most once."""

    def __init__(self, args: argparse.Namespace) -> None:
        self._objects: dict[str, Any] = {}
        self._stdin_used = False
        self._kubeconfig = getattr(args, "kubeconfig", None)
        self._context = getattr(args, "context", None)
        self._strict = not getattr(args, "no_strict_fields", False)

    def stdin_bytes(self) -> bytes:
        if self._stdin_used:
            raise UsageError("standard input (-) can be read only once; name a file instead")
        self._stdin_used = True
        return sys.stdin.buffer.read()

    def stdin_text(self) -> str:
        if self._stdin_used:
            raise UsageError("standard input (-) can be read only once; name a file instead")
        self._stdin_used = True
        return sys.stdin.read()

    def objects(self, source: str) -> Any:
        """``ksched.io.read_objects`` of a file, a folder or ``-``; refused when it holds no
        Kubernetes objects ksched reads."""
        if source not in self._objects:
            from ksched.api.schema import strict_fields

            with strict_fields(self._strict):
                self._objects[source] = objects = self._read(source)
            if not any(attrs.astuple(objects, recurse=False)):
                raise UsageError(f"{named(source)}: no Nodes, Pods, PriorityClasses, "
                                 "PodDisruptionBudgets, Namespaces or workloads found")
        return self._objects[source]

    def _read(self, source: str) -> Any:
        from ksched.io import read_objects

        if source == LIVE:
            from ksched.live import read_live_items

            return read_objects(read_live_items(self._kubeconfig, self._context))
        if source != STDIN:
            return read_objects(source)
        if self._stdin_used:
            raise UsageError("standard input (-) can be read only once; name a file instead")
        self._stdin_used = True
        stdin = io.BytesIO(sys.stdin.buffer.read())
        stdin.name = "<stdin>"  # named as ksched.io names standard input
        return read_objects(stdin)

    def events(self, source: str) -> list[Any]:
        from ksched.timeline import load_events, parse_events

        if source == STDIN:
            return parse_events(self.stdin_text(), "timeline on standard input")
        return load_events(source)


def named(source: str) -> str:
    if source == LIVE:
        return "the live cluster"
    return "standard input" if source == STDIN else source


def with_live_cluster(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """``argv`` with the CLUSTER argument of a command given ``--kubeconfig`` or ``--context``
    filled in: the live cluster stands where a CLUSTER file would (``ksched capacity
    --kubeconfig ~/.kube/config web.yaml``). Positional arguments go first, then the options,
    so that argparse gives each positional its place."""
    argv = list(argv)
    command = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    live = any(a.split("=", 1)[0] in ("--kubeconfig", "--context") for a in argv)
    if command is None or not live or argv[command] not in LIVE_COMMANDS:
        return argv
    takes_value = {name for action in _subparser(parser, argv[command])._actions
                   if action.nargs != 0 for name in action.option_strings}
    rest, positionals, options = argv[command + 1:], [], []
    while rest:
        token = rest.pop(0)
        if token == "--":
            positionals += rest
            break
        if token.startswith("-") and token != STDIN:
            options.append(token)
            if token in takes_value and rest:
                options.append(rest.pop(0))
        else:
            positionals.append(token)
    return argv[:command + 1] + [LIVE] + positionals + options


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of ``command``."""
    choices = next(a.choices for a in parser._actions  # noqa: SLF001 - argparse's own tree
                   if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    return choices[command]


def live_options(p: argparse.ArgumentParser) -> None:
    """``--kubeconfig`` / ``--context``: read CLUSTER from a live cluster instead of a file."""
    p.add_argument("--kubeconfig", type=PATH,
                   help="read the cluster from the API server of this kubeconfig (then give "
                        "no CLUSTER argument)")
    p.add_argument("--context", type=nonempty("a context name"),
                   help="the kubeconfig context (default: its current one)")
    p.add_argument("--no-strict-fields", action="store_true",
                   help="ignore fields unknown to the Kubernetes v1.35 API with a warning "
                        "(default: refuse them, as kubectl does)")


def configuration(args: argparse.Namespace) -> Any:
    """The ``--config`` file's configuration, or ``None`` (the default profile)."""
    if not getattr(args, "config", None):
        return None
    from ksched.config import load_config

    try:
        return load_config(args.config)
    except KschedError as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError(f"--config {args.config}: {exc}") from None

# ---------------------------------------------------------------------------- outputs


def check_output(path: str | None, option: str) -> None:
    """Refuse, before any work, an output path that cannot be written."""
    if path in (None, STDIN):
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{option} {path}: is a directory")
    folder = target.parent
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: no such directory: {folder}")
    if target.exists() and not target.is_file():
        return  # /dev/null, a FIFO: written straight to
    try:  # what the final write will do: a temporary file beside the target
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write in {folder}: "
                         f"{(exc.strerror or str(exc)).lower()}") from None
    os.close(fd)
    os.unlink(temporary)


def check_outputs(*outputs: tuple[str | None, str]) -> None:
    """:func:`check_output` of each ``(path, option)``; two options naming the same file
    (which the second would silently overwrite) are refused."""
    seen: dict[str, str] = {}
    for path, option in outputs:
        check_output(path, option)
        if path in (None, STDIN) or (Path(path).exists() and not Path(path).is_file()):
            continue  # standard output, /dev/null: may be shared
        same = seen.setdefault(os.path.realpath(path), option)
        if same != option:
            raise UsageError(f"{option} {path}: {same} writes that file too")


def write_outputs(outputs: Sequence[tuple[str | None, Iterable[str]]]) -> None:
    """Write each ``(path, lines)``: every file's lines first, each renamed into place only
    once all are written (:func:`written`), then standard output's (``None`` / ``-``)."""
    to_stdout = [lines for path, lines in outputs if path in (None, STDIN)]
    with contextlib.ExitStack() as files:
        for path, lines in outputs:
            if path not in (None, STDIN):
                files.enter_context(written(path)).writelines(lines)
    for lines in to_stdout:
        sys.stdout.writelines(lines)


@contextlib.contextmanager
def written(path: str | None) -> Iterator[Any]:
    """A text file for ``path`` (standard output for ``None`` / ``-``), written whole or not
    at all (:func:`ksched.files.written_whole`)."""
    if path in (None, STDIN):
        yield sys.stdout
        return
    with written_whole(path) as out:
        yield out


def check_plot(path: str | None) -> None:
    """Refuse, before any work, a ``--plot`` path ksched cannot draw into."""
    if path is None:
        return
    from ksched.planning.report import PLOT_SUFFIXES

    if path == STDIN or Path(path).suffix.lower() not in PLOT_SUFFIXES:
        raise UsageError(f"--plot {path}: expected a file ending in {', '.join(PLOT_SUFFIXES)}")
    if importlib.util.find_spec("matplotlib") is None:  # else found missing after the run
        raise UsageError(f"--plot {path}: matplotlib is not installed: "
                         "pip install 'ksched[plot]'")
    check_output(path, "--plot")


@contextlib.contextmanager
def progress_bar(unit: str) -> Iterator[Any]:
    """A tqdm bar on standard error when it is a terminal; ``None`` when piped or redirected."""
    if not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    with tqdm(unit=unit, leave=False, file=sys.stderr) as bar:
        yield bar

"""``ksched sweep SPEC.yaml``: a what-if sweep (:func:`ksched.sweep`) from a spec file that
names the base files, the axes and the study.

A spec (paths relative to the spec's folder)::

    cluster: snapshot.json          # required
    pods: pending.yaml              # the other inputs are optional
    workloads: next-quarter.yaml
    config: scheduler-config.yaml
    events: timeline.jsonl
    node_types: [m6i-4xlarge.yaml]
    prices: {m6i-4xlarge: 0.768}
    study: schedule                 # schedule, capacity, headroom, plan or simulate
    axes:                           # or scenarios: [{param: value, ...}, ...]
      strategy: [LeastAllocated, MostAllocated]
      scale: [1, 1.5, 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ksched.cli.common import (
    STDIN,
    Inputs,
    UsageError,
    check_output,
    check_plot,
    integer,
    named,
)
from ksched.errors import ArgumentError

#: The spec's keys: the base's inputs, then what to sweep.
FILE_KEYS = ("cluster", "pods", "workloads", "config", "events")
SPEC_KEYS = (*FILE_KEYS, "node_types", "prices", "study", "axes", "scenarios")
#: The spec's keys whose value has one type: key, type, what the message says.
SPEC_TYPES = (("study", str, "a study name"), ("axes", Mapping, "parameter: [values, ...]"),
              ("scenarios", list, "a list of {parameter: value, ...}"),
              ("prices", Mapping | None, "node type: price"))


def _spec(inputs: Inputs, source: str) -> dict[str, Any]:
    """The spec's mapping, its keys checked."""
    import yaml

    try:
        if source == STDIN:
            spec = yaml.safe_load(inputs.stdin_text())
        else:
            with open(source, encoding="utf-8") as f:
                spec = yaml.safe_load(f)
    except yaml.YAMLError as exc:
        raise UsageError(f"{named(source)}: cannot parse: {' '.join(str(exc).split())}") \
            from None
    except UnicodeDecodeError:
        raise UsageError(f"{named(source)}: not a UTF-8 text file") from None
    if not isinstance(spec, Mapping):
        raise UsageError(f"{named(source)}: expected a mapping with cluster, axes, study, ...")
    unknown = [k for k in spec if k not in SPEC_KEYS]
    if unknown:
        raise UsageError(f"{named(source)}: unknown key {unknown[0]!r} (a spec has "
                         f"{', '.join(SPEC_KEYS)})")
    if spec.get("cluster") is None:
        raise UsageError(f"{named(source)}: cluster: required (the snapshot file)")
    if "axes" in spec and "scenarios" in spec:
        raise UsageError(f"{named(source)}: give axes or scenarios, not both")
    for key, kind, expected in SPEC_TYPES:
        if key in spec and not isinstance(spec[key], kind):
            raise UsageError(f"{named(source)}: {key}: expected {expected}, got "
                             f"{type(spec[key]).__name__}")
    return dict(spec)


def _path(folder: Path, value: Any, key: str, source: str) -> str:
    """A file the spec names, relative to the spec's folder."""
    if not isinstance(value, str) or not value:
        raise UsageError(f"{named(source)}: {key}: expected a file name, got {value!r}")
    return str(folder / value)


def _scenario(spec: Mapping[str, Any], source: str) -> Any:
    """The base :class:`ksched.Scenario` of the spec."""
    import ksched

    folder = Path.cwd() if source == STDIN else Path(source).parent
    files = {key: _path(folder, spec[key], key, source) for key in FILE_KEYS
             if spec.get(key) is not None}
    types = spec.get("node_types") or []
    if isinstance(types, str):
        types = [types]
    if not isinstance(types, list):
        raise UsageError(f"{named(source)}: node_types: expected a list of files")
    node_types = [_path(folder, t, "node_types", source) for t in types]
    try:
        return ksched.Scenario(files.pop("cluster"), node_types=node_types,
                               prices=spec.get("prices"), **files)
    except ArgumentError as exc:
        raise UsageError(f"{named(source)}: {exc}") from None


def _sweep(args: argparse.Namespace) -> int:
    import ksched
    from ksched.sweep.summary import summary_table

    _check_options(args)
    spec = _spec(Inputs(args), args.spec)
    base = _scenario(spec, args.spec)
    axes, study = spec.get("scenarios", spec.get("axes")), spec.get("study", "schedule")
    try:
        if args.plot:
            _check_plot_request(study, axes, args)
        result = ksched.sweep(
            base, axes, study, executor="ray" if args.ray else None, workers=args.workers,
            ray_address=args.ray if args.ray not in (None, "local") else None,
            output=args.output, resume=not args.fresh, progress=sys.stderr.isatty())
        if args.plot:
            result.plot(args.metric, args.x, args.by, path=args.plot)
    except ArgumentError as exc:
        raise UsageError(f"{named(args.spec)}: {exc}") from None
    failed = len(result.failed)
    if args.output is None:
        sys.stdout.write(str(result) + "\n\n")
    else:
        note = f", {failed} failed (see the error column)" if failed else ""
        sys.stdout.write(f"{len(result)} scenarios{note}: {args.output}\n")
    sys.stdout.write(summary_table(result).to_text() + "\n")
    return 1 if failed else 0


def _check_options(args: argparse.Namespace) -> None:
    """Refuse, before reading anything, an output or plot that cannot be written."""
    from ksched.sweep.store import OUTPUT_SUFFIXES
    from ksched.sweep.store import check_output as check_table

    if args.output is not None:
        if Path(args.output).suffix.lower() not in OUTPUT_SUFFIXES:
            raise UsageError(f"-o {args.output}: expected a file ending in "
                             f"{', '.join(OUTPUT_SUFFIXES)}")
        check_output(args.output, "-o")
        try:
            check_table(args.output)  # its journal too, and pyarrow for Parquet
        except ArgumentError as exc:
            raise UsageError(f"-o {args.output}: {exc}") from None
    _check_plot_options(args)


def _check_plot_options(args: argparse.Namespace) -> None:
    """Refuse a ``--plot`` ksched cannot write, without what it draws or without
    matplotlib."""
    check_plot(args.plot)
    if args.plot and (args.metric is None or args.x is None):
        raise UsageError("--plot: give the --metric to draw and the --x parameter")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise UsageError("--plot: matplotlib is not installed: pip install 'ksched[plot]'")


def _check_plot_request(study: Any, axes: Any, args: argparse.Namespace) -> None:
    """Refuse, before anything runs, a ``--metric`` the study never gives and an ``--x`` or
    ``--by`` that is not a parameter of the grid."""
    from ksched.sweep import grid
    from ksched.sweep.params import kind_of
    from ksched.sweep.studies import METRICS, check_metric

    names = list(dict.fromkeys(p for params in grid({} if axes is None else axes)
                               for p in params))
    for option, value in (("x", args.x), ("by", args.by)):
        if value is not None and value not in names:
            raise ArgumentError(f"{option}: no parameter {value!r} (parameters: "
                                f"{', '.join(names) or 'none'})")
    if isinstance(study, str) and study in METRICS:
        moves = any(kind_of(n) in ("without", "node_count") for n in names)
        check_metric(study, args.metric, moves)


def add_parsers(sub: Any) -> None:
    """The ``sweep`` parser, on ``sub`` (argparse's subparsers)."""
    p = sub.add_parser("sweep", help="run a study over a grid of what-if scenarios",
                       description="Run the spec's study on every scenario of its axes, on all "
                                   "cores (or a Ray cluster). Exit status 1 when a scenario "
                                   "failed (its row has the error).")
    p.add_argument("spec", help="the sweep's YAML spec: cluster, pods, workloads, config, "
                                "events, node_types, prices, study, axes or scenarios")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the table to FILE.parquet, .csv or .jsonl (rows stream to "
                        "FILE.rows.jsonl as scenarios finish; running again resumes)")
    p.add_argument("--workers", type=integer(1, 4096), default=None,
                   help="worker processes (default: every CPU; 1 runs in this process)")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run on Ray: 'local' (a new local instance), 'auto' or ray://HOST:10001 "
                        "(pip install 'ksched[ray]')")
    p.add_argument("--fresh", action="store_true",
                   help="ignore the results of an earlier run of the same sweep")
    p.add_argument("--plot", metavar="FILE", help="draw --metric against --x (a line per "
                                                  "combination of the other parameters, --by "
                                                  "first) into FILE.png, .svg or .html")
    p.add_argument("--metric", help="the metric to plot (e.g. unschedulable)")
    p.add_argument("--x", help="the parameter on the plot's x axis")
    p.add_argument("--by", help="the parameter the legend names first")
    p.set_defaults(func=_sweep)

"""The capacity planner's commands: ``capacity``, ``headroom`` and ``plan`` (the library's
:mod:`ksched.planning`), with tables, JSON, CSV and plots."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from typing import Any

from ksched.cli.common import (
    CONFIG_HELP,
    MAX_NODES,
    MAX_PODS,
    SOURCE_HELP,
    STDIN,
    Inputs,
    UsageError,
    check_plot,
    comma_list,
    configuration,
    integer,
    live_options,
    named,
    number,
    progress_bar,
)
from ksched.errors import ArgumentError


def _templates(inputs: Inputs, sources: Sequence[str], all_pods: bool
               ) -> tuple[list[Any], list[str]]:
    """The template pods, the first pod of each file (every pod with ``all_pods``), and
    the file each came from."""
    templates, origins = [], []
    for source in sources:
        pods = inputs.objects(source).pods
        if not pods:
            raise UsageError(f"{named(source)}: no pods to use as templates")
        chosen = pods if all_pods else pods[:1]
        templates += chosen
        origins += [named(source)] * len(chosen)
    return templates, origins


def _in_file(message: str, origins: Sequence[str]) -> str:
    """``templates[3]: ...`` -> ``FILE: templates[3]: ...``, naming the template's file."""
    match = re.match(r"templates\[(\d+)\]", message)
    return f"{origins[int(match[1])]}: {message}" if match else message


def _planning_cluster(inputs: Inputs, args: argparse.Namespace) -> Any:
    import ksched

    return ksched.cluster_from_objects(inputs.objects(args.cluster))


def _report_out(report: Any, output: str, table: Any) -> str:
    """``report`` as the ``-o`` format asks: its own text, its JSON, or its table's CSV."""
    if output == "json":
        return json.dumps(report.to_dict(), indent=1) + "\n"
    if output == "csv":
        return table.to_csv()
    if output == "cluster-capacity":
        return json.dumps(report.to_cluster_capacity(), indent=1) + "\n"
    return str(report) + "\n"


def _emit(report: Any, output: str, table: Any, plot: str | None) -> None:
    """The plot file first (written whole or not at all), then standard output."""
    text = _report_out(report, output, table)
    if plot:
        from ksched.planning.report import save_plot

        save_plot(report, plot)
    sys.stdout.write(text)


def _capacity(args: argparse.Namespace) -> int:
    from ksched.planning.capacity import capacity
    from ksched.planning.report import capacity_table, replicas_table

    check_plot(args.plot)
    inputs = Inputs(args)
    cluster = _planning_cluster(inputs, args)
    templates, origins = _templates(inputs, args.templates, args.all_pods)
    if args.by is not None and cluster.label_column(args.by) < 0:
        raise UsageError(f"--by: no node has label {args.by!r}")
    added = _added_nodes(inputs, args.add_nodes or ())
    try:
        with progress_bar("copies") as bar:
            report = capacity(cluster, templates, max_limit=args.max_limit,
                              exclude_nodes=args.exclude_nodes or (), by=args.by,
                              order=args.order, profile=configuration(args), add_nodes=added,
                              remove_nodes=_node_choice(args.remove_nodes),
                              progress=bar.update if bar is not None else None)
    except ArgumentError as exc:
        raise UsageError(_in_file(_option_named(str(exc)), origins)) from None
    table = replicas_table(report) if args.nodes else capacity_table(report)
    _emit(report, args.output, table, args.plot)
    return 0


def _node_choice(value: str | None) -> str | list[str] | None:
    """``--without`` / ``--remove-nodes``: a selector (``key=value``, ``key in (a,b)``) or
    comma-separated node names."""
    if value is None or "=" in value or " in " in value:
        return value
    return comma_list(value)


def _headroom(args: argparse.Namespace) -> int:
    from ksched.planning.headroom import headroom
    from ksched.planning.report import headroom_table

    check_plot(args.plot)
    inputs = Inputs(args)
    cluster = _planning_cluster(inputs, args)
    reference = _templates(inputs, [args.reference], False)[0][0] if args.reference else None
    try:
        report = headroom(cluster, reference=reference, by=args.by,
                          without=_node_choice(args.without),
                          profile=configuration(args))
    except ArgumentError as exc:
        raise UsageError(_option_named(str(exc))) from None
    _emit(report, args.output, headroom_table(report), args.plot)
    return 0


#: Library argument names -> the options that set them, in ``ArgumentError`` messages.
_OPTIONS = {"max_limit": "--max-limit", "exclude_nodes": "--exclude-nodes", "by": "--by",
            "add_nodes": "--add-nodes", "remove_nodes": "--remove-nodes",
            "without": "--without", "reference": "--reference", "order": "--order"}


def _option_named(message: str) -> str:
    """``by: no node has label 'x'`` -> ``--by: no node has label 'x'``."""
    head, sep, rest = message.partition(":")
    name = re.sub(r"\[\d+\]$", "", head)
    return f"{_OPTIONS[name]}{head[len(name):]}{sep}{rest}" if name in _OPTIONS else message


def _plan(args: argparse.Namespace) -> int:
    from ksched.planning.plan import plan

    inputs = Inputs(args)
    cluster = _planning_cluster(inputs, args)
    workloads = [inputs.stdin_bytes() if source == STDIN else source
                 for source in args.workloads]  # manifests: plan expands the controllers
    node_types, prices = [], {}
    for spec in args.node_type:
        path, _, price = spec.partition("=")
        nodes = inputs.objects(path).nodes
        if not nodes:
            raise UsageError(f"--node-type {path}: no Node to use as a node type")
        node_types.append(nodes[0])
        if price:
            prices[nodes[0].name] = _price(spec, price)
    try:
        with progress_bar("schedules") as bar:
            report = plan(cluster, workloads, node_types, prices=prices or None,
                          progress=bar.update if bar is not None else None)
    except ArgumentError as exc:
        raise UsageError(str(exc)) from None
    sys.stdout.write(json.dumps(report.to_dict(), indent=1) + "\n" if args.output == "json"
                     else str(report) + "\n")
    return 0


def _added_nodes(inputs: Inputs, specs: Sequence[str]) -> list[tuple[Any, int]]:
    """``--add-nodes FILE=COUNT``: COUNT new nodes made from the first Node of FILE."""
    added = []
    for spec in specs:
        path, equals, count = spec.rpartition("=")
        if not equals:
            raise UsageError(f"--add-nodes {spec}: expected FILE=COUNT")
        nodes = inputs.objects(path).nodes
        if not nodes:
            raise UsageError(f"--add-nodes {path}: no Node to use as a node type")
        try:
            added.append((nodes[0], integer(0, MAX_NODES)(count)))
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"--add-nodes {spec}: count {exc}") from None
    return added


def _price(spec: str, text: str) -> float:
    """The ``PRICE`` of ``--node-type FILE=PRICE``: a finite number >= 0."""
    try:
        return number(0.0)(text)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--node-type {spec}: price {exc}") from None


def add_parsers(sub: Any) -> None:
    """The planner's parsers, on ``sub`` (argparse's subparsers)."""
    p = sub.add_parser("capacity", help="how many more copies of each template fit")
    p.add_argument("cluster", help=f"nodes and running pods ({SOURCE_HELP})")
    live_options(p)
    p.add_argument("templates", nargs="+", metavar="TEMPLATE",
                   help="files with the template pod (the first pod of each file)")
    p.add_argument("--all-pods", action="store_true",
                   help="use every pod of each TEMPLATE file, not only the first")
    p.add_argument("--max-limit", type=integer(0, MAX_PODS), default=None,
                   help="stop each template after this many copies")
    p.add_argument("--exclude-nodes", type=comma_list, default=None,
                   help="comma-separated node names to leave out (with their pods)")
    p.add_argument("--add-nodes", action="append", metavar="FILE=COUNT",
                   help="what if COUNT nodes like the first Node of FILE were added "
                        "(repeatable)")
    p.add_argument("--remove-nodes", metavar="SELECTOR",
                   help="what if these nodes went away ('key=value', 'key in (a,b)' or names "
                        "a,b): their pods are re-placed first, then copies counted")
    p.add_argument("--by", help="a node label key: copies per value of it")
    p.add_argument("--order", choices=("fill", "interleave"), default="fill")
    p.add_argument("--nodes", action="store_true",
                   help="-o csv: one row per template and node (replicas per node)")
    p.add_argument("-o", "--output", choices=("table", "json", "csv", "cluster-capacity"),
                   default="table")
    p.add_argument("--plot", help="draw the report into FILE.png, .svg or .html")
    p.add_argument("--config", help=CONFIG_HELP)
    p.set_defaults(func=_capacity)

    p = sub.add_parser("headroom", help="free, used and stranded capacity; zone loss")
    p.add_argument("cluster", help=f"nodes and running pods ({SOURCE_HELP})")
    live_options(p)
    p.add_argument("--reference", metavar="POD_FILE",
                   help="file whose first pod is the shape to count fits and stranding for")
    p.add_argument("--by", help="a node label key: rows per value of it")
    p.add_argument("--without", metavar="SELECTOR",
                   help="remove these nodes first ('key=value', 'key in (a,b)' or names a,b) "
                        "and re-place their pods")
    p.add_argument("-o", "--output", choices=("table", "json", "csv"), default="table")
    p.add_argument("--plot", help="draw the report into FILE.png, .svg or .html")
    p.add_argument("--config", help=CONFIG_HELP)
    p.set_defaults(func=_headroom)

    p = sub.add_parser("plan", help="the fewest / cheapest new nodes for pending workloads")
    p.add_argument("cluster", help=f"nodes and running pods ({SOURCE_HELP})")
    live_options(p)
    p.add_argument("workloads", nargs="+", metavar="WORKLOADS",
                   help="files with the workloads and pods to make room for")
    p.add_argument("--node-type", action="append", required=True, metavar="FILE[=PRICE]",
                   help="a Node manifest to add copies of, with its price (repeatable)")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    p.set_defaults(func=_plan)

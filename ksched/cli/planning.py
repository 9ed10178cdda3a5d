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
    PATH,
    SOURCE_HELP,
    STDIN,
    Inputs,
    UsageError,
    check_plot,
    comma_list,
    configuration,
    file_and_number,
    integer,
    live_options,
    named,
    node_choice,
    number,
    progress_bar,
)
from ksched.constants import CAPACITY_ORDERS as ORDERS
from ksched.constants import TIE_BREAKS
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


def _report_out(report: Any, output: str, table: Any, max_limit: int = 0) -> str:
    """``report`` as the ``-o`` format asks: its own text, its JSON, or its table's CSV."""
    if output == "json":
        return json.dumps(report.to_dict(), indent=1) + "\n"
    if output == "csv":
        return table.to_csv()
    if output == "cluster-capacity":
        from ksched.planning.cluster_capacity import review_json

        return review_json(report.to_cluster_capacity(max_limit=max_limit))
    return str(report) + "\n"


def _emit(report: Any, output: str, table: Any, plot: str | None, max_limit: int = 0) -> None:
    """The plot file first (written whole or not at all), then standard output."""
    text = _report_out(report, output, table, max_limit)
    if plot:
        from ksched.planning.report import save_plot

        save_plot(report, plot)
    sys.stdout.write(text)


def _capacity(args: argparse.Namespace) -> int:
    from ksched.planning.capacity import capacity
    from ksched.planning.report import capacity_table, replicas_table

    if args.nodes and args.output != "csv":
        raise UsageError(f"--nodes: applies only to -o csv, not -o {args.output}")
    check_plot(args.plot)
    config = configuration(args)
    inputs = Inputs(args)
    cluster = _planning_cluster(inputs, args)
    templates, origins = _templates(inputs, args.templates, args.all_pods)
    if args.by is not None and cluster.label_column(args.by) < 0:
        raise UsageError(f"--by: no node has label {args.by!r}")
    added = _added_nodes(inputs, args.add_nodes or ())
    try:
        with progress_bar("copies") as bar:
            report = capacity(cluster, templates, max_limit=args.max_limit or None,
                              exclude_nodes=args.exclude_nodes or (), by=args.by,
                              order=args.order, profile=config, add_nodes=added,
                              remove_nodes=args.remove_nodes, tie_break=args.tie_break,
                              seed=args.seed,
                              progress=bar.update if bar is not None else None)
    except ArgumentError as exc:
        raise UsageError(_in_file(_option_named(str(exc)), origins)) from None
    table = replicas_table(report) if args.nodes else capacity_table(report)
    _emit(report, args.output, table, args.plot, args.max_limit or 0)
    return 0


def _headroom(args: argparse.Namespace) -> int:
    from ksched.planning.headroom import headroom
    from ksched.planning.report import headroom_table

    check_plot(args.plot)
    config = configuration(args)
    inputs = Inputs(args)
    cluster = _planning_cluster(inputs, args)
    reference = _templates(inputs, [args.reference], False)[0][0] if args.reference else None
    try:
        report = headroom(cluster, reference=reference, by=args.by, without=args.without,
                          profile=config)
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
    """``ksched plan``: exit 0 when the plan is complete or only pods that fit no type are
    left; 3 when the search stopped on its budget (the plan is then incomplete)."""
    from ksched.planning.plan import OUT_OF_BUDGET, plan

    config = configuration(args)
    inputs = Inputs(args)
    cluster = _planning_cluster(inputs, args)
    classes = inputs.objects(args.cluster).priority_classes
    workloads = [inputs.stdin_bytes() if source == STDIN else source
                 for source in args.workloads]  # manifests: plan expands the controllers
    node_types, prices = [], {}
    for path, price in args.node_type:
        objects = inputs.objects(path)
        if not objects.nodes:
            raise UsageError(f"--node-type {path}: no Node to use as a node type")
        node = objects.nodes[0]  # with the file's ResourceSlices: a type with devices
        node_types.append((node, objects.resource_slices) if objects.resource_slices
                          else node)
        if price is not None:
            prices[node.name] = price
    try:
        with progress_bar("schedules") as bar:
            report = plan(cluster, workloads, node_types, prices=prices or None,
                          max_nodes=args.max_nodes, max_cost=args.max_cost,
                          time_limit=args.time_limit, profile=config,
                          priority_classes=classes, tie_break=args.tie_break,
                          seed=args.seed, progress=bar.update if bar is not None else None)
    except ArgumentError as exc:
        message = re.sub(r"^node_types\[(\d+)\]", lambda m: "--node-type "
                         + args.node_type[int(m[1])][0], str(exc))
        raise UsageError(_plan_option(message)) from None
    sys.stdout.write(json.dumps(report.to_dict(), indent=1) + "\n" if args.output == "json"
                     else str(report) + "\n")
    if report.status == OUT_OF_BUDGET:
        sys.stderr.write(f"ksched: plan incomplete: {report.message}\n")
        return 3
    return 0


def _plan_option(message: str) -> str:
    """``max_cost: ...`` -> ``--max-cost: ...``."""
    for name in ("max_nodes", "max_cost", "time_limit"):
        if message.startswith(f"{name}:"):
            return "--" + name.replace("_", "-") + message[len(name):]
    return message


def _added_nodes(inputs: Inputs, specs: Sequence[tuple[str, int]]) -> list[tuple[Any, int]]:
    """``--add-nodes FILE=COUNT``: COUNT new nodes made from the first Node of FILE."""
    added = []
    for path, count in specs:
        nodes = inputs.objects(path).nodes
        if not nodes:
            raise UsageError(f"--add-nodes {path}: no Node to use as a node type")
        added.append((nodes[0], count))
    return added


def add_parsers(sub: Any) -> None:
    """The planner's parsers, on ``sub`` (argparse's subparsers)."""
    p = sub.add_parser("capacity", help="how many more copies of each template fit")
    p.add_argument("cluster", type=PATH, help=f"nodes and running pods ({SOURCE_HELP})")
    live_options(p)
    p.add_argument("templates", nargs="+", metavar="TEMPLATE", type=PATH,
                   help="files with the template pod (the first pod of each file)")
    p.add_argument("--all-pods", action="store_true",
                   help="use every pod of each TEMPLATE file, not only the first")
    p.add_argument("--max-limit", type=integer(0, MAX_PODS), default=None,
                   help="stop each template after this many copies (0: unlimited, as "
                        "cluster-capacity)")
    p.add_argument("--exclude-nodes", type=comma_list, default=None,
                   help="comma-separated node names to leave out (with their pods)")
    p.add_argument("--add-nodes", action="append", metavar="FILE=COUNT",
                   type=file_and_number(integer(0, MAX_NODES), "count", last=True),
                   help="what if COUNT nodes like the first Node of FILE were added "
                        "(repeatable)")
    p.add_argument("--remove-nodes", metavar="SELECTOR", type=node_choice,
                   help="what if these nodes went away ('key=value', 'key in (a,b)' or names "
                        "a,b): their pods are re-placed first, then copies counted")
    p.add_argument("--by", help="a node label key: copies per value of it")
    p.add_argument("--order", choices=tuple(ORDERS), default="independent",
                   help="how several templates share the cluster: " + "; ".join(
                       f"{name}: {meaning}" for name, meaning in ORDERS.items())
                   + " (default: independent)")
    p.add_argument("--tie-break", choices=TIE_BREAKS, default="round-robin",
                   help="how the loop breaks ties between equal-scoring nodes")
    p.add_argument("--seed", type=integer(0), default=None,
                   help="the random tie-break's seed")
    p.add_argument("--nodes", action="store_true",
                   help="-o csv: one row per template and node (replicas per node)")
    p.add_argument("-o", "--output", choices=("table", "json", "csv", "cluster-capacity"),
                   default="table",
                   help="cluster-capacity: its JSON review (templates as ksched read them; "
                        "`ksched cluster-capacity` writes its review field for field)")
    p.add_argument("--plot", type=PATH, help="draw the report into FILE.png, .svg or .html")
    p.add_argument("--config", type=PATH, help=CONFIG_HELP)
    p.set_defaults(func=_capacity)

    p = sub.add_parser("headroom", help="free, used and stranded capacity; zone loss")
    p.add_argument("cluster", type=PATH, help=f"nodes and running pods ({SOURCE_HELP})")
    live_options(p)
    p.add_argument("--reference", metavar="POD_FILE", type=PATH,
                   help="file whose first pod is the shape to count fits and stranding for")
    p.add_argument("--by", help="a node label key: rows per value of it")
    p.add_argument("--without", metavar="SELECTOR", type=node_choice,
                   help="remove these nodes first ('key=value', 'key in (a,b)' or names a,b) "
                        "and re-place their pods")
    p.add_argument("-o", "--output", choices=("table", "json", "csv"), default="table")
    p.add_argument("--plot", type=PATH, help="draw the report into FILE.png, .svg or .html")
    p.add_argument("--config", type=PATH, help=CONFIG_HELP)
    p.set_defaults(func=_headroom)

    p = sub.add_parser("plan", help="the fewest / cheapest new nodes for pending workloads")
    p.add_argument("cluster", type=PATH, help=f"nodes and running pods ({SOURCE_HELP})")
    live_options(p)
    p.add_argument("workloads", nargs="+", metavar="WORKLOADS", type=PATH,
                   help="files with the workloads and pods to make room for")
    p.add_argument("--node-type", action="append", required=True, metavar="FILE[=PRICE]",
                   type=file_and_number(number(0.0), "price", optional=True),
                   help="a Node manifest to add copies of, with its price (repeatable); "
                        "ResourceSlices in the file that name the Node go with each copy")
    p.add_argument("--max-nodes", type=integer(0, MAX_NODES), default=None,
                   help="budget: the most new nodes in all (default: no limit)")
    p.add_argument("--max-cost", type=number(0.0), default=None,
                   help="budget: the highest total price of the new nodes")
    p.add_argument("--time-limit", type=number(0.0, above=True), default=None, metavar="SECONDS",
                   help="budget: seconds for the whole plan")
    p.add_argument("--tie-break", choices=TIE_BREAKS, default="round-robin",
                   help="how each exact schedule breaks ties between equal-scoring nodes")
    p.add_argument("--seed", type=integer(0), default=None,
                   help="the random tie-break's seed")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    p.add_argument("--config", type=PATH, help=CONFIG_HELP)
    p.set_defaults(func=_plan)

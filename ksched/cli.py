"""The ``ksched`` command line.

Every error is one line on standard error, ``ksched: ...``, with exit status 2: usage errors
(argparse's included), bad option values, missing or unreadable files, invalid objects.
Standard input (``-``) is read once. Output files are written only once the command has
succeeded, each through a temporary file renamed over the target.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from ksched.errors import ArgumentError, KschedError
from ksched.files import written_whole

#: The arguments that name standard input.
STDIN = "-"
#: The CLUSTER that stands for the live cluster of ``--kubeconfig`` / ``--context``.
LIVE = "kube:"
#: The commands that read a CLUSTER (and so take ``--kubeconfig`` / ``--context``).
LIVE_COMMANDS = ("schedule", "explain", "simulate", "capacity", "headroom", "plan")
#: ``ksched simulate day-of-churn``: the generated day's length, and its run's default
#: ``--until`` (the run stops at the end of the day, pods still running).
DAY = 86_400.0
#: Upper bounds for sizes (beyond them a run would only exhaust memory).
MAX_NODES, MAX_PODS, MAX_SCALE = 1_000_000, 10_000_000, 100.0


class UsageError(KschedError):
    """A bad command line: an unknown option, a bad value, a path that cannot be used."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """argparse prints the usage and the message on two lines; ours is one line."""
        raise UsageError(message)


# ---------------------------------------------------------------------------- option values


def _integer(low: int, high: int | None = None) -> Callable[[str], int]:
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


def _number(low: float, *, above: bool = False, high: float | None = None
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


_SEED = _integer(0)
_PERCENTAGE = _integer(0, 100)


# ---------------------------------------------------------------------------- inputs


class _Inputs:
    """The command's input sources, each read once; standard input (``-``) at most once."""

    def __init__(self, args: argparse.Namespace) -> None:
        self._objects: dict[str, Any] = {}
        self._stdin_used = False
        self._kubeconfig = getattr(args, "kubeconfig", None)
        self._context = getattr(args, "context", None)

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
            self._objects[source] = objects = self._read(source)
            if not any(attrs.astuple(objects, recurse=False)):
                raise UsageError(f"{_named(source)}: no Nodes, Pods, PriorityClasses, "
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


def _named(source: str) -> str:
    if source == LIVE:
        return "the live cluster"
    return "standard input" if source == STDIN else source


def _with_live_cluster(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
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


def _snapshot(args: argparse.Namespace) -> int:
    from ksched.live import read_live_items, save_snapshot

    _check_output(args.output, "-o")
    items = read_live_items(args.kubeconfig, args.context)
    path = save_snapshot(items, args.output)
    kinds: dict[str, int] = {}
    for item in items:
        kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
    counts = ", ".join(f"{n} {k}{'s' if n != 1 else ''}" for k, n in kinds.items())
    print(f"{path}: {counts or 'no objects'}", file=sys.stderr)
    return 0


def _configuration(args: argparse.Namespace) -> Any:
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


def _check_output(path: str | None, option: str) -> None:
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


@contextlib.contextmanager
def _written(path: str | None) -> Iterator[Any]:
    """A text file for ``path`` (standard output for ``None`` / ``-``), written whole or not
    at all (:func:`ksched.files.written_whole`)."""
    if path in (None, STDIN):
        yield sys.stdout
        return
    with written_whole(path) as out:
        yield out


# ---------------------------------------------------------------------------- commands


def _conformance(args: argparse.Namespace) -> int:
    from ksched import conformance

    conformance.trace_files(args.paths)  # every path checked before the first case runs
    results = []
    for result in conformance.run(args.paths):
        results.append(result)
        if not (args.quiet and result.outcome == conformance.PASS):
            print(result.line(), flush=True)
    print(conformance.summary(results))
    failed = any(r.outcome == conformance.FAIL or (args.strict and r.outcome == conformance.SKIP)
                 for r in results)
    return 1 if failed else 0


def _schedule(args: argparse.Namespace) -> int:
    import ksched

    config = _configuration(args)
    inputs = _Inputs(args)
    cluster = ksched.cluster_from_objects(inputs.objects(args.cluster))
    pods = inputs.objects(args.pods or args.cluster).pending_pods
    if args.pods and args.pods != args.cluster and not pods:
        raise UsageError(f"{_named(args.pods)}: no pending pods (pods without spec.nodeName)")
    started = time.perf_counter()
    result = ksched.schedule_batch(cluster, pods, profile=config,
                                   percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
                                   tie_break=args.tie_break, seed=args.seed)
    elapsed = time.perf_counter() - started
    if args.output == "json":
        json.dump(result.to_records(), sys.stdout, indent=1)
        print()
    else:
        for p in result.placements:
            print(f"{p.pod.key}\t{p.node or '-'}\t{p.reason}")
    print(f"{len(result.scheduled)} scheduled, {len(result.unschedulable)} unschedulable "
          f"in {elapsed:.2f}s", file=sys.stderr)
    return 0


def _explain(args: argparse.Namespace) -> int:
    import ksched

    config = _configuration(args)
    inputs = _Inputs(args)
    cluster = ksched.cluster_from_objects(inputs.objects(args.cluster))
    pods = [p for p in inputs.objects(args.pod).pending_pods
            if not args.name or p.name == args.name]
    if not pods:
        named = f' named "{args.name}"' if args.name else ""
        raise UsageError(f"no pending pod{named} in {_named(args.pod)}")
    why = ksched.explain(cluster, pods[0], profile=config,
                         percentage_of_nodes_to_score=args.percentage_of_nodes_to_score)
    print(json.dumps(why.to_dict(), indent=1, default=list))
    return 0


def _simulate(args: argparse.Namespace) -> int:
    import ksched
    from ksched.simulator import Simulator
    from ksched.timeline import arrivals_at_once, day_of_churn

    for path, option in ((args.log, "--log"), (args.summary, "--summary"),
                         (args.samples, "--samples")):
        _check_output(path, option)
    config = _configuration(args)
    inputs = _Inputs(args)
    pdbs, replicas, classes, until = (), {}, (), args.until
    if args.cluster == "day-of-churn":
        if args.events:
            raise UsageError("--events: day-of-churn generates its own timeline")
        cluster, events = day_of_churn(args.nodes or 5000, args.arrivals or 100_000,
                                       seconds=DAY, seed=args.seed)
        until = DAY if until is None else until
    else:
        if args.nodes is not None or args.arrivals is not None:
            raise UsageError("--nodes and --arrivals apply only to day-of-churn")
        objects = inputs.objects(args.cluster)
        cluster = ksched.cluster_from_objects(objects)
        pdbs, classes = objects.pod_disruption_budgets, objects.priority_classes
        replicas = {(w.namespace, w.kind, w.name): w.replicas for w in objects.workloads
                    if w.replicas is not None}
        events = (inputs.events(args.events) if args.events
                  else arrivals_at_once(objects.pending_pods))
    simulator = Simulator(cluster, profile=config, pdbs=pdbs, replicas=replicas,
                          priority_classes=classes,
                          seed=args.seed, tie_break=args.tie_break,
                          sample_every=args.sample_every)
    result = simulator.run(events, until=until)
    summary = json.dumps(result.summary(), indent=1) + "\n"
    outputs = [(args.log, (json.dumps(r) + "\n" for r in result.event_log()))]
    if args.samples:
        outputs.append((args.samples, (json.dumps(attrs.asdict(s)) + "\n"
                                       for s in result.samples)))
    if args.summary:
        outputs.append((args.summary, [summary]))
    for path, lines in sorted(outputs, key=lambda o: o[0] in (None, STDIN)):  # files first
        with _written(path) as out:
            out.writelines(lines)
    if not args.summary:
        sys.stderr.write(summary)
    return 0


def _demo(args: argparse.Namespace) -> int:
    from ksched.demo import run_demo

    run_demo(nodes=args.nodes, running=args.running, pending=args.pending,
             profile=_configuration(args))
    return 0


def _example(args: argparse.Namespace) -> int:
    from ksched.example import write_example

    if os.path.exists(args.directory) and not os.path.isdir(args.directory):
        raise ArgumentError(f"{args.directory}: not a directory")
    for path in write_example(args.directory, nodes=args.nodes, running=args.running):
        print(path)
    return 0


def _bench(args: argparse.Namespace) -> int:
    from ksched import bench
    from ksched.kernels.naive_unit import unit

    chosen = bench.workloads(args.workload)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if not args.json else None
    config = _configuration(args)
    u_before = unit()
    results = [bench.measure(w, rounds=args.rounds, scale=args.scale, progress=say, profile=config)
               for w in chosen]
    u = (u_before + unit()) / 2  # U on this machine, in this window (before and after)
    if args.json:
        print(json.dumps({"version": "v1", "dataItems": [r.data_item() for r in results],
                          "unitPodsPerSecond": u}, indent=1))
        return 0
    print(f"U (naive full scan, 5,000 nodes) = {u:,.0f} pods/s on this machine")
    print(f"{'workload':<58} {'pods/s (median)':>16} {'x U':>6} {'ns/node':>8} {'scheduled':>10}")
    for r in results:
        print(f"{r.workload:<58} {r.median_pods_per_second:>16,.0f} "
              f"{r.median_pods_per_second / u:>6.2f} {r.ns_per_node:>8.1f} {r.scheduled:>10}")
    return 0


# ---------------------------------------------------------------------------- planning


def _comma_list(text: str) -> list[str]:
    """An argparse ``type``: ``a,b,c`` as a list of non-empty names."""
    names = [n.strip() for n in text.split(",")]
    if not text.strip() or not all(names):
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}")
    return names


def _check_plot(path: str | None) -> None:
    """Refuse, before any work, a ``--plot`` path ksched cannot draw into."""
    if path is None:
        return
    from ksched.planning.report import PLOT_SUFFIXES

    if path == STDIN or Path(path).suffix.lower() not in PLOT_SUFFIXES:
        raise UsageError(f"--plot {path}: expected a file ending in {', '.join(PLOT_SUFFIXES)}")
    _check_output(path, "--plot")


def _templates(inputs: _Inputs, sources: Sequence[str], all_pods: bool
               ) -> tuple[list[Any], list[str]]:
    """The template pods, the first pod of each file (every pod with ``all_pods``), and
    the file each came from."""
    templates, origins = [], []
    for source in sources:
        pods = inputs.objects(source).pods
        if not pods:
            raise UsageError(f"{_named(source)}: no pods to use as templates")
        chosen = pods if all_pods else pods[:1]
        templates += chosen
        origins += [_named(source)] * len(chosen)
    return templates, origins


def _in_file(message: str, origins: Sequence[str]) -> str:
    """``templates[3]: ...`` -> ``FILE: templates[3]: ...``, naming the template's file."""
    match = re.match(r"templates\[(\d+)\]", message)
    return f"{origins[int(match[1])]}: {message}" if match else message


def _planning_cluster(inputs: _Inputs, args: argparse.Namespace) -> Any:
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

    _check_plot(args.plot)
    inputs = _Inputs(args)
    cluster = _planning_cluster(inputs, args)
    templates, origins = _templates(inputs, args.templates, args.all_pods)
    if args.by is not None and cluster.label_column(args.by) < 0:
        raise UsageError(f"--by: no node has label {args.by!r}")
    added = _added_nodes(inputs, args.add_nodes or ())
    try:
        with _progress_bar("copies") as bar:
            report = capacity(cluster, templates, max_limit=args.max_limit,
                              exclude_nodes=args.exclude_nodes or (), by=args.by,
                              order=args.order, profile=_configuration(args), add_nodes=added,
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
    return _comma_list(value)


def _headroom(args: argparse.Namespace) -> int:
    from ksched.planning.headroom import headroom
    from ksched.planning.report import headroom_table

    _check_plot(args.plot)
    inputs = _Inputs(args)
    cluster = _planning_cluster(inputs, args)
    reference = _templates(inputs, [args.reference], False)[0][0] if args.reference else None
    try:
        report = headroom(cluster, reference=reference, by=args.by,
                          without=_node_choice(args.without),
                          profile=_configuration(args))
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

    inputs = _Inputs(args)
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
        with _progress_bar("schedules") as bar:
            report = plan(cluster, workloads, node_types, prices=prices or None,
                          progress=bar.update if bar is not None else None)
    except ArgumentError as exc:
        raise UsageError(str(exc)) from None
    sys.stdout.write(json.dumps(report.to_dict(), indent=1) + "\n" if args.output == "json"
                     else str(report) + "\n")
    return 0


@contextlib.contextmanager
def _progress_bar(unit: str) -> Iterator[Any]:
    """A tqdm bar on standard error when it is a terminal; ``None`` when piped or redirected."""
    if not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    with tqdm(unit=unit, leave=False, file=sys.stderr) as bar:
        yield bar


def _added_nodes(inputs: _Inputs, specs: Sequence[str]) -> list[tuple[Any, int]]:
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
            added.append((nodes[0], _integer(0, MAX_NODES)(count)))
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"--add-nodes {spec}: count {exc}") from None
    return added


def _price(spec: str, text: str) -> float:
    """The ``PRICE`` of ``--node-type FILE=PRICE``: a finite number >= 0."""
    try:
        return _number(0.0)(text)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--node-type {spec}: price {exc}") from None


# ---------------------------------------------------------------------------- the parser


def _live_options(p: argparse.ArgumentParser) -> None:
    """``--kubeconfig`` / ``--context``: read CLUSTER from a live cluster instead of a file."""
    p.add_argument("--kubeconfig", help="read the cluster from the API server of this "
                                        "kubeconfig (then give no CLUSTER argument)")
    p.add_argument("--context", help="the kubeconfig context (default: its current one)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ksched", description=(
        "What kube-scheduler v1.35 would do with your pods, fast."))
    sub = parser.add_subparsers(dest="command", required=True)
    config_help = "a KubeSchedulerConfiguration file (YAML or JSON)"
    source_help = "JSON/YAML file, folder of them, or - for standard input"

    p = sub.add_parser("conformance", help="replay recorded kube-scheduler traces")
    p.add_argument("paths", nargs="+", help="trace files or folders of *.json.gz traces")
    p.add_argument("--quiet", action="store_true", help="print only failures and skips")
    p.add_argument("--strict", action="store_true", help="count unsupported cases as failures")
    p.set_defaults(func=_conformance)

    p = sub.add_parser("schedule", help="schedule pending pods onto a cluster snapshot")
    p.add_argument("cluster", help=f"nodes and running pods ({source_help})")
    _live_options(p)
    p.add_argument("pods", nargs="?", help="pending pods (default: the cluster's unbound pods)")
    p.add_argument("--percentage-of-nodes-to-score", type=_PERCENTAGE, default=None,
                   help="0-100 (0: adaptive; default: the configuration's)")
    p.add_argument("--tie-break", choices=("round-robin", "random"), default="round-robin")
    p.add_argument("--seed", type=_SEED, default=None, help="random tie-break seed (>= 0)")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=_schedule)

    p = sub.add_parser("explain", help="every plugin's verdict and score for one pod")
    p.add_argument("cluster", help=f"nodes and running pods ({source_help})")
    _live_options(p)
    p.add_argument("pod", help="file with the pending pod")
    p.add_argument("--name", help="the pod's name, when the file holds several")
    p.add_argument("--percentage-of-nodes-to-score", type=_PERCENTAGE, default=None,
                   help="0-100 (0: adaptive; default: the configuration's; 100: judge every node)")
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=_explain)

    p = sub.add_parser("bench", help="scheduler_perf-shaped throughput benchmarks")
    p.add_argument("--workload", action="append",
                   help="run the workloads whose name contains this (repeatable)")
    p.add_argument("--rounds", type=_integer(1, 1000), default=3)
    p.add_argument("--scale", type=_number(0.0, above=True, high=MAX_SCALE), default=1.0,
                   help="shrink every workload (smoke runs)")
    p.add_argument("--json", action="store_true",
                   help="print upstream scheduler_perf's dataItems shape")
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=_bench)

    p = sub.add_parser("simulate", help="run the scheduler over a timeline of cluster events")
    p.add_argument("cluster", help="nodes, running pods, PriorityClasses, PDBs (file, folder or "
                                   "-), or 'day-of-churn' for a generated day")
    _live_options(p)
    p.add_argument("--events", help="timeline: JSON lines / JSON / YAML list of events, or - "
                                    "(default: the cluster's pending pods, created at time 0)")
    p.add_argument("--until", type=_number(0.0), default=None,
                   help="stop at this virtual second (day-of-churn: 86400, the day's end)")
    p.add_argument("--log", help="write the event log (JSON lines) here (default: stdout)")
    p.add_argument("--summary", help="write the summary (JSON) here (default: stderr)")
    p.add_argument("--samples", help="write queue lengths and utilisation over time here")
    p.add_argument("--sample-every", type=_number(0.0, above=True), default=60.0,
                   help="virtual seconds (> 0)")
    p.add_argument("--tie-break", choices=("round-robin", "random"), default="round-robin")
    p.add_argument("--seed", type=_SEED, default=0)
    p.add_argument("--nodes", type=_integer(1, MAX_NODES), default=None,
                   help="day-of-churn: nodes (default 5000)")
    p.add_argument("--arrivals", type=_integer(1, MAX_PODS), default=None,
                   help="day-of-churn: pods (default 100000)")
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=_simulate)

    p = sub.add_parser("demo", help="schedule a SchedulingBasic-shaped cluster end to end")
    p.add_argument("--nodes", type=_integer(1, MAX_NODES), default=5000)
    p.add_argument("--running", type=_integer(0, MAX_PODS), default=1000)
    p.add_argument("--pending", type=_integer(1, MAX_PODS), default=10000)
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=_demo)

    p = sub.add_parser("snapshot", help="save a live cluster's objects for offline analysis")
    _live_options(p)
    p.add_argument("-o", "--output", required=True,
                   help="the snapshot file (a v1 List; gzip-compressed when it ends in .gz)")
    p.set_defaults(func=_snapshot)

    p = sub.add_parser("example", help="write a small snapshot.json and pending.yaml to try")
    p.add_argument("directory", help="where to write them (created if missing)")
    p.add_argument("--nodes", type=_integer(1, MAX_NODES), default=300)
    p.add_argument("--running", type=_integer(0, MAX_PODS), default=2000)
    p.set_defaults(func=_example)

    p = sub.add_parser("capacity", help="how many more copies of each template fit")
    p.add_argument("cluster", help=f"nodes and running pods ({source_help})")
    _live_options(p)
    p.add_argument("templates", nargs="+", metavar="TEMPLATE",
                   help="files with the template pod (the first pod of each file)")
    p.add_argument("--all-pods", action="store_true",
                   help="use every pod of each TEMPLATE file, not only the first")
    p.add_argument("--max-limit", type=_integer(0, MAX_PODS), default=None,
                   help="stop each template after this many copies")
    p.add_argument("--exclude-nodes", type=_comma_list, default=None,
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
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=_capacity)

    p = sub.add_parser("headroom", help="free, used and stranded capacity; zone loss")
    p.add_argument("cluster", help=f"nodes and running pods ({source_help})")
    _live_options(p)
    p.add_argument("--reference", metavar="POD_FILE",
                   help="file whose first pod is the shape to count fits and stranding for")
    p.add_argument("--by", help="a node label key: rows per value of it")
    p.add_argument("--without", metavar="SELECTOR",
                   help="remove these nodes first ('key=value', 'key in (a,b)' or names a,b) "
                        "and re-place their pods")
    p.add_argument("-o", "--output", choices=("table", "json", "csv"), default="table")
    p.add_argument("--plot", help="draw the report into FILE.png, .svg or .html")
    p.add_argument("--config", help=config_help)
    p.set_defaults(func=_headroom)

    if importlib.util.find_spec("ksched.planning.plan") is not None:
        p = sub.add_parser("plan", help="the fewest / cheapest new nodes for pending workloads")
        p.add_argument("cluster", help=f"nodes and running pods ({source_help})")
        _live_options(p)
        p.add_argument("workloads", nargs="+", metavar="WORKLOADS",
                       help="files with the workloads and pods to make room for")
        p.add_argument("--node-type", action="append", required=True, metavar="FILE[=PRICE]",
                       help="a Node manifest to add copies of, with its price (repeatable)")
        p.add_argument("-o", "--output", choices=("table", "json"), default="table")
        p.set_defaults(func=_plan)
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
            _with_live_cluster(parser, sys.argv[1:] if argv is None else argv))
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


if __name__ == "__main__":
    sys.exit(main())

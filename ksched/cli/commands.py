"""The scheduling commands: ``conformance``, ``schedule``, ``explain``, ``bench``, ``simulate``,
``demo``, ``snapshot`` and ``example``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import attrs

from ksched.cli.common import (
    CONFIG_HELP,
    MAX_NODES,
    MAX_PODS,
    MAX_SCALE,
    PATH,
    PERCENTAGE,
    SEED,
    SOURCE_HELP,
    Inputs,
    UsageError,
    check_output,
    check_outputs,
    configuration,
    integer,
    live_options,
    named,
    nonempty,
    number,
    write_outputs,
)
from ksched.constants import TIE_BREAKS

#: ``ksched simulate day-of-churn``: the generated day's length, and its run's default
#: ``--until`` (the run stops at the end of the day, pods still running).
DAY = 86_400.0


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
    from ksched.kernels.compile_clock import stopwatch

    config = configuration(args)
    inputs = Inputs(args)
    cluster = ksched.cluster_from_objects(inputs.objects(args.cluster))
    pods = inputs.objects(args.pods or args.cluster).pending_pods
    if args.pods and args.pods != args.cluster and not pods:
        raise UsageError(f"{named(args.pods)}: no pending pods (pods without spec.nodeName)")
    with stopwatch() as clock:
        result = ksched.schedule_batch(
            cluster, pods, profile=config,
            percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
            tie_break=args.tie_break, seed=args.seed)
    if args.output == "json":
        json.dump(result.to_records(), sys.stdout, indent=1)
        print()
    else:
        for p in result.placements:
            print(f"{p.pod.key}\t{p.node or '-'}\t{p.reason}")
    print(f"{len(result.scheduled)} scheduled, {len(result.unschedulable)} unschedulable "
          f"in {clock}", file=sys.stderr)
    return 0


def _explain(args: argparse.Namespace) -> int:
    import ksched

    config = configuration(args)
    inputs = Inputs(args)
    cluster = ksched.cluster_from_objects(inputs.objects(args.cluster))
    pods = [p for p in inputs.objects(args.pod).pending_pods
            if not args.name or p.name == args.name]
    if not pods:
        called = f' named "{args.name}"' if args.name else ""
        raise UsageError(f"no pending pod{called} in {named(args.pod)}")
    why = ksched.explain(cluster, pods[0], profile=config,
                         percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
                         tie_break=args.tie_break)
    print(json.dumps(why.to_dict(), indent=1, default=list))
    return 0


def _simulate(args: argparse.Namespace) -> int:
    import ksched
    from ksched.simulator import Simulator
    from ksched.timeline import arrivals_at_once, day_of_churn

    check_outputs((args.log, "--log"), (args.summary, "--summary"),
                  (args.samples, "--samples"))
    config = configuration(args)
    inputs = Inputs(args)
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
    outputs = [(args.log, [json.dumps(r) + "\n" for r in result.event_log()])]
    if args.samples:
        outputs.append((args.samples, [json.dumps(attrs.asdict(s)) + "\n"
                                       for s in result.samples]))
    if args.summary:
        outputs.append((args.summary, [summary]))
    write_outputs(outputs)  # every line made first: a failure writes nothing
    if not args.summary:
        sys.stderr.write(summary)
    return 0


def _demo(args: argparse.Namespace) -> int:
    from ksched.demo import run_demo

    run_demo(nodes=args.nodes, running=args.running, pending=args.pending,
             profile=configuration(args))
    return 0


def _example(args: argparse.Namespace) -> int:
    from ksched.example import write_example

    if args.gpu:
        for given, option in ((args.nodes, "--nodes"), (args.running, "--running")):
            if given is not None:
                raise UsageError(f"{option}: not with --gpu (the GPU example's cluster is "
                                 "fixed: 84 nodes)")
    for path in write_example(args.directory, nodes=args.nodes or 300,
                              running=2000 if args.running is None else args.running,
                              gpu=args.gpu):
        print(path)
    return 0


def _bench(args: argparse.Namespace) -> int:
    from ksched import bench
    from ksched.kernels.compile_clock import stopwatch
    from ksched.kernels.naive_unit import unit

    note = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    chosen = bench.workloads(args.workload, trace_dir=args.trace_dir, note=note)
    say = note if not args.json else None
    config = configuration(args)
    u_before = unit()
    with stopwatch() as clock:
        results = [bench.measure(w, rounds=args.rounds, scale=args.scale, progress=say,
                                 profile=config, tie_break=args.tie_break)
                   for w in chosen]
    if clock.compiling:
        note(f"compiling kernels took {clock.compiling:.1f}s, in the untimed warm-ups (once "
             "after an install)")
    u = (u_before + unit()) / 2  # U on this machine, in this window (before and after)
    if args.json:
        print(json.dumps({"version": "v1", "dataItems": [r.data_item() for r in results],
                          "unitPodsPerSecond": u}, indent=1))
        return 0
    print(f"tie-break: {args.tie_break}")
    print(f"U (naive full scan, 5,000 nodes) = {u:,.0f} pods/s on this machine; its scan "
          f"costs {1e9 / (u * 5000):.1f} ns per node, the roofline of a fused filter + score "
          f"pass (ns/node below: per node the walk covers, which the tree does not visit)")
    print(f"{'workload':<58} {'median':>10} {'unit':<8} {'x U':>6} {'ns/node':>8} "
          f"{'scheduled':>10}")
    for r in results:
        print(f"{r.workload:<58} {r.median_pods_per_second:>10,.0f} {r.unit:<8} "
              f"{r.median_pods_per_second / u:>6.2f} {r.ns_per_node:>8.1f} {r.scheduled:>10}")
    return 0


def _plural(kind: str, count: int) -> str:
    """``Node``/``Nodes``, ``StorageClass``/``StorageClasses``."""
    if count == 1:
        return kind
    return kind + ("es" if kind.endswith("s") else "s")


def _snapshot(args: argparse.Namespace) -> int:
    from ksched.live import read_live_items, save_snapshot

    check_output(args.output, "-o")
    items = read_live_items(args.kubeconfig, args.context)
    path = save_snapshot(items, args.output)
    kinds: dict[str, int] = {}
    for item in items:
        kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
    counts = ", ".join(f"{n} {_plural(k, n)}" for k, n in kinds.items())
    print(f"{path}: {counts or 'no objects'}", file=sys.stderr)
    return 0


TIE_BREAK_HELP = ("ties among the top-score nodes: round-robin (default), random (--seed) or heap "
                  "(kube-scheduler v1.35's own order)")


def add_parsers(sub: Any) -> None:
    """The scheduling commands' parsers, on ``sub`` (argparse's subparsers)."""
    p = sub.add_parser("conformance", help="replay recorded kube-scheduler traces")
    p.add_argument("paths", nargs="+", type=PATH, help="trace files or folders of *.json.gz traces")
    p.add_argument("--quiet", action="store_true", help="print only failures and skips")
    p.add_argument("--strict", action="store_true", help="count unsupported cases as failures")
    p.set_defaults(func=_conformance)

    p = sub.add_parser("schedule", help="schedule pending pods onto a cluster snapshot")
    p.add_argument("cluster", type=PATH, help=f"nodes and running pods ({SOURCE_HELP})")
    live_options(p)
    p.add_argument("pods", nargs="?", type=PATH,
                   help="pending pods (default: the cluster's unbound pods)")
    p.add_argument("--percentage-of-nodes-to-score", type=PERCENTAGE, default=None,
                   help="0-100 (0: adaptive; default: the configuration's)")
    p.add_argument("--tie-break", choices=TIE_BREAKS, default="round-robin",
                   help=TIE_BREAK_HELP)
    p.add_argument("--seed", type=SEED, default=None, help="random tie-break seed (>= 0)")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    p.add_argument("--config", type=PATH, help=CONFIG_HELP)
    p.set_defaults(func=_schedule)

    p = sub.add_parser("explain", help="every plugin's verdict and score for one pod")
    p.add_argument("cluster", type=PATH, help=f"nodes and running pods ({SOURCE_HELP})")
    live_options(p)
    p.add_argument("pod", type=PATH, help="file with the pending pod")
    p.add_argument("--name", type=nonempty("a pod name"),
                   help="the pod's name, when the file holds several")
    p.add_argument("--percentage-of-nodes-to-score", type=PERCENTAGE, default=None,
                   help="0-100 (0: adaptive; default: the configuration's; 100: judge every node)")
    p.add_argument("--tie-break", choices=TIE_BREAKS, default="round-robin",
                   help=TIE_BREAK_HELP)
    p.add_argument("--config", type=PATH, help=CONFIG_HELP)
    p.set_defaults(func=_explain)

    p = sub.add_parser("bench", help="scheduler_perf-shaped throughput benchmarks")
    p.add_argument("--workload", action="append", type=nonempty("part of a workload name"),
                   help="run the workloads whose name contains this (repeatable)")
    p.add_argument("--rounds", type=integer(1, 1000), default=3)
    p.add_argument("--scale", type=number(0.0, above=True, high=MAX_SCALE), default=1.0,
                   help="shrink every workload (smoke runs)")
    p.add_argument("--json", action="store_true",
                   help="print upstream scheduler_perf's dataItems shape")
    p.add_argument("--config", type=PATH, help=CONFIG_HELP)
    p.add_argument("--tie-break", choices=TIE_BREAKS, default="round-robin",
                   help=TIE_BREAK_HELP)
    p.add_argument("--trace-dir", type=PATH,
                   help="folder of Alibaba's cluster-trace-gpu-v2023 CSVs: adds the trace "
                        "workloads (ksched.alibaba)")
    p.set_defaults(func=_bench)

    p = sub.add_parser("simulate", help="run the scheduler over a timeline of cluster events")
    p.add_argument("cluster", type=PATH,
                   help="nodes, running pods, PriorityClasses, PDBs (file, folder or -), or "
                        "'day-of-churn' for a generated day")
    live_options(p)
    p.add_argument("--events", type=PATH,
                   help="timeline: JSON lines / JSON / YAML list of events, or - (default: the "
                        "cluster's pending pods, created at time 0)")
    p.add_argument("--until", type=number(0.0), default=None,
                   help="stop at this virtual second (day-of-churn: 86400, the day's end)")
    p.add_argument("--log", type=PATH,
                   help="write the event log (JSON lines) here (default: stdout)")
    p.add_argument("--summary", type=PATH, help="write the summary (JSON) here (default: stderr)")
    p.add_argument("--samples", type=PATH,
                   help="write queue lengths and utilisation over time here")
    p.add_argument("--sample-every", type=number(0.0, above=True), default=60.0,
                   help="virtual seconds (> 0)")
    p.add_argument("--tie-break", choices=TIE_BREAKS, default="round-robin",
                   help=TIE_BREAK_HELP)
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--nodes", type=integer(1, MAX_NODES), default=None,
                   help="day-of-churn: nodes (default 5000)")
    p.add_argument("--arrivals", type=integer(1, MAX_PODS), default=None,
                   help="day-of-churn: pods (default 100000)")
    p.add_argument("--config", type=PATH, help=CONFIG_HELP)
    p.set_defaults(func=_simulate)

    p = sub.add_parser("demo", help="schedule a SchedulingBasic-shaped cluster end to end")
    p.add_argument("--nodes", type=integer(1, MAX_NODES), default=5000)
    p.add_argument("--running", type=integer(0, MAX_PODS), default=1000)
    p.add_argument("--pending", type=integer(1, MAX_PODS), default=10000)
    p.add_argument("--config", type=PATH, help=CONFIG_HELP)
    p.set_defaults(func=_demo)

    p = sub.add_parser("snapshot", help="save a live cluster's objects for offline analysis")
    live_options(p)
    p.add_argument("-o", "--output", required=True, type=PATH,
                   help="the snapshot file (a v1 List; gzip-compressed when it ends in .gz)")
    p.set_defaults(func=_snapshot)

    p = sub.add_parser("example", help="write a small snapshot.json and pending.yaml to try")
    p.add_argument("directory", type=PATH, help="where to write them (created if missing)")
    p.add_argument("--nodes", type=integer(1, MAX_NODES), help="nodes (default 300)")
    p.add_argument("--running", type=integer(0, MAX_PODS),
                   help="running pods (default 2000)")
    p.add_argument("--gpu", action="store_true",
                   help="a heterogeneous GPU cluster instead: CPU nodes and three GPU models "
                        "(nvidia.com/gpu, nvidia.com/gpu.product), GPU workloads and three GPU "
                        "node types to plan with")
    p.set_defaults(func=_example)

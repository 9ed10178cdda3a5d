"""The ``ksched`` command line."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence

import attrs

from ksched.errors import KschedError


def _conformance(args: argparse.Namespace) -> int:
    from ksched import conformance

    results = []
    for result in conformance.run(args.paths):
        results.append(result)
        if not (args.quiet and result.outcome == conformance.PASS):
            print(result.line(), flush=True)
    print(conformance.summary(results))
    failed = any(r.outcome == conformance.FAIL or (args.strict and r.outcome == conformance.SKIP)
                 for r in results)
    return 1 if failed else 0


def _configuration(args: argparse.Namespace):
    """The ``--config`` file's configuration, or ``None`` (the default profile)."""
    if not getattr(args, "config", None):
        return None
    from ksched.config import load_config

    return load_config(args.config)


def _schedule(args: argparse.Namespace) -> int:
    import ksched

    config = _configuration(args)
    cluster = ksched.load_cluster(args.cluster)
    pods = ksched.load_pods(args.pods if args.pods else args.cluster)
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
    cluster = ksched.load_cluster(args.cluster)
    pods = [p for p in ksched.load_pods(args.pod) if not args.name or p.name == args.name]
    if not pods:
        print("ksched: no pending pod found", file=sys.stderr)
        return 2
    profile = config.profile_for(pods[0].scheduler_name) if config is not None else None
    if config is not None and profile is None:
        print(f'ksched: no scheduler profile named "{pods[0].scheduler_name}"', file=sys.stderr)
        return 2
    print(json.dumps(ksched.explain(cluster, pods[0], profile=profile).to_dict(), indent=1,
                     default=list))
    return 0


def _simulate(args: argparse.Namespace) -> int:
    import ksched
    from ksched.io import read_objects
    from ksched.simulator import Simulator
    from ksched.timeline import arrivals_at_once, day_of_churn, load_events

    config = _configuration(args)
    pdbs, replicas, classes = (), {}, ()
    if args.cluster == "day-of-churn":
        cluster, events = day_of_churn(args.nodes, args.arrivals, seed=args.seed or 0)
    else:
        objects = read_objects(args.cluster)
        cluster = ksched.cluster_from_objects(objects)
        pdbs, classes = objects.pod_disruption_budgets, objects.priority_classes
        replicas = {(w.namespace, w.kind, w.name): w.replicas for w in objects.workloads
                    if w.replicas is not None}
        events = (load_events(args.events) if args.events
                  else arrivals_at_once(objects.pending_pods))
    simulator = Simulator(cluster, profile=config, pdbs=pdbs, replicas=replicas,
                          priority_classes=classes,
                          seed=args.seed, tie_break=args.tie_break,
                          sample_every=args.sample_every)
    result = simulator.run(events, until=args.until)
    with _output(args.log) as out:
        for record in result.event_log():
            out.write(json.dumps(record) + "\n")
    if args.samples:
        with open(args.samples, "w", encoding="utf-8") as out:
            for sample in result.samples:
                out.write(json.dumps(attrs.asdict(sample)) + "\n")
    summary = json.dumps(result.summary(), indent=1)
    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as out:
            out.write(summary + "\n")
    else:
        print(summary, file=sys.stderr)
    return 0


@contextlib.contextmanager
def _output(path: str | None):
    """An open text file for ``path``, or standard output for ``None`` / ``-``."""
    if path in (None, "-"):
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8") as out:
        yield out


def _demo(args: argparse.Namespace) -> int:
    from ksched.demo import run_demo

    run_demo(nodes=args.nodes, running=args.running, pending=args.pending,
             profile=_configuration(args))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from ksched import bench

    say = (lambda line: print(line, file=sys.stderr, flush=True)) if not args.json else None
    config = _configuration(args)
    results = [bench.measure(w, rounds=args.rounds, scale=args.scale, progress=say, profile=config)
               for w in bench.workloads(args.workload)]
    if args.json:
        print(json.dumps({"version": "v1", "dataItems": [r.data_item() for r in results]},
                         indent=1))
        return 0
    print(f"{'workload':<58} {'pods/s (median)':>16} {'ns/node':>8} {'scheduled':>10}")
    for r in results:
        print(f"{r.workload:<58} {r.median_pods_per_second:>16,.0f} {r.ns_per_node:>8.1f} "
              f"{r.scheduled:>10}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ksched", description=(
        "What kube-scheduler v1.35 would do with your pods, fast."))
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("conformance", help="replay recorded kube-scheduler traces")
    p.add_argument("paths", nargs="+", help="trace files or folders of *.json.gz traces")
    p.add_argument("--quiet", action="store_true", help="print only failures and skips")
    p.add_argument("--strict", action="store_true", help="count unsupported cases as failures")
    p.set_defaults(func=_conformance)

    p = sub.add_parser("schedule", help="schedule pending pods onto a cluster snapshot")
    p.add_argument("cluster", help="nodes and running pods (JSON/YAML file or folder)")
    p.add_argument("pods", nargs="?", help="pending pods (default: the cluster's unbound pods)")
    p.add_argument("--percentage-of-nodes-to-score", type=int, default=None)
    p.add_argument("--tie-break", choices=("round-robin", "random"), default="round-robin")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    p.add_argument("--config", help="a KubeSchedulerConfiguration file (YAML or JSON)")
    p.set_defaults(func=_schedule)

    p = sub.add_parser("explain", help="every plugin's verdict and score for one pod")
    p.add_argument("cluster")
    p.add_argument("pod", help="file with the pending pod")
    p.add_argument("--name", help="the pod's name, when the file holds several")
    p.add_argument("--config", help="a KubeSchedulerConfiguration file (YAML or JSON)")
    p.set_defaults(func=_explain)

    p = sub.add_parser("bench", help="scheduler_perf-shaped throughput benchmarks")
    p.add_argument("--workload", action="append",
                   help="run the workloads whose name contains this (repeatable)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--scale", type=float, default=1.0, help="shrink every workload (smoke runs)")
    p.add_argument("--json", action="store_true",
                   help="print upstream scheduler_perf's dataItems shape")
    p.add_argument("--config", help="a KubeSchedulerConfiguration file (YAML or JSON)")
    p.set_defaults(func=_bench)

    p = sub.add_parser("simulate", help="run the scheduler over a timeline of cluster events")
    p.add_argument("cluster", help="nodes, running pods, PriorityClasses, PDBs (file or folder), "
                                   "or 'day-of-churn' for a generated day")
    p.add_argument("--events", help="timeline: JSON lines / JSON / YAML list of events "
                                    "(default: the cluster's pending pods, created at time 0)")
    p.add_argument("--until", type=float, default=None, help="stop at this virtual second")
    p.add_argument("--log", help="write the event log (JSON lines) here (default: stdout)")
    p.add_argument("--summary", help="write the summary (JSON) here (default: stderr)")
    p.add_argument("--samples", help="write queue lengths and utilisation over time here")
    p.add_argument("--sample-every", type=float, default=60.0, help="virtual seconds")
    p.add_argument("--tie-break", choices=("round-robin", "random"), default="round-robin")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--nodes", type=int, default=5000, help="day-of-churn: nodes")
    p.add_argument("--arrivals", type=int, default=100_000, help="day-of-churn: pods")
    p.add_argument("--config", help="a KubeSchedulerConfiguration file (YAML or JSON)")
    p.set_defaults(func=_simulate)

    p = sub.add_parser("demo", help="schedule a SchedulingBasic-shaped cluster end to end")
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--running", type=int, default=1000)
    p.add_argument("--pending", type=int, default=10000)
    p.add_argument("--config", help="a KubeSchedulerConfiguration file (YAML or JSON)")
    p.set_defaults(func=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KschedError as exc:
        print(f"ksched: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        where = f"{exc.filename}: no such file or directory" if exc.filename else str(exc)
        print(f"ksched: {where}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (``ksched ... | head``): stop quietly
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps Python's exit flush quiet
        return 0


if __name__ == "__main__":
    sys.exit(main())

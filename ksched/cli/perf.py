"""``ksched perf``: run upstream's scheduler_perf suite (its ``performance-config.yaml``
files, unmodified) and write the results as upstream does."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from ksched.cli.common import PATH, UsageError, check_output, number, write_outputs
from ksched.constants import PERF_CYCLE_SECONDS as CYCLE_SECONDS

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:
    """The ``perf`` parser, on ``sub`` (argparse's subparsers)."""
    p = sub.add_parser("perf", help="run scheduler_perf's performance-config.yaml workloads")
    p.add_argument("configs", nargs="+", metavar="CONFIG", type=PATH,
                   help="scheduler_perf config files (test/integration/scheduler_perf/"
                        "*/performance-config.yaml of a kubernetes checkout)")
    p.add_argument("--label", action="append", default=None, metavar="L",
                   help="run workloads carrying label L; '-L' excludes it (repeatable; "
                        "default: performance)")
    p.add_argument("--workload", metavar="REGEX", default=None,
                   help="run workloads whose TestCase/workload name matches REGEX")
    p.add_argument("-o", "--output", metavar="FILE.json", default=None,
                   help="the results file (default: upstream's name, "
                        "BenchmarkPerfScheduling_benchmark_<time>.json, here)")
    p.add_argument("--cycle-seconds", type=number(0.0, above=True), default=CYCLE_SECONDS,
                   help="virtual seconds one scheduling attempt costs on the simulator's "
                        f"clock (default: {CYCLE_SECONDS})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the selected workloads; exit status 1 when one failed, else 0."""
    from ksched.perf import report

    check_output(args.output, "-o")
    workloads = report.selected(args.configs, args.label or ["performance"], args.workload)
    if not workloads:
        raise UsageError("no workload matches the labels and --workload given")
    outcomes = report.run(workloads, args.cycle_seconds, _print_line)
    document, name = report.document(outcomes), args.output or report.default_name()
    write_outputs([(name, [json.dumps(document, indent=2) + "\n"])])
    for line in report.summary(outcomes, name):
        print(line)
    return 1 if any(o.status == "failed" for o in outcomes) else 0


def _print_line(lines: Sequence[str]) -> None:
    for line in lines:
        print(line, flush=True)

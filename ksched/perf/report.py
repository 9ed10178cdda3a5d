"""Putting a ``ksched perf`` run together: select workloads, run them, and write what upstream
writes (the data items file and ``go test -bench`` lines), with each skip's reason and upstream's
threshold shown for context."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

from ksched.perf.config import Workload, load_workloads, select
from ksched.perf.results import (
    BENCHMARK,
    attempt_items,
    bench_line,
    data_items,
    file_name,
    throughput_item,
)
from ksched.perf.runner import Outcome, run_workloads

__all__ = ["selected", "run", "document", "default_name", "summary", "engine_label"]


def engine_label() -> str:
    """``ksched-<version>`` (the installed distribution's version)."""
    try:
        return "ksched-" + metadata.version("ksched")
    except metadata.PackageNotFoundError:
        return "ksched-unknown"


def selected(paths: Sequence[str], labels: Sequence[str], pattern: str | None
             ) -> list[Workload]:
    """The workloads of the config files at ``paths`` that the labels and pattern select."""
    return select([w for path in paths for w in load_workloads(path)], labels, pattern)


def items_of(outcome: Outcome) -> list[dict[str, Any]]:
    """The data items of one outcome: per measurement, throughput and attempt durations."""
    out = []
    for m in outcome.measurements:
        labels = {"Name": f"{BENCHMARK}/{outcome.workload.full_name}/{m.namespace}",
                  "engine": engine_label(), "clock": m.clock}
        out.append(throughput_item(m, labels))
        out.extend(attempt_items(m, labels))
    return out


def document(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The results file's content for ``outcomes``."""
    return data_items([item for o in outcomes if o.status == "ok" for item in items_of(o)])


def default_name() -> str:
    return file_name()


def lines_of(outcome: Outcome) -> list[str]:
    """What the command prints for one outcome: its bench line, or its skip/failure."""
    name = outcome.workload.full_name
    if outcome.status != "ok":
        return [f"--- {outcome.status.upper()}: {BENCHMARK}/{name}: {outcome.reason}"]
    lines = []
    for m, item in ((m, throughput_item(m, {})) for m in outcome.measurements):
        average = item["data"].get("Average")
        lines.append(bench_line(f"{name}/{m.namespace}", outcome.seconds, average)
                     + f"\t# clock: {m.clock}, {outcome.path}")
    if outcome.workload.threshold is not None:
        lines.append(f"    upstream threshold (context only): {outcome.workload.threshold:g} "
                     f"{outcome.workload.threshold_metric.get('name', 'SchedulingThroughput')}")
    lines.extend(f"    note: {note}" for note in outcome.notes)
    return lines


def run(workloads: Sequence[Workload], cycle_seconds: float,
        show: Callable[[Sequence[str]], None]) -> list[Outcome]:
    """Run ``workloads``, showing each outcome's lines as it comes."""
    return run_workloads(workloads, cycle_seconds, lambda o: show(lines_of(o)))


def summary(outcomes: Sequence[Outcome], path: str) -> list[str]:
    """The closing lines: counts and the file written."""
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in ("ok", "skipped", "failed")}
    seconds = sum(o.seconds for o in outcomes)
    return [f"{counts['ok']} ran, {counts['skipped']} skipped, {counts['failed']} failed "
            f"in {seconds:.1f}s; results: {path}",
            "PASS" if not counts["failed"] else "FAIL"]

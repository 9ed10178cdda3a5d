"""Benchmark runner behind ``ksched bench`` (the same workloads as ``benchmarks/``): the
scheduler_perf-shaped workloads, a generated day of churn on the Simulator
(:data:`CHURN_WORKLOADS`), and the ones read from Alibaba's GPU trace in a folder the user names
(:data:`~ksched.workloads.TRACE_WORKLOADS`)."""

from __future__ import annotations

import math
import numbers
import statistics
import time
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from ksched.engine import schedule_batch
from ksched.errors import ArgumentError
from ksched.inputs import check_tie_break
from ksched.workloads import TRACE_WORKLOADS, WORKLOADS, TraceWorkload, Workload

#: The pods of the trace's head the simulator warms up on (untimed).
WARMUP_PODS = 20


def _day(nodes: int, arrivals: int) -> tuple[Any, list]:
    from ksched.timeline import day_of_churn

    return day_of_churn(nodes=nodes, arrivals=arrivals)


def _claim_churn(nodes: int, arrivals: int) -> tuple[Any, list]:
    from ksched.dra.workloads import steady_state_workload

    return steady_state_workload(nodes, arrivals)


@attrs.frozen
class ChurnWorkload:
    """A timeline replayed on the :class:`~ksched.simulator.Simulator`: ``arrivals`` pods
    created on ``nodes`` nodes, each finishing after its runtime, as ``make(nodes, arrivals)``
    gives them (by default a capacity planner's day, :func:`ksched.timeline.day_of_churn`);
    the rate is arrivals per second."""

    name: str
    nodes: int
    arrivals: int
    make: Callable[[int, int], tuple[Any, list]] = _day

    def profile(self) -> None:
        return None

    def timeline(self, scale: float = 1.0) -> tuple[Any, list]:
        """The cluster and the events (``scale`` shrinks both counts)."""
        return self.make(max(int(self.nodes * scale), 1), max(int(self.arrivals * scale), 1))


CHURN_WORKLOADS = {w.name: w for w in [
    ChurnWorkload("DayOfChurn/5000Nodes_100000Pods", 5000, 100_000),
    # scheduler_perf's steady state: each pod, with a claim from a template, deleted as it
    # is bound (the resourceclaim controller makes and deletes its claim)
    ChurnWorkload("SteadyStateClusterResourceClaimTemplate/half_500Nodes/churn", 500, 20_000,
                  _claim_churn)]}


@attrs.frozen
class Measurement:
    """One workload's timed rounds. ``pods`` counts what a round processes: pending pods, or
    for a simulation the timeline's events (``unit`` says which: ``pods/s`` or
    ``events/s``); ``nodes_evaluated`` is 0 where the run does not count them."""

    workload: str
    nodes: int
    pods: int
    build_seconds: float
    warmup_seconds: float
    seconds: tuple[float, ...]
    nodes_evaluated: int
    scheduled: int
    unit: str = "pods/s"

    @property
    def pods_per_second(self) -> tuple[float, ...]:
        return tuple(self.pods / s for s in self.seconds)

    @property
    def median_pods_per_second(self) -> float:
        return statistics.median(self.pods_per_second)

    @property
    def ns_per_node(self) -> float:
        """Median nanoseconds per node evaluated (NaN where nodes were not counted)."""
        if not self.nodes_evaluated:
            return math.nan
        return statistics.median(self.seconds) * 1e9 / self.nodes_evaluated

    def data_item(self) -> dict[str, Any]:
        """One ``dataItems`` entry in upstream scheduler_perf's shape (samples: the rounds)."""
        samples = np.array(self.pods_per_second)
        return {
            "data": {"Average": float(samples.mean()),
                     "Perc50": float(np.percentile(samples, 50)),
                     "Perc90": float(np.percentile(samples, 90)),
                     "Perc99": float(np.percentile(samples, 99))},
            "unit": self.unit,
            "labels": {"Metric": "SchedulingThroughput", "Name": self.workload,
                       "nodes": str(self.nodes), "pods": str(self.pods)},
        }


def measure(workload: Workload | ChurnWorkload | TraceWorkload, rounds: int = 3,
            scale: float = 1.0, progress: Callable[[str], None] | None = None,
            profile: Any = None, tie_break: str = "round-robin") -> Measurement:
    """Build the workload (its pods as a :class:`~ksched.pod_table.PodTable`, untimed), warm
    the kernels up on its first ``warmup_pods`` pods, then time ``rounds`` runs of
    ``schedule_batch`` on the table (with ``profile``: a Profile or a configuration, and
    ``tie_break``, as ``schedule_batch`` takes them; a simulated trace workload keeps
    round-robin). A trace workload with ``simulate`` times ``rounds`` replays of its
    timeline instead (:func:`measure_simulation`), a churn workload replays of its day
    (:func:`measure_churn`)."""
    if isinstance(rounds, bool) or not isinstance(rounds, numbers.Integral) or rounds < 1:
        raise ArgumentError(f"measure: rounds: must be an integer >= 1, got {rounds!r}")
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) \
            or not 0 < scale < math.inf:
        raise ArgumentError(f"measure: scale: must be a finite number > 0, got {scale!r}")
    if isinstance(workload, TraceWorkload) and workload.simulate:
        return measure_simulation(workload, rounds, scale, progress, profile)
    if isinstance(workload, ChurnWorkload):
        return measure_churn(workload, rounds, scale, progress, profile)
    say = progress or (lambda _: None)
    started = time.perf_counter()
    cluster, pods = workload.make(scale)
    build = time.perf_counter() - started
    say(f"{workload.name}: built {cluster.num_nodes} nodes, {len(pods)} pods in {build:.2f}s")
    kw = dict(percentage_of_nodes_to_score=workload.percentage_of_nodes_to_score,
              profile=profile if profile is not None else workload.profile(),
              tie_break=check_tie_break(tie_break))
    started = time.perf_counter()
    schedule_batch(cluster, pods if workload.warmup_pods is None
                   else pods[:workload.warmup_pods], **kw)
    warmup = time.perf_counter() - started
    seconds = []
    result = None
    for i in range(rounds):
        started = time.perf_counter()
        result = schedule_batch(cluster, pods, **kw)
        seconds.append(time.perf_counter() - started)
        say(f"{workload.name}: round {i + 1}/{rounds}: {len(pods) / seconds[-1]:,.0f} pods/s")
    return Measurement(workload.name, cluster.num_nodes, len(pods), build, warmup,
                       tuple(seconds), result.nodes_evaluated,
                       int((result.node_rows >= 0).sum()))


def measure_simulation(workload: TraceWorkload, rounds: int = 3, scale: float = 1.0,
                       progress: Callable[[str], None] | None = None,
                       profile: Any = None) -> Measurement:
    """Load the trace and its timeline (untimed), compile every kernel (:func:`ksched.warmup`:
    preemption's too) and replay the timeline of the first :data:`WARMUP_PODS` pods, then
    time ``rounds`` replays of the whole timeline, each on a fresh
    :class:`~ksched.simulator.Simulator`; the rate is timeline events per second."""
    from ksched.alibaba import gpu_trace_timeline
    from ksched.loading import warmup as compile_kernels

    say = progress or (lambda _: None)
    started = time.perf_counter()
    trace = workload.load(scale)
    events = gpu_trace_timeline(trace)
    build = time.perf_counter() - started
    say(f"{workload.name}: built {trace.cluster.num_nodes} nodes, {len(events)} events in "
        f"{build:.2f}s")
    started = time.perf_counter()
    compile_kernels()
    _replay(trace, gpu_trace_timeline(trace.head(WARMUP_PODS)), profile)
    warmup = time.perf_counter() - started
    seconds, summary = [], {}
    for i in range(rounds):
        started = time.perf_counter()
        summary = _replay(trace, events, profile).summary()
        seconds.append(time.perf_counter() - started)
        say(f"{workload.name}: round {i + 1}/{rounds}: {len(events) / seconds[-1]:,.0f} "
            f"events/s")
    return Measurement(workload.name, trace.cluster.num_nodes, len(events), build, warmup,
                       tuple(seconds), 0, summary["pods_scheduled"], unit="events/s")


def measure_churn(workload: ChurnWorkload, rounds: int = 3, scale: float = 1.0,
                  progress: Callable[[str], None] | None = None,
                  profile: Any = None) -> Measurement:
    """Make the day (untimed), compile every kernel and replay its first 2,000 arrivals, then
    time ``rounds`` replays of the whole day, each on a fresh Simulator; the rate is the
    day's arrivals per second (finishes are the Simulator's own events, as in the trace's)."""
    from ksched.loading import warmup as compile_kernels
    from ksched.simulator import Simulator

    say = progress or (lambda _: None)
    started = time.perf_counter()
    cluster, events = workload.timeline(scale)
    build = time.perf_counter() - started
    say(f"{workload.name}: built {cluster.num_nodes} nodes, {len(events)} arrivals in "
        f"{build:.2f}s")
    started = time.perf_counter()
    compile_kernels()
    Simulator(cluster, profile=profile).run(events[:2000])
    warmup = time.perf_counter() - started
    seconds, summary = [], {}
    for i in range(rounds):
        started = time.perf_counter()
        summary = Simulator(cluster, profile=profile).run(events).summary()
        seconds.append(time.perf_counter() - started)
        say(f"{workload.name}: round {i + 1}/{rounds}: {len(events) / seconds[-1]:,.0f} "
            f"events/s")
    return Measurement(workload.name, cluster.num_nodes, len(events), build, warmup,
                       tuple(seconds), 0, summary["pods_scheduled"], unit="events/s")


def _replay(trace: Any, events: list, profile: Any) -> Any:
    """One simulation of ``events`` on the trace's cluster, with its PriorityClasses."""
    from ksched.simulator import Simulator

    return Simulator(trace.cluster, profile=profile,
                     priority_classes=trace.priority_classes).run(events)


def workloads(names: list[str] | None, trace_dir: str | None = None,
              note: Callable[[str], None] | None = None
              ) -> list[Workload | ChurnWorkload | TraceWorkload]:
    """The workloads whose name contains one of ``names`` (all of them for none); a name
    that matches no workload is refused, listing the known ones.

    The trace workloads read Alibaba's GPU trace from ``trace_dir``; without it they are left
    out, and ``note`` (if given) is told why. A ``trace_dir`` without the trace's CSVs is
    refused (:func:`ksched.alibaba.trace_files`)."""
    known = {**WORKLOADS, **CHURN_WORKLOADS, **TRACE_WORKLOADS}
    for name in names or ():
        if not any(name in w for w in known):
            raise ArgumentError(f"workload: no workload's name contains {name!r}; known: "
                                f"{', '.join(known)}")
    chosen = [w for w in known.values() if not names or any(n in w.name for n in names)]
    traced = [w for w in chosen if isinstance(w, TraceWorkload)]
    if traced and trace_dir is None:
        for w in traced:
            (note or (lambda _: None))(f"{w.name}: skipped: it needs --trace-dir DIR, a folder "
                                       f"with Alibaba's cluster-trace-gpu-v2023 CSVs")
        return [w for w in chosen if not isinstance(w, TraceWorkload)]
    if traced:
        from ksched.alibaba import trace_files

        trace_files(trace_dir)
    return [attrs.evolve(w, folder=str(trace_dir)) if isinstance(w, TraceWorkload) else w
            for w in chosen]

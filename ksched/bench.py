"""Benchmark runner behind ``ksched bench`` (the same workloads as ``benchmarks/``)."""

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
from ksched.workloads import WORKLOADS, Workload


@attrs.frozen
class Measurement:
    workload: str
    nodes: int
    pods: int
    build_seconds: float
    warmup_seconds: float
    seconds: tuple[float, ...]
    nodes_evaluated: int
    scheduled: int

    @property
    def pods_per_second(self) -> tuple[float, ...]:
        return tuple(self.pods / s for s in self.seconds)

    @property
    def median_pods_per_second(self) -> float:
        return statistics.median(self.pods_per_second)

    @property
    def ns_per_node(self) -> float:
        return statistics.median(self.seconds) * 1e9 / max(self.nodes_evaluated, 1)

    def data_item(self) -> dict[str, Any]:
        """One ``dataItems`` entry in upstream scheduler_perf's shape (samples: the rounds)."""
        samples = np.array(self.pods_per_second)
        return {
            "data": {"Average": float(samples.mean()),
                     "Perc50": float(np.percentile(samples, 50)),
                     "Perc90": float(np.percentile(samples, 90)),
                     "Perc99": float(np.percentile(samples, 99))},
            "unit": "pods/s",
            "labels": {"Metric": "SchedulingThroughput", "Name": self.workload,
                       "nodes": str(self.nodes), "pods": str(self.pods)},
        }


def measure(workload: Workload, rounds: int = 3, scale: float = 1.0,
            progress: Callable[[str], None] | None = None, profile: Any = None) -> Measurement:
    """Build the workload (its pods as a :class:`~ksched.pod_table.PodTable`, untimed), warm
    the kernels up on a small slice, then time ``rounds`` runs of ``schedule_batch`` on the
    table (with ``profile``: a Profile or a configuration, as ``schedule_batch`` takes)."""
    if isinstance(rounds, bool) or not isinstance(rounds, numbers.Integral) or rounds < 1:
        raise ArgumentError(f"measure: rounds: must be an integer >= 1, got {rounds!r}")
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) \
            or not 0 < scale < math.inf:
        raise ArgumentError(f"measure: scale: must be a finite number > 0, got {scale!r}")
    say = progress or (lambda _: None)
    started = time.perf_counter()
    cluster, pods = workload.make(scale)
    build = time.perf_counter() - started
    say(f"{workload.name}: built {cluster.num_nodes} nodes, {len(pods)} pods in {build:.2f}s")
    kw = dict(percentage_of_nodes_to_score=workload.percentage_of_nodes_to_score,
              profile=profile if profile is not None else workload.profile())
    started = time.perf_counter()
    schedule_batch(cluster, pods[:10], **kw)
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


def workloads(names: list[str] | None) -> list[Workload]:
    """The workloads whose name contains one of ``names`` (all of them for none); a name
    that matches no workload is refused, listing the known ones."""
    if not names:
        return list(WORKLOADS.values())
    for name in names:
        if not any(name in w for w in WORKLOADS):
            raise ArgumentError(f"workload: no workload's name contains {name!r}; known: "
                                f"{', '.join(WORKLOADS)}")
    return [w for w in WORKLOADS.values() if any(n in w.name for n in names)]

"""Capacity-planning speed (issue 12): max fit on SchedulingBasic's 5,000 nodes, by the
closed form and through the scheduling loop, and headroom with a zone lost on 5,000 nodes /
50,000 running pods. Medians in pytest-benchmark's table; ``extra_info`` holds the answers,
pods/s and ``x_U``."""

from __future__ import annotations

import attrs
import pytest

from ksched import ClusterState
from ksched.planning import capacity, headroom
from ksched.workloads import default_pod, scheduling_basic

ZONE = "topology.kubernetes.io/zone"
NODES = 5000


@pytest.fixture(scope="module")
def basic():
    """SchedulingBasic's 5,000 nodes with 1,000 running pods, and a 100m / 500Mi template."""
    cluster, _ = scheduling_basic(NODES, 1000, 0)
    return cluster, default_pod("fit", requests={"cpu": 100, "memory": 500 * 2**20})


def bench_max_fit_closed_form(benchmark, basic):
    cluster, template = basic
    report = benchmark(capacity, cluster, template)
    result = report.results[0]
    assert result.method == "closed-form"
    assert result.replicas > 100_000
    benchmark.extra_info.update(replicas=result.replicas, target_seconds=0.05)


def bench_max_fit_loop(benchmark, basic, unit):
    cluster, template = basic
    limit = capacity(cluster, template).results[0].replicas  # the limit forces the loop
    report = benchmark.pedantic(capacity, (cluster, template), {"max_limit": limit},
                                rounds=3, iterations=1)
    result = report.results[0]
    assert result.method == "loop" and result.replicas == limit
    rate = result.replicas / benchmark.stats.stats.median
    benchmark.extra_info.update(replicas=result.replicas, pods_per_second=rate,
                                x_U=rate / unit)


@pytest.fixture(scope="module")
def zoned():
    """5,000 nodes in three zones with 50,000 running pods (10 per node)."""
    cluster, _ = scheduling_basic(NODES, 50_000, 0)
    zones = ("a", "b", "c")
    nodes = [attrs.evolve(n, labels={**n.labels, ZONE: zones[i % 3]})
             for i, n in enumerate(cluster.nodes)]
    return ClusterState.from_records(nodes, list(cluster.pods))


def bench_headroom_zone_loss(benchmark, zoned):
    report = benchmark.pedantic(headroom, (zoned,), {"by": ZONE, "without": f"{ZONE}=b"},
                                rounds=3, iterations=1)
    moved = report.displaced
    assert len(moved.removed_nodes) == len(range(1, NODES, 3))  # zone b: every third node
    assert len(moved.pods) > 10_000
    benchmark.extra_info.update(displaced=len(moved.pods), pending=len(moved.pending),
                                target_seconds=10.0)

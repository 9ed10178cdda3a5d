"""``plan`` for 10,000 pending pods of 5 workload shapes and 4 node types (target: under
30 s, most of it exact verification). ``x_U`` means nothing here: U is recorded alone."""

from __future__ import annotations

import os

import pytest

from ksched import Node
from ksched.planning.plan import plan
from ksched.state import ClusterState

#: (name, replicas, cpu, memory)
SHAPES = (("web", 4000, "250m", "512Mi"), ("api", 3000, "500m", "1Gi"),
          ("worker", 1500, "1", "2Gi"), ("cache", 1000, "200m", "4Gi"),
          ("batch", 500, "2", "1Gi"))
TYPES = (("m6i.large", "2", "8Gi", 0.096), ("m6i.xlarge", "4", "16Gi", 0.192),
         ("m6i.4xlarge", "16", "64Gi", 0.768), ("r6i.2xlarge", "8", "64Gi", 0.504))


def _deployment(name: str, replicas: int, cpu: str, memory: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {
                         "containers": [{"name": "c", "resources": {"requests": {
                             "cpu": cpu, "memory": memory}}}]}}}}


def bench_plan(benchmark, unit) -> None:
    workloads = [_deployment(*shape) for shape in SHAPES]
    types = [Node(name, labels={"node.kubernetes.io/instance-type": name},
                  allocatable={"cpu": cpu, "memory": memory, "pods": 110})
             for name, cpu, memory, _ in TYPES]
    prices = {name: price for name, _, _, price in TYPES}
    cluster = ClusterState.from_records([])
    report = benchmark.pedantic(plan, args=(cluster, workloads, types),
                                kwargs={"prices": prices}, rounds=3, iterations=1)
    benchmark.extra_info.update(
        seconds=benchmark.stats.stats.median, pods=len(report.placements),
        bound=report.bound, nodes=report.nodes, cost=report.cost,
        schedules=report.schedules, U=unit)
    assert report.complete and len(report.placements) == 10_000


TRACE_DIR = os.environ.get("KSCHED_TRACE_DIR", "")
#: Issue 24's node types for the trace: (GPU model, price per hour); each the trace's most
#: common node shape of that model (G2: 96 cpu, 384Gi, 8 GPUs; T4: 104 cpu, 512Gi, 2 GPUs;
#: P100: 16 cpu, 120Gi, 2 GPUs).
TRACE_TYPES = (("G2", 28.0), ("T4", 7.0), ("P100", 2.5))


def _trace_types(trace) -> list[Node]:
    """One node type per GPU model of :data:`TRACE_TYPES`, labelled as the loader labels
    the trace's nodes of that model."""
    import collections

    from ksched.alibaba import GPU, GPU_PRODUCT

    out = []
    for model, _ in TRACE_TYPES:
        shapes = collections.Counter(
            (n.allocatable["cpu"], n.allocatable["memory"], n.allocatable[GPU])
            for n in trace.cluster.nodes if n.labels.get(GPU_PRODUCT) == model)
        (cpu, memory, gpus), _ = shapes.most_common(1)[0]
        out.append(Node(model, labels={GPU_PRODUCT: model}, allocatable={
            "cpu": cpu, "memory": memory, "pods": 110, GPU: gpus}))
    return out


@pytest.mark.skipif(not TRACE_DIR, reason="KSCHED_TRACE_DIR does not name the folder of the "
                                          "trace's CSVs")
def bench_plan_trace_growth(benchmark, unit) -> None:
    """Issue 24's x1.5 growth of Alibaba's GPU trace (12,228 pending pods, the sweep's
    ``scale: 1.5``) on its 1,523 nodes, three GPU node types (target: under 60 s)."""
    from ksched.alibaba import load_gpu_trace
    from ksched.sweep.apply import scaled_pods

    trace = load_gpu_trace(TRACE_DIR)
    pods = list(scaled_pods(trace.pods, 1.5))
    prices = dict(TRACE_TYPES)
    report = benchmark.pedantic(plan, args=(trace.cluster, pods, _trace_types(trace)),
                                kwargs={"prices": prices}, rounds=1, iterations=1)
    benchmark.extra_info.update(
        seconds=benchmark.stats.stats.median, pods=len(pods), nodes=report.nodes,
        cost=report.cost, bound_cost=report.bound_cost, gap=report.gap,
        schedules=report.schedules, U=unit)
    assert report.local_minimum and not report.failed
    assert benchmark.stats.stats.median < 60

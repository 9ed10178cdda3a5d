"""``plan`` for 10,000 pending pods of 5 workload shapes and 4 node types (target: under
30 s, most of it exact verification). ``x_U`` means nothing here: U is recorded alone."""

from __future__ import annotations

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

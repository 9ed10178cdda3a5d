"""End-to-end throughput of ``schedule_batch`` on scheduler_perf-shaped workloads.

Run with ``python -m pytest benchmarks/`` (add ``--benchmark-json=out.json`` to keep figures).
The pending pods are a :class:`~ksched.pod_table.PodTable` built with the workload, untimed:
a batch does no Python per pod, so the compiled loop is what is timed.
Each benchmark reports pods/s, its multiple of U (``x_U``: the naive full-scan loop's pods/s
on this machine, ``kernels/naive_unit.py``) and nanoseconds per node evaluated in
``extra_info``.
"""

from __future__ import annotations

import pytest

import ksched
from ksched.workloads import WORKLOADS


@pytest.mark.parametrize("workload", list(WORKLOADS), indirect=True)
def bench_schedule_batch(benchmark, workload, unit) -> None:
    spec, cluster, pods = workload
    result = benchmark.pedantic(
        ksched.schedule_batch, args=(cluster, pods),
        kwargs={"percentage_of_nodes_to_score": spec.percentage_of_nodes_to_score,
                "profile": spec.profile()},
        rounds=3, iterations=1, warmup_rounds=1)
    seconds = benchmark.stats.stats.median
    scheduled = int((result.node_rows >= 0).sum())
    benchmark.extra_info.update(
        nodes=cluster.num_nodes, pods=len(pods), scheduled=scheduled,
        pods_per_second=len(pods) / seconds, x_U=len(pods) / seconds / unit, U=unit,
        ns_per_node=seconds * 1e9 / max(result.nodes_evaluated, 1))
    assert scheduled == len(pods)

"""DynamicResources: scheduler_perf's SchedulingWithResourceClaimTemplate shape (nodes with
eight devices each in a node-local slice, pods with a one-device claim template; the claims
generated as the resourceclaim controller does) and SteadyStateClusterResourceClaimTemplate's
churn (half the devices held, pods created one after another and deleted once bound, through
the Simulator). Pods/s goes into ``extra_info``; compare it with U from ``ksched bench`` in the
same run."""

from __future__ import annotations

from typing import Any

import pytest

from ksched.dra.workloads import claim_template_workload, steady_state_workload
from ksched.engine import schedule_batch


@pytest.mark.parametrize("nodes, pods", [(500, 5000)])
def test_bench_claim_template(benchmark: Any, nodes: int, pods: int) -> None:
    cluster, pending = claim_template_workload(nodes, pods)
    result = benchmark.pedantic(schedule_batch, args=(cluster, pending), rounds=1, iterations=1)
    assert sum(p.node is not None for p in result.placements) == min(pods, 8 * nodes)
    benchmark.extra_info.update(nodes=nodes, pods=pods,
                                pods_per_s=pods / benchmark.stats.stats.mean)


@pytest.mark.parametrize("nodes, pods", [(500, 2000)])
def test_bench_steady_state(benchmark: Any, nodes: int, pods: int) -> None:
    from ksched.simulator import Simulator

    cluster, events = steady_state_workload(nodes, pods)
    result = benchmark.pedantic(lambda: Simulator(cluster).run(events), rounds=1, iterations=1)
    assert result.summary()["pods_scheduled"] == pods
    benchmark.extra_info.update(nodes=nodes, pods=pods,
                                pods_per_s=pods / benchmark.stats.stats.mean)

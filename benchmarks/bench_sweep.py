"""What-if sweeps: 1,000 ``schedule`` scenarios (NodeResourcesFit, BalancedAllocation and
TaintToleration weights x scoring strategy) over the 5,000-node SchedulingBasic cluster, in
this process and on 2 local worker processes.

Run with ``python -m pytest benchmarks/bench_sweep.py --benchmark-only`` (a few minutes: each
scenario schedules SchedulingBasic's 10,000 pending pods; ``KSCHED_SWEEP_PENDING=1000`` makes
it ten times shorter, and the pool's start a larger share). ``extra_info`` reports the
scenarios/s of both, the speed-up, and the per-scenario overhead of the pool (shipping a
scenario and its row, as a fraction of the scenario's own time).
"""

from __future__ import annotations

import os
import time

import pytest

import ksched
from ksched.workloads import scheduling_basic

NODES, RUNNING = 5000, 1000
PENDING = int(os.environ.get("KSCHED_SWEEP_PENDING", "10000"))
AXES = {"weights.NodeResourcesFit": list(range(1, 11)),
        "weights.NodeResourcesBalancedAllocation": list(range(1, 11)),
        "weights.TaintToleration": list(range(1, 6)),
        "strategy": ["LeastAllocated", "MostAllocated"]}


@pytest.fixture(scope="module")
def base() -> ksched.Scenario:
    cluster, pods = scheduling_basic(NODES, RUNNING, PENDING)
    return ksched.Scenario(cluster, pods=pods)


def _rows(result) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in result.to_records()]


def bench_sweep_two_workers(benchmark, base, unit) -> None:
    started = time.perf_counter()
    inline = ksched.sweep(base, AXES, executor="inline", progress=False)
    inline_seconds = time.perf_counter() - started
    pooled = benchmark.pedantic(ksched.sweep, args=(base, AXES),
                                kwargs={"workers": 2, "progress": False},
                                rounds=1, iterations=1)
    seconds = benchmark.stats.stats.median
    count = len(pooled)
    timing = pooled.timing
    overhead = timing.overhead / count
    own = timing.scenarios / count
    benchmark.extra_info.update(
        scenarios=count, nodes=NODES, pending=PENDING,
        inline_scenarios_per_second=count / inline_seconds,
        pool_scenarios_per_second=count / seconds, speedup=inline_seconds / seconds,
        pool_startup_seconds=timing.startup, scenario_seconds=own,
        overhead_seconds_per_scenario=overhead, overhead_fraction=overhead / own,
        inline_x_U=count * PENDING / inline_seconds / unit,
        pool_x_U=count * PENDING / seconds / unit)
    assert count == 1000 and not pooled.failed
    assert _rows(pooled) == _rows(inline)

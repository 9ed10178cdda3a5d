"""The Simulator's targets: a day of churn on 5,000 nodes, and upstream's Preemption shape.

``bench_day_of_churn``: 5,000 nodes, 100,000 pods arriving over a virtual day and finishing
after a log-normal time (target: under 60 s, reported with the queue's share).
``bench_preemption``: 5,000 nodes full of 20,000 low-priority pods, 5,000 high-priority pods
that each preempt (target: >= 5,000 pods/s; upstream's floor is 570 pods/s).
"""

from __future__ import annotations

import pytest

from ksched.simulator import Simulator
from ksched.timeline import arrivals_at_once, day_of_churn
from ksched.workloads import preemption_basic


@pytest.fixture(scope="module")
def day():
    return day_of_churn(nodes=5000, arrivals=100_000)


def bench_day_of_churn(benchmark, day) -> None:
    cluster, events = day
    result = benchmark.pedantic(lambda: Simulator(cluster).run(events), rounds=1,
                                iterations=1, warmup_rounds=0)
    summary = result.summary()
    benchmark.extra_info.update(summary)
    assert summary["pods_scheduled"] == 100_000


@pytest.fixture(scope="module")
def preemption():
    cluster, pods = preemption_basic(5000, 20_000, 5000)
    return cluster, arrivals_at_once(pods)


def bench_preemption(benchmark, preemption, unit) -> None:
    cluster, events = preemption
    result = benchmark.pedantic(lambda: Simulator(cluster).run(events), rounds=3,
                                iterations=1, warmup_rounds=0)
    summary = result.summary()
    rate = 5000 / benchmark.stats.stats.median
    benchmark.extra_info.update(summary, pods_per_second=rate, x_U=rate / unit, U=unit)
    assert (summary["pods_scheduled"], summary["preemptions"]) == (5000, 5000)

"""Alibaba's public GPU cluster trace (cluster-trace-gpu-v2023, :mod:`ksched.alibaba`): one
``schedule_batch`` of its 8,152 pods on its 1,523 nodes, and the Simulator replaying its
timeline (9,049 events).

The trace is not part of the project: set ``KSCHED_TRACE_DIR`` to the folder holding
``openb_node_list_all_node.csv`` and ``openb_pod_list_gpuspec33.csv`` (from the
alibaba/clusterdata repository); without it these benchmarks are skipped. Loading the trace
and compiling are untimed; ``extra_info`` holds pods/s (events/s for the replay), ``x_U`` and
``U`` as the other benchmarks do. (The 50-shape SchedulingBasic workload,
``SchedulingBasic/5000Nodes/mixed-shapes``, runs in ``bench_schedule_batch.py``.)
"""

from __future__ import annotations

import os

import pytest

import ksched
from ksched.alibaba import GpuTrace, gpu_trace_timeline, load_gpu_trace
from ksched.pod_table import PodTable
from ksched.simulator import Simulator

TRACE_DIR = os.environ.get("KSCHED_TRACE_DIR", "")
pytestmark = pytest.mark.skipif(not TRACE_DIR, reason="KSCHED_TRACE_DIR does not name the "
                                                      "folder of the trace's CSVs")


@pytest.fixture(scope="module")
def trace() -> GpuTrace:
    return load_gpu_trace(TRACE_DIR)


def _replay(trace: GpuTrace, events: list) -> ksched.SimulationResult:
    return Simulator(trace.cluster, priority_classes=trace.priority_classes).run(events)


def bench_trace_batch(benchmark, trace: GpuTrace, unit: float) -> None:
    pods = PodTable.of(trace.pods)
    result = benchmark.pedantic(ksched.schedule_batch, args=(trace.cluster, pods), rounds=3,
                                iterations=1, warmup_rounds=1)
    rate = len(pods) / benchmark.stats.stats.median
    scheduled = int((result.node_rows >= 0).sum())
    benchmark.extra_info.update(nodes=trace.cluster.num_nodes, pods=len(pods),
                                scheduled=scheduled, pods_per_second=rate, x_U=rate / unit,
                                U=unit)
    assert 0 < scheduled < len(pods)  # about 1,080 fit nowhere


def bench_trace_simulator(benchmark, trace: GpuTrace, unit: float) -> None:
    events = gpu_trace_timeline(trace)
    _replay(trace, gpu_trace_timeline(trace.head(20)))  # warm-up, untimed
    result = benchmark.pedantic(_replay, args=(trace, events), rounds=3, iterations=1,
                                warmup_rounds=0)
    rate = len(events) / benchmark.stats.stats.median
    summary = result.summary()
    benchmark.extra_info.update(summary, events=len(events), events_per_second=rate,
                                x_U=rate / unit, U=unit)
    assert summary["pods_created"] == len(trace.pods)

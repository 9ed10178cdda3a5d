"""``ksched demo``: a cluster shaped like upstream scheduler_perf's SchedulingBasic, scheduled
end to end (nodes of 4 cpu / 32Gi / 110 pods, pods of 100m / 500Mi)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ksched.constants import CPU, MEMORY, PODS
from ksched.engine import Result, schedule_batch
from ksched.kernels.compile_clock import stopwatch
from ksched.state import ClusterState
from ksched.workloads import scheduling_basic


def utilisation(state: ClusterState) -> dict[str, tuple[float, float, float]]:
    """(min, mean, max) requested fraction of cpu, memory and pods over the nodes."""
    out = {}
    for name in (CPU, MEMORY, PODS):
        j = state.resource_column(name)
        fraction = state.requested[:, j] / np.maximum(state.allocatable[:, j], 1)
        out[name] = (float(fraction.min()), float(fraction.mean()), float(fraction.max()))
    return out


def run_demo(nodes: int = 5000, running: int = 1000, pending: int = 10000,
             profile: Any = None) -> Result:
    from tqdm import tqdm

    with stopwatch() as clock:
        warm_up(profile)
    if clock.compiling:
        print(f"kernels compiled in {clock.compiling:.1f}s (once after an install; later runs "
              "load them from the cache)")
    else:
        print(f"kernels loaded from the cache in {clock.seconds:.2f}s")
    started = time.perf_counter()
    cluster, pods = scheduling_basic(nodes, running, pending)
    print(f"built {nodes} nodes, {running} running pods, {pending} pending pods "
          f"in {time.perf_counter() - started:.2f}s")
    started = time.perf_counter()
    with tqdm(total=len(pods), unit="pod", desc="scheduling", leave=False) as bar:
        result = schedule_batch(cluster, pods, profile=profile, progress=bar.update)
    elapsed = time.perf_counter() - started
    print(f"placed {len(result.scheduled)}, unschedulable {len(result.unschedulable)} "
          f"in {elapsed:.2f}s: {len(pods) / elapsed:,.0f} pods/s")
    for name, (low, mean, high) in utilisation(result.state).items():
        print(f"  {name:<7} requested: min {low:6.1%}  mean {mean:6.1%}  max {high:6.1%}")
    return result


def warm_up(profile: Any = None) -> None:
    """Schedule a three-node copy of the demo's workload: numba compiles (or loads from its
    disk cache) exactly the kernels the demo's path calls, and nothing else, so the timed run
    that follows measures scheduling alone."""
    cluster, pods = scheduling_basic(3, 1, 4)
    schedule_batch(cluster, pods, profile=profile)

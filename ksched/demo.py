"""A cluster shaped like upstream scheduler_perf's SchedulingBasic, scheduled end to end.

Nodes follow ``templates/node-default.yaml`` (4 cpu, 32Gi, 110 pods) and pods
``pod-default.yaml`` (100m cpu, 500Mi memory).
"""

from __future__ import annotations

import time

import numpy as np

from ksched.api import Container, Node, Pod
from ksched.constants import CPU, MEMORY, PODS
from ksched.engine import Result, schedule_batch
from ksched.state import ClusterState

GI, MI = 1024**3, 1024**2


def basic_node(i: int, zones: int = 3) -> Node:
    name = f"node-{i:05d}"
    return Node(name, labels={"kubernetes.io/hostname": name,
                              "topology.kubernetes.io/zone": f"zone-{i % zones}"},
                allocatable={CPU: 4000, MEMORY: 32 * GI, PODS: 110})


def basic_pod(name: str, namespace: str = "default", node_name: str = "") -> Pod:
    return Pod(name, namespace, node_name=node_name, labels={"app": "basic"},
               containers=[Container("pause", "registry.k8s.io/pause:3.10",
                                     requests={CPU: 100, MEMORY: 500 * MI})])


def scheduling_basic(nodes: int = 5000, running: int = 1000,
                     pending: int = 10000) -> tuple[ClusterState, list[Pod]]:
    """The SchedulingBasic shape: running pods spread round-robin, then the pending ones."""
    node_records = [basic_node(i) for i in range(nodes)]
    bound = [basic_pod(f"init-{i}", node_name=node_records[i % nodes].name) for i in range(running)]
    cluster = ClusterState.from_records(node_records, bound)
    return cluster, [basic_pod(f"pod-{i}", "sched-0") for i in range(pending)]


def utilisation(state: ClusterState) -> dict[str, tuple[float, float, float]]:
    """(min, mean, max) requested fraction of cpu, memory and pods over the nodes."""
    out = {}
    for name in (CPU, MEMORY, PODS):
        j = state.resource_column(name)
        fraction = state.requested[:, j] / np.maximum(state.allocatable[:, j], 1)
        out[name] = (float(fraction.min()), float(fraction.mean()), float(fraction.max()))
    return out


def run_demo(nodes: int = 5000, running: int = 1000, pending: int = 10000) -> Result:
    from tqdm import tqdm

    from ksched import warmup

    print(f"kernels ready in {warmup():.2f}s (compiled, or loaded from numba's cache)")
    started = time.perf_counter()
    cluster, pods = scheduling_basic(nodes, running, pending)
    print(f"built {nodes} nodes, {running} running pods, {pending} pending pods "
          f"in {time.perf_counter() - started:.2f}s")
    started = time.perf_counter()
    with tqdm(total=len(pods), unit="pod", desc="scheduling", leave=False) as bar:
        result = schedule_batch(cluster, pods, progress=bar.update)
    elapsed = time.perf_counter() - started
    print(f"placed {len(result.scheduled)}, unschedulable {len(result.unschedulable)} "
          f"in {elapsed:.2f}s: {len(pods) / elapsed:,.0f} pods/s")
    for name, (low, mean, high) in utilisation(result.state).items():
        print(f"  {name:<7} requested: min {low:6.1%}  mean {mean:6.1%}  max {high:6.1%}")
    return result

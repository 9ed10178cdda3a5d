"""ksched: kube-scheduler v1.35's decisions, from a columnar, vectorised engine.

>>> import ksched
>>> cluster = ksched.load_cluster("snapshot.json")            # doctest: +SKIP
>>> result = ksched.schedule_batch(cluster, ksched.load_pods("pending.yaml"))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from ksched.api import (
    Container,
    ContainerImage,
    ContainerPort,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    Namespace,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    StorageClass,
    Taint,
    Toleration,
    Volume,
    Workload,
)
from ksched.config import SchedulerConfig, load_config
from ksched.engine import Placement, Result, schedule_batch
from ksched.errors import (
    ArgumentError,
    ClusterAccessError,
    ConfigError,
    InvalidObjectError,
    KschedError,
    UnsupportedFeatureError,
)
from ksched.explain import Explanation, explain
from ksched.io import Objects, admit_priorities, read_objects
from ksched.planning import (
    CapacityReport,
    HeadroomReport,
    PlanReport,
    capacity,
    expand,
    headroom,
    plan,
)
from ksched.profile import Profile, default_profile
from ksched.queue import SchedulingQueue
from ksched.simulator import Event, SimulationResult, Simulator
from ksched.state import ClusterState, check_unique
from ksched.storage_listers import StorageObjects
from ksched.sweep import Scenario, SweepResult, sweep

#: The columnar cluster (``ClusterState``) under the name users look for.
Cluster = ClusterState


def cluster_from_objects(objects: Objects) -> ClusterState:
    """The cluster of parsed objects: nodes, the pods bound to them, namespaces, workloads,
    storage objects."""
    return ClusterState.from_objects(objects)


def load_cluster(source: Any = None, *, kubeconfig: Any = None,
                 context: str | None = None) -> ClusterState:
    """Read a cluster from files, a directory, dicts or kubernetes-client objects, or, with
    ``kubeconfig=`` and/or ``context=`` (and no ``source``), from a live cluster through the
    kubernetes client (see :func:`ksched.live.load_live`; ``pip install ksched[cluster]``).

    Pods with ``spec.nodeName`` run on that node; Succeeded and Failed pods are ignored, as
    upstream's cache does; pods without a node are left out (see :func:`load_pods`).
    """
    if kubeconfig is not None or context is not None:
        if source is not None:
            raise ArgumentError("load_cluster: give a source or kubeconfig=/context=, not both")
        from ksched.live import load_live

        return cluster_from_objects(load_live(kubeconfig, context))
    if source is None:
        raise ArgumentError("load_cluster: source: required (or kubeconfig=/context=)")
    return cluster_from_objects(read_objects(source))


def warmup() -> float:
    """Compile (or load from numba's disk cache) every kernel and the fused scheduling loop;
    returns the seconds it took. Call it before timing anything."""
    import time

    from ksched import kernels
    from ksched.workloads import scheduling_basic

    started = time.perf_counter()
    kernels.warmup()
    cluster, pods = scheduling_basic(3, 1, 4)
    schedule_batch(cluster, pods)
    schedule_batch(cluster, pods, tie_break="random", seed=0)
    return time.perf_counter() - started


def load_pods(source: Any) -> tuple[Pod, ...]:
    """The pending pods (no ``spec.nodeName``, not terminal) of ``source``, in input order;
    two with one namespace/name are refused (``metadata.name: Duplicate value``)."""
    pods = read_objects(source).pending_pods
    check_unique(pods)
    return pods


__all__ = [
    "ArgumentError", "CSIDriver", "CSINode", "CSIStorageCapacity", "CapacityReport", "Cluster",
    "ClusterAccessError", "ClusterState", "ConfigError", "Container", "ContainerImage",
    "ContainerPort", "Event", "Explanation", "PersistentVolume", "PersistentVolumeClaim",
    "StorageClass", "StorageObjects", "Volume",
    "HeadroomReport", "InvalidObjectError", "KschedError", "Namespace", "Node", "NodeAffinity",
    "NodeSelectorRequirement", "NodeSelectorTerm", "Objects", "Placement", "PlanReport", "Pod",
    "PodDisruptionBudget", "PriorityClass", "Profile", "Result", "SchedulerConfig",
    "Scenario", "SchedulingQueue", "SimulationResult", "Simulator", "SweepResult", "Taint",
    "Toleration",
    "UnsupportedFeatureError", "Workload", "admit_priorities", "capacity",
    "cluster_from_objects", "default_profile", "expand", "explain", "headroom", "load_cluster",
    "load_config", "load_pods", "plan", "read_objects", "schedule_batch", "sweep",
    "warmup",
]

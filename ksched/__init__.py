"""ksched: kube-scheduler v1.35's decisions, from a columnar, vectorised engine.

>>> import ksched
>>> cluster = ksched.load_cluster("snapshot.json")            # doctest: +SKIP
>>> result = ksched.schedule_batch(cluster, ksched.load_pods("pending.yaml"))  # doctest: +SKIP
"""

from __future__ import annotations

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
from ksched.loading import cluster_from_objects, load_cluster, load_pods, warmup
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
from ksched.state import ClusterState
from ksched.storage_listers import StorageObjects
from ksched.sweep import Scenario, SweepResult, sweep

#: The columnar cluster (``ClusterState``) under the name users look for.
Cluster = ClusterState


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

"""Frozen records of the Kubernetes objects the scheduler reads, and their reading from the
wire format.

Records check themselves: every field's type is checked at construction (``Node(unschedulable=
"false")`` raises :class:`~ksched.errors.InvalidObjectError`), resource lists take quantity
strings where users write them (``Node(allocatable={"cpu": "8", "memory": "32Gi"})`` is 8 cores)
and integers in the units the scheduler uses (cpu in milli-cores, everything else in units), and
the API server's defaulting that reaches scheduling is applied (a container's requests default
to its limits, a ``host_network`` pod's ports to host ports, pod-level requests to the
containers' and the pod's limits).

Each record is built from the wire format (``kubectl get -o json``) by a ``from_manifest``
constructor that checks every field it reads, applies the API server's defaulting
(``pkg/apis/core/v1/defaults.go``) and its v1.35 validation (``pkg/apis/core/validation``) for
the fields that reach scheduling, and raises :class:`~ksched.errors.InvalidObjectError` naming
the object and the field path, in the API server's words (``Invalid value: 0: must be between 1
and 65535, inclusive``). Resource quantities are stored as exact integers in the units the
scheduler uses: cpu in milli-cores, everything else in units (both rounded up, as
apimachinery's ``MilliValue`` / ``Value`` do); a quantity whose amount does not fit an int64 is
refused (upstream's ``MilliValue`` would overflow, see :mod:`ksched.quantity`).

Deliberately lenient, as the scheduler sees such objects from older API servers: label
selectors of pod (anti-)affinity terms and topology spread constraints are not checked for
label syntax here (the scheduler's plugins report them), nor are PodDisruptionBudget selectors
(an invalid one matches nothing); pods without containers are accepted.

Layout: :mod:`~ksched.api.fields` (the records' field checks and converters),
:mod:`~ksched.api.records` (the record classes), and the manifest readers:
:mod:`~ksched.api.reader` (:class:`ManifestReader`, metadata), :mod:`~ksched.api.pods`,
:mod:`~ksched.api.affinity`, :mod:`~ksched.api.pod_validation`,
:mod:`~ksched.api.resource_validation`, :mod:`~ksched.api.kinds` (nodes, namespaces,
controllers, PriorityClasses, PodDisruptionBudgets), :mod:`~ksched.api.memo`
(:class:`ManifestMemo`); the storage kinds' records in :mod:`~ksched.api.storage` and a pod's
:class:`Volume` in :mod:`~ksched.api.pod_volume`, read by :mod:`~ksched.api.storage_readers`
and :mod:`~ksched.api.volume_sources`.
"""

from __future__ import annotations

from ksched.api.fields import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    FrozenDict,
    ResourceList,
)
from ksched.api.kinds import (
    read_namespace,
    read_node,
    read_pdb,
    read_priority_class,
    read_workload,
)
from ksched.api.memo import ManifestMemo
from ksched.api.pods import read_pod
from ksched.api.reader import ManifestReader, parse_time
from ksched.api.records import (
    CONTAINER_RESTART_POLICIES,
    HIGHEST_USER_DEFINABLE_PRIORITY,
    INCLUSION_POLICIES,
    LABEL_METADATA_NAME,
    MANIFEST_READERS,
    PREEMPTION_POLICIES,
    PROTOCOLS,
    SELECTING_KINDS,
    SYSTEM_PRIORITY_CLASSES,
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
    UNSATISFIABLE_ACTIONS,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodDisruptionBudget,
    PreferredSchedulingTerm,
    PriorityClass,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
    Workload,
)
from ksched.api.storage import (
    ClaimRef,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorLabelRequirement,
    TopologySelectorTerm,
)
from ksched.api.storage_readers import (
    read_csi_driver,
    read_csi_node,
    read_csi_storage_capacity,
    read_persistent_volume,
    read_persistent_volume_claim,
    read_storage_class,
)
from ksched.labels import LABEL_SELECTOR_OPERATORS, NODE_SELECTOR_OPERATORS

MANIFEST_READERS.update({
    Pod: read_pod, Node: read_node, Namespace: read_namespace, Workload: read_workload,
    PriorityClass: read_priority_class, PodDisruptionBudget: read_pdb,
    PersistentVolume: read_persistent_volume, PersistentVolumeClaim: read_persistent_volume_claim,
    StorageClass: read_storage_class, CSINode: read_csi_node, CSIDriver: read_csi_driver,
    CSIStorageCapacity: read_csi_storage_capacity,
})

__all__ = [
    "CONTAINER_RESTART_POLICIES", "HIGHEST_USER_DEFINABLE_PRIORITY", "INCLUSION_POLICIES",
    "INT32_MAX", "INT32_MIN", "INT64_MAX", "INT64_MIN", "LABEL_METADATA_NAME",
    "LABEL_SELECTOR_OPERATORS", "NODE_SELECTOR_OPERATORS", "PREEMPTION_POLICIES", "PROTOCOLS",
    "SELECTING_KINDS", "SYSTEM_PRIORITY_CLASSES", "TAINT_EFFECTS", "TOLERATION_OPERATORS",
    "UNSATISFIABLE_ACTIONS", "CSIDriver", "CSINode", "CSINodeDriver", "CSIStorageCapacity",
    "ClaimRef", "Container", "ContainerImage", "ContainerPort", "FrozenDict", "LabelSelector",
    "LabelSelectorRequirement", "ManifestMemo", "ManifestReader", "Namespace", "Node",
    "NodeAffinity", "NodeSelectorRequirement", "NodeSelectorTerm", "PersistentVolume",
    "PersistentVolumeClaim", "Pod", "PodAffinity", "PodAffinityTerm", "PodDisruptionBudget",
    "PreferredSchedulingTerm", "PriorityClass", "ResourceList", "StorageClass", "Taint",
    "Toleration", "TopologySelectorLabelRequirement", "TopologySelectorTerm",
    "TopologySpreadConstraint", "Volume", "WeightedPodAffinityTerm", "Workload", "parse_time",
]

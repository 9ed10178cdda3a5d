"""The objects of a source, by kind: the :class:`Objects` that :func:`ksched.io.read_objects`
returns, the kinds read into it (:data:`READ_AS`: the field of each kind, the reader of one
object), and the pods a snapshot's cluster leaves out (:func:`without_orphans`)."""

from __future__ import annotations

import warnings
from typing import Any

import attrs

from ksched.api import (
    SELECTING_KINDS,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    StorageClass,
    Workload,
)
from ksched.dra.objects import (
    read_device_class,
    read_resource_claim,
    read_resource_claim_template,
    read_resource_slice,
)
from ksched.errors import KschedWarning
from ksched.storage_listers import EMPTY_STORAGE, StorageObjects


@attrs.frozen
class Objects:
    """The objects of a source, by kind, in input order."""

    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    namespaces: tuple[Namespace, ...] = ()
    workloads: tuple[Workload, ...] = ()
    priority_classes: tuple[PriorityClass, ...] = ()
    pod_disruption_budgets: tuple[PodDisruptionBudget, ...] = ()
    persistent_volumes: tuple[PersistentVolume, ...] = ()
    persistent_volume_claims: tuple[PersistentVolumeClaim, ...] = ()
    storage_classes: tuple[StorageClass, ...] = ()
    csi_nodes: tuple[CSINode, ...] = ()
    csi_drivers: tuple[CSIDriver, ...] = ()
    csi_storage_capacities: tuple[CSIStorageCapacity, ...] = ()
    device_classes: tuple = ()
    resource_slices: tuple = ()
    resource_claims: tuple = ()
    resource_claim_templates: tuple = ()

    @property
    def dra(self) -> Any:
        """The resource.k8s.io objects (:class:`ksched.dra.state.DraObjects`)."""
        from ksched.dra.state import EMPTY_DRA, DraObjects

        found = [getattr(self, field) for field in _DRA_FIELDS]
        return DraObjects(*found) if any(found) else EMPTY_DRA

    @property
    def bound_pods(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if p.node_name)

    @property
    def storage(self) -> StorageObjects:
        """The storage objects, with their lookups (a name given twice is refused)."""
        found = [getattr(self, field) for field in _STORAGE_FIELDS]
        return StorageObjects(*found) if any(found) else EMPTY_STORAGE

    @property
    def pending_pods(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if not p.node_name and not p.terminal)


#: The storage fields of :class:`Objects`, in :class:`StorageObjects`' order.
_STORAGE_FIELDS = ("persistent_volumes", "persistent_volume_claims", "storage_classes",
                   "csi_nodes", "csi_drivers", "csi_storage_capacities")
#: Kind -> (the :class:`Objects` field its objects go to, the reader of one object).
READ_AS = {
    "Namespace": ("namespaces", Namespace.from_manifest),
    **{kind: ("workloads", Workload.from_manifest) for kind in SELECTING_KINDS},
    "PriorityClass": ("priority_classes", PriorityClass.from_manifest),
    "PodDisruptionBudget": ("pod_disruption_budgets", PodDisruptionBudget.from_manifest),
    "PersistentVolume": ("persistent_volumes", PersistentVolume.from_manifest),
    "PersistentVolumeClaim": ("persistent_volume_claims", PersistentVolumeClaim.from_manifest),
    "StorageClass": ("storage_classes", StorageClass.from_manifest),
    "CSINode": ("csi_nodes", CSINode.from_manifest),
    "CSIDriver": ("csi_drivers", CSIDriver.from_manifest),
    "CSIStorageCapacity": ("csi_storage_capacities", CSIStorageCapacity.from_manifest),
    "DeviceClass": ("device_classes", read_device_class),
    "ResourceSlice": ("resource_slices", read_resource_slice),
    "ResourceClaim": ("resource_claims", read_resource_claim),
    "ResourceClaimTemplate": ("resource_claim_templates", read_resource_claim_template),
}
#: The resource.k8s.io fields of :class:`Objects`, in :class:`DraObjects`' order.
_DRA_FIELDS = ("device_classes", "resource_slices", "resource_claims",
               "resource_claim_templates")


class IgnoredObjectsWarning(KschedWarning):
    """Objects of a snapshot that the cluster leaves out (pods bound to a node the snapshot
    does not hold; pending pods, which :func:`ksched.load_pods` reads)."""


def without_orphans(objects: Objects) -> Objects:
    """``objects`` without the pods bound to a node that is not among its nodes, as the
    scheduler's cache ignores them (a snapshot of ``kubectl get nodes`` and ``kubectl get
    pods`` taken while a node was being deleted), with an :class:`IgnoredObjectsWarning`
    saying which."""
    names = {node.name for node in objects.nodes}
    orphans = [p for p in objects.bound_pods if not p.terminal and p.node_name not in names]
    if not orphans:
        return objects
    gone = sorted({p.node_name for p in orphans})
    shown = ", ".join(f'"{name}"' for name in gone[:5]) + (", ..." if len(gone) > 5 else "")
    warnings.warn(f"{len(orphans)} pod(s) bound to {len(gone)} node(s) not in the snapshot "
                  f"({shown}; first pod {orphans[0].key}) left out, as the scheduler's cache "
                  "ignores them", IgnoredObjectsWarning, stacklevel=4)
    left_out = {id(p) for p in orphans}
    return attrs.evolve(objects, pods=tuple(p for p in objects.pods if id(p) not in left_out))


__all__ = ["READ_AS", "IgnoredObjectsWarning", "Objects", "without_orphans"]

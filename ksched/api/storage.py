"""Frozen records of the storage objects the volume plugins read: PersistentVolume and
PersistentVolumeClaim (``k8s.io/api/core/v1`` ``types.go``), StorageClass, CSINode, CSIDriver and
CSIStorageCapacity (``k8s.io/api/storage/v1`` ``types.go``), in their defaulted form
(``pkg/apis/core/v1/defaults.go``, ``pkg/apis/storage/v1/defaults.go``).

Storage quantities are whole bytes (``Value``, rounded up); a claim's and a volume's storage
class is the one ``storagehelpers.GetPersistentVolume(Claim)Class`` reads (the beta annotation
``volume.beta.kubernetes.io/storage-class`` before ``spec.storageClassName``). Each kind is read
from its wire format by its ``from_manifest`` constructor (:mod:`ksched.api.storage_readers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ksched.api.fields import (
    BOOL,
    INT,
    INT32,
    OPT_INT,
    SEQ,
    STR,
    STRING_MAP,
    FrozenDict,
    checked_field,
    items_of,
    one_of,
    optional_of,
    record,
    strings_field,
    tuple_of,
)
from ksched.api.records import MANIFEST_READERS, LabelSelector, NodeSelectorTerm

__all__ = ["ACCESS_MODES", "ANN_BIND_COMPLETED", "ANN_MIGRATED_PLUGINS", "ANN_SELECTED_NODE",
           "ANN_STORAGE_CLASS", "CLAIM_PHASES", "FS_GROUP_POLICIES", "LIFECYCLE_MODES",
           "PV_RECLAIM_POLICIES", "SC_RECLAIM_POLICIES", "VOLUME_BINDING_MODES",
           "VOLUME_MODES", "VOLUME_PHASES", "CSIDriver", "CSINode", "CSINodeDriver",
           "CSIStorageCapacity", "ClaimRef", "PersistentVolume", "PersistentVolumeClaim",
           "StorageClass", "TopologySelectorLabelRequirement", "TopologySelectorTerm"]

#: ``supportedAccessModes`` and ``supportedVolumeModes``, sorted as upstream lists them.
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
#: ``PersistentVolumePhase`` and ``PersistentVolumeClaimPhase`` values.
VOLUME_PHASES = ("Available", "Bound", "Failed", "Pending", "Released")
CLAIM_PHASES = ("Bound", "Lost", "Pending")
#: A PersistentVolume's and a StorageClass's supported reclaim policies, sorted.
PV_RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
SC_RECLAIM_POLICIES = ("Delete", "Retain")
#: ``supportedVolumeBindingModes``, sorted.
VOLUME_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
#: ``supportedFSGroupPolicy``, sorted, and the CSI volume lifecycle modes.
FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_MODES = ("Persistent", "Ephemeral")
#: ``v1.BetaStorageClassAnnotation``: a claim's or a volume's class, before its spec's.
ANN_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
#: ``AnnBindCompleted``: the PV controller has finished binding the claim.
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
#: ``AnnSelectedNode``: the node a delayed-binding claim is provisioned for.
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
#: ``v1.MigratedPluginsAnnotationKey``: the in-tree plugins a node's CSI drivers took over.
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"


@record
class ClaimRef:
    """A PersistentVolume's ``spec.claimRef``: the claim it is bound (or reserved) to."""

    namespace: str = checked_field(STR, default="")
    name: str = checked_field(STR, default="")
    #: ``""``: any claim of that namespace and name (``IsVolumeBoundToClaim``).
    uid: str = checked_field(STR, default="")


@record
class PersistentVolume:
    """A PersistentVolume (cluster-scoped). ``node_affinity`` holds the terms of
    ``spec.nodeAffinity.required`` (``None``: no node affinity); the source fields are those
    of :class:`~ksched.api.Volume` (``source`` names the source: ``csi``, ``local``,
    ``gcePersistentDisk``, ...), plus ``volume_handle`` for CSI."""

    name: str = checked_field(STR)
    labels: FrozenDict = attrs.field(factory=FrozenDict, converter=STRING_MAP)
    #: ``spec.capacity.storage`` in bytes.
    capacity: int = checked_field(INT, default=0)
    access_modes: tuple[str, ...] = strings_field()
    volume_mode: str = checked_field(one_of(*VOLUME_MODES), default="Filesystem")
    storage_class: str = checked_field(STR, default="")
    reclaim_policy: str = checked_field(one_of(*PV_RECLAIM_POLICIES), default="Retain")
    node_affinity: tuple[NodeSelectorTerm, ...] | None = tuple_of(NodeSelectorTerm,
                                                                   optional=True)
    claim_ref: ClaimRef | None = checked_field(optional_of(ClaimRef), default=None)
    phase: str = checked_field(one_of(*VOLUME_PHASES), default="Pending")
    #: ``metadata.deletionTimestamp`` is set.
    deleting: bool = checked_field(BOOL, default=False)
    volume_attributes_class: str = checked_field(STR, default="")
    source: str = checked_field(STR, default="")
    read_only: bool = checked_field(BOOL, default=False)
    driver: str = checked_field(STR, default="")
    volume_handle: str = checked_field(STR, default="")
    pd_name: str = checked_field(STR, default="")
    volume_id: str = checked_field(STR, default="")
    disk_uri: str = checked_field(STR, default="")
    disk_kind: str = checked_field(STR, default="")
    partition: int = checked_field(INT32, default=0)
    monitors: tuple[str, ...] = strings_field()
    rbd_pool: str = checked_field(STR, default="")
    rbd_image: str = checked_field(STR, default="")
    iqn: str = checked_field(STR, default="")
    target_portal: str = checked_field(STR, default="")
    lun: int = checked_field(INT32, default=0)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> PersistentVolume:
        """Build a PersistentVolume from its wire-format dict, checking every field read."""
        return MANIFEST_READERS[cls](obj)


@record
class PersistentVolumeClaim:
    """A PersistentVolumeClaim: its spec (``request`` in bytes), phase and the annotations the
    volume binder reads."""

    name: str = checked_field(STR)
    namespace: str = checked_field(STR, default="default")
    uid: str = checked_field(STR, default="")
    access_modes: tuple[str, ...] = strings_field()
    #: ``spec.resources.requests.storage`` in bytes.
    request: int = checked_field(INT, default=0)
    storage_class: str = checked_field(STR, default="")
    #: ``spec.volumeName``: the volume the claim is bound (or pre-bound) to.
    volume_name: str = checked_field(STR, default="")
    volume_mode: str = checked_field(one_of(*VOLUME_MODES), default="Filesystem")
    selector: LabelSelector | None = checked_field(optional_of(LabelSelector), default=None)
    volume_attributes_class: str = checked_field(STR, default="")
    phase: str = checked_field(one_of(*CLAIM_PHASES), default="Pending")
    deleting: bool = checked_field(BOOL, default=False)
    #: The ``pv.kubernetes.io/bind-completed`` annotation is present.
    bind_completed: bool = checked_field(BOOL, default=False)
    #: The ``volume.kubernetes.io/selected-node`` annotation (``""``: none).
    selected_node: str = checked_field(STR, default="")
    #: The uid of the controlling owner reference (``None``: no controller), which
    #: ``ephemeral.VolumeIsForPod`` compares with the pod's.
    controller_uid: str | None = checked_field(optional_of(str), default=None)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> PersistentVolumeClaim:
        """Build a PersistentVolumeClaim from its wire-format dict, checking every field read."""
        return MANIFEST_READERS[cls](obj)


@record
class TopologySelectorLabelRequirement:
    key: str = checked_field(STR)
    values: tuple[str, ...] = strings_field()


@record
class TopologySelectorTerm:
    match_label_expressions: tuple[TopologySelectorLabelRequirement, ...] = tuple_of(
        TopologySelectorLabelRequirement)


@record
class StorageClass:
    """A StorageClass (``SetDefaults_StorageClass``: ``Delete`` reclaim, ``Immediate``
    binding)."""

    name: str = checked_field(STR)
    provisioner: str = checked_field(STR, default="")
    volume_binding_mode: str = checked_field(one_of(*VOLUME_BINDING_MODES), default="Immediate")
    #: ``""`` when stated so (the API server keeps an explicit empty policy).
    reclaim_policy: str = checked_field(one_of("", *SC_RECLAIM_POLICIES), default="Delete")
    #: ``allowedTopologies``; empty: every node.
    allowed_topologies: tuple[TopologySelectorTerm, ...] = tuple_of(TopologySelectorTerm)
    parameters: FrozenDict = attrs.field(factory=FrozenDict, converter=STRING_MAP)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> StorageClass:
        """Build a StorageClass from its wire-format dict, checking every field read."""
        return MANIFEST_READERS[cls](obj)


@record
class CSINodeDriver:
    name: str = checked_field(STR)
    node_id: str = checked_field(STR, default="")
    topology_keys: tuple[str, ...] = strings_field()
    #: ``allocatable.count``: how many of the driver's volumes the node can attach
    #: (``None``: no limit).
    allocatable: int | None = checked_field(OPT_INT, default=None)


@record
class CSINode:
    """A CSINode: named after its node, with the CSI drivers installed there."""

    name: str = checked_field(STR)
    drivers: tuple[CSINodeDriver, ...] = tuple_of(CSINodeDriver)
    #: The ``storage.alpha.kubernetes.io/migrated-plugins`` annotation, split at commas.
    migrated_plugins: tuple[str, ...] = strings_field()

    def driver(self, name: str) -> CSINodeDriver | None:
        """The entry of driver ``name``, if installed."""
        return next((d for d in self.drivers if d.name == name), None)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> CSINode:
        """Build a CSINode from its wire-format dict, checking every field read."""
        return MANIFEST_READERS[cls](obj)


@record
class CSIDriver:
    """A CSIDriver (``SetDefaults_CSIDriver``: attach required, no pod info, no capacity
    tracking, ``ReadWriteOnceWithFSType``, ``Persistent`` volumes)."""

    name: str = checked_field(STR)
    attach_required: bool = checked_field(BOOL, default=True)
    pod_info_on_mount: bool = checked_field(BOOL, default=False)
    storage_capacity: bool = checked_field(BOOL, default=False)
    fs_group_policy: str = checked_field(one_of(*FS_GROUP_POLICIES),
                                         default="ReadWriteOnceWithFSType")
    volume_lifecycle_modes: tuple[str, ...] = checked_field(
        items_of(str, "a string"), default=("Persistent",), converter=SEQ)
    requires_republish: bool = checked_field(BOOL, default=False)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> CSIDriver:
        """Build a CSIDriver from its wire-format dict, checking every field read."""
        return MANIFEST_READERS[cls](obj)


@record
class CSIStorageCapacity:
    """A CSIStorageCapacity: the capacity a driver reports for a class in a topology
    segment (``capacity`` and ``maximum_volume_size`` in bytes; ``None``: not reported)."""

    name: str = checked_field(STR)
    namespace: str = checked_field(STR, default="default")
    storage_class: str = checked_field(STR, default="")
    node_topology: LabelSelector | None = checked_field(optional_of(LabelSelector), default=None)
    capacity: int | None = checked_field(OPT_INT, default=None)
    maximum_volume_size: int | None = checked_field(OPT_INT, default=None)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> CSIStorageCapacity:
        """Build a CSIStorageCapacity from its wire-format dict, checking every field read."""
        return MANIFEST_READERS[cls](obj)

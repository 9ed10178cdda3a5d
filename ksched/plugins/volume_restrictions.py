"""VolumeRestrictions (``plugins/volumerestrictions/volume_restrictions.go``).

PreFilter looks up each ``persistentVolumeClaim`` volume's claim (a missing one rejects the
pod: ``persistentvolumeclaim "x" not found``) and counts the pod's ReadWriteOncePod claims
that some bound pod already uses (``IsPVCUsedByPods``); it Skips when that count is 0 and the
pod has no in-tree disk. Filter rejects a node whose pods mount one of the pod's in-tree
disks in a conflicting way (``isVolumeConflict``: GCE PD unless both read-only, AWS EBS
always, iSCSI by IQN unless both read-only, RBD by monitor overlap, pool and image unless both
read-only), then every node while a ReadWriteOncePod claim is in use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Pod, Volume
from ksched.framework.capabilities import FilterKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.plugins._helpers import cycle_data
from ksched.plugins.volume_helpers import (
    CLAIM_RESOURCE,
    PodLogIndex,
    claim_volumes,
    not_found,
    pod_log_index,
)
from ksched.state import ClusterState
from ksched.status import SKIP, Status, unresolvable, unschedulable
from ksched.storage_listers import StorageObjects

__all__ = ["IN_TREE_DISKS", "REASON_DISK_CONFLICT", "REASON_RWOP_CONFLICT", "VolumeRestrictions",
           "VolumeUse", "disk_key", "is_volume_conflict", "read_write_once_pod_claims"]

#: ``ErrReasonDiskConflict`` and ``ErrReasonReadWriteOncePodConflict``.
REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
                        "access mode already in-use by another pod")
#: The volume sources ``needsRestrictionsCheck`` looks at.
IN_TREE_DISKS = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


def disk_key(volume: Volume) -> tuple:
    """What two in-tree disks must share to conflict at all: the kind and the GCE PD name, the
    EBS volume ID, the iSCSI IQN, or the RBD pool and image; ``()`` for other volumes."""
    kind = volume.kind
    if kind == "gcePersistentDisk":
        return (kind, volume.pd_name)
    if kind == "awsElasticBlockStore":
        return (kind, volume.volume_id)
    if kind == "iscsi":
        return (kind, volume.iqn)
    if kind == "rbd":
        return (kind, volume.rbd_pool, volume.rbd_image)
    return ()


def is_volume_conflict(volume: Volume, existing: Volume) -> bool:
    """``isVolumeConflict`` for one pair of volumes: same disk (:func:`disk_key`), and not
    both read-only (an EBS volume conflicts even then; RBD also needs a shared monitor)."""
    key = disk_key(volume)
    if not key or key != disk_key(existing):
        return False
    if volume.kind == "awsElasticBlockStore":
        return True
    if volume.kind == "rbd" and not set(volume.monitors) & set(existing.monitors):
        return False
    return not (volume.read_only and existing.read_only)


def read_write_once_pod_claims(pod: Pod, storage: StorageObjects) -> set[str] | Status:
    """``readWriteOncePodPVCsForPod``: the names of the pod's claims with the
    ReadWriteOncePod access mode, or the rejection of the first claim that does not exist."""
    names = set()
    for volume in claim_volumes(pod):
        claim = storage.claim(pod.namespace, volume.claim_name)
        if claim is None:
            return unresolvable(not_found(CLAIM_RESOURCE, volume.claim_name))
        if "ReadWriteOncePod" in claim.access_modes:
            names.add(claim.name)
    return names


class VolumeUse(PodLogIndex):
    """What the bound pods use: their claims (``usedPVCSet``: namespace and claim name of each
    ``persistentVolumeClaim`` volume) and, per :func:`disk_key`, each in-tree disk volume
    with its node row."""

    def __init__(self) -> None:
        super().__init__()
        self.claims: set[tuple[str, str]] = set()
        self.disks: dict[tuple, list[tuple[int, Volume]]] = {}

    def add(self, pods: Sequence[Pod], nodes: npt.NDArray[np.int64],
            state: ClusterState) -> None:
        for pod, node in zip(pods, nodes.tolist()):
            for volume in pod.volumes:
                if volume.kind == "persistentVolumeClaim":
                    self.claims.add((pod.namespace, volume.claim_name))
                elif volume.kind in IN_TREE_DISKS:
                    self.disks.setdefault(disk_key(volume), []).append((node, volume))

    def conflicting_nodes(self, pod: Pod) -> npt.NDArray[np.int64]:
        """The node rows with a pod whose disk conflicts with one of ``pod``'s."""
        found = {node for volume in pod.volumes if volume.kind in IN_TREE_DISKS
                 for node, used in self.disks.get(disk_key(volume), ())
                 if is_volume_conflict(volume, used)}
        return np.array(sorted(found), dtype=np.int64)


def volume_use(state: ClusterState) -> VolumeUse:
    """The state's :class:`VolumeUse`, up to date."""
    return pod_log_index(state, ("VolumeRestrictions",), VolumeUse)


def _has_disks(pod: Pod) -> bool:
    return any(v.kind in IN_TREE_DISKS for v in pod.volumes)


@attrs.frozen
class VolumeRestrictions:
    NAME: ClassVar[str] = "VolumeRestrictions"
    #: Node-static for pods without in-tree disks or ReadWriteOncePod claims (see
    #: :meth:`node_static_for`).
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    args: Any = None

    def node_static_for(self, pod: Pod, state: ClusterState) -> bool:
        """Disk conflicts depend on the node's pods, ReadWriteOncePod conflicts on the pods
        placed: node-static only for a pod with neither in-tree disks nor such claims."""
        if _has_disks(pod):
            return False
        found = read_write_once_pod_claims(pod, state.storage)
        return isinstance(found, Status) or not found

    def judged_by_node_class(self, pod: Pod) -> bool:
        """Without in-tree disks, every node gets one verdict."""
        return not _has_disks(pod)

    def pre_filter(self, cycle: Cycle) -> Status | None:
        """``PreFilter``: the claims' lookup and the ReadWriteOncePod conflicts counted."""
        found = self._conflicts(cycle)
        if isinstance(found, Status):
            return found
        if found == 0 and not _has_disks(cycle.pod):
            return SKIP
        return None

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        """``Filter``: disk conflicts on the node first, then ReadWriteOncePod conflicts."""
        codes = np.zeros(len(nodes), dtype=np.int8)
        if _has_disks(cycle.pod):
            codes[np.isin(nodes, volume_use(cycle.state).conflicting_nodes(cycle.pod))] = 1
        conflicts = self._conflicts(cycle)
        if isinstance(conflicts, Status):  # PreFilter rejected the pod; never filtered
            return FilterResult.from_mask(np.zeros(len(nodes), np.bool_), conflicts)
        if conflicts > 0:
            codes[codes == 0] = 2
        return FilterResult.from_codes(codes, _status_of_code)

    def _conflicts(self, cycle: Cycle) -> int | Status:
        """``calPreFilterState``'s ``conflictingPVCRefCount`` (computed once per cycle), or
        the rejection of a missing claim."""
        def compute() -> int | Status:
            names = read_write_once_pod_claims(cycle.pod, cycle.state.storage)
            if isinstance(names, Status) or not names:
                return names if isinstance(names, Status) else 0
            used = volume_use(cycle.state).claims
            return sum((cycle.pod.namespace, name) in used for name in names)
        return cycle_data(cycle, self.NAME, compute)


def _status_of_code(code: int) -> Status:
    return unschedulable(REASON_DISK_CONFLICT if code == 1 else REASON_RWOP_CONFLICT)

"""VolumeRestrictions' reference: a plain transliteration of
``plugins/volumerestrictions/volume_restrictions.go`` over NodeInfo records, the storage
objects and the cluster's bound pods (the snapshot's ``usedPVCSet``). The plugin
(:mod:`ksched.plugins.volume_restrictions`) is tested against it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ksched.api import Pod, Volume
from ksched.framework.node_info import NodeInfo
from ksched.plugins.volume_restrictions import REASON_DISK_CONFLICT, REASON_RWOP_CONFLICT
from ksched.status import SKIP, SUCCESS, Status, unresolvable, unschedulable
from ksched.storage_listers import StorageObjects

__all__ = ["reference_filter", "reference_pre_filter"]


def _is_volume_conflict(volume: Volume, pod: Pod) -> bool:
    """``isVolumeConflict``."""
    for existing in pod.volumes:
        if volume.kind == existing.kind == "gcePersistentDisk":
            if volume.pd_name == existing.pd_name and not (volume.read_only
                                                           and existing.read_only):
                return True
        if volume.kind == existing.kind == "awsElasticBlockStore":
            if volume.volume_id == existing.volume_id:
                return True
        if volume.kind == existing.kind == "iscsi":
            if volume.iqn == existing.iqn and not (volume.read_only and existing.read_only):
                return True
        if volume.kind == existing.kind == "rbd":
            overlap = any(m in existing.monitors for m in volume.monitors)
            if (overlap and volume.rbd_pool == existing.rbd_pool
                    and volume.rbd_image == existing.rbd_image
                    and not (volume.read_only and existing.read_only)):
                return True
    return False


def _needs_restrictions_check(volume: Volume) -> bool:
    return volume.kind in ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


def reference_pre_filter(pod: Pod, storage: StorageObjects,
                         bound: Sequence[Pod]) -> tuple[Status | None, int]:
    """``PreFilter``: its status (``None``: go on) and ``conflictingPVCRefCount``."""
    needs_check = any(_needs_restrictions_check(v) for v in pod.volumes)
    pvcs = set()
    for volume in pod.volumes:
        if volume.kind != "persistentVolumeClaim":
            continue
        pvc = storage.claim(pod.namespace, volume.claim_name)
        if pvc is None:
            return unresolvable(f'persistentvolumeclaim "{volume.claim_name}" not found'), 0
        if "ReadWriteOncePod" in pvc.access_modes:
            pvcs.add(pvc.name)
    used = {(p.namespace, v.claim_name) for p in bound if p.node_name for v in p.volumes
            if v.kind == "persistentVolumeClaim"}
    conflicting = sum(1 for name in pvcs if (pod.namespace, name) in used)
    if not needs_check and conflicting == 0:
        return SKIP, 0
    return None, conflicting


def reference_filter(pod: Pod, node_info: NodeInfo, storage: StorageObjects,
                     bound: Sequence[Pod]) -> Status:
    """``Filter`` on one node (after a PreFilter that let the pod through)."""
    for volume in pod.volumes:
        if not _needs_restrictions_check(volume):
            continue
        if any(_is_volume_conflict(volume, existing) for existing in node_info.pods):
            return unschedulable(REASON_DISK_CONFLICT)
    _, conflicting = reference_pre_filter(pod, storage, bound)
    if conflicting > 0:
        return unschedulable(REASON_RWOP_CONFLICT)
    return SUCCESS

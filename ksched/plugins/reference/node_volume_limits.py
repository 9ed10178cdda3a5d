"""NodeVolumeLimits' reference: a plain transliteration of ``CSILimits.Filter``
(``plugins/nodevolumelimits/csi.go``) over NodeInfo records and the storage objects. The
volumes a pod attaches are resolved by the one ``filterAttachableVolumes`` there is
(:func:`~ksched.plugins.attached_volumes.attachable_volumes`); the counting is redone here, node
by node. The plugin (:mod:`ksched.plugins.node_volume_limits`) is tested against it.
"""

from __future__ import annotations

from ksched.api import Pod
from ksched.framework.node_info import NodeInfo
from ksched.plugins.attached_volumes import AttachError, attachable_volumes
from ksched.plugins.node_volume_limits import REASON, attach_error_status
from ksched.status import SUCCESS, Status, unschedulable
from ksched.storage_listers import StorageObjects

__all__ = ["reference_filter"]


def reference_filter(pod: Pod, node_info: NodeInfo, storage: StorageObjects) -> Status:
    """``Filter`` on one node."""
    if not pod.volumes:
        return SUCCESS
    csi_node = storage.csi_node(node_info.node.name)
    new_volumes: dict = {}
    try:
        attachable_volumes(pod, csi_node, storage, True, new_volumes)
    except AttachError as exc:
        return attach_error_status(exc)
    if not new_volumes:
        return SUCCESS
    limits = {} if csi_node is None else {d.name: d.allocatable for d in csi_node.drivers
                                          if d.allocatable is not None}
    if not limits:
        return SUCCESS
    attached: dict = {}
    for existing in node_info.pods:
        try:
            attachable_volumes(existing, csi_node, storage, False, attached)
        except AttachError as exc:
            return attach_error_status(AttachError(str(exc)))
    attached_count: dict[str, int] = {}
    for unique, driver in attached.items():
        new_volumes.pop(unique, None)
        attached_count[driver] = attached_count.get(driver, 0) + 1
    new_count: dict[str, int] = {}
    for driver in new_volumes.values():
        new_count[driver] = new_count.get(driver, 0) + 1
    for driver, count in new_count.items():
        if driver in limits and attached_count.get(driver, 0) + count > limits[driver]:
            return unschedulable(REASON)
    return SUCCESS

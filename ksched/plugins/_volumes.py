"""What the volume plugins share: which pod volumes wake them up.

Each volume plugin's PreFilter returns Skip for a pod without the volume kinds it checks
(``volumerestrictions``, ``nodevolumelimits/csi.go``, ``volumebinding``, ``volumezone``); then
its Filter does not run and upstream's result is "fits everywhere". Pods that do use such
volumes need PersistentVolume, StorageClass and CSI objects, which ksched does not model yet.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ksched.api import Pod
from ksched.errors import UnsupportedFeatureError
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.status import SKIP, Status

IN_TREE_DISKS = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
CLAIMS = ("persistentVolumeClaim", "ephemeral")
CSI_COUNTED = CLAIMS + ("gcePersistentDisk", "awsElasticBlockStore", "cinder", "azureDisk")


def uses(pod: Pod, kinds: Iterable[str]) -> bool:
    kinds = tuple(kinds)
    return any(v.kind in kinds for v in pod.volumes)


def skip_unless_used(plugin: str, pod: Pod, kinds: Iterable[str]) -> Status:
    """Skip for pods without these volumes; otherwise the feature is not supported yet."""
    if uses(pod, kinds):
        raise UnsupportedFeatureError(
            f"pod {pod.key}: spec.volumes: {plugin} needs persistent volume objects, "
            "which ksched does not support yet")
    return SKIP


def filter_all(plugin: str, cycle: Cycle, nodes: NodeIndices, kinds: Iterable[str]) -> FilterResult:
    skip_unless_used(plugin, cycle.pod, kinds)
    return FilterResult.from_mask(np.ones(len(nodes), dtype=np.bool_), Status())

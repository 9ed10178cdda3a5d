"""VolumeZone (``plugins/volumezone/volume_zone.go``).

PreFilter reads the zone and region labels (legacy ``failure-domain.beta.kubernetes.io/*`` and
``topology.kubernetes.io/*``) of the PersistentVolumes bound to the pod's
``persistentVolumeClaim`` volumes; a claim of a ``WaitForFirstConsumer`` class that is not bound
yet is passed over, and PreFilter Skips when no label is found. Filter lets a node without any
topology label through; otherwise each volume label's key (or its GA name) must be on the node
with one of the label's values (``zone-a__zone-b`` lists several).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.api import PersistentVolume, Pod
from ksched.framework.capabilities import FilterKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.constants import LABEL_REGION, LABEL_REGION_BETA, LABEL_ZONE, LABEL_ZONE_BETA
from ksched.kernels import volume_zone as kernels
from ksched.plugins._helpers import cycle_data
from ksched.plugins.volume_helpers import (
    CLAIM_RESOURCE,
    CLASS_RESOURCE,
    VOLUME_RESOURCE,
    claim_volumes,
    not_found,
)
from ksched.state import ClusterState
from ksched.status import SKIP, Status, unresolvable
from ksched.storage_listers import StorageObjects

__all__ = ["REASON", "TOPOLOGY_LABELS", "Topology", "VolumeZone", "ga_label", "label_zones",
           "pod_topologies", "pv_topologies"]

#: ``ErrReasonConflict``.
REASON = "node(s) had no available volume zone"
#: The binding mode whose unbound claims are passed over.
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
#: ``topologyLabels``, in upstream's order.
TOPOLOGY_LABELS = (LABEL_ZONE_BETA, LABEL_REGION_BETA, LABEL_ZONE, LABEL_REGION)


@attrs.frozen
class Topology:
    """``pvTopology``: a volume's label key and the values it allows."""

    pv_name: str
    key: str
    values: frozenset[str]


def ga_label(key: str) -> str:
    """``translateToGALabel``: a legacy zone or region key's GA name."""
    return {LABEL_REGION_BETA: LABEL_REGION, LABEL_ZONE_BETA: LABEL_ZONE}.get(key, key)


def label_zones(value: str) -> frozenset[str] | None:
    """``LabelZonesToSet``: the ``__``-separated zones of a label value, trimmed; ``None``
    when one is empty (the label is then ignored)."""
    zones = [zone.strip(" \t\n\v\f\r") for zone in value.split("__")]
    return None if "" in zones else frozenset(zones)


def pv_topologies(pv: PersistentVolume) -> list[Topology]:
    """``getPVTopologies``: the volume's topology labels that parse, in
    :data:`TOPOLOGY_LABELS` order."""
    found = []
    for key in TOPOLOGY_LABELS:
        if key in pv.labels:
            zones = label_zones(pv.labels[key])
            if zones is not None:
                found.append(Topology(pv.name, key, zones))
    return found


def pod_topologies(pod: Pod, storage: StorageObjects) -> list[Topology] | Status:
    """``getPVbyPod``: the topologies of the volumes bound to the pod's claims, or the
    rejection of the first claim that is missing, unbound outside ``WaitForFirstConsumer``, or
    bound to a missing volume."""
    found: list[Topology] = []
    for volume in claim_volumes(pod):
        name = volume.claim_name
        if not name:
            return unresolvable("PersistentVolumeClaim had no name")
        claim = storage.claim(pod.namespace, name)
        if claim is None:
            return unresolvable(not_found(CLAIM_RESOURCE, name))
        if not claim.volume_name:
            class_name = claim.storage_class
            if not class_name:
                return unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
            found_class = storage.storage_class(class_name)
            if found_class is None:
                return unresolvable(not_found(CLASS_RESOURCE, class_name))
            if found_class.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
                continue
            return unresolvable("PersistentVolume had no name")
        pv = storage.volume(claim.volume_name)
        if pv is None:
            return unresolvable(not_found(VOLUME_RESOURCE, claim.volume_name))
        found += pv_topologies(pv)
    return found


@attrs.frozen
class VolumeZone:
    NAME: ClassVar[str] = "VolumeZone"
    #: Node-static unless a claim of a class that binds at once is unbound (see
    #: :meth:`node_static_for`).
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    args: Any = None

    def node_static_for(self, pod: Pod, state: ClusterState) -> bool:
        """The verdict reads the node's labels and the volumes bound to the pod's claims;
        unbound claims of ``WaitForFirstConsumer`` classes are passed over (Reserve binds no
        claim to a volume, it only selects a node). Node-static unless another claim is still
        unbound (its volume comes with the binding)."""
        storage = state.storage
        for volume in claim_volumes(pod):
            claim = storage.claim(pod.namespace, volume.claim_name)
            if claim is not None and not claim.volume_name:
                found = storage.storage_class(claim.storage_class) \
                    if claim.storage_class else None
                if found is None or found.volume_binding_mode != WAIT_FOR_FIRST_CONSUMER:
                    return False
        return True

    def judged_by_node_class(self, pod: Pod) -> bool:
        """Only zone and region labels are read: nodes of one class get one verdict."""
        return True

    def pre_filter(self, cycle: Cycle) -> Status | None:
        """``PreFilter``: the bound volumes' topologies; Skip when there are none."""
        found = self._topologies(cycle)
        if isinstance(found, Status):
            return found
        return None if found else SKIP

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        """``Filter``: a node with a topology label must carry every volume's zones."""
        found = self._topologies(cycle)
        if isinstance(found, Status):  # PreFilter rejected the pod; never filtered
            return FilterResult.from_mask(np.zeros(len(nodes), np.bool_), found)
        if not cycle.pod.volumes or not found:
            return FilterResult.from_mask(np.ones(len(nodes), np.bool_), unresolvable(REASON))
        state = cycle.state
        values = [sorted(state.vocab.get(v) for v in t.values) for t in found]
        failed = kernels.zone_conflict_mask(
            state.labels, nodes, _columns(state, TOPOLOGY_LABELS),
            _columns(state, [t.key for t in found]),
            _columns(state, [ga_label(t.key) for t in found]),
            np.cumsum([0] + [len(v) for v in values], dtype=np.int64),
            np.array([i for v in values for i in v], dtype=np.int64))
        return FilterResult.from_mask(~failed, unresolvable(REASON))

    def _topologies(self, cycle: Cycle) -> list[Topology] | Status:
        return cycle_data(cycle, self.NAME,
                          lambda: pod_topologies(cycle.pod, cycle.state.storage))


def _columns(state: ClusterState, keys: Any) -> np.ndarray:
    return np.array([state.label_column(k) for k in keys], dtype=np.int64)

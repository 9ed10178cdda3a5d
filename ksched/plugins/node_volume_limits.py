"""NodeVolumeLimits (``plugins/nodevolumelimits/csi.go``: ``CSILimits``).

PreFilter lets through pods with a claim, an ephemeral volume or an in-tree volume CSI can
migrate (:func:`~ksched.plugins.attached_volumes.counted_volumes`). Filter resolves the pod's
volumes to CSI unique names with the node's CSINode (:mod:`ksched.plugins.attached_volumes`;
a missing claim is ``UnschedulableAndUnresolvable``), and, where the CSINode has
``allocatable.count`` limits, rejects the node when a limited driver's distinct volumes on it
(those of its pods, the ones placed earlier in a batch included) plus the pod's volumes not
attached there yet exceed the limit. VolumeAttachments are not modelled (none count), and the
VolumeLimitScaling gate is off (as by default in v1.35).

For the compiled loop (``FilterKind.ATTACH_LIMITS``) the plugin gives the per-node counts and
limits (:meth:`NodeVolumeLimits.attach_table`) and, for a pod none of whose volumes is attached
anywhere yet, what it adds per driver (:meth:`NodeVolumeLimits.attach_counts`): the loop then
checks ``attached + adds > limit`` (:func:`ksched.kernels.node_volume_limits.exceeds_limit`)
and adds the pod's volumes where it places it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.api import CSINode, Pod
from ksched.framework.capabilities import AttachCounts, AttachTable, FilterKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.kernels import node_volume_limits as kernels
from ksched.plugins.attached_volumes import (
    PORTWORX,
    AttachedVolumes,
    AttachError,
    attachable_volumes,
    counted_volumes,
    volume_limits,
)
from ksched.plugins.volume_helpers import pod_log_index
from ksched.state import ClusterState
from ksched.status import SKIP, Code, Status, unresolvable, unschedulable

__all__ = ["REASON", "NodeVolumeLimits", "attach_error_status", "attached_volumes"]

#: ``ErrReasonMaxVolumeCountExceeded``.
REASON = "node(s) exceed max volume count"
_KEY = ("NodeVolumeLimits",)


#: A CSINode of each migration variant (:attr:`AttachedVolumes.variant`): all that resolving a
#: pod's volumes reads of a node's CSINode (:func:`csi_migration_on`).
_VARIANT_NODES = (None, CSINode(""), CSINode("", migrated_plugins=(PORTWORX,)))
_LIMITED: dict[int, tuple[tuple, bool]] = {}


def _limits_anywhere(csi_nodes: tuple[CSINode, ...]) -> bool:
    """Whether some CSINode limits some driver (kept per CSINode list)."""
    found = _LIMITED.get(id(csi_nodes))
    if found is None or found[0] is not csi_nodes:
        if len(_LIMITED) > 16:
            _LIMITED.clear()
        found = _LIMITED[id(csi_nodes)] = (csi_nodes, any(map(volume_limits, csi_nodes)))
    return found[1]


def attached_volumes(state: ClusterState) -> AttachedVolumes:
    """The state's :class:`AttachedVolumes`, up to date with its pods and storage."""
    found = state.match_cache.get(_KEY)
    if found is not None and not found.fits(state):
        del state.match_cache[_KEY]
    index = pod_log_index(state, _KEY, lambda: AttachedVolumes(state))
    index.sync_storage(state.storage)
    return index


def attach_error_status(error: AttachError) -> Status:
    """What ``Filter`` makes of an :class:`AttachError`: a missing claim is
    ``UnschedulableAndUnresolvable``, anything else an error (``AsStatus``)."""
    return unresolvable(str(error)) if error.not_found else Status(Code.ERROR, (str(error),))


@attrs.frozen
class NodeVolumeLimits:
    NAME: ClassVar[str] = "NodeVolumeLimits"
    #: Node-static for pods without counted volumes (see :meth:`node_static_for`); for the
    #: others the loop counts the volumes (:meth:`attach_table`, :meth:`attach_counts`).
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.ATTACH_LIMITS
    args: Any = None

    def node_static_for(self, pod: Pod, state: ClusterState) -> bool:
        """The count depends on the pods placed: node-static only for a pod without counted
        volumes, or, when no CSINode limits anything, one without ephemeral volumes (whose
        claims are named after the pod)."""
        if not counted_volumes(pod):
            return True
        if any(v.kind == "ephemeral" for v in pod.volumes):
            return False
        return not _limits_anywhere(state.storage.csi_nodes)

    def attach_table(self, state: ClusterState) -> AttachTable:
        """The state's counts per node and limited driver and its limits."""
        index = attached_volumes(state)
        return AttachTable(index.variant, index.limits, index.attached.copy())

    def attach_counts(self, cycle: Cycle) -> AttachCounts | None:
        """What the pod's volumes add per limited driver, per migration variant of the node
        (:attr:`AttachedVolumes.variant`). ``None`` when one of them is attached somewhere
        already, or does not resolve on a node, or a limited node has a pod whose volumes do
        not (``Filter`` errs there)."""
        pod, state = cycle.pod, cycle.state
        index = attached_volumes(state)
        if (index.limited & (index.error_count > 0)).any():
            return None
        groups = len(_VARIANT_NODES)
        adds = np.zeros((groups, len(index.drivers)), dtype=np.int64)
        attaches = np.zeros(groups, dtype=np.bool_)
        present = np.bincount(index.variant, minlength=groups) > 0
        for variant, csi_node in enumerate(_VARIANT_NODES):
            if not pod.volumes or not present[variant]:
                continue
            new: dict = {}
            try:
                attachable_volumes(pod, csi_node, state.storage, True, new)
            except AttachError:
                return None
            for unique, driver in new.items():
                if unique in index.seen:
                    return None
                column = index.driver_ids.get(driver)
                if column is not None:
                    adds[variant, column] += 1
            attaches[variant] = bool(new)
        return AttachCounts(adds, attaches)

    def judged_by_node_class(self, pod: Pod) -> bool:
        """A pod with counted volumes is judged by the node's CSINode, not its class."""
        return not counted_volumes(pod)

    def pre_filter(self, cycle: Cycle) -> Status | None:
        """``PreFilter``: Skip for pods without counted volumes."""
        return None if counted_volumes(cycle.pod) else SKIP

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        """``Filter``, for the nodes of each migration variant at once."""
        pod, state = cycle.pod, cycle.state
        codes = np.zeros(len(nodes), dtype=np.int32)
        statuses: list[Status] = [Status(), unschedulable(REASON)]
        if not pod.volumes or not len(nodes):
            return FilterResult(codes == 0, codes, tuple(statuses))
        index = attached_volumes(state)
        variants = index.variant[nodes]
        for variant in np.flatnonzero(np.bincount(variants, minlength=3)).tolist():
            at = np.flatnonzero(variants == variant)
            new: dict = {}
            try:
                attachable_volumes(pod, index.csi_nodes[int(nodes[at[0]])], state.storage,
                                   True, new)
            except AttachError as exc:
                codes[at] = len(statuses)
                statuses.append(attach_error_status(exc))
                continue
            if not new:
                continue
            at = at[index.limited[nodes[at]]]
            failing = index.error_count[nodes[at]] > 0
            for position in at[failing].tolist():
                codes[position] = len(statuses)
                statuses.append(Status(Code.ERROR, (index.first_error(int(nodes[position])),)))
            at = at[~failing]
            seen = [index.nodes_with(unique) for unique in new]
            exceeded = kernels.volume_limit_exceeded(
                nodes[at], index.limits, index.attached,
                np.array([index.driver_ids.get(d, -1) for d in new.values()], dtype=np.int64),
                np.cumsum([0] + [len(s) for s in seen], dtype=np.int64),
                np.concatenate(seen) if seen else np.zeros(0, dtype=np.int64))
            codes[at[exceeded]] = 1
        return FilterResult(codes == 0, codes, tuple(statuses))

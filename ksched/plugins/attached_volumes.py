"""The CSI volumes pods attach to their node, as NodeVolumeLimits counts them
(``plugins/nodevolumelimits/csi.go``: ``filterAttachableVolumes``, ``getCSIDriverInfo``,
``getCSIDriverInfoFromSC``, ``checkAttachableInlineVolume``; ``utils.go``:
``isCSIMigrationOn``), and an index of them per node over the bound pods.

A volume is named by its unique name, ``(driver, volume handle)``: a claim's bound CSI volume,
its in-tree volume translated to CSI where the node's CSINode migrates the plugin, or, for a
claim not bound yet, its class's provisioner and a handle made of the claim's namespace and
name (upstream prefixes a random string, so it matches no real handle; here the handle is the
tuple ``("", namespace, name)``, which no string equals).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ksched.api import CSINode, PersistentVolumeClaim, Pod, Volume
from ksched.csi_translation import (
    IN_TREE_PLUGINS,
    PLUGINS_BY_NAME,
    TranslationError,
    inline_volume_handle,
    pv_volume_handle,
)
from ksched.plugins.volume_helpers import CLAIM_RESOURCE, PodLogIndex, not_found
from ksched.state import ClusterState
from ksched.storage_listers import StorageObjects

__all__ = ["PORTWORX", "AttachError", "AttachedVolumes", "UniqueName", "attachable_volumes",
           "counted_volumes", "csi_migration_on", "volume_limits"]

#: A volume's unique name: (driver, handle).
UniqueName = tuple[str, object]
#: The in-tree plugins whose migration needs only a CSINode (Portworx also needs the node's
#: ``migrated-plugins`` annotation; the CSIMigrationPortworx gate is on in v1.35).
_MIGRATED = ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
             "kubernetes.io/cinder")
PORTWORX = "kubernetes.io/portworx-volume"


class AttachError(Exception):
    """A volume that cannot be counted; ``not_found``: a claim of the pod being scheduled is
    missing (``UnschedulableAndUnresolvable``), otherwise an error (``AsStatus``)."""

    def __init__(self, message: str, not_found: bool = False) -> None:
        super().__init__(message)
        self.not_found = not_found


def csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """``isCSIMigrationOn`` (``nodevolumelimits/utils.go``): the node has a CSINode and the
    in-tree plugin is migrated there."""
    if csi_node is None or not plugin:
        return False
    if plugin in _MIGRATED:
        return True
    return plugin == PORTWORX and plugin in csi_node.migrated_plugins


def volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    """``getVolumeLimits``: driver -> ``allocatable.count`` of the node's CSINode."""
    if csi_node is None:
        return {}
    return {d.name: d.allocatable for d in csi_node.drivers if d.allocatable is not None}


def counted_volumes(pod: Pod) -> bool:
    """Whether NodeVolumeLimits' PreFilter lets the pod through: a claim, an ephemeral
    volume or a migratable inline volume."""
    return any(v.uses_claim or v.kind in IN_TREE_PLUGINS for v in pod.volumes)


def attachable_volumes(pod: Pod, csi_node: CSINode | None, storage: StorageObjects,
                       new_pod: bool, out: dict[UniqueName, str],
                       deps: tuple[set, set] | None = None) -> None:
    """``filterAttachableVolumes``: add the pod's countable volumes to ``out`` (unique name ->
    driver). For a pod already bound (``new_pod`` False) a missing claim is passed over.
    ``deps``, when given, collects the claim keys and volume names read.

    Raises
    ------
    AttachError
        A missing claim of the new pod, an ephemeral claim the pod does not own, an inline
        volume that does not translate.
    """
    for volume in pod.volumes:
        if not volume.uses_claim:
            _inline(volume, csi_node, out)
            continue
        name = volume.claim_for(pod.name)
        if not name:
            raise AttachError("PersistentVolumeClaim had no name")
        if deps is not None:
            deps[0].add((pod.namespace, name))
        claim = storage.claim(pod.namespace, name)
        if claim is None:
            if new_pod:
                raise AttachError(f"looking up PVC {pod.namespace}/{name}: "
                                  f"{not_found(CLAIM_RESOURCE, name)}", not_found=True)
            continue
        if volume.kind == "ephemeral" and not (claim.namespace == pod.namespace
                                               and claim.controller_uid is not None
                                               and claim.controller_uid == pod.uid):
            raise AttachError(f"PVC {claim.namespace}/{claim.name} was not created for pod "
                              f"{pod.namespace}/{pod.name} (pod is not owner)")
        if deps is not None and claim.volume_name:
            deps[1].add(claim.volume_name)
        driver, handle = _driver_info(csi_node, claim, storage)
        if driver and handle:
            out[(driver, handle)] = driver


def _inline(volume: Volume, csi_node: CSINode | None, out: dict[UniqueName, str]) -> None:
    """``checkAttachableInlineVolume``."""
    plugin = IN_TREE_PLUGINS.get(volume.kind)
    if plugin is None or not csi_migration_on(csi_node, plugin.name):
        return
    try:
        handle = inline_volume_handle(volume)
    except TranslationError as exc:
        raise AttachError(f"converting volume({volume.name}) from inline to csi: {exc}"
                          ) from None
    out[(plugin.driver, handle)] = plugin.driver


def _driver_info(csi_node: CSINode | None, claim: PersistentVolumeClaim,
                 storage: StorageObjects) -> tuple[str, object]:
    """``getCSIDriverInfo``: the driver and handle of the claim's volume (``("", "")``: not
    counted)."""
    pv = storage.volume(claim.volume_name) if claim.volume_name else None
    if pv is None:
        return _driver_info_from_class(csi_node, claim, storage)
    if pv.source == "csi":
        return pv.driver, pv.volume_handle
    plugin = IN_TREE_PLUGINS.get(pv.source)
    if plugin is None or not csi_migration_on(csi_node, plugin.name):
        return "", ""
    try:
        return plugin.driver, pv_volume_handle(pv)
    except TranslationError:
        return "", ""


def _driver_info_from_class(csi_node: CSINode | None, claim: PersistentVolumeClaim,
                            storage: StorageObjects) -> tuple[str, object]:
    """``getCSIDriverInfoFromSC``: the class's provisioner (its CSI driver when it is a
    migrated in-tree plugin) and a handle of the claim's own."""
    storage_class = storage.storage_class(claim.storage_class) if claim.storage_class else None
    if storage_class is None:
        return "", ""
    handle = ("", claim.namespace, claim.name)
    provisioner = storage_class.provisioner
    plugin = PLUGINS_BY_NAME.get(provisioner)
    if plugin is not None:
        if not csi_migration_on(csi_node, provisioner):
            return "", ""
        return plugin.driver, handle
    return provisioner, handle


class AttachedVolumes(PodLogIndex):
    """Per node, the distinct volumes its bound pods attach (each pod resolved with its
    node's CSINode against one :class:`StorageObjects`), counted per limited driver, and the
    first pod per node whose volumes do not resolve.

    Attributes
    ----------
    drivers : the drivers some CSINode limits, in order; ``limits`` : int64[n_nodes,
        n_drivers] their ``allocatable.count`` per node (-1: no limit);
        ``limited`` : bool[n_nodes] the node's CSINode limits some driver.
    attached : int64[n_nodes, n_drivers] distinct volumes of each limited driver per node.
    variant : int64[n_nodes] 0 without CSINode, 1 with one, 2 with one that migrates
        Portworx (what resolving a pod's volumes depends on).
    """

    def __init__(self, state: ClusterState) -> None:
        super().__init__()
        storage = self.storage = state.storage
        self.node_names = state.node_names
        csi_nodes = [storage.csi_node(name) for name in state.node_names]
        self.csi_nodes = csi_nodes
        limits = [volume_limits(c) for c in csi_nodes]
        self.drivers = sorted({d for found in limits for d in found})
        self.driver_ids = {d: i for i, d in enumerate(self.drivers)}
        n = len(csi_nodes)
        self.limits = np.full((n, len(self.drivers)), -1, dtype=np.int64)
        for node, found in enumerate(limits):
            for driver, count in found.items():
                self.limits[node, self.driver_ids[driver]] = count
        self.limited = np.array([bool(found) for found in limits], dtype=np.bool_)
        self.variant = np.array([_variant(c) for c in csi_nodes], dtype=np.int64)
        self.attached = np.zeros((n, len(self.drivers)), dtype=np.int64)
        #: Per row: its node, its pod, its volumes, its error, the claim keys and volume
        #: names read.
        self.rows: list[tuple[int, Pod, dict[UniqueName, str], str, tuple[set, set]]] = []
        self.refs: list[dict[UniqueName, int]] = [{} for _ in range(n)]
        self.seen: dict[UniqueName, dict[int, int]] = {}
        self.errors: list[set[int]] = [set() for _ in range(n)]
        #: int64[n_nodes]: how many of the node's pods do not resolve.
        self.error_count = np.zeros(n, dtype=np.int64)
        self.claim_rows: dict[tuple[str, str], set[int]] = {}
        self.volume_rows: dict[str, set[int]] = {}

    def fits(self, state: ClusterState) -> bool:
        """Whether this index can serve ``state`` once brought up to date: the same nodes,
        CSINodes and classes (claims and volumes may differ: :meth:`sync_storage`)."""
        storage = state.storage
        return (state.node_names is self.node_names
                and storage.csi_nodes is self.storage.csi_nodes
                and storage.storage_classes is self.storage.storage_classes)

    def add(self, pods: Sequence[Pod], nodes: npt.NDArray[np.int64],
            state: ClusterState) -> None:
        self.sync_storage(state.storage)
        for pod, node in zip(pods, nodes.tolist()):
            self.rows.append((node, pod, {}, "", (set(), set())))
            self._resolve(len(self.rows) - 1)

    def sync_storage(self, storage: StorageObjects) -> None:
        """Re-resolve the rows that read a claim or a volume ``storage`` holds differently
        (as the volume binder's assumed bindings change them)."""
        old, self.storage = self.storage, storage
        if old is storage:
            return
        rows: set[int] = set()
        volumes, claims = storage.changes_from(old)
        for key in claims:
            rows |= self.claim_rows.get(key, set())
        for name in volumes:
            rows |= self.volume_rows.get(name, set())
        for row in sorted(rows):
            self._resolve(row)

    def _resolve(self, row: int) -> None:
        """(Re-)count row ``row``'s pod on its node."""
        node, pod, old, _, (claims, volumes) = self.rows[row]
        self._drop(row, node, old, claims, volumes)
        found: dict[UniqueName, str] = {}
        deps: tuple[set, set] = (set(), set())
        error = ""
        try:
            attachable_volumes(pod, self.csi_nodes[node], self.storage, False, found, deps)
        except AttachError as exc:
            error, found = str(exc), {}
            self.errors[node].add(row)
            self.error_count[node] += 1
        self.rows[row] = (node, pod, found, error, deps)
        for key in deps[0]:
            self.claim_rows.setdefault(key, set()).add(row)
        for name in deps[1]:
            self.volume_rows.setdefault(name, set()).add(row)
        refs = self.refs[node]
        for unique, driver in found.items():
            count = refs.get(unique, 0)
            refs[unique] = count + 1
            if count == 0:
                self.seen.setdefault(unique, {})[node] = 1
                column = self.driver_ids.get(driver)
                if column is not None:
                    self.attached[node, column] += 1

    def _drop(self, row: int, node: int, found: dict[UniqueName, str], claims: set,
              volumes: set) -> None:
        """Take row ``row``'s counted volumes off its node."""
        if row in self.errors[node]:
            self.errors[node].discard(row)
            self.error_count[node] -= 1
        for key in claims:
            self.claim_rows[key].discard(row)
        for name in volumes:
            self.volume_rows[name].discard(row)
        refs = self.refs[node]
        for unique, driver in found.items():
            refs[unique] -= 1
            if refs[unique] == 0:
                del refs[unique]
                users = self.seen[unique]
                del users[node]
                if not users:
                    del self.seen[unique]
                column = self.driver_ids.get(driver)
                if column is not None:
                    self.attached[node, column] -= 1

    def first_error(self, node: int) -> str:
        """The error of the node's first pod whose volumes do not resolve (``""``: none)."""
        rows = self.errors[node]
        return self.rows[min(rows)][3] if rows else ""

    def nodes_with(self, unique: UniqueName) -> npt.NDArray[np.int64]:
        """The sorted node rows that already attach volume ``unique``."""
        return np.array(sorted(self.seen.get(unique, ())), dtype=np.int64)


def _variant(csi_node: CSINode | None) -> int:
    """What :func:`csi_migration_on` answers depend on: no CSINode (0), one (1), one that
    migrates Portworx (2)."""
    if csi_node is None:
        return 0
    return 2 if csi_migration_on(csi_node, PORTWORX) else 1

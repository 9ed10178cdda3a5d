"""The volume binder of the VolumeBinding plugin (``plugins/volumebinding/binder.go``) and the
PersistentVolume helpers it calls (``component-helpers/storage/volume``: ``pv_helpers.go``,
``helpers.go``; ``component-helpers/storage/ephemeral``), object by object.

Plain Python over the records, one node at a time: the reference the plugin's vectorised
Filter is checked against, and what Reserve assumes for the chosen node
(``AssumePodVolumes``) and Unreserve reverts (``RevertAssumedPodVolumes``). The assumed objects
live in the cluster's storage objects, the binder's PV and PVC assume caches
(``assume_cache.go``); whoever runs Reserve hands the plugin that cache (an
:class:`AssumeCache`) in the cycle's data under :data:`ASSUME_CACHE`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

import attrs

from ksched.api import (
    ClaimRef,
    CSINode,
    CSIStorageCapacity,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    TopologySelectorTerm,
    Volume,
)
from ksched.csi_translation import (
    TranslationError,
    migrated_on_node,
    migration_on,
    plugin_of,
    translated_node_affinity,
)
from ksched.labels import Selector, requirement_is_valid, requirements_match
from ksched.plugins.node_affinity import reference_term
from ksched.storage_listers import StorageObjects
from ksched.validation import go_quote

__all__ = [
    "ASSUME_CACHE", "NOT_SUPPORTED_PROVISIONER", "REASON_BIND_CONFLICT",
    "REASON_NODE_CONFLICT", "REASON_NOT_ENOUGH_SPACE", "REASON_PV_NOT_EXIST",
    "REASON_UNBOUND_IMMEDIATE", "AssumeCache", "Binding", "BinderError", "PodVolumeClaims",
    "PodVolumes", "Provision", "assume_pod_volumes", "bind_volume_to_claim",
    "check_access_modes", "check_node_affinity", "claim_problem", "find_matching_volume",
    "find_pod_volumes", "is_claim_fully_bound", "is_volume_bound_to_claim",
    "node_has_access", "pod_volume_claims", "terms_match", "topology_matches",
    "volume_affinity_on", "volume_limit", "volumes_of_class",
]

#: ``ConflictReason``s of ``FindPodVolumes``, in the order it reports them.
REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
#: PreFilter's reason for claims that the PV controller should have bound already.
REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
#: ``volume.NotSupportedProvisioner``: a class whose volumes are never provisioned.
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
#: Where Reserve and Unreserve find the assume cache in the cycle's data.
ASSUME_CACHE = "VolumeBinding/assume-cache"
_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


class BinderError(Exception):
    """The binder failed (``fwk.AsStatus(err)``: an Error status); upstream's message."""


class AssumeCache(Protocol):
    """The PV and PVC assume caches: the storage objects with the assumed versions, which
    :meth:`assume` replaces and :meth:`restore` puts back to the API objects."""

    @property
    def storage(self) -> StorageObjects: ...

    def assume(self, volumes: Iterable[PersistentVolume] = (),
               claims: Iterable[PersistentVolumeClaim] = ()) -> None: ...

    def restore(self, volumes: Iterable[str] = (),
                claims: Iterable[tuple[str, str]] = ()) -> None: ...


@attrs.frozen
class PodVolumeClaims:
    """``PodVolumeClaims``: the pod's claims by state, and per storage class of the delayed
    ones, the PersistentVolumes of that class (``unboundVolumesDelayBinding``)."""

    bound: tuple[PersistentVolumeClaim, ...] = ()
    unbound_delay: tuple[PersistentVolumeClaim, ...] = ()
    unbound_immediate: tuple[PersistentVolumeClaim, ...] = ()
    volumes: Mapping[str, tuple[PersistentVolume, ...]] = attrs.field(factory=dict)


@attrs.frozen
class Binding:
    """``BindingInfo``: a claim and the volume proposed for it."""

    claim: PersistentVolumeClaim
    volume: PersistentVolume


@attrs.frozen
class Provision:
    """``DynamicProvision``: a claim to provision, and the capacity found for it."""

    claim: PersistentVolumeClaim
    capacity: CSIStorageCapacity | None = None


@attrs.frozen
class PodVolumes:
    """``PodVolumes``: what binding the pod's volumes on one node takes."""

    static_bindings: tuple[Binding, ...] = ()
    dynamic_provisions: tuple[Provision, ...] = ()


# ----------------------------------------------------------------------- claims


def is_claim_fully_bound(claim: PersistentVolumeClaim) -> bool:
    """``isPVCFullyBound``: bound to a volume, and the PV controller is done with it."""
    return claim.volume_name != "" and claim.bind_completed


def _not_for_pod(pod: Pod, claim: PersistentVolumeClaim) -> str | None:
    """``ephemeral.VolumeIsForPod``'s error: the claim is not the pod's own."""
    if claim.namespace != pod.namespace or claim.controller_uid is None \
            or claim.controller_uid != pod.uid:
        return (f"PVC {claim.namespace}/{claim.name} was not created for pod "
                f"{pod.namespace}/{pod.name} (pod is not owner)")
    return None


def claim_problem(pod: Pod, storage: StorageObjects) -> tuple[bool, str | None]:
    """``podHasPVCs``: whether the pod uses claims, and the first problem with one (missing,
    lost, being deleted, an ephemeral claim of another pod); PreFilter rejects the pod with
    it."""
    has = False
    for volume in pod.volumes:
        if not volume.uses_claim:
            continue
        has = True
        name = volume.claim_for(pod.name)
        claim = storage.claim(pod.namespace, name)
        if claim is None:
            if volume.kind == "ephemeral":
                return has, ("waiting for ephemeral volume controller to create the "
                             f"persistentvolumeclaim {go_quote(name)}")
            return has, f"persistentvolumeclaim {go_quote(name)} not found"
        if claim.phase == "Lost":
            return has, (f"persistentvolumeclaim {go_quote(claim.name)} bound to non-existent "
                         f"persistentvolume {go_quote(claim.volume_name)}")
        if claim.deleting:
            return has, f"persistentvolumeclaim {go_quote(claim.name)} is being deleted"
        if volume.kind == "ephemeral" and (problem := _not_for_pod(pod, claim)):
            return has, problem
    return has, None


def _volume_bound(pod: Pod, volume: Volume,
                  storage: StorageObjects) -> tuple[bool, PersistentVolumeClaim | None]:
    """``isVolumeBound``: (bound, its claim); a volume without a claim counts as bound, an
    ephemeral claim of another pod as unbound without a claim."""
    if not volume.uses_claim:
        return True, None
    claim = storage.claim(pod.namespace, volume.claim_for(pod.name))
    if claim is None:
        return False, None
    if volume.kind == "ephemeral" and _not_for_pod(pod, claim):
        return False, None
    return is_claim_fully_bound(claim), claim


def _delay_binding(claim: PersistentVolumeClaim, storage: StorageObjects) -> bool:
    """``IsDelayBindingMode``: the claim's class binds at the first consumer."""
    if not claim.storage_class:
        return False
    found = storage.storage_class(claim.storage_class)
    return found is not None and found.volume_binding_mode == _WAIT_FOR_FIRST_CONSUMER


_BY_CLASS: dict[int, tuple[tuple, dict[str, tuple[PersistentVolume, ...]]]] = {}


def volumes_of_class(storage: StorageObjects, storage_class: str
                     ) -> tuple[PersistentVolume, ...]:
    """``PVAssumeCache.ListPVs``: the volumes of a storage class, in input order (upstream's
    index has no order). The index is kept per volume list."""
    volumes = storage.persistent_volumes
    found = _BY_CLASS.get(id(volumes))
    if found is None or found[0] is not volumes:
        index: dict[str, list[PersistentVolume]] = {}
        for pv in volumes:
            index.setdefault(pv.storage_class, []).append(pv)
        if len(_BY_CLASS) > 16:
            _BY_CLASS.clear()
        found = _BY_CLASS[id(volumes)] = (volumes, {k: tuple(v) for k, v in index.items()})
    return found[1].get(storage_class, ())


def pod_volume_claims(pod: Pod, storage: StorageObjects) -> PodVolumeClaims:
    """``GetPodVolumeClaims``: the pod's claims sorted into bound, unbound of a
    WaitForFirstConsumer class (to be bound here) and unbound others, with the volumes of the
    delayed claims' classes."""
    bound, delayed, immediate = [], [], []
    for volume in pod.volumes:
        is_bound, claim = _volume_bound(pod, volume, storage)
        if claim is None:
            continue
        if is_bound:
            bound.append(claim)
        elif _delay_binding(claim, storage) and claim.volume_name == "":
            delayed.append(claim)
        else:
            immediate.append(claim)
    volumes = {c.storage_class: volumes_of_class(storage, c.storage_class) for c in delayed}
    return PodVolumeClaims(tuple(bound), tuple(delayed), tuple(immediate), volumes)


# ----------------------------------------------------------------------- pv helpers


def is_volume_bound_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """``IsVolumeBoundToClaim``: the volume's claimRef names the claim (and its uid, if
    given)."""
    ref = pv.claim_ref
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
        return False
    return ref.uid == "" or ref.uid == claim.uid


def check_access_modes(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """``CheckAccessModes``: the volume offers every mode the claim asks for."""
    return set(claim.access_modes) <= set(pv.access_modes)


def terms_match(terms: tuple | None, labels: Mapping[str, str]) -> bool:
    """``MatchNodeSelectorTerms`` on a node that has these labels and no name (``None``: no
    node affinity, every node matches)."""
    if terms is None:
        return True
    node = Node("", labels=labels)
    return any(reference_term(term, node) for term in terms)


def check_node_affinity(pv: PersistentVolume, labels: Mapping[str, str]) -> bool:
    """``CheckNodeAffinity``: a node with these labels satisfies the volume's node affinity."""
    return terms_match(pv.node_affinity, labels)


def volume_affinity_on(pv: PersistentVolume, csi_node: CSINode | None) -> tuple | None:
    """The node affinity the binder checks a bound volume by on a node
    (``tryTranslatePVToCSI``): the CSI translation's where the node's CSI driver took the
    volume's in-tree plugin over, else the volume's own. Raises :class:`BinderError` where
    the translation fails."""
    plugin = plugin_of(pv)
    if plugin is None or not migration_on(plugin) or not migrated_on_node(plugin, csi_node):
        return pv.node_affinity
    try:
        return translated_node_affinity(pv)
    except TranslationError as exc:
        raise BinderError(f"could not translate pv: {exc}") from None


def find_matching_volume(claim: PersistentVolumeClaim, volumes: Iterable[PersistentVolume],
                         labels: Mapping[str, str] | None,
                         excluded: Iterable[str] = ()) -> PersistentVolume | None:
    """``FindMatchingVolume`` (delayed binding, VolumeAttributesClass on) for a node with
    these labels: the volume already bound to the claim if the node suits it (else none),
    otherwise the smallest available volume of the claim's class that is big enough, of its
    volume mode and attributes class, with all its access modes, matching its selector and
    the node, and not in ``excluded``. Raises :class:`BinderError` on an invalid selector."""
    excluded = set(excluded)
    selector = None
    if claim.selector is not None:
        try:
            selector = Selector.from_label_selector(claim.selector)
        except ValueError as exc:
            raise BinderError(f"error creating internal label selector for claim: "
                              f"{claim.namespace}/{claim.name}: {exc}") from None
    smallest = None
    for pv in volumes:
        if pv.name in excluded:
            continue
        if pv.claim_ref is not None and not is_volume_bound_to_claim(pv, claim):
            continue
        if pv.capacity < claim.request or pv.volume_mode != claim.volume_mode:
            continue
        if pv.volume_attributes_class != claim.volume_attributes_class or pv.deleting:
            continue
        fits = labels is None or check_node_affinity(pv, labels)
        if is_volume_bound_to_claim(pv, claim):
            return pv if fits else None
        if labels is None:
            continue
        if pv.phase != "Available" or (selector is not None
                                       and not selector.matches(pv.labels)):
            continue
        if pv.storage_class != claim.storage_class or not fits:
            continue
        if not check_access_modes(claim, pv):
            continue
        if smallest is None or smallest.capacity > pv.capacity:
            smallest = pv
    return smallest


def topology_matches(terms: tuple[TopologySelectorTerm, ...],
                     labels: Mapping[str, str]) -> bool:
    """``MatchTopologySelectorTerms``: no terms match every node; an empty or invalid term
    none."""
    if not terms:
        return True
    for term in terms:
        reqs = [(r.key, "In", r.values) for r in term.match_label_expressions]
        if reqs and all(requirement_is_valid(*r) for r in reqs) \
                and requirements_match(labels, reqs):
            return True
    return False


def volume_limit(capacity: CSIStorageCapacity) -> int | None:
    """``volumeLimit``: the largest volume the capacity allows (``None``: unknown)."""
    if capacity.maximum_volume_size is not None:
        return capacity.maximum_volume_size
    return capacity.capacity


def node_has_access(labels: Mapping[str, str], capacity: CSIStorageCapacity) -> bool:
    """``nodeHasAccess``: the capacity's node topology selects the node."""
    if capacity.node_topology is None:
        return False
    try:
        return Selector.from_label_selector(capacity.node_topology).matches(labels)
    except ValueError:
        return False


# ----------------------------------------------------------------------- FindPodVolumes


def find_pod_volumes(pod: Pod, claims: PodVolumeClaims, node: Node,
                     storage: StorageObjects) -> tuple[PodVolumes, tuple[str, ...]]:
    """``FindPodVolumes`` on one node: what binding the pod's volumes there takes, and the
    reasons the node does not do (none: it does). Raises :class:`BinderError` where upstream
    returns an error."""
    bound_ok = unbound_ok = enough_space = found_pvs = True
    bindings: tuple[Binding, ...] = ()
    provisions: tuple[Provision, ...] = ()
    if claims.bound:
        bound_ok, found_pvs = _check_bound_claims(claims.bound, node, storage)
    if claims.unbound_delay:
        to_match, to_provision = [], []
        for claim in claims.unbound_delay:
            if claim.selected_node:
                if claim.selected_node != node.name:
                    unbound_ok = False
                    break
                to_provision.append(claim)
            else:
                to_match.append(claim)
        else:
            if to_match:
                unbound_ok, bindings, unmatched = _find_matching_volumes(
                    to_match, claims.volumes, node)
                to_provision += unmatched
            if to_provision:
                unbound_ok, enough_space, provisions = _check_volume_provisions(
                    to_provision, node, storage)
    reasons = [reason for ok, reason in ((bound_ok, REASON_NODE_CONFLICT),
                                         (unbound_ok, REASON_BIND_CONFLICT),
                                         (enough_space, REASON_NOT_ENOUGH_SPACE),
                                         (found_pvs, REASON_PV_NOT_EXIST)) if not ok]
    return PodVolumes(bindings, provisions), tuple(reasons)


def _check_bound_claims(claims: Iterable[PersistentVolumeClaim], node: Node,
                        storage: StorageObjects) -> tuple[bool, bool]:
    """``checkBoundClaims``: (node affinity satisfied, volumes found), decided by the first
    claim whose volume is missing or does not suit the node."""
    csi_node = storage.csi_node(node.name)
    for claim in claims:
        pv = storage.volume(claim.volume_name)
        if pv is None:
            return True, False
        if not terms_match(volume_affinity_on(pv, csi_node), node.labels):
            return False, True
    return True, True


def _find_matching_volumes(claims: list[PersistentVolumeClaim],
                           volumes: Mapping[str, tuple[PersistentVolume, ...]], node: Node
                           ) -> tuple[bool, tuple[Binding, ...], list[PersistentVolumeClaim]]:
    """``findMatchingVolumes``: smallest claims first, each a volume no earlier claim took;
    (all matched, the bindings, the claims left to provision)."""
    chosen: set[str] = set()
    bindings, unmatched = [], []
    for claim in sorted(claims, key=lambda c: c.request):
        pv = find_matching_volume(claim, volumes.get(claim.storage_class, ()), node.labels,
                                  chosen)
        if pv is None:
            unmatched.append(claim)
            continue
        chosen.add(pv.name)
        bindings.append(Binding(claim, pv))
    return not unmatched, tuple(bindings), unmatched


def provision_class(claim: PersistentVolumeClaim, storage: StorageObjects) -> StorageClass:
    """The class ``checkVolumeProvisions`` provisions a claim with; raises
    :class:`BinderError` when the claim has none or it does not exist."""
    if not claim.storage_class:
        raise BinderError(f"no class for claim {go_quote(claim.key)}")
    found = storage.storage_class(claim.storage_class)
    if found is None:
        raise BinderError(f"failed to find storage class {go_quote(claim.storage_class)}")
    return found


def _check_volume_provisions(claims: list[PersistentVolumeClaim], node: Node,
                             storage: StorageObjects
                             ) -> tuple[bool, bool, tuple[Provision, ...]]:
    """``checkVolumeProvisions``: (provisioning possible, enough storage, the provisions),
    decided by the first claim that cannot be provisioned on the node."""
    provisions = []
    for claim in claims:
        storage_class = provision_class(claim, storage)
        if storage_class.provisioner in ("", NOT_SUPPORTED_PROVISIONER):
            return False, True, ()
        if not topology_matches(storage_class.allowed_topologies, node.labels):
            return False, True, ()
        sufficient, capacity = _enough_capacity(claim, storage_class, node, storage)
        if not sufficient:
            return True, False, ()
        provisions.append(Provision(claim, capacity))
    return True, True, tuple(provisions)


def _enough_capacity(claim: PersistentVolumeClaim, storage_class: StorageClass, node: Node,
                     storage: StorageObjects) -> tuple[bool, CSIStorageCapacity | None]:
    """``hasEnoughCapacity``: drivers that report no capacity always have enough; otherwise
    the first capacity of the class, large enough, that the node reaches."""
    driver = storage.csi_driver(storage_class.provisioner)
    if driver is None or not driver.storage_capacity:
        return True, None
    for capacity in storage.csi_storage_capacities:
        limit = volume_limit(capacity)
        if capacity.storage_class == storage_class.name and limit is not None \
                and limit >= claim.request and node_has_access(node.labels, capacity):
            return True, capacity
    return False, None


# ----------------------------------------------------------------------- assume / revert


def bind_volume_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim
                         ) -> tuple[PersistentVolume, bool]:
    """``GetBindVolumeToClaim``: the volume with its claimRef set to the claim, and whether
    that changed it."""
    ref = ClaimRef(claim.namespace, claim.name, claim.uid)
    if pv.claim_ref == ref:
        return pv, False
    return attrs.evolve(pv, claim_ref=ref), True


def assume_pod_volumes(pod: Pod, node_name: str, pod_volumes: PodVolumes,
                       storage: StorageObjects
                       ) -> tuple[PodVolumes, tuple[PersistentVolume, ...],
                                  tuple[PersistentVolumeClaim, ...]] | None:
    """``AssumePodVolumes``: ``None`` when every claim of the pod is bound already; else the
    pod's volumes as assumed, the volumes to assume (bound to their claims) and the claims to
    assume (provisioned for ``node_name``: the selected-node annotation)."""
    if all(_volume_bound(pod, volume, storage)[0] for volume in pod.volumes):
        return None
    bindings, volumes = [], []
    for binding in pod_volumes.static_bindings:
        pv, dirty = bind_volume_to_claim(binding.volume, binding.claim)
        if dirty:
            volumes.append(pv)
        bindings.append(Binding(binding.claim, pv))
    claims = tuple(attrs.evolve(p.claim, selected_node=node_name)
                   for p in pod_volumes.dynamic_provisions)
    assumed = PodVolumes(tuple(bindings), tuple(Provision(c) for c in claims))
    return assumed, tuple(volumes), claims


def assumed_names(pod_volumes: PodVolumes) -> tuple[list[str], list[tuple[str, str]]]:
    """What ``RevertAssumedPodVolumes`` restores: the volumes' names and the claims' keys."""
    return ([b.volume.name for b in pod_volumes.static_bindings],
            [(p.claim.namespace, p.claim.name) for p in pod_volumes.dynamic_provisions])

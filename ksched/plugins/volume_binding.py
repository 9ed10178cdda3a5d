"""VolumeBinding (``plugins/volumebinding/volume_binding.go``; the binder's rules in
:mod:`ksched.volume_binder`).

PreFilter sorts the pod's claims (missing, lost or deleted ones, and unbound claims of
``Immediate`` classes, reject the pod); Filter checks, on every node at once, the node affinity
of the bound claims' volumes, and for unbound ``WaitForFirstConsumer`` claims a matching
available volume or dynamic provisioning (class provisioner, ``allowedTopologies``,
CSIStorageCapacity); Reserve assumes the chosen volume bindings and provisioning node in the
cluster's storage objects, Unreserve reverts them, PreBind has no API to call. Score is off
(``StorageCapacityScoring`` is disabled in v1.35).

Node-static for pods whose claims are bound (their verdict is the bound volumes' node
affinity, and Reserve changes no bound claim or volume) or unbound claims of
``WaitForFirstConsumer`` classes that no volume could be matched to (no volume of the class is
unclaimed: provisioning alone decides, per node, and Reserve changes only the pod's own
claims). Pods with volumes to match see the bindings earlier pods assumed, so they take the
object-level framework. The compiled loop runs Reserve after it places a pod that has unbound
claims (:meth:`VolumeBinding.reserves_for`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.api import NodeSelectorRequirement, NodeSelectorTerm, PersistentVolume, Pod
from ksched.csi_translation import migrated_on_node, migration_on, plugin_of
from ksched.framework.capabilities import FilterKind, Normalization, ScoreKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.labels import Selector
from ksched.plugins.node_affinity import compile_terms, term_is_valid
from ksched.state import ClusterState
from ksched.status import SKIP, SUCCESS, Code, Status, unresolvable
from ksched.volume_binder import (
    ASSUME_CACHE,
    NOT_SUPPORTED_PROVISIONER,
    REASON_BIND_CONFLICT,
    REASON_NODE_CONFLICT,
    REASON_NOT_ENOUGH_SPACE,
    REASON_PV_NOT_EXIST,
    REASON_UNBOUND_IMMEDIATE,
    BinderError,
    PodVolumeClaims,
    PodVolumes,
    assume_pod_volumes,
    assumed_names,
    check_access_modes,
    claim_problem,
    find_pod_volumes,
    is_claim_fully_bound,
    is_volume_bound_to_claim,
    pod_volume_claims,
    provision_class,
    volume_affinity_on,
    volume_limit,
)

#: Filter codes: one bit per reason, in the order ``FindPodVolumes`` reports them; codes
#: from :data:`_ERROR` on stand for the cycle's error messages.
_REASONS = ((1, REASON_NODE_CONFLICT), (2, REASON_BIND_CONFLICT), (4, REASON_NOT_ENOUGH_SPACE),
            (8, REASON_PV_NOT_EXIST))
_NODE_CONFLICT, _BIND_CONFLICT, _NO_SPACE, _PV_NOT_EXIST = (bit for bit, _ in _REASONS)
_ERROR = 16
#: A claim's provisioning on a node: possible, impossible (no provisioner, topology), or
#: short of storage.
_PROVISIONABLE, _UNPROVISIONABLE, _SHORT = 0, 1, 2
_NO_NODE = np.iinfo(np.int64).max


@attrs.define
class BindingState:
    """``stateData``: the pod's claims (``None``: it has none), the storage PreFilter read,
    and per node the volumes Reserve assumed there (``podVolumesByNode`` once assumed)."""

    claims: PodVolumeClaims | None
    storage: Any = None
    assumed: dict[str, PodVolumes] = attrs.field(factory=dict)
    all_bound: bool = True


def _uses_claims(pod: Pod) -> bool:
    return any(volume.uses_claim for volume in pod.volumes)


@attrs.frozen
class VolumeBinding:
    NAME: ClassVar[str] = "VolumeBinding"
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.NODE_STATIC
    NORMALIZATION: ClassVar[Normalization] = Normalization.NONE
    args: Any = None
    #: Node masks per node-affinity / topology object and node layout (see :meth:`_mask`).
    _masks: dict = attrs.field(factory=dict, init=False, eq=False, repr=False)

    def node_static_for(self, pod: Pod, state: ClusterState) -> bool:
        """Pods without claims, or whose claims are bound (their volumes' node affinity
        decides, and no Reserve changes it) or unbound of ``WaitForFirstConsumer`` classes
        with no unclaimed volume (provisioning decides). Claims with volumes to match see
        what earlier pods assumed; missing or unusable claims are left to the framework."""
        storage = state.storage
        has, problem = claim_problem(pod, storage)
        if not has:
            return True
        if problem is not None:
            return False
        claims = pod_volume_claims(pod, storage)
        if claims.unbound_immediate:
            return False
        unclaimed = _unclaimed_classes(storage)
        return not any(c.storage_class in unclaimed for c in claims.unbound_delay)

    def reserves_for(self, pod: Pod, state: ClusterState) -> bool:
        """Whether Reserve assumes anything for the pod (``AssumePodVolumes`` does unless
        every claim is bound)."""
        storage = state.storage
        for volume in pod.volumes:
            if volume.uses_claim:
                claim = storage.claim(pod.namespace, volume.claim_for(pod.name))
                if claim is None or not is_claim_fully_bound(claim):
                    return True
        return False

    def judged_by_node_class(self, pod: Pod) -> bool:
        """Volumes' node affinity names hosts, and CSINodes are per node."""
        return not _uses_claims(pod)

    # ------------------------------------------------------------------ PreFilter

    def pre_filter(self, cycle: Cycle) -> Status | None:
        """``PreFilter``: Skip without claims; reject on a claim problem or an unbound claim
        of an ``Immediate`` class."""
        found = self._prepare(cycle)
        if isinstance(found, Status):
            return found
        cycle.data[self.NAME] = found
        if found.claims is None:
            return SKIP
        if found.claims.unbound_immediate:
            return unresolvable(REASON_UNBOUND_IMMEDIATE)
        return None

    def _prepare(self, cycle: Cycle) -> BindingState | Status:
        pod, storage = cycle.pod, cycle.state.storage
        has, problem = claim_problem(pod, storage)
        if problem is not None:
            return unresolvable(problem)
        if not has:
            return BindingState(None)
        try:
            return BindingState(pod_volume_claims(pod, storage), storage)
        except BinderError as exc:
            return Status(Code.ERROR, (str(exc),))

    def _state(self, cycle: Cycle) -> BindingState | Status:
        """The cycle's state, found again where PreFilter did not run in this cycle."""
        found = cycle.data.get(self.NAME)
        if found is None:
            found = self._prepare(cycle)
            if isinstance(found, BindingState):
                cycle.data[self.NAME] = found
        return found

    # ------------------------------------------------------------------ Filter

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        """``Filter`` (``FindPodVolumes``) on every node at once."""
        found = self._state(cycle)
        if isinstance(found, Status):
            return FilterResult.from_mask(np.zeros(len(nodes), np.bool_), found)
        if found.claims is None:
            return FilterResult.from_mask(np.ones(len(nodes), np.bool_), Status())
        errors: list[str] = []
        codes = self._codes(cycle, found.claims, np.asarray(nodes, dtype=np.int64), errors)
        return FilterResult.from_codes(codes, lambda code: (
            Status(Code.ERROR, (errors[code - _ERROR],)) if code >= _ERROR else
            unresolvable(*(reason for bit, reason in _REASONS if code & bit))))

    def _codes(self, cycle: Cycle, claims: PodVolumeClaims, nodes: NodeIndices,
               errors: list[str]) -> np.ndarray:
        """Per node the reasons' bits, or an error code; ``alive`` marks the nodes no error
        stopped."""
        codes = np.zeros(len(nodes), dtype=np.int64)
        alive = np.ones(len(nodes), dtype=np.bool_)

        def fail(where: np.ndarray, message: str) -> None:
            codes[where] = _ERROR + len(errors)
            errors.append(message)
            alive[where] = False

        self._bound(cycle, claims, nodes, codes, alive, fail)
        if claims.unbound_delay:
            self._unbound(cycle, claims, nodes, codes, alive, fail)
        return codes

    def _bound(self, cycle: Cycle, claims: PodVolumeClaims, nodes: NodeIndices,
               codes: np.ndarray, alive: np.ndarray, fail: Any) -> None:
        """``checkBoundClaims``: the first claim whose volume is missing or does not suit
        the node decides."""
        storage = cycle.state.storage
        pending = alive.copy()
        for claim in claims.bound:
            pv = storage.volume(claim.volume_name)
            if pv is None:
                codes[pending] |= _PV_NOT_EXIST
                return
            fits = self._bound_volume_fits(cycle, pv, nodes, pending, fail)
            pending &= alive
            codes[pending & ~fits] |= _NODE_CONFLICT
            pending &= fits
            if not pending.any():
                return

    def _bound_volume_fits(self, cycle: Cycle, pv: PersistentVolume, nodes: NodeIndices,
                           pending: np.ndarray, fail: Any) -> np.ndarray:
        """Whether each node suits the bound volume's node affinity, translated to CSI on
        nodes whose CSI driver took its in-tree plugin over (failures stop those nodes)."""
        state = cycle.state
        fits = self._mask(state, pv.node_affinity, _affinity_program)[nodes]
        plugin = plugin_of(pv)
        if plugin is None or not migration_on(plugin):
            return fits
        storage = state.storage
        migrated = np.array([migrated_on_node(plugin, storage.csi_node(state.node_names[i]))
                             for i in nodes.tolist()], dtype=np.bool_) & pending
        if migrated.any():
            try:
                terms = volume_affinity_on(pv, storage.csi_node(
                    state.node_names[int(nodes[np.argmax(migrated)])]))
            except BinderError as exc:
                fail(migrated, str(exc))
                return fits
            fits = np.where(migrated, _affinity_program(terms, state, nodes), fits)
        return fits

    def _unbound(self, cycle: Cycle, claims: PodVolumeClaims, nodes: NodeIndices,
                 codes: np.ndarray, alive: np.ndarray, fail: Any) -> None:
        """The delayed claims: a provisioning node chosen already (other nodes fail at once),
        then volumes to match, then provisioning for the rest."""
        state = cycle.state
        active = alive.copy()
        selected = [c for c in claims.unbound_delay if c.selected_node]
        for claim in selected:
            elsewhere = active & (nodes != state.node_index.get(claim.selected_node, -1))
            codes[elsewhere] |= _BIND_CONFLICT
            active &= ~elsewhere
        to_match = sorted((c for c in claims.unbound_delay if not c.selected_node),
                          key=lambda c: c.request)
        unbound_ok = np.ones(len(nodes), dtype=np.bool_)
        needs = [(claim, np.ones(len(nodes), dtype=np.bool_)) for claim in selected]
        if to_match and active.any():
            try:
                matched = self._matches(state, to_match, claims, nodes)
            except BinderError as exc:
                fail(active.copy(), str(exc))
                return
            for claim, found in zip(to_match, matched):
                unbound_ok &= found
                needs.append((claim, ~found))
        space_ok = np.ones(len(nodes), dtype=np.bool_)
        decided = np.zeros(len(nodes), dtype=np.bool_)
        provisioning = np.zeros(len(nodes), dtype=np.bool_)
        for claim, need in needs:
            where = active & need & ~decided
            provisioning |= active & need
            if not where.any():
                continue
            try:
                outcome = self._provisioning(state, claim)[nodes]
            except BinderError as exc:
                fail(where, str(exc))
                active &= ~where
                continue
            for kind, unbound, space in ((_UNPROVISIONABLE, False, True),
                                         (_SHORT, True, False)):
                hit = where & (outcome == kind)
                unbound_ok[hit], space_ok[hit] = unbound, space
                decided |= hit
        unbound_ok[provisioning & ~decided] = True
        codes[active & ~unbound_ok] |= _BIND_CONFLICT
        codes[active & ~space_ok] |= _NO_SPACE

    def _matches(self, state: ClusterState, to_match: list, claims: PodVolumeClaims,
                 nodes: NodeIndices) -> list[np.ndarray]:
        """``findMatchingVolumes`` over nodes: per claim (smallest first) whether a volume
        was found, each node's choices excluded for the later claims."""
        chosen: dict[str, np.ndarray] = {}
        matched = []
        for claim in to_match:
            volumes = claims.volumes.get(claim.storage_class, ())
            best = self._best_volume(state, claim, volumes, nodes, chosen)
            matched.append(best >= 0)
            for j in np.unique(best[best >= 0]).tolist():
                name = volumes[j].name
                chosen[name] = chosen.get(name, np.zeros(len(nodes), np.bool_)) | (best == j)
        return matched

    def _best_volume(self, state: ClusterState, claim: Any, volumes: tuple, nodes: NodeIndices,
                     chosen: dict[str, np.ndarray]) -> np.ndarray:
        """``FindMatchingVolume`` over nodes: the position in ``volumes`` of each node's
        volume, -1 where none."""
        if claim.selector is not None:
            try:
                selector = Selector.from_label_selector(claim.selector)
            except ValueError as exc:
                raise BinderError(f"error creating internal label selector for claim: "
                                  f"{claim.namespace}/{claim.name}: {exc}") from None
        else:
            selector = None
        n = len(nodes)
        best = np.full(n, -1, dtype=np.int64)
        best_size = np.full(n, _NO_NODE, dtype=np.int64)
        stopped = np.zeros(n, dtype=np.bool_)
        for j, pv in enumerate(volumes):
            if (pv.claim_ref is not None and not is_volume_bound_to_claim(pv, claim)) \
                    or pv.capacity < claim.request or pv.volume_mode != claim.volume_mode \
                    or pv.volume_attributes_class != claim.volume_attributes_class \
                    or pv.deleting:
                continue
            live = ~stopped
            if pv.name in chosen:
                live &= ~chosen[pv.name]
            fits = self._mask(state, pv.node_affinity, _affinity_program)[nodes]
            if is_volume_bound_to_claim(pv, claim):
                best[live] = np.where(fits[live], j, -1)
                stopped |= live
                continue
            if pv.phase != "Available" or (selector is not None
                                           and not selector.matches(pv.labels)) \
                    or pv.storage_class != claim.storage_class \
                    or not check_access_modes(claim, pv):
                continue
            better = live & fits & (pv.capacity < best_size)
            best[better], best_size[better] = j, pv.capacity
        return best

    def _provisioning(self, state: ClusterState, claim: Any) -> np.ndarray:
        """Per node of the state, whether the claim can be provisioned there
        (``checkVolumeProvisions`` for one claim)."""
        storage = state.storage
        storage_class = provision_class(claim, storage)
        n = state.num_nodes
        if storage_class.provisioner in ("", NOT_SUPPORTED_PROVISIONER):
            return np.full(n, _UNPROVISIONABLE, dtype=np.int64)
        reachable = self._mask(state, storage_class.allowed_topologies, _topology_program)
        outcome = np.where(reachable, _PROVISIONABLE, _UNPROVISIONABLE)
        driver = storage.csi_driver(storage_class.provisioner)
        if driver is None or not driver.storage_capacity:
            return outcome
        enough = np.zeros(n, dtype=np.bool_)
        for capacity in storage.csi_storage_capacities:
            limit = volume_limit(capacity)
            if capacity.storage_class == storage_class.name and limit is not None \
                    and limit >= claim.request and capacity.node_topology is not None:
                enough |= self._mask(state, capacity.node_topology, _selector_program)
        outcome[(outcome == _PROVISIONABLE) & ~enough] = _SHORT
        return outcome

    def _mask(self, state: ClusterState, spec: Any, program: Any) -> np.ndarray:
        """``program(spec, state, all nodes)``, kept per spec object and node labels."""
        key = (id(spec), id(program), id(state.labels), id(state.vocab))
        found = self._masks.get(key)
        if found is None or found[0] is not spec or found[1] is not state.labels:
            if len(self._masks) > 4096:
                self._masks.clear()
            found = self._masks[key] = (spec, state.labels, program(spec, state, _all(state)))
        return found[2]

    # ------------------------------------------------------------------ Score

    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status:
        """No scorer without StorageCapacityScoring (off in v1.35): always Skip."""
        return SKIP

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        return np.zeros(len(nodes), dtype=np.int64)

    # ------------------------------------------------------------------ binding cycle

    def _node_volumes(self, cycle: Cycle, node: str) -> tuple[BindingState, PodVolumes] | None:
        """The cycle's state and the node's ``podVolumesByNode`` entry (what Filter found
        there); ``None`` when the pod has no claims or the node did not pass."""
        found = self._state(cycle)
        if isinstance(found, Status) or found.claims is None:
            return None
        if node in found.assumed:
            return found, found.assumed[node]
        state = cycle.state
        row = state.node_index.get(node)
        if row is None:
            return None
        try:
            volumes, reasons = find_pod_volumes(cycle.pod, found.claims, state.nodes[row],
                                                found.storage)
        except BinderError:
            return None
        return None if reasons else (found, volumes)

    def reserve(self, cycle: Cycle, node: str) -> Status:
        """``Reserve`` (``AssumePodVolumes``): bind the chosen volumes to their claims and
        mark the claims to provision for ``node``, in the assume cache."""
        if self.NAME not in cycle.data and not _uses_claims(cycle.pod):
            return SUCCESS  # no claims (what PreFilter's state would say): nothing to assume
        entry = self._node_volumes(cycle, node)
        if entry is None:
            found = cycle.data.get(self.NAME)
            if isinstance(found, BindingState):
                found.all_bound = True
            return SUCCESS
        found, volumes = entry
        cache = cycle.data.get(ASSUME_CACHE)
        storage = cache.storage if cache is not None else cycle.state.storage
        assumed = assume_pod_volumes(cycle.pod, node, volumes, storage)
        found.all_bound = assumed is None
        if assumed is not None:
            found.assumed[node] = assumed[0]
            if cache is not None:
                cache.assume(assumed[1], assumed[2])
        return SUCCESS

    def unreserve(self, cycle: Cycle, node: str) -> None:
        """``Unreserve`` (``RevertAssumedPodVolumes``): the node's volumes and claims back to
        their API objects."""
        if self.NAME not in cycle.data and not _uses_claims(cycle.pod):
            return
        entry = self._node_volumes(cycle, node)
        cache = cycle.data.get(ASSUME_CACHE)
        if entry is not None and cache is not None:
            cache.restore(*assumed_names(entry[1]))

    def pre_bind(self, cycle: Cycle, node: str) -> Status:
        """``PreBind``: the API updates and the PV controller's binding are not modelled;
        the assumed bindings stand."""
        return SUCCESS


# ----------------------------------------------------------------------- node masks


_UNCLAIMED: dict[int, tuple[tuple, frozenset[str]]] = {}


def _unclaimed_classes(storage: Any) -> frozenset[str]:
    """The storage classes with a volume no claim has claimed (one a delayed claim might be
    matched to, until an assumed binding claims it), kept per volume list."""
    volumes = storage.persistent_volumes
    found = _UNCLAIMED.get(id(volumes))
    if found is None or found[0] is not volumes:
        if len(_UNCLAIMED) > 16:
            _UNCLAIMED.clear()
        found = _UNCLAIMED[id(volumes)] = (volumes, frozenset(
            pv.storage_class for pv in volumes if pv.claim_ref is None))
    return found[1]



def _all(state: ClusterState) -> NodeIndices:
    return np.arange(state.num_nodes, dtype=np.int64)


def _affinity_program(terms: tuple[NodeSelectorTerm, ...] | None, state: ClusterState,
                      nodes: NodeIndices) -> np.ndarray:
    """``CheckNodeAffinity`` (``MatchNodeSelectorTerms`` on a node of labels and no name) over
    nodes: ``matchFields`` read the empty name."""
    if terms is None:
        return np.ones(len(nodes), dtype=np.bool_)
    kept = []
    for term in terms:
        if term_is_valid(term) and all((r.values[0] == "") == (r.operator == "In")
                                       for r in term.match_fields):
            if not term.match_expressions:
                return np.ones(len(nodes), dtype=np.bool_)
            kept.append(NodeSelectorTerm(term.match_expressions))
    if not kept:
        return np.zeros(len(nodes), dtype=np.bool_)
    return compile_terms(kept, state, validate=False).mask(state, nodes)


def _topology_program(terms: tuple, state: ClusterState, nodes: NodeIndices) -> np.ndarray:
    """``MatchTopologySelectorTerms`` over nodes (each term's requirements are ``In``)."""
    if not terms:
        return np.ones(len(nodes), dtype=np.bool_)
    return compile_terms([NodeSelectorTerm(tuple(NodeSelectorRequirement(r.key, "In", r.values)
                                                 for r in t.match_label_expressions))
                          for t in terms], state).mask(state, nodes)


def _selector_program(selector: Any, state: ClusterState, nodes: NodeIndices) -> np.ndarray:
    """``nodeHasAccess``: a CSIStorageCapacity's node topology selector over nodes (an
    invalid selector reaches none)."""
    try:
        parsed = Selector.from_label_selector(selector)
    except ValueError:
        return np.zeros(len(nodes), dtype=np.bool_)
    if parsed.empty:
        return np.ones(len(nodes), dtype=np.bool_)
    term = NodeSelectorTerm(tuple(NodeSelectorRequirement(k, op, v)
                                  for k, op, v in parsed.requirements))
    return compile_terms([term], state, validate=False).mask(state, nodes)

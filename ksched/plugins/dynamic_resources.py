"""DynamicResources (``plugins/dynamicresources/dynamicresources.go``, v1.35.4).

Structured parameters with the v1.35.4 default gates (admin access and prioritized lists on,
the alpha features off). PreEnqueue holds a pod whose claims do not exist; PreFilter resolves
the pod's claims (``resourceClaimName``, or the generated claim named in
``status.resourceClaimStatuses`` and controlled by the pod), checks device classes and gathers
the devices in use; Filter runs the allocator (:mod:`ksched.dra.allocator`) on each node;
Score rewards early ``firstAvailable`` subrequests (``computeScore``, with its quirk); Reserve
assumes the allocated and reserved claims in the claim assume cache
(:class:`~ksched.dra.state.ClaimCache`) as PreBind then writes them, so the next pod sees the
devices taken; Unreserve restores them.

Pods without claims are node-static (every node passes, score 0) and stay on the compiled
loop; pods with claims take the object-level framework (:meth:`DynamicResources.node_static_for`),
but those whose devices the loop counts (:meth:`DynamicResources.device_columns`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.dra.allocator import (
    AllocationError,
    InvalidPoolsError,
    allocate,
    node_matches,
    node_pools,
)
from ksched.dra.claims import ResourceClaim
from ksched.dra.compiled import DeviceColumns
from ksched.dra.pod_claims import ClaimLookupError, pod_claims, reserved_claims
from ksched.dra.fields import FIRST_AVAILABLE_MAX
from ksched.dra.state import CLAIM_CACHE, DraObjects, dra_objects
from ksched.framework.capabilities import FilterKind, Normalization, ScoreKind
from ksched.framework.diagnosis import SchedulingError
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.status import SKIP, SUCCESS, Code, Status, unresolvable

__all__ = ["DynamicResources", "pod_claims", "REASON_NOT_AVAILABLE", "REASON_CANNOT_ALLOCATE"]

REASON_NOT_AVAILABLE = "resourceclaim not available on the node"
REASON_CANNOT_ALLOCATE = "cannot allocate all claims"
_PASS, _UNAVAILABLE, _CANNOT, _INVALID, _ERROR = 0, 1, 2, 3, 4


def _has_claims(pod: Any) -> bool:
    return bool(pod.resource_claims or pod.claim_sources)


@attrs.define
class _StateData:
    """``stateData``: the pod's claims, the indices of those to allocate, each allocated
    claim's node selector, the allocator's inputs and its result per node row."""

    claims: list[tuple[str, str, ResourceClaim]]
    to_allocate: list[int]
    dra: DraObjects
    allocated: Collection = frozenset()
    node_allocations: dict[int, list] = attrs.field(factory=dict)
    errors: list[str] = attrs.field(factory=list)
    #: Set by Reserve: the claim versions it assumed.
    reserved: list[ResourceClaim] = attrs.field(factory=list)


@attrs.frozen
class DynamicResources:
    NAME: ClassVar[str] = "DynamicResources"
    #: Node-static for pods without claims (:meth:`node_static_for`).
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.NODE_STATIC
    NORMALIZATION: ClassVar[Normalization] = Normalization.DEFAULT
    args: Any = None

    def node_static_for(self, pod: Any, state: Any) -> bool:
        """Pods with claims take the framework: their verdicts depend on the devices
        earlier pods took."""
        return not _has_claims(pod)

    def judged_by_node_class(self, pod: Any) -> bool:
        return not _has_claims(pod)

    def device_columns(self, state: Any) -> DeviceColumns:
        """The devices the fused loop counts for pods with simple claims, per node
        (:mod:`ksched.dra.compiled`): its verdict on them is ``free >= need``, and
        :meth:`reserve` allocates what its Filter would have."""
        return DeviceColumns.of(state)

    # ------------------------------------------------------------------ PreEnqueue

    def pre_enqueue(self, pod: Any, state: Any = None) -> Status:
        """``PreEnqueue``: every claim exists and is not being deleted."""
        if state is None or not _has_claims(pod):
            return SUCCESS
        try:
            pod_claims(pod, dra_objects(state))
        except ClaimLookupError as exc:
            return unresolvable(str(exc))
        return SUCCESS

    # ------------------------------------------------------------------ PreFilter

    def pre_filter(self, cycle: Cycle) -> Status | None:
        """``PreFilter``: Skip without claims; reject a missing claim, a claim reserved up
        to the limit, and a request whose device class does not exist."""
        pod = cycle.pod
        if not _has_claims(pod):
            return SKIP
        dra = dra_objects(cycle.state)
        try:
            claims = pod_claims(pod, dra)
        except ClaimLookupError as exc:
            return unresolvable(str(exc))
        if not claims:
            return SKIP
        to_allocate = []
        for index, (_, _, claim) in enumerate(claims):
            if claim.allocation is not None:
                if len(claim.reserved_for) >= 256 and not claim.is_reserved_for(pod.uid):
                    return unresolvable("resourceclaim in use")
                continue
            to_allocate.append(index)
            for request in claim.spec.requests:
                if request.exactly is not None:
                    if dra.device_class(request.exactly.device_class) is None:
                        return unresolvable(f"request {request.name}: device class "
                                            f"{request.exactly.device_class} does not exist")
                    continue
                for sub in request.first_available:
                    if dra.device_class(sub.device_class) is None:
                        return unresolvable(f"request {request.name}/{sub.name}: device "
                                            f"class {sub.device_class} does not exist")
        data = _StateData(claims, to_allocate, dra)
        if to_allocate:
            data.allocated = dra.allocated_devices()
        cycle.data[self.NAME] = data
        return None

    def _state(self, cycle: Cycle) -> _StateData | None:
        found = cycle.data.get(self.NAME)
        if found is None and _has_claims(cycle.pod):
            if self.pre_filter(cycle) is None:
                found = cycle.data.get(self.NAME)
        return found

    # ------------------------------------------------------------------ Filter

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        """``Filter`` on each node: the allocator's verdict for the claims to allocate, then
        the node selectors of the allocated claims."""
        data = self._state(cycle)
        if data is None:
            return FilterResult.from_mask(np.ones(len(nodes), np.bool_), Status())
        state = cycle.state
        codes = np.zeros(len(nodes), dtype=np.int64)
        claims = [data.claims[i][2] for i in data.to_allocate]
        selectors = [c.allocation.node_selector for _, _, c in data.claims
                     if c.allocation is not None and c.allocation.node_selector is not None]
        for j, row in enumerate(np.asarray(nodes).tolist()):
            node = state.nodes[row]
            unavailable = any(not node_matches(node, terms) for terms in selectors)
            if claims:
                try:
                    found = allocate(node, claims, data.dra.classes, node_pools(data.dra, node),
                                     data.allocated)
                except InvalidPoolsError:
                    codes[j] = _INVALID
                    continue
                except AllocationError as exc:
                    if str(exc) not in data.errors:
                        data.errors.append(str(exc))
                    codes[j] = _ERROR + data.errors.index(str(exc))
                    continue
                if found is None:
                    codes[j] = _CANNOT
                    continue
                if unavailable:
                    codes[j] = _UNAVAILABLE
                    continue
                data.node_allocations[row] = found
            elif unavailable:
                codes[j] = _UNAVAILABLE
        return FilterResult.from_codes(codes, lambda code: self._status(code, data))

    @staticmethod
    def _status(code: int, data: _StateData) -> Status:
        if code == _UNAVAILABLE:
            return unresolvable(REASON_NOT_AVAILABLE)
        if code == _CANNOT:
            return unresolvable(REASON_CANNOT_ALLOCATE)
        if code == _INVALID:
            return unresolvable("invalid resource pools were encountered")
        return Status(Code.ERROR, (data.errors[code - _ERROR],))

    # ------------------------------------------------------------------ Score

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        """``Score`` (``computeScore``): per claim of the pod, ``8 - i`` for each
        ``firstAvailable`` request served by its subrequest ``i``; the k-th claim is read
        against the k-th computed allocation, so a pod with allocated and unallocated claims
        fails (upstream's quirk)."""
        data = cycle.data.get(self.NAME)
        out = np.zeros(len(nodes), dtype=np.int64)
        if data is None:
            return out
        for j, row in enumerate(np.asarray(nodes).tolist()):
            allocations = data.node_allocations.get(row)
            if allocations is None:
                continue
            total = 0
            for i, (_, _, claim) in enumerate(data.claims):
                if i >= len(allocations):
                    raise SchedulingError(f'running Score plugins: plugin "{self.NAME}": '
                                          f"number of allocations {len(allocations)} is "
                                          "smaller than number of claims")
                used = {r.request for r in allocations[i].results if "/" in r.request}
                for request in claim.spec.requests:
                    if request.exactly is not None:
                        continue
                    for k, sub in enumerate(request.first_available):
                        if f"{request.name}/{sub.name}" in used:
                            total += FIRST_AVAILABLE_MAX - k
            out[j] = total
        return out

    def normalize_score(self, cycle: Cycle, scores: np.ndarray) -> None:
        """``DefaultNormalizeScore(100, false)``."""
        top = int(scores.max()) if len(scores) else 0
        if top == 0:
            scores[:] = 0
            return
        scores[:] = scores * 100 // top

    # ------------------------------------------------------------------ PostFilter

    def post_filter(self, cycle: Cycle, diagnosis: Any, handle: Any) -> tuple[None, Status]:
        """``PostFilter``: only an allocated claim that no other pod reserved would be
        deallocated; claims allocated by Filter are not written until PreBind, so none."""
        data = cycle.data.get(self.NAME)
        if data is None:
            return None, Status(Code.UNSCHEDULABLE, ("no new claims to deallocate",))
        return None, Status(Code.UNSCHEDULABLE, ("still not schedulable",))

    # ------------------------------------------------------------------ binding cycle

    def reserve(self, cycle: Cycle, node: str) -> Status:
        """``Reserve`` and the writes of ``PreBind``: each claim the pod allocates gets the
        delete-protection finalizer and its allocation, and every claim not yet reserved for
        the pod gets the pod appended to ``status.reservedFor``; the versions go into the
        claim assume cache. A pod the compiled loop placed (no Filter ran) is allocated on
        its node here, as Filter would have."""
        data = cycle.data.get(self.NAME)
        if data is None and not _has_claims(cycle.pod):
            return SUCCESS
        row = cycle.state.node_index.get(node)
        if data is None and row is not None:
            data = self._counted(cycle, row)
        if data is None:
            data = self._state(cycle)
            if data is not None and data.to_allocate and row is not None:
                self.filter(cycle, np.array([row], dtype=np.int64))
        if data is None:
            return SUCCESS
        allocations = data.node_allocations.get(row, [])
        if data.to_allocate and len(allocations) != len(data.to_allocate):
            if row is None or not allocations:
                return Status(Code.ERROR, ("claim allocation not found for node",))
        by_index = dict(zip(data.to_allocate, allocations))
        updated = reserved_claims(cycle.pod, [c for _, _, c in data.claims],
                                  [by_index.get(i) for i in range(len(data.claims))])
        data.reserved = updated
        cache = cycle.data.get(CLAIM_CACHE)
        if cache is not None and updated:
            cache.assume(updated)
        return SUCCESS

    def _counted(self, cycle: Cycle, row: int) -> _StateData | None:
        """PreFilter and Filter on node row ``row`` for a pod whose devices the loop counts
        (:meth:`DeviceColumns.allocations
        <ksched.dra.compiled.DeviceColumns.allocations>`: the allocator's result); ``None``
        for other pods, or where the node lacks the devices."""
        dra = dra_objects(cycle.state)
        found = DeviceColumns.of(cycle.state).allocations(cycle.pod, row, dra)
        if found is None:
            return None
        claims, allocations = found
        data = _StateData(claims, list(range(len(claims))), dra, dra.allocated_devices())
        data.node_allocations[row] = allocations
        cycle.data[self.NAME] = data
        return data

    def unreserve(self, cycle: Cycle, node: str) -> None:
        """``Unreserve``: the claims back to their API objects."""
        data = cycle.data.get(self.NAME)
        cache = cycle.data.get(CLAIM_CACHE)
        if data is not None and cache is not None and data.reserved:
            cache.restore((c.namespace, c.name) for c in data.reserved)
            data.reserved = []

    def pre_bind(self, cycle: Cycle, node: str) -> Status:
        """``PreBind``: the claim updates Reserve assumed are written to the API (a later
        Unreserve of another pod restores these versions)."""
        data = cycle.data.get(self.NAME)
        cache = cycle.data.get(CLAIM_CACHE)
        if data is not None and cache is not None and data.reserved:
            cache.write(data.reserved)
        return SUCCESS

"""DynamicResources compiled: free devices per node as columns of the fused loop.

A pod whose claims are all to be allocated, its own (made from templates, named by no pod),
with exact-count requests of one device class and selectors (no constraints, no admin access,
no ``firstAvailable``, no ``All``), asks for ``need`` devices of one *group*: the devices those
selectors match. When every device of the group lies in a node-local slice, with an ID of its
own and a selector verdict that is not an error, the structured allocator
(:func:`ksched.dra.allocator.allocate`) finds a solution on a node exactly when the node has
``need`` group devices not in use (any will do: requests differ in nothing but their count),
and its depth-first search takes the first of them in its order (pools by (driver, pool),
slices, devices). So the group is a column: the loop's Filter is ``taken + need <= devices``
per node (the attach-limit check of :mod:`ksched.kernels.loop_steps` over these columns), and
:meth:`DeviceColumns.reserve` gives each placed pod the first free devices of its node's
column, written as ``Reserve`` writes them (:func:`~ksched.dra.pod_claims.reserved_claims`,
:func:`~ksched.dra.allocator.allocation_result`). Groups that share some device but not all are
left to the allocator (the later one is not compiled): one column never changes another.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

import attrs
import numpy as np

from ksched.dra.allocator import allocation_result, node_pools
from ksched.dra.cel import CelRuntimeError
from ksched.dra.claims import ClaimSpec, DeviceResult
from ksched.dra.devices import ResourceSlice
from ksched.dra.fields import RESULTS_MAX
from ksched.dra.pod_claims import ClaimLookupError, pod_claims, reserved_claims
from ksched.dra.state import ClaimCache, DraObjects, dra_objects

__all__ = ["DeviceColumns", "DeviceNeed"]

#: A device: (driver, pool, device name).
DeviceID = tuple[str, str, str]
#: The most allocation results :class:`DeviceColumns` keeps.
_KEPT = 1 << 16


class DeviceNeed(NamedTuple):
    """What a pod of a compiled class takes: ``need`` devices of column ``column``."""

    column: int
    need: int


@attrs.frozen(eq=False)
class _Column:
    """One group's devices: per node row ``r``, ``devices[indptr[r]:indptr[r + 1]]`` in the
    allocator's order, each (ID, slice)."""

    indptr: list[int]
    devices: list[tuple[DeviceID, ResourceSlice]]


class DeviceColumns:
    """The device groups compiled for one node layout and one set of classes and slices
    (those of the state it is made from: :attr:`DraObjects.slice_cache` names them)."""

    def __init__(self, state: Any) -> None:
        self.cache = dra_objects(state).slice_cache
        self.nodes = state.nodes
        self.columns: list[_Column] = []
        #: (class name, request selectors) -> column (``None``: not compiled).
        self._groups: dict[tuple, int | None] = {}
        #: Per compiled device: (column, node row).
        self._where: dict[DeviceID, tuple[int, int]] = {}
        #: The last :meth:`table`'s DRA objects, taken devices and claims per device (the
        #: running count, changed in place), and those of the last one counted afresh (never
        #: changed: a version not made from the last one starts from it).
        self._last: tuple | None = None
        self._counted: tuple | None = None
        #: The devices per node and column (:meth:`table`; the columns only grow).
        self._limits: np.ndarray | None = None
        #: The needs :meth:`_need` found in the last DRA objects it was asked of: (those,
        #: {the pod's claim fields: need}).
        self._memo: tuple | None = None
        #: (ids of the classes and claim specs, device IDs) -> (those, allocation results).
        self._allocated: dict[tuple, tuple] = {}
        #: id(claim spec) -> (spec, (group, count) or ``None``).
        self._shapes: dict[int, tuple[ClaimSpec, tuple | None]] = {}

    # ------------------------------------------------------------------ classes

    @classmethod
    def of(cls, state: Any) -> DeviceColumns:
        """The columns of ``state``'s nodes, classes and slices (kept with the slices, so
        that later batches on the cluster find them compiled)."""
        cache = dra_objects(state).slice_cache
        names = state.node_names
        last = cache.get("columns:last")
        if last is not None and last[0] is names:
            return last[1]
        key = ("columns", tuple(names))
        found = cache.get(key)
        if found is None:
            found = cache[key] = cls(state)
        cache["columns:last"] = (names, found)
        return found

    def need(self, pod: Any, state: Any, named: Collection = ()) -> DeviceNeed | None:
        """What ``pod`` takes, when the loop can count it (see the module; ``named``: the
        (namespace, name) of the claims some pod names, shared: not counted); ``None``:
        the allocator judges it, node by node."""
        found = self._need(pod, dra_objects(state), named)
        return None if found is None else found[0]

    def _need(self, pod: Any, dra: DraObjects, named: Collection
              ) -> tuple[DeviceNeed, list[tuple[str, str, Any]]] | None:
        """:meth:`need` in ``dra``, with the pod's claims (:func:`pod_claims`); the last
        answer found kept (``named`` only ever turns one into ``None``)."""
        if dra.slice_cache is not self.cache:
            return None
        key = (pod.uid, pod.name, pod.namespace, pod.resource_claims, pod.claim_sources,
               pod.claim_statuses)
        memo = self._memo
        if memo is None or memo[0] is not dra:
            memo = self._memo = (dra, {})
        elif not named:
            found = memo[1].get(key)
            if found is not None:
                return found
        found = self._find_need(pod, dra, named)
        if found is not None and len(memo[1]) < _KEPT:
            memo[1][key] = found
        return found

    def template_need(self, pod: Any, dra: DraObjects) -> DeviceNeed | None:
        """:meth:`need` of a new pod once the resourceclaim controller has made all its claims
        from their templates (``None`` also where one names a claim, or a template is
        missing): those claims are the pod's own, unallocated, of the templates' specs."""
        if dra.slice_cache is not self.cache or pod.claim_statuses:
            return None
        templates = [None if claim_name else dra.template(pod.namespace, template_name)
                     for _, claim_name, template_name in pod.claim_sources]
        if None in templates:
            return None
        return self._need_of([t.spec for t in templates], dra)

    def _find_need(self, pod: Any, dra: DraObjects, named: Collection
                   ) -> tuple[DeviceNeed, list[tuple[str, str, Any]]] | None:
        """:meth:`_need`, worked out."""
        try:
            claims = pod_claims(pod, dra)
        except ClaimLookupError:
            return None
        for _, _, claim in claims:
            if claim.allocation is not None or claim.reserved_for or claim.owner is None \
                    or claim.owner[2] != pod.uid or (claim.namespace, claim.name) in named:
                return None
        need = self._need_of([claim.spec for _, _, claim in claims], dra)
        return None if need is None else (need, claims)

    def _need_of(self, specs: Sequence[ClaimSpec], dra: DraObjects) -> DeviceNeed | None:
        """What claims of these specs take together, when the loop can count it: exact
        counts of one group (see the module)."""
        group, total = None, 0
        for spec in specs:
            shape = self._shape(spec)
            if shape is None or (group is not None and shape[0] != group):
                return None
            group, total = shape[0], total + shape[1]
        column = self._column(group, dra) if group is not None else None
        return None if column is None else DeviceNeed(column, total)

    def _shape(self, spec: ClaimSpec) -> tuple | None:
        """(group, device count) of a claim whose requests are exact counts of one class and
        selectors, without admin access; no constraints."""
        found = self._shapes.get(id(spec))
        if found is not None and found[0] is spec:
            return found[1]
        shape = None
        requests = spec.requests
        if requests and not spec.constraints and all(map(_counted, requests)):
            groups = {(r.exactly.device_class, r.exactly.selectors) for r in requests}
            count = sum(r.exactly.count for r in requests)
            if len(groups) == 1 and count <= RESULTS_MAX:
                shape = (groups.pop(), count)
        self._shapes[id(spec)] = (spec, shape)
        return shape

    def _column(self, group: tuple, dra: DraObjects) -> int | None:
        """The column of a group, compiled on first sight (``None``: it cannot be)."""
        if group in self._groups:
            return self._groups[group]
        self._groups[group] = None
        devices = self._devices(group, dra)
        if devices is None:
            return None
        indptr, found = devices
        ids = [d for d, _ in found]
        if len(set(ids)) != len(ids):
            return None
        owners = {self._where[d][0] for d in ids if d in self._where}
        if owners:  # the same devices as a column's, or refused
            k = owners.pop()
            if owners or [d for d, _ in self.columns[k].devices] != ids:
                return None
            self._groups[group] = k
            return k
        k = len(self.columns)
        self.columns.append(_Column(indptr.tolist(), found))
        for row in range(len(self.nodes)):
            for i in range(indptr[row], indptr[row + 1]):
                self._where[found[i][0]] = (k, row)
        self._groups[group] = k
        return k

    def _devices(self, group: tuple, dra: DraObjects
                 ) -> tuple[np.ndarray, list[tuple[DeviceID, ResourceSlice]]] | None:
        """The group's devices per node row, in the allocator's order; ``None`` when the class
        is missing, a selector does not compile or errs on a device, or a device it matches
        is not in a node-local slice."""
        cls = dra.device_class(group[0])
        if cls is None:
            return None
        selectors = (*cls.selectors, *group[1])
        if any(s.error is not None for s in selectors):
            return None

        def matches(device: Any, driver: str) -> bool:
            return all(device.matches(s, driver) for s in selectors)

        try:
            for sl in dra.resource_slices:
                if not sl.node_name and any(matches(d, sl.driver) for d in sl.devices):
                    return None
            indptr = np.zeros(len(self.nodes) + 1, dtype=np.int64)
            found: list[tuple[DeviceID, ResourceSlice]] = []
            for row, node in enumerate(self.nodes):
                for pool in node_pools(dra, node):
                    if pool.incomplete or pool.invalid:
                        continue
                    for sl in pool.slices:
                        found += [((pool.driver, pool.name, d.name), sl) for d in sl.devices
                                  if matches(d, sl.driver)]
                indptr[row + 1] = len(found)
        except CelRuntimeError:
            return None
        return indptr, found

    # ------------------------------------------------------------------ the loop's columns

    def table(self, state: Any) -> tuple[np.ndarray, np.ndarray]:
        """(devices, taken): int64[n_nodes, K] each column's devices per node, and those of
        them the state's allocated claims hold (counted from the last table's version where
        the state's DRA objects were updated from it). Both are the caller's own."""
        n, k = len(self.nodes), len(self.columns)
        if self._limits is None or self._limits.shape[1] != k:
            limits = np.zeros((n, k), dtype=np.int64)
            for c, column in enumerate(self.columns):
                limits[:, c] = np.diff(np.asarray(column.indptr, dtype=np.int64))
            self._limits = limits
        return self._limits.copy(), self._taken(dra_objects(state), n, k)

    def _taken(self, dra: DraObjects, n: int, k: int) -> np.ndarray:
        """The compiled devices ``dra``'s claims hold, per node and column: the last count
        brought up to date in place where ``dra`` was updated from its version, else the
        last fresh count's copy brought up to date, else a fresh count."""
        last = self._last
        if last is not None and last[1].shape[1] == k:
            changes = [] if last[0] is dra else dra.changes_since(last[0])
            if changes is not None:
                taken, held = last[1], last[2]
                self._replay(taken, held, changes)
                self._last = (dra, taken, held)
                return taken.copy()
        counted = self._counted
        changes = None
        if counted is not None and counted[1].shape[1] == k:
            changes = [] if counted[0] is dra else dra.changes_since(counted[0])
        if changes is not None:
            taken, held = counted[1].copy(), dict(counted[2])
            self._replay(taken, held, changes)
        else:
            taken, held = np.zeros((n, k), dtype=np.int64), {}
            self._hold(taken, held, dra.resource_claims, 1)
            self._counted = (dra, taken.copy(), dict(held))
        self._last = (dra, taken, held)
        return taken.copy()

    def _replay(self, taken: np.ndarray, held: dict, changes: Sequence[tuple]) -> None:
        """Apply ``changes`` (claims taken out, claims put in; oldest first) to a count."""
        for before, after in changes:
            self._hold(taken, held, before, -1)
            self._hold(taken, held, after, 1)

    def _hold(self, taken: np.ndarray, held: dict, claims: Sequence[Any], step: int) -> None:
        """Count (``step`` 1) or uncount (-1) the compiled devices ``claims`` allocate without
        admin access in ``held`` (claims per device) and ``taken`` (devices held)."""
        where = self._where
        for claim in claims:
            if claim.allocation is None:
                continue
            for r in claim.allocation.results:
                found = where.get((r.driver, r.pool, r.device))
                if found is None or r.admin_access:
                    continue
                key = (r.driver, r.pool, r.device)
                count = held.get(key, 0) + step
                if (count > 0) != (count - step > 0):
                    taken[found[1], found[0]] += step
                if count:
                    held[key] = count
                else:
                    del held[key]

    def allocations(self, pod: Any, row: int, dra: DraObjects
                    ) -> tuple[list[tuple[str, str, Any]], list[Any]] | None:
        """What the allocator finds for ``pod``'s claims on node row ``row`` in ``dra``, when
        the pod is one the loop counts (see the module): (the pod's claims as
        :func:`pod_claims` gives them, each one's allocation); ``None``: it is not, or the
        node lacks the free devices (the allocator is to judge)."""
        found = self._need(pod, dra, ())
        if found is None:
            return None
        (k, need), claims = found
        free = self._free(k, row, need, self._in_use(dra), ())
        if free is None:
            return None
        return claims, self._results([c for _, _, c in claims], dra.classes, free)

    def _results(self, claims: Sequence[Any], classes: Any,
                 free: list[tuple[DeviceID, ResourceSlice]]) -> list[Any]:
        """:func:`_allocations`, kept per claim specs, classes and devices (what they depend
        on, with the devices' slices: those of the columns)."""
        specs = (classes, *(c.spec for c in claims))
        key = (tuple(map(id, specs)), tuple(d for d, _ in free))
        found = self._allocated.get(key)
        if found is not None and all(map(operator.is_, found[0], specs)):
            return list(found[1])
        out = _allocations(claims, classes, free)
        if len(self._allocated) >= _KEPT:
            self._allocated.clear()
        self._allocated[key] = (specs, tuple(out))
        return out

    def _in_use(self, dra: DraObjects) -> Collection[DeviceID]:
        """The devices ``dra``'s claims hold (without admin access): of the compiled ones,
        the last count's where it is ``dra``'s (a dict: cheaper to ask)."""
        last = self._last
        if last is not None and last[0] is dra and last[1].shape[1] == len(self.columns):
            return last[2]
        return dra.allocated_devices()

    def _free(self, k: int, row: int, need: int, allocated: Collection, taking: Collection
              ) -> list[tuple[DeviceID, ResourceSlice]] | None:
        """The first ``need`` devices of column ``k`` on node row ``row`` in neither
        ``allocated`` nor ``taking`` (``None``: fewer are)."""
        column = self.columns[k]
        devices = column.devices
        free = []
        for i in range(column.indptr[row], column.indptr[row + 1]):
            device = devices[i]
            if device[0] not in allocated and device[0] not in taking:
                free.append(device)
                if len(free) == need:
                    return free
        return None

    def bound_claims(self, pod: Any, claims: Sequence[Any], row: int, dra: DraObjects
                     ) -> list[Any]:
        """The versions Reserve and PreBind write of ``claims``, the claims the resourceclaim
        controller made for ``pod`` (not in ``dra`` yet), where the loop placed the pod on
        node row ``row``: allocated there as the allocator would, reserved for the pod."""
        need = self._need_of([c.spec for c in claims], dra)
        free = None if need is None else self._free(need.column, row, need.need,
                                                    self._in_use(dra), ())
        if free is None:
            raise AssertionError(f"the compiled loop placed {pod.key} on "
                                 f"{self.nodes[row].name} without its free devices")
        return reserved_claims(pod, claims, self._results(claims, dra.classes, free))

    def reserve(self, cache: ClaimCache, placed: Sequence[tuple[Any, int, DeviceNeed]]) -> None:
        """``Reserve`` for pods the loop placed, in order: (pod, node row, need) each; the
        claims assumed in ``cache`` at once."""
        if not placed:
            return
        dra = cache.current
        allocated = self._in_use(dra)
        classes = dra.classes
        taking: set[DeviceID] = set()
        updated = []
        for pod, row, (k, need) in placed:
            free = self._free(k, row, need, allocated, taking)
            if free is None:
                raise AssertionError(f"the compiled loop placed {pod.key} on "
                                     f"{self.nodes[row].name} without {need} free devices")
            taking.update(d for d, _ in free)
            found = self._need(pod, dra, ())
            claims = [c for _, _, c in (found[1] if found is not None else pod_claims(pod, dra))]
            updated += reserved_claims(pod, claims, self._results(claims, classes, free))
        cache.assume(updated)


def _counted(request: Any) -> bool:
    """An exact count of at least one device, without admin access."""
    exact = request.exactly
    return exact is not None and exact.mode == "ExactCount" and not exact.admin_access \
        and exact.count >= 1


def _allocations(claims: Sequence[Any], classes: Any,
                 free: list[tuple[DeviceID, ResourceSlice]]) -> list[Any]:
    """Each claim's allocation from ``free`` (the devices taken, in order): claims in order,
    requests in order, each its count (the allocator's search, which backtracks nowhere)."""
    out, at = [], 0
    for claim in claims:
        chosen, devices = [], []
        for request in claim.spec.requests:
            exact = request.exactly
            chosen.append((request.name, classes[exact.device_class], None))
            for (driver, pool, name), sl in free[at:at + exact.count]:
                devices.append((DeviceResult(request.name, driver, pool, name, False), sl))
            at += exact.count
        out.append(allocation_result(claim, chosen, devices))
    return out

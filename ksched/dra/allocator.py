"""The structured allocator of v1.35.4, "incubating" variant
(``dynamic-resource-allocation/structured/internal/incubating``), for the gates v1.35.4 has on:
admin access and prioritized lists; no partitionable devices, device taints, binding
conditions or consumable capacity.

:func:`gather_pools` is ``GatherPools``; :func:`allocate` is ``Allocator.Allocate``: claims in
order, requests in spec order, each device picked by a depth-first search over pools, slices
and devices with backtracking, the first complete solution winning. Pools are visited in
(driver, pool) order (upstream: Go map order, which the recorded traces make irrelevant).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import attrs

from ksched.api import Node
from ksched.dra.cel import CelRuntimeError
from ksched.dra.claims import AllocationResult, DeviceResult, ExactRequest, ResourceClaim
from ksched.dra.devices import DeviceClass, ResourceSlice
from ksched.dra.fields import RESULTS_MAX
from ksched.dra.state import DraObjects
from ksched.errors import KschedError

__all__ = ["AllocationError", "InvalidPoolsError", "Pool", "SliceIndex", "allocate",
           "allocation_result", "gather_pools", "node_matches", "node_pools"]

#: A device: (driver, pool, device name).
DeviceID = tuple[str, str, str]


class AllocationError(KschedError):
    """The allocator failed (Filter returns an Error status with this message)."""


class InvalidPoolsError(AllocationError):
    """``ErrFailedAllocationOnNode``: no solution, and the node sees an invalid pool."""


@attrs.frozen(eq=False)
class Pool:
    """A pool visible from a node: its current slices, or why its devices cannot be used."""

    driver: str
    name: str
    slices: tuple[ResourceSlice, ...] = ()
    incomplete: bool = False
    invalid: bool = False


def node_matches(node: Node, terms: Sequence[Any] | None) -> bool:
    """``nodeaffinity.NewNodeSelector(...).Match``: any term matches (none: no match)."""
    from ksched.plugins.node_affinity import reference_term  # plugins import this module

    return terms is not None and any(reference_term(t, node) for t in terms)


def _slice_visible(s: ResourceSlice, node: Node) -> bool:
    """``NodeMatches`` for a slice: its node name, all nodes, or its node selector."""
    if s.node_name:
        return s.node_name == node.name
    if s.all_nodes:
        return True
    return node_matches(node, s.node_selector)


class SliceIndex:
    """The slices of a snapshot indexed once: the node-local ones by node name, the others,
    and every slice by (driver, pool)."""

    def __init__(self, slices: Sequence[ResourceSlice]) -> None:
        self.by_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        self.by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        self._position = {id(s): i for i, s in enumerate(slices)}
        for s in slices:
            if s.node_name:
                self.by_node.setdefault(s.node_name, []).append(s)
            else:
                self.shared.append(s)
            self.by_pool.setdefault((s.driver, s.pool), []).append(s)

    def candidates(self, node: Node) -> list[ResourceSlice]:
        """The slices that may be visible from ``node``, in snapshot order."""
        mine = self.by_node.get(node.name, [])
        if not self.shared or not mine:
            return mine or self.shared
        return sorted([*mine, *self.shared], key=lambda s: self._position[id(s)])


def gather_pools(slices: Sequence[ResourceSlice], node: Node,
                 index: SliceIndex | None = None) -> list[Pool]:
    """``GatherPools``: the pools of the slices visible from ``node``, each at its newest
    generation among them; a pool that some invisible slice shows newer is obsolete (left
    out), one with fewer slices than ``resourceSliceCount`` incomplete, one listing a device
    name twice invalid. ``index``: ``slices`` indexed (:class:`SliceIndex`)."""
    index = index if index is not None else SliceIndex(slices)
    found: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in index.candidates(node):
        if not _slice_visible(s, node):
            continue
        key = (s.driver, s.pool)
        have = found.get(key)
        if have is None or s.generation > have[0].generation:
            found[key] = [s]
        elif s.generation == have[0].generation:
            have.append(s)
    pools = []
    for (driver, name), mine in sorted(found.items()):
        generation, count = mine[0].generation, mine[0].slice_count
        if len(mine) != count:
            everywhere = index.by_pool[(driver, name)]
            if any(s.generation > generation for s in everywhere):
                continue
            if len([s for s in everywhere if s.generation == generation]) != count:
                pools.append(Pool(driver, name, incomplete=True))
                continue
        names: set[str] = set()
        invalid = False
        for s in mine:
            for d in s.devices:
                if d.name in names:
                    invalid = True
                names.add(d.name)
        pools.append(Pool(driver, name, () if invalid else tuple(mine), invalid=invalid))
    return pools


def node_pools(dra: DraObjects, node: Node) -> list[Pool]:
    """``GatherPools`` for ``node`` over ``dra``'s slices, made once per node name (the
    slices indexed once per snapshot)."""
    key = ("pools", node.name)
    found = dra.slice_cache.get(key)
    if found is None:
        index = dra.slice_cache.get("index")
        if index is None:
            index = dra.slice_cache["index"] = SliceIndex(dra.resource_slices)
        found = dra.slice_cache[key] = gather_pools(dra.resource_slices, node, index)
    return found


@attrs.define
class _Request:
    """``requestData``: the (sub)request, its parent's name, class, device count and, for
    ``All``, the devices."""

    request: ExactRequest
    parent: str | None
    device_class: DeviceClass
    count: int
    all_devices: list | None = None
    selected: int = 0

    @property
    def full_name(self) -> str:
        return self.request.name if self.parent is None else f"{self.parent}/{self.request.name}"


class _Constraint:
    """``matchAttributeConstraint``."""

    def __init__(self, requests: frozenset[str], attribute: str) -> None:
        self.requests, self.attribute = requests, attribute
        self.value: tuple[str, Any] | None = None
        self.count = 0

    def _applies(self, base: str, sub: str | None) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (sub is not None and f"{base}/{sub}" in self.requests)

    def add(self, base: str, sub: str | None, device: Any, driver: str) -> bool:
        if not self._applies(base, sub):
            return True
        value = device.attribute(self.attribute, driver)
        if value is None:
            return False
        if self.count == 0:
            self.value, self.count = value, 1
            return True
        if value != self.value:  # same type and value
            return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str | None) -> None:
        if self._applies(base, sub):
            self.count -= 1


class _Allocator:
    def __init__(self, node: Node, claims: Sequence[ResourceClaim],
                 classes: Mapping[str, DeviceClass], pools: list[Pool],
                 allocated: Collection[DeviceID]) -> None:
        self.node, self.claims, self.classes, self.pools = node, claims, classes, pools
        self.allocated = allocated
        self.data: dict[tuple[int, int, int], _Request] = {}
        self.constraints: list[list[_Constraint]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
        self.results: list[list[tuple[DeviceResult, ResourceSlice]]] = [[] for _ in claims]
        self.selectable: dict[tuple, bool] = {}

    # ------------------------------------------------------------------ setup

    def prepare(self) -> None:
        for c, claim in enumerate(self.claims):
            minimum = 0
            for q, request in enumerate(claim.spec.requests):
                if request.exactly is not None:
                    data = self._validate(c, q, 0, request.exactly, None)
                    minimum += data.count
                else:
                    least = None
                    for s, sub in enumerate(request.first_available):
                        data = self._validate(c, q, s, sub, request.name)
                        least = data.count if least is None else min(least, data.count)
                    minimum += least or 0
            if minimum > RESULTS_MAX:
                raise AllocationError(f"claim {claim.key}: number of requested devices "
                                      f"{minimum} exceeds the claim limit of {RESULTS_MAX}")
            self.constraints.append([_Constraint(r, a) for r, a in claim.spec.constraints])

    def _validate(self, c: int, q: int, s: int, request: ExactRequest,
                  parent: str | None) -> _Request:
        """``validateDeviceRequest``."""
        claim = self.claims[c]
        name = request.name
        cls = self.classes.get(request.device_class)
        if cls is None:
            raise AllocationError(f"claim {claim.key}, request {name}: could not retrieve "
                                  f"device class {request.device_class}: deviceclass.resource."
                                  f'k8s.io "{request.device_class}" not found')
        data = _Request(request, parent, cls, request.count)
        self.data[(c, q, s)] = data
        if request.mode == "All":
            data.all_devices = []
            for pool in self.pools:
                pid = f"{pool.driver}/{pool.name}"
                if pool.incomplete:
                    raise AllocationError(f"claim {claim.key}, request {name}: asks for all "
                                          f"devices, but resource pool {pid} is currently "
                                          "being updated")
                if pool.invalid:
                    raise AllocationError(f"claim {claim.key}, request {name}: asks for all "
                                          f"devices, but resource pool {pid} is currently "
                                          "invalid")
                for sl in pool.slices:
                    for device in sl.devices:
                        if self._selectable((c, q, s), data, sl, device):
                            data.all_devices.append((pool, sl, device))
            data.count = len(data.all_devices)
        return data

    # ------------------------------------------------------------------ selection

    def _selectable(self, key: tuple, data: _Request, sl: ResourceSlice, device: Any) -> bool:
        """``isSelectable``: the class's selectors, then the request's (cached)."""
        ckey = (key, sl.driver, sl.pool, device.name)
        found = self.selectable.get(ckey)
        if found is None:
            found = self.selectable[ckey] = (
                self._match(key, device, sl.driver, data.device_class.selectors,
                            data.device_class)
                and self._match(key, device, sl.driver, data.request.selectors, None))
        return found

    def _match(self, key: tuple, device: Any, driver: str, selectors: Sequence[Any],
               cls: DeviceClass | None) -> bool:
        """``selectorsMatch``."""
        for i, selector in enumerate(selectors):
            where = f"class {cls.name}" if cls is not None else \
                f"claim {self.claims[key[0]].key}"
            if selector.error is not None:
                raise AllocationError(f"{where}: selector #{i}: CEL compile error: "
                                      f"{selector.error}")
            try:
                if not device.matches(selector, driver):
                    return False
            except CelRuntimeError as exc:
                raise AllocationError(f"{where}: selector #{i}: CEL runtime error: {exc}") \
                    from None
        return True

    def _in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.allocated or bool(self.allocating.get(device_id))

    def _allocate_device(self, c: int, data: _Request, pool: Pool, sl: ResourceSlice,
                         device: Any, must: bool) -> bool:
        """``allocateDevice``: in use, constraints; on success the device is recorded."""
        device_id = (pool.driver, pool.name, device.name)
        admin = data.request.admin_access
        if admin and c in self.allocating.get(device_id, ()):
            return False
        if not admin and self._in_use(device_id):
            return False
        base = data.parent if data.parent is not None else data.request.name
        sub = data.request.name if data.parent is not None else None
        constraints = self.constraints[c]
        for i, constraint in enumerate(constraints):
            if not constraint.add(base, sub, device, pool.driver):
                if must:
                    raise AllocationError(
                        f"claim {self.claims[c].key}, request {data.request.name}: cannot add "
                        f"device {pool.driver}/{pool.name}/{device.name} because a claim "
                        "constraint would not be satisfied")
                for e in range(i):
                    constraints[e].remove(base, sub)
                return False
        self.allocating.setdefault(device_id, set()).add(c)
        self.results[c].append((DeviceResult(data.full_name, pool.driver, pool.name,
                                             device.name, admin), sl))
        return True

    def _deallocate(self, c: int, data: _Request, device_id: DeviceID) -> None:
        base = data.parent if data.parent is not None else data.request.name
        sub = data.request.name if data.parent is not None else None
        for constraint in self.constraints[c]:
            constraint.remove(base, sub)
        self.allocating[device_id].discard(c)
        self.results[c].pop()

    # ------------------------------------------------------------------ the search

    def allocate_one(self, c: int, q: int, s: int, d: int, sub_chosen: bool) -> bool:
        """``allocateOne``: device ``d`` of (sub)request ``s`` of request ``q`` of claim
        ``c``; True once the rest of the search completes. Raises ``_MaxSize`` as upstream's
        ``errAllocationResultMaxSizeExceeded``."""
        if c >= len(self.claims):
            return True
        claim = self.claims[c]
        if q >= len(claim.spec.requests):
            try:
                return self.allocate_one(c + 1, 0, 0, 0, False)
            except _MaxSize:
                return False
        data = self.data[(c, q, s)]
        if not sub_chosen and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (c, q, sub) in self.data:
                try:
                    ok = self.allocate_one(c, q, sub, d, True)
                except _MaxSize:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.data[(c, q, 0)].selected = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSize
            return False
        request = data.request
        if request.mode == "All" and not data.all_devices:
            return False
        if d >= data.count:
            return self.allocate_one(c, q + 1, 0, 0, False)
        if len(self.results[c]) + data.count - d > RESULTS_MAX:
            raise _MaxSize
        if request.mode == "All":
            pool, sl, device = data.all_devices[d]
            if not self._allocate_device(c, data, pool, sl, device, True):
                return False
            try:
                done = self.allocate_one(c, q, s, d + 1, sub_chosen)
            except BaseException:
                self._deallocate(c, data, (pool.driver, pool.name, device.name))
                raise
            if not done:
                self._deallocate(c, data, (pool.driver, pool.name, device.name))
            return done
        admin = request.admin_access
        key = (c, q, s)
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for sl in pool.slices:
                for device in sl.devices:
                    device_id = (pool.driver, pool.name, device.name)
                    if admin and c in self.allocating.get(device_id, ()):
                        continue
                    if not admin and self._in_use(device_id):
                        continue
                    if not self._selectable(key, data, sl, device):
                        continue
                    if not self._allocate_device(c, data, pool, sl, device, False):
                        continue
                    try:
                        done = self.allocate_one(c, q, s, d + 1, sub_chosen)
                    except BaseException:
                        self._deallocate(c, data, device_id)
                        raise
                    if done:
                        return True
                    self._deallocate(c, data, device_id)
        return False

    # ------------------------------------------------------------------ the result

    def result(self) -> list[AllocationResult]:
        out = []
        for c, claim in enumerate(self.claims):
            chosen = []
            for q, request in enumerate(claim.spec.requests):
                data = self.data[(c, q, 0)]
                sub = None
                if data.parent is not None:
                    data = self.data[(c, q, data.selected)]
                    sub = data.request.name
                chosen.append((data.full_name, data.device_class, sub))
            out.append(allocation_result(claim, chosen, self.results[c]))
        return out


def allocation_result(claim: ResourceClaim,
                      chosen: Sequence[tuple[str, DeviceClass, str | None]],
                      devices: Sequence[tuple[DeviceResult, ResourceSlice]]) -> AllocationResult:
    """One claim's ``AllocationResult``: its devices (with their slices), the config (each
    class's, for the (sub)requests it serves, then the claim's, for the requests it names)
    and the node selector (:func:`_node_selector`). ``chosen[q]``: request ``q``'s served
    (sub)request full name, class, and subrequest name (``None``: ``exactly``)."""
    config: list[dict] = []
    by_class: dict[str, tuple[int, int]] = {}
    for full_name, cls, _ in chosen:
        if cls.name in by_class:
            start, end = by_class[cls.name]
            for i in range(start, end):
                config[i]["requests"].append(full_name)
            continue
        start = len(config)
        for entry in cls.config:
            config.append({"source": "FromClass", "requests": [full_name],
                           **{k: v for k, v in entry.items() if k != "requests"}})
        by_class[cls.name] = (start, len(config))
    for entry in claim.spec.config:
        listed = list(entry.get("requests") or ())
        body = {k: v for k, v in entry.items() if k != "requests"}
        if not listed:
            config.append({"source": "FromClaim", **body})
            continue
        for request, (_, _, sub) in zip(claim.spec.requests, chosen):
            if request.name in listed or (sub is not None
                                          and f"{request.name}/{sub}" in listed):
                config.append({"source": "FromClaim", "requests": listed, **body})
    wire, terms = _node_selector([sl for _, sl in devices])
    return AllocationResult(tuple(r for r, _ in devices), tuple(config), wire, terms)


class _MaxSize(Exception):
    """``errAllocationResultMaxSizeExceeded``."""


#: The node selector of each node-local slice's node (one object per node name).
_NODE_LOCAL: dict[str, tuple[dict, tuple]] = {}


def _node_local_selector(node_name: str) -> tuple[dict, tuple]:
    """``createNodeSelector`` of a node-local slice: ``metadata.name In [node]``."""
    found = _NODE_LOCAL.get(node_name)
    if found is None:
        from ksched.api import NodeSelectorRequirement, NodeSelectorTerm

        wire = {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
        found = _NODE_LOCAL[node_name] = (wire, (NodeSelectorTerm((), (NodeSelectorRequirement(
            "metadata.name", "In", (node_name,)),)),))
    return found


def _node_selector(slices: Sequence[ResourceSlice]) -> tuple[dict | None, tuple | None]:
    """``createNodeSelector``: the node of a node-local slice, else the requirements of the
    slices' one-term selectors gathered without duplicates, else none."""
    fields: list[dict] = []
    expressions: list[dict] = []
    term_fields: list = []
    term_expressions: list = []
    for sl in slices:
        if sl.node_name:
            return _node_local_selector(sl.node_name)
        if sl.node_selector:
            raw = sl.node_selector_wire["nodeSelectorTerms"][0]
            term = sl.node_selector[0]
            for wire_list, parsed_list, raw_items, items in (
                    (fields, term_fields, raw.get("matchFields") or [], term.match_fields),
                    (expressions, term_expressions, raw.get("matchExpressions") or [],
                     term.match_expressions)):
                for raw_req, req in zip(raw_items, items):
                    if not any(p.key == req.key and p.operator == req.operator
                               and set(p.values) == set(req.values) for p in parsed_list):
                        parsed_list.append(req)
                        wire_list.append(raw_req)
    if not fields and not expressions:
        return None, None
    from ksched.api import NodeSelectorTerm
    term: dict[str, Any] = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return ({"nodeSelectorTerms": [term]},
            (NodeSelectorTerm(tuple(term_expressions), tuple(term_fields)),))


def allocate(node: Node, claims: Sequence[ResourceClaim], classes: Mapping[str, DeviceClass],
             pools: list[Pool], allocated: Collection[DeviceID]) -> list[AllocationResult] | None:
    """``Allocator.Allocate``: one allocation per claim, or ``None`` when there is no
    solution on ``node``. Raises :class:`InvalidPoolsError` when there is none and the node
    sees an invalid pool, :class:`AllocationError` for the allocator's errors."""
    alloc = _Allocator(node, claims, classes, pools, allocated)
    alloc.prepare()
    try:
        done = alloc.allocate_one(0, 0, 0, 0, False)
    except _MaxSize:
        done = False
    if not done:
        if any(p.invalid for p in pools):
            raise InvalidPoolsError("invalid resource pools were encountered")
        return None
    return alloc.result()

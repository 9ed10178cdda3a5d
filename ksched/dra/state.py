"""The DRA objects a cluster state carries, and the scheduler's claim assume cache.

:class:`DraObjects` holds the DeviceClasses, ResourceSlices, ResourceClaims and
ResourceClaimTemplates with their lookups; a :class:`~ksched.state.ClusterState` keeps it in
``objects["dra"]`` (:func:`dra_objects`). :class:`ClaimCache` is the claim assume cache
(``dra_manager.go``'s ``claimTracker`` over ``assumecache``): Reserve assumes the claims the pod
allocates and reserves, Unreserve restores the API objects, and the cache's
:class:`~ksched.cache.Assumer` shows the assumed claims in its state, so the next pod of a batch
sees the devices taken.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

import attrs
import immutables

from ksched.dra.claims import ResourceClaim, ResourceClaimTemplate
from ksched.dra.devices import DeviceClass, ResourceSlice
from ksched.dra.fields import check_unique

__all__ = ["ClaimCache", "CLAIM_CACHE", "DraObjects", "EMPTY_DRA", "dra_objects", "evolved",
           "with_dra"]

#: Where a binding cycle's data holds the :class:`ClaimCache`.
CLAIM_CACHE = "DynamicResources/claim-cache"


@attrs.frozen(eq=False)
class DraObjects:
    """The resource.k8s.io objects of a cluster, by kind, with lookups. Claims are replaced
    by :meth:`updated` (classes, slices and the pools per node are shared); the claims and
    the devices they hold are kept in persistent maps (``immutables.Map``), so a version
    costs O(log n) per claim it changes, not a copy of every claim."""

    device_classes: tuple[DeviceClass, ...] = ()
    resource_slices: tuple[ResourceSlice, ...] = ()
    #: The claims as given; ``None`` in a version :meth:`updated` made, until first read.
    _resource_claims: tuple[ResourceClaim, ...] | None = attrs.field(
        default=(), alias="resource_claims", repr=False)
    resource_claim_templates: tuple[ResourceClaimTemplate, ...] = ()
    _classes: dict = attrs.field(init=False, repr=False)
    #: (namespace, name) -> (position, claim): a claim keeps its position when replaced.
    _claims: immutables.Map = attrs.field(init=False, repr=False)
    #: The position the next claim :meth:`updated` adds takes.
    _next: int = attrs.field(init=False, repr=False)
    _templates: dict = attrs.field(init=False, repr=False)
    #: What is derived from the classes and slices alone (pools per node, device columns),
    #: shared by every version (they never change); filled by :mod:`ksched.dra.allocator`.
    slice_cache: dict = attrs.field(factory=dict, repr=False)
    _allocated: list = attrs.field(factory=list, repr=False)
    #: Where :meth:`updated` made this version: (its line of versions, the changes from
    #: the line's first version to this one), or ``None`` (:meth:`changes_since`).
    _line: tuple | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        check_unique("deviceclass", self.device_classes, lambda c: c.name)
        check_unique("resourceclaim", self.resource_claims, lambda c: (c.namespace, c.name))
        check_unique("resourceclaimtemplate", self.resource_claim_templates,
                     lambda t: (t.namespace, t.name))
        check_unique("resourceslice", self.resource_slices, lambda s: s.name)
        object.__setattr__(self, "_classes", {c.name: c for c in self.device_classes})
        object.__setattr__(self, "_claims", immutables.Map(
            ((c.namespace, c.name), (k, c)) for k, c in enumerate(self.resource_claims)))
        object.__setattr__(self, "_next", len(self.resource_claims))
        object.__setattr__(self, "_templates", {(t.namespace, t.name): t
                                                for t in self.resource_claim_templates})

    @property
    def resource_claims(self) -> tuple[ResourceClaim, ...]:
        """Every claim: in the order given, each claim :meth:`updated` added after them."""
        if self._resource_claims is None:
            ordered = sorted(self._claims.values(), key=lambda entry: entry[0])
            object.__setattr__(self, "_resource_claims", tuple(c for _, c in ordered))
        return self._resource_claims

    def __bool__(self) -> bool:
        return bool(self.device_classes or self.resource_slices or len(self._claims)
                    or self.resource_claim_templates)

    @property
    def classes(self) -> Mapping[str, DeviceClass]:
        return self._classes

    def device_class(self, name: str) -> DeviceClass | None:
        return self._classes.get(name)

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        found = self._claims.get((namespace, name))
        return found[1] if found is not None else None

    def template(self, namespace: str, name: str) -> ResourceClaimTemplate | None:
        return self._templates.get((namespace, name))

    def allocated_devices(self) -> Collection[tuple[str, str, str]]:
        """``ListAllAllocatedDevices``: every result of every allocated claim but those
        with admin access (a set-like view; kept up to date by :meth:`updated`)."""
        if not self._allocated:
            with immutables.Map().mutate() as counts:
                for claim in self.resource_claims:
                    _count(counts, claim, 1)
                self._allocated.append(counts.finish())
        return self._allocated[0].keys()

    def updated(self, claims: Iterable[ResourceClaim],
                deleted: Iterable[tuple[str, str]] = ()) -> DraObjects:
        """A copy with these claims replacing (or joining, last) those of their names, and
        the claims of the ``deleted`` (namespace, name) gone: the lookups and the allocated
        devices updated, not made again."""
        replaced = {(c.namespace, c.name): c for c in claims}
        gone = set(deleted) if deleted else ()
        if not replaced and not gone:
            return self
        before: list[ResourceClaim] = []
        counted = False  # whether a claim out or in holds devices
        by_key = self._claims.mutate()
        for key in gone:
            old = by_key.pop(key, None)
            if old is not None:
                before.append(old[1])
                counted = counted or old[1].allocation is not None
        last = self._next
        for key, claim in replaced.items():
            old = by_key.get(key)
            counted = counted or claim.allocation is not None
            if old is not None:
                before.append(old[1])
                counted = counted or old[1].allocation is not None
                by_key[key] = (old[0], claim)
            else:
                by_key[key] = (last, claim)
                last += 1
        claims_map = by_key.finish()
        allocated = self._allocated
        if allocated and counted:
            counts = allocated[0].mutate()
            for claim in before:
                _count(counts, claim, -1)
            for claim in replaced.values():
                _count(counts, claim, 1)
            allocated = [counts.finish()]
        elif allocated:
            allocated = [allocated[0]]
        else:
            allocated = []
        line = self._line[0] if self._line is not None \
            and self._line[1] == len(self._line[0].changes) < _LINE else _Line(self)
        line.changes.append((tuple(before), tuple(replaced.values())))
        new = object.__new__(DraObjects)
        put = object.__setattr__
        put(new, "device_classes", self.device_classes)
        put(new, "resource_slices", self.resource_slices)
        put(new, "_resource_claims", None)
        put(new, "resource_claim_templates", self.resource_claim_templates)
        put(new, "_classes", self._classes)
        put(new, "_claims", claims_map)
        put(new, "_next", last)
        put(new, "_templates", self._templates)
        put(new, "slice_cache", self.slice_cache)
        put(new, "_allocated", allocated)
        put(new, "_line", (line, len(line.changes)))
        return new

    def changes_since(self, older: DraObjects) -> list[tuple[tuple, tuple]] | None:
        """The claims each :meth:`updated` took out and put in from ``older`` to this
        version, oldest first; ``None`` when this version was not made so from ``older``."""
        if self._line is None:
            return None
        line, at = self._line
        if older._line is not None and older._line[0] is line:
            since = older._line[1]
        elif line.first is older:
            since = 0
        else:
            return None
        return line.changes[since:at] if since <= at else None


class _Line:
    """Versions made one from the other by :meth:`DraObjects.updated`: the first, and each
    next one's change (claims taken out, claims put in)."""

    __slots__ = ("first", "changes")

    def __init__(self, first: DraObjects) -> None:
        self.first = first
        self.changes: list[tuple[tuple, tuple]] = []


#: The most changes a line of versions keeps (the next version starts a line).
_LINE = 4096


def _count(counts: Any, claim: ResourceClaim, step: int) -> None:
    """Count (``step`` 1) or uncount (-1) the devices ``claim`` holds without admin access."""
    if claim.allocation is None:
        return
    for r in claim.allocation.results:
        if not r.admin_access:
            key = (r.driver, r.pool, r.device)
            left = counts.get(key, 0) + step
            if left:
                counts[key] = left
            else:
                del counts[key]


EMPTY_DRA = DraObjects()


def dra_objects(state: Any) -> DraObjects:
    """The DRA objects of a :class:`~ksched.state.ClusterState` (none: empty)."""
    return state.objects.get("dra", EMPTY_DRA)


def with_dra(state: Any, dra: DraObjects) -> Any:
    """A copy of ``state`` holding ``dra`` (pods and columns shared)."""
    objects = dict(state.objects)
    objects["dra"] = dra
    return evolved(state, objects=type(state.objects)(objects))


def evolved(obj: Any, **changes: Any) -> Any:
    """``attrs.evolve(obj, **changes)``: the attrs class called with its init fields by
    position (the same converters and checks, at a fraction of the cost)."""
    cls = type(obj)
    found = _REMAKE.get(cls)
    if found is None:
        fields = [f for f in attrs.fields(cls) if f.init]
        names = [f.name for f in fields]
        found = _REMAKE[cls] = () if len(fields) < 2 or any(f.kw_only for f in fields) \
            else (operator.attrgetter(*names), {name: i for i, name in enumerate(names)})
    if not found or not changes.keys() <= found[1].keys():
        return attrs.evolve(obj, **changes)
    args = list(found[0](obj))
    at = found[1]
    for name, value in changes.items():
        args[at[name]] = value
    return cls(*args)


#: Per attrs class: its init fields' getter and their positions by name, or ``()`` where
#: :func:`evolved` takes :func:`attrs.evolve`.
_REMAKE: dict[type, tuple] = {}


class ClaimCache:
    """The claim assume cache: the API objects (``api``) and the objects with the claims
    Reserve assumed (``current``), shown in the attached Assumer's state. While no claim is
    assumed, ``current`` is ``api`` (one version serves both)."""

    def __init__(self, api: DraObjects) -> None:
        self.api = api
        self.current = api
        self._assumer: Any = None
        #: The (namespace, name) of the claims ``current`` shows assumed versions of.
        self._assumed: set[tuple[str, str]] = set()
        #: Whether a claim the API lacked was assumed (``current`` then stays apart: the
        #: claims' order could differ from the API's).
        self._apart = False
        self._deferred = False  # (:meth:`deferred`)

    def attach(self, assumer: Any) -> None:
        """Show the assumed claims in ``assumer``'s state from now on."""
        import weakref

        self._assumer = weakref.ref(assumer)
        if self.current and dra_objects(assumer.state) is not self.current:
            assumer.state = with_dra(assumer.state, self.current)

    def assume(self, claims: Iterable[ResourceClaim]) -> None:
        """``Assume``: these versions replace the claims of their names."""
        claims = list(claims)
        for c in claims:
            key = (c.namespace, c.name)
            self._assumed.add(key)
            if self.api.claim(*key) is None:
                self._apart = True
        self._set(self.current.updated(claims))

    def write(self, claims: Iterable[ResourceClaim],
              deleted: Iterable[tuple[str, str]] = ()) -> None:
        """Claims written to (or deleted from) the API: the API objects and the assumed
        versions both change (PreBind's writes, the resourceclaim controller's)."""
        claims, deleted = list(claims), list(deleted)
        if self._assumed:
            self._assumed.difference_update((c.namespace, c.name) for c in claims)
            self._assumed.difference_update(deleted)
        current = self.current
        if deleted or any(current.claim(c.namespace, c.name) is not c for c in claims):
            current = current.updated(claims, deleted)  # else: the versions it shows already
        if self._assumed or self._apart:
            self.api = self.api.updated(claims, deleted)
        else:  # nothing assumed is left: the same claims, in the same order
            self.api = current
        if current is not self.current:
            self._set(current)

    def restore(self, keys: Iterable[tuple[str, str]]) -> None:
        """``Restore``: the claims of these (namespace, name) back to their API objects."""
        found = [c for c in (self.api.claim(ns, name) for ns, name in keys) if c is not None]
        if found:
            self._assumed.difference_update((c.namespace, c.name) for c in found)
            self._set(self.current.updated(found))

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Writes in the block show in the attached Assumer's state once, at its end (no
        one reads that state meanwhile)."""
        self._deferred = True
        try:
            yield
        finally:
            self._deferred = False
            self._set(self.current)

    def _set(self, dra: DraObjects) -> None:
        self.current = dra
        assumer = self._assumer() if self._assumer is not None else None
        if assumer is not None and not self._deferred and dra_objects(assumer.state) is not dra:
            assumer.state = with_dra(assumer.state, dra)

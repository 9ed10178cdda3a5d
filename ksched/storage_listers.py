"""The storage objects of a cluster and their lookups, as the volume plugins reach them through
their informers' listers (``k8s.io/client-go/listers``: ``core/v1`` ``persistentvolume.go``,
``persistentvolumeclaim.go``; ``storage/v1`` ``storageclass.go``, ``csinode.go``,
``csidriver.go``, ``csistoragecapacity.go``).

A :class:`StorageObjects` is immutable; :meth:`StorageObjects.updated` gives the copy that the
volume binder's assume cache holds after Reserve (a claim bound to a volume, a volume claimed):
an :class:`AssumedStorage`, which keeps the objects it was made from and only the assumed
versions beside them (``assume_cache.go`` keeps the informer's objects and the assumed ones the
same way), so that assuming one pod's bindings costs the size of its bindings, not of the
cluster's storage. :meth:`StorageObjects.changes_from` says which volumes and claims two
versions hold differently.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from ksched.api import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.validation import go_quote

__all__ = ["EMPTY_STORAGE", "AssumedStorage", "StorageObjects"]


def _records(kind: type) -> Any:
    """A converter: any iterable of ``kind`` records to a tuple, anything else refused."""
    def convert(value: Any) -> tuple:
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            raise ArgumentError(f"expected {kind.__name__} records, got {type(value).__name__}")
        items = tuple(value)
        for item in items:
            if not isinstance(item, kind):
                raise ArgumentError(f"expected {kind.__name__} records, got "
                                    f"{type(item).__name__}")
        return items
    return convert


def _derived() -> Any:
    """A lookup table built from the records (not compared, not shown)."""
    return attrs.field(init=False, repr=False, eq=False)


def _index(items: tuple, key: Any, kind: str) -> dict:
    """``key(item)`` -> item; two items with one key are refused (the API server keeps one)."""
    found: dict = {}
    for item in items:
        k = key(item)
        if k in found:
            where = "/".join(k) if isinstance(k, tuple) else k
            raise InvalidObjectError(f"{kind} {where}", "metadata.name",
                                     f"Duplicate value: {go_quote(item.name)}")
        found[k] = item
    return found


@attrs.frozen
class StorageObjects:
    """PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers and
    CSIStorageCapacities, in input order, with lookups by key (a name given twice is
    refused).

    Examples
    --------
    >>> from ksched.api import PersistentVolumeClaim
    >>> storage = StorageObjects(persistent_volume_claims=[PersistentVolumeClaim("data")])
    >>> storage.claim("default", "data").name, storage.claim("default", "other")
    ('data', None)
    """

    persistent_volumes: tuple[PersistentVolume, ...] = attrs.field(
        default=(), converter=_records(PersistentVolume))
    persistent_volume_claims: tuple[PersistentVolumeClaim, ...] = attrs.field(
        default=(), converter=_records(PersistentVolumeClaim))
    storage_classes: tuple[StorageClass, ...] = attrs.field(
        default=(), converter=_records(StorageClass))
    csi_nodes: tuple[CSINode, ...] = attrs.field(default=(), converter=_records(CSINode))
    csi_drivers: tuple[CSIDriver, ...] = attrs.field(default=(), converter=_records(CSIDriver))
    csi_storage_capacities: tuple[CSIStorageCapacity, ...] = attrs.field(
        default=(), converter=_records(CSIStorageCapacity))
    _volumes: dict[str, PersistentVolume] = _derived()
    _claims: dict[tuple[str, str], PersistentVolumeClaim] = _derived()
    _classes: dict[str, StorageClass] = _derived()
    _csi_nodes: dict[str, CSINode] = _derived()
    _drivers: dict[str, CSIDriver] = _derived()

    def __attrs_post_init__(self) -> None:
        indexes = {
            "_volumes": _index(self.persistent_volumes, _name, "persistentvolume"),
            "_claims": _index(self.persistent_volume_claims, _namespaced,
                              "persistentvolumeclaim"),
            "_classes": _index(self.storage_classes, _name, "storageclass"),
            "_csi_nodes": _index(self.csi_nodes, _name, "csinode"),
            "_drivers": _index(self.csi_drivers, _name, "csidriver"),
        }
        _index(self.csi_storage_capacities, _namespaced, "csistoragecapacity")
        for field, index in indexes.items():
            object.__setattr__(self, field, index)

    def __bool__(self) -> bool:
        """Whether any storage object is held."""
        return bool(self.persistent_volumes or self.persistent_volume_claims
                    or self.storage_classes or self.csi_nodes or self.csi_drivers
                    or self.csi_storage_capacities)

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """The claim ``namespace/name`` (``PersistentVolumeClaims(ns).Get(name)``)."""
        return self._claims.get((namespace, name))

    def volume(self, name: str) -> PersistentVolume | None:
        """The PersistentVolume ``name``."""
        return self._volumes.get(name)

    def storage_class(self, name: str) -> StorageClass | None:
        """The StorageClass ``name``."""
        return self._classes.get(name)

    def csi_node(self, node_name: str) -> CSINode | None:
        """The CSINode of node ``node_name`` (a CSINode is named after its node)."""
        return self._csi_nodes.get(node_name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        """The CSIDriver ``name``."""
        return self._drivers.get(name)

    def capacities(self, storage_class: str) -> tuple[CSIStorageCapacity, ...]:
        """The CSIStorageCapacities reported for ``storage_class``, in input order."""
        return tuple(c for c in self.csi_storage_capacities if c.storage_class == storage_class)

    def updated(self, volumes: Iterable[PersistentVolume] = (),
                claims: Iterable[PersistentVolumeClaim] = ()) -> StorageObjects:
        """A copy in which each of ``volumes`` and ``claims`` replaces the object of its name
        (in place, keeping the order) or is added at the end: what the assume cache holds
        once a binding is assumed (an :class:`AssumedStorage`, made in the time the new
        objects take). ``self`` is not changed."""
        volumes, claims = tuple(volumes), tuple(claims)
        if not volumes and not claims:
            return self
        return _AssumeLog(self).appended(0, volumes, claims)

    def changes_from(self, old: StorageObjects) -> tuple[set[str], set[tuple[str, str]]]:
        """The names of the volumes and the (namespace, name) keys of the claims that
        ``old`` and ``self`` hold differently (by identity), other kinds being the same."""
        if old is self:
            return set(), set()
        return (_changed(old.persistent_volumes, self.persistent_volumes, _name),
                _changed(old.persistent_volume_claims, self.persistent_volume_claims,
                         _namespaced))


class AssumedStorage(StorageObjects):
    """Storage objects with assumed versions of some volumes and claims: one version of an
    assume log (:meth:`StorageObjects.updated`), immutable like any :class:`StorageObjects`.

    The versions of one log share it: a lookup reads the newest version of the object at or
    before this one, then the objects the log was made from; the record tuples are put
    together on first use. Making the next version of the newest one appends to the log; a
    version made from an older one starts a log of its own. ``attrs.evolve`` and pickling
    give a plain :class:`StorageObjects`.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        return StorageObjects(*args, **kwargs)  # attrs.evolve, copies: a plain one

    @classmethod
    def _at(cls, log: _AssumeLog, version: int) -> AssumedStorage:
        made = object.__new__(cls)
        object.__setattr__(made, "_log", log)
        object.__setattr__(made, "_version", version)
        object.__setattr__(made, "_tuples", {})
        return made

    def plain(self) -> StorageObjects:
        """The same objects as a plain :class:`StorageObjects` (made once)."""
        found = self._tuples.get("plain")
        if found is None:
            found = self._tuples["plain"] = StorageObjects(*self._fields())
        return found

    def _fields(self) -> tuple:
        return tuple(getattr(self, a.alias) for a in attrs.fields(StorageObjects) if a.init)

    def __reduce__(self) -> tuple:
        return (StorageObjects, self._fields())

    def __eq__(self, other: object) -> bool:
        return self.plain() == other if isinstance(other, StorageObjects) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.plain())

    def _newest(self, history: list | None) -> Any:
        if history:
            version = self._version
            for at, item in reversed(history):
                if at <= version:
                    return item
        return _MISSING

    def _records(self, kind: str, base: tuple, history: dict, key: Any) -> tuple:
        found = self._tuples.get(kind)
        if found is None:
            replaced = {k: item for k, h in history.items()
                        if (item := self._newest(h)) is not _MISSING}
            found = self._tuples[kind] = _replaced(base, replaced, key) if replaced else base
        return found

    @property
    def base(self) -> StorageObjects:
        """The storage objects the assumptions were made on."""
        return self._log.base

    @property
    def persistent_volumes(self) -> tuple[PersistentVolume, ...]:  # type: ignore[override]
        log = self._log
        return self._records("volumes", log.base.persistent_volumes, log.volumes, _name)

    @property
    def persistent_volume_claims(self) -> tuple[PersistentVolumeClaim, ...]:  # type: ignore[override]
        log = self._log
        return self._records("claims", log.base.persistent_volume_claims, log.claims,
                             _namespaced)

    @property
    def storage_classes(self) -> tuple[StorageClass, ...]:  # type: ignore[override]
        return self._log.base.storage_classes

    @property
    def csi_nodes(self) -> tuple[CSINode, ...]:  # type: ignore[override]
        return self._log.base.csi_nodes

    @property
    def csi_drivers(self) -> tuple[CSIDriver, ...]:  # type: ignore[override]
        return self._log.base.csi_drivers

    @property
    def csi_storage_capacities(self) -> tuple[CSIStorageCapacity, ...]:  # type: ignore[override]
        return self._log.base.csi_storage_capacities

    def __bool__(self) -> bool:
        return True  # it holds what was assumed

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        found = self._newest(self._log.claims.get((namespace, name)))
        return self._log.base.claim(namespace, name) if found is _MISSING else found

    def volume(self, name: str) -> PersistentVolume | None:
        found = self._newest(self._log.volumes.get(name))
        return self._log.base.volume(name) if found is _MISSING else found

    def storage_class(self, name: str) -> StorageClass | None:
        return self._log.base.storage_class(name)

    def csi_node(self, node_name: str) -> CSINode | None:
        return self._log.base.csi_node(node_name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self._log.base.csi_driver(name)

    def capacities(self, storage_class: str) -> tuple[CSIStorageCapacity, ...]:
        return self._log.base.capacities(storage_class)

    def updated(self, volumes: Iterable[PersistentVolume] = (),
                claims: Iterable[PersistentVolumeClaim] = ()) -> StorageObjects:
        volumes, claims = tuple(volumes), tuple(claims)
        if not volumes and not claims:
            return self
        log = self._log
        if self._version != len(log.changes):  # not the newest version: a log of its own
            return _AssumeLog(self.plain()).appended(0, volumes, claims)
        return log.appended(self._version, volumes, claims)

    def changes_from(self, old: StorageObjects) -> tuple[set[str], set[tuple[str, str]]]:
        log = self._log
        if isinstance(old, AssumedStorage) and old._log is log and old._version <= self._version:
            start = old._version
        elif old is log.base:
            start = 0
        else:
            return super().changes_from(old)
        volumes: set[str] = set()
        claims: set[tuple[str, str]] = set()
        for names, keys in log.changes[start:self._version]:
            volumes.update(names)
            claims.update(keys)
        return volumes, claims


class _AssumeLog:
    """The assumed versions of one chain of :class:`AssumedStorage` versions: per volume name
    and claim key, (version, object) pairs in version order; per version, what it changed."""

    __slots__ = ("base", "volumes", "claims", "changes")

    def __init__(self, base: StorageObjects) -> None:
        self.base = base
        self.volumes: dict[str, list[tuple[int, PersistentVolume]]] = {}
        self.claims: dict[tuple[str, str], list[tuple[int, PersistentVolumeClaim]]] = {}
        self.changes: list[tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = []

    def appended(self, version: int, volumes: tuple, claims: tuple) -> AssumedStorage:
        """Version ``version + 1`` (``version`` is the newest): ``volumes`` and ``claims``
        assumed."""
        _records(PersistentVolume)(volumes)
        _records(PersistentVolumeClaim)(claims)
        new = version + 1
        for pv in volumes:
            self.volumes.setdefault(pv.name, []).append((new, pv))
        for claim in claims:
            self.claims.setdefault(_namespaced(claim), []).append((new, claim))
        self.changes.append((tuple(map(_name, volumes)), tuple(map(_namespaced, claims))))
        return AssumedStorage._at(self, new)


_MISSING = object()


def _name(record: Any) -> str:
    return record.name


def _namespaced(record: Any) -> tuple[str, str]:
    return (record.namespace, record.name)


def _replaced(items: tuple, by_key: dict, key: Any) -> tuple:
    """``items`` with the records of ``by_key``'s keys replaced in place, the others added at
    the end (in ``by_key``'s order)."""
    by_key = dict(by_key)
    kept = [by_key.pop(key(item), item) for item in items]
    return tuple(kept) + tuple(by_key.values())


def _changed(old: tuple, new: tuple, key: Any) -> set:
    """The keys of the records that differ between two record tuples (by identity, position
    by position: the tuples of assumed versions keep their order)."""
    if old is new:
        return set()
    found = {key(a) for a, b in zip(old, new) if a is not b}
    found |= {key(b) for a, b in zip(old, new) if a is not b}
    found |= {key(r) for r in old[len(new):]} | {key(r) for r in new[len(old):]}
    return found


#: A cluster without storage objects.
EMPTY_STORAGE = StorageObjects()

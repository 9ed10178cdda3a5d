"""The storage objects of a cluster and their lookups, as the volume plugins reach them through
their informers' listers (``k8s.io/client-go/listers``: ``core/v1`` ``persistentvolume.go``,
``persistentvolumeclaim.go``; ``storage/v1`` ``storageclass.go``, ``csinode.go``,
``csidriver.go``, ``csistoragecapacity.go``).

A :class:`StorageObjects` is immutable; :meth:`StorageObjects.updated` gives the copy that the
volume binder's assume cache holds after Reserve (a claim bound to a volume, a volume claimed).
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

__all__ = ["EMPTY_STORAGE", "StorageObjects"]


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
        once a binding is assumed. ``self`` is not changed."""
        return attrs.evolve(
            self, persistent_volumes=_replaced(self.persistent_volumes, volumes, _name),
            persistent_volume_claims=_replaced(self.persistent_volume_claims, claims,
                                               _namespaced))


def _name(record: Any) -> str:
    return record.name


def _namespaced(record: Any) -> tuple[str, str]:
    return (record.namespace, record.name)


def _replaced(items: tuple, new: Iterable, key: Any) -> tuple:
    new = list(new)
    if not new:
        return items
    by_key = {key(item): item for item in new}
    kept = [by_key.pop(key(item), item) for item in items]
    return tuple(kept) + tuple(by_key.values())


#: A cluster without storage objects.
EMPTY_STORAGE = StorageObjects()

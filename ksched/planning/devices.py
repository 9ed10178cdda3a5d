"""Devices per DeviceClass for the planning tools: how many devices each class's selectors
match, per node, and how many of them allocated claims hold.

A device counts for a class when every selector of the class matches it, judged as the
structured allocator judges it (:meth:`ksched.dra.devices.Device.matches`); a selector that
does not compile, or errs on a device, matches nothing there (the allocator refuses such a
device with an error). Only the devices of usable pools count: the pools
:func:`ksched.dra.allocator.node_pools` gathers for some node of the cluster (the newest
generation, complete, no device name twice). A device of a node-local slice
(``spec.nodeName``) belongs to its node; the others (``nodeSelector``, ``allNodes``: network
attached) are counted once, in the cluster's total only. A device is allocated when an
allocated claim holds it without admin access (``ListAllAllocatedDevices``). A device that
several classes match counts in each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.dra.allocator import node_pools
from ksched.dra.cel import CelRuntimeError
from ksched.dra.devices import DeviceClass
from ksched.dra.state import DraObjects, dra_objects

__all__ = ["DeviceInventory", "class_matches", "device_inventory", "device_metrics",
           "free_per_class", "reference_devices", "template_needs"]


def class_matches(cls: DeviceClass, device: Any, driver: str) -> bool:
    """Whether every selector of ``cls`` matches ``device`` (a device of ``driver``); a
    compile or runtime error is no match."""
    for selector in cls.selectors:
        if selector.error is not None:
            return False
        try:
            if not device.matches(selector, driver):
                return False
        except CelRuntimeError:
            return False
    return True


@attrs.frozen(eq=False)
class DeviceInventory:
    """Devices per class (``K`` classes, name order) over ``N`` nodes.

    Attributes
    ----------
    classes : the ``K`` DeviceClass names.
    allocatable : int64[N, K], read-only: the node-local devices each class matches.
    allocated : int64[N, K], read-only: those of them allocated claims hold.
    shared_allocatable, shared_allocated : int64[K], read-only: the same for the devices of
        slices that are not node-local (counted in the total only).
    """

    classes: tuple[str, ...]
    allocatable: npt.NDArray[np.int64] = attrs.field(repr=False)
    allocated: npt.NDArray[np.int64] = attrs.field(repr=False)
    shared_allocatable: npt.NDArray[np.int64] = attrs.field(repr=False)
    shared_allocated: npt.NDArray[np.int64] = attrs.field(repr=False)

    @property
    def shown(self) -> tuple[str, ...]:
        """The classes that match some device (the text leaves out the rest)."""
        has = self.allocatable.sum(axis=0) + self.shared_allocatable > 0
        return tuple(c for k, c in enumerate(self.classes) if has[k])

    @property
    def free(self) -> npt.NDArray[np.int64]:
        """int64[N, K]: node-local devices not allocated."""
        return self.allocatable - self.allocated

    def totals(self, rows: npt.NDArray[np.int64] | None = None, shared: bool = True,
               stranded: npt.NDArray[np.bool_] | None = None) -> dict[str, dict[str, int]]:
        """Per shown class, over the node rows ``rows`` (default all) and, with ``shared``,
        the shared devices: ``allocatable``, ``allocated``, ``free``; with ``stranded``
        (bool[N]: the nodes that cannot take a reference pod), ``stranded``: the free devices
        on those nodes."""
        rows = np.arange(self.allocatable.shape[0]) if rows is None else rows
        alloc = self.allocatable[rows].sum(axis=0)
        used = self.allocated[rows].sum(axis=0)
        if shared:
            alloc, used = alloc + self.shared_allocatable, used + self.shared_allocated
        stuck = None if stranded is None else self.free[rows[stranded[rows]]].sum(axis=0)
        out = {}
        shown = set(self.shown)
        for k, name in enumerate(self.classes):
            if name not in shown:
                continue
            entry = {"allocatable": int(alloc[k]), "allocated": int(used[k]),
                     "free": int(alloc[k] - used[k])}
            if stuck is not None:
                entry["stranded"] = int(stuck[k])
            out[name] = entry
        return out


def _usable(dra: DraObjects, nodes: Iterable[Any]) -> tuple[dict, dict]:
    """(node row -> [(device ID, device, driver)], shared device ID -> (device, driver)):
    the devices of the pools some node gathers."""
    local: dict[int, list] = {}
    shared: dict[tuple[str, str, str], tuple[Any, str]] = {}
    for row, node in enumerate(nodes):
        for pool in node_pools(dra, node):
            if pool.incomplete or pool.invalid:
                continue
            for sl in pool.slices:
                for device in sl.devices:
                    key = (sl.driver, sl.pool, device.name)
                    if sl.node_name:
                        local.setdefault(row, []).append((key, device, sl.driver))
                    else:
                        shared[key] = (device, sl.driver)
    return local, shared


def device_inventory(state: Any) -> DeviceInventory:
    """The devices of ``state`` (a :class:`~ksched.state.ClusterState`) per DeviceClass."""
    dra = dra_objects(state)
    classes = sorted(dra.device_classes, key=lambda c: c.name)
    n, k = state.num_nodes, len(classes)
    allocatable = np.zeros((n, k), dtype=np.int64)
    allocated = np.zeros((n, k), dtype=np.int64)
    shared_alloc = np.zeros(k, dtype=np.int64)
    shared_used = np.zeros(k, dtype=np.int64)
    if k and dra.resource_slices:
        taken = dra.allocated_devices()
        local, shared = _usable(dra, state.nodes)
        for j, cls in enumerate(classes):
            for row, devices in local.items():
                for key, device, driver in devices:
                    if class_matches(cls, device, driver):
                        allocatable[row, j] += 1
                        allocated[row, j] += key in taken
            for key, (device, driver) in shared.items():
                if class_matches(cls, device, driver):
                    shared_alloc[j] += 1
                    shared_used[j] += key in taken
    for array in (allocatable, allocated, shared_alloc, shared_used):
        array.flags.writeable = False
    return DeviceInventory(tuple(c.name for c in classes), allocatable, allocated,
                           shared_alloc, shared_used)


def template_needs(pod: Any, dra: DraObjects) -> dict[str, int] | None:
    """The devices each copy of ``pod`` takes for the claims made from its templates, per
    class: the exact counts of requests without admin access (``All``, ``firstAvailable``
    and admin access add nothing; a request's own selectors are not looked at, so the
    counts bound the copies from above). ``None`` when a template does not exist (no copy
    gets past PreEnqueue)."""
    needs: dict[str, int] = {}
    for _, claim_name, template_name in pod.claim_sources:
        if claim_name:
            continue
        template = dra.template(pod.namespace, template_name)
        if template is None:
            return None
        for request in template.spec.requests:
            exact = request.exactly
            if exact is not None and exact.mode == "ExactCount" and not exact.admin_access:
                needs[exact.device_class] = needs.get(exact.device_class, 0) + exact.count
    return needs


def reference_devices(inventory: DeviceInventory, pod: Any, dra: DraObjects
                      ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]] | None:
    """What the devices of each node allow a reference pod whose claims come from templates:
    (bool[N] the nodes with as many devices of each class as a copy takes, were they free;
    int64[N] the copies their free devices allow). ``None`` when its templates ask for
    nothing counted, or only for classes with devices outside node-local slices (no node
    bound); a missing template lets no copy onto any node."""
    n = inventory.allocatable.shape[0]
    if not any(not claim_name for _, claim_name, _ in pod.claim_sources):
        return None
    needs = template_needs(pod, dra)
    if needs is None:
        return np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.int64)
    hosts, copies, bound = np.ones(n, dtype=np.bool_), np.full(n, np.iinfo(np.int64).max), False
    for name, need in needs.items():
        if need <= 0:
            continue
        if name not in inventory.classes:
            hosts[:], copies[:], bound = False, 0, True
            continue
        k = inventory.classes.index(name)
        if inventory.shared_allocatable[k]:
            continue
        hosts &= inventory.allocatable[:, k] >= need
        copies = np.minimum(copies, inventory.free[:, k] // need)
        bound = True
    return (hosts, copies) if bound else None


def device_metrics(inventory: DeviceInventory) -> dict[str, Any]:
    """Per class matching some device: ``devices.<class>.utilisation`` (allocated /
    allocatable over the cluster, a fraction), ``.allocatable``, ``.allocated`` and
    ``.free``."""
    row: dict[str, Any] = {}
    for name, entry in inventory.totals().items():
        a, q = entry["allocatable"], entry["allocated"]
        row.update({f"devices.{name}.utilisation": round(q / a, 6) if a else 0.0,
                    f"devices.{name}.allocatable": a, f"devices.{name}.allocated": q,
                    f"devices.{name}.free": entry["free"]})
    return row


def free_per_class(inventory: DeviceInventory) -> Mapping[str, int]:
    """Per class, its free devices over the cluster (shared ones included)."""
    return {name: e["free"] for name, e in inventory.totals().items()}

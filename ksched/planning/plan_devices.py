"""Node types that come with ResourceSlices, for :func:`ksched.planning.plan`.

A node type is a Node, a Node manifest, a ``(node, slices)`` pair or a ``List`` manifest
holding one Node and its ResourceSlices; every slice must be node-local and name the type's
node (``spec.nodeName``). New node ``<t>-plan-<k>`` gets its own copy of each slice:
``spec.nodeName`` set to it, and the slice name and ``spec.pool.name`` renamed (the type's
node name becomes the new node's name; any other name ``s`` becomes ``<new node>-s``), so
every new node has pools of its own.

The bound's device columns (:func:`device_columns`): per DeviceClass that some pod group's
claims from templates ask for, a group's exact device counts
(:func:`ksched.planning.devices.template_needs`), a new node's devices of its type's slices
that the class matches, and an existing node's free devices of the class. Each column is a
relaxation, so the bound stays below the true optimum: a device matched by several classes
counts in each, a request's own selectors, ``All``, ``firstAvailable``, admin access and
named claims add nothing, pool completeness is not checked on the new nodes, and a class with
devices outside node-local slices (network-attached pools) has no column at all. A new node's
devices of a class are less what the claims from templates of the DaemonSet pods that run on
it take (their exact counts, as for the groups).

DaemonSet pods whose template claims devices from ResourceClaimTemplates
(:func:`daemon_probe`, :func:`daemon_claims`): on a one-node cluster of each type (its slices,
the cluster's DRA objects) each DaemonSet pod gets its own generated claims and is scheduled
in order, so a pod whose claims cannot be allocated there fits no new node of the type; on
the plan's new nodes, the pods of the DaemonSets that fit get their claims generated and
allocated by the scheduler before the pending pods come; the existing nodes' DaemonSet pods get
theirs generated and are scheduled as pending pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Node
from ksched.dra.devices import ResourceSlice
from ksched.dra.state import DraObjects, dra_objects
from ksched.engine import Result, schedule_batch
from ksched.errors import ArgumentError, KschedError
from ksched.inputs import as_node
from ksched.io import read_objects
from ksched.planning.capacity_claims import claim_copies, has_template_claims, placed_claims_only
from ksched.planning.devices import class_matches, device_inventory, template_needs
from ksched.planning.workloads import expand_workloads
from ksched.pod_table import PodTable
from ksched.state import ClusterState

__all__ = ["DeviceColumns", "daemon_claims", "daemon_needs", "daemon_probe", "device_columns",
           "node_types", "slice_copies", "with_claims", "with_slices"]


def node_types(value: Any) -> tuple[tuple[Node, ...], dict[str, tuple[ResourceSlice, ...]]]:
    """The node types of ``plan``'s ``node_types`` and, per type name, its slices."""
    if isinstance(value, Node | Mapping) or not isinstance(value, Sequence) \
            or isinstance(value, str | bytes):
        raise ArgumentError("node_types: expected a list of Node records, Node manifests, "
                            f"(node, slices) pairs or List manifests, got {type(value).__name__}")
    if not value:
        raise ArgumentError("node_types: empty; give at least one node type")
    types, slices = [], {}
    for i, item in enumerate(value):
        node, own = _node_type(item, f"node_types[{i}]")
        if node.name in slices:
            raise ArgumentError(f"node_types[{i}]: duplicate node type name {node.name!r}")
        types.append(node)
        slices[node.name] = own
    return tuple(types), {name: own for name, own in slices.items() if own}


def _node_type(item: Any, where: str) -> tuple[Node, tuple[ResourceSlice, ...]]:
    if isinstance(item, Mapping) and item.get("kind") == "List":
        objects = _read(item, where)
        if len(objects.nodes) != 1:
            raise ArgumentError(f"{where}: a List node type holds one Node and its "
                                f"ResourceSlices, got {len(objects.nodes)} Nodes")
        node, raw = objects.nodes[0], objects.resource_slices
    elif isinstance(item, tuple | list) and len(item) == 2:
        node = as_node(item[0], f"{where}[0]")
        if isinstance(item[1], ResourceSlice | Mapping) or not isinstance(item[1], Sequence):
            raise ArgumentError(f"{where}[1]: expected a list of ResourceSlices, got "
                                f"{type(item[1]).__name__}")
        raw = tuple(s for s in item[1] if isinstance(s, ResourceSlice))
        manifests = [s for s in item[1] if not isinstance(s, ResourceSlice)]
        if manifests:
            read = _read(manifests, f"{where}[1]")
            if read.nodes or read.pods or len(read.resource_slices) != len(manifests):
                raise ArgumentError(f"{where}[1]: expected ResourceSlices only")
            raw += read.resource_slices
    else:
        return as_node(item, where), ()
    for s in raw:
        if s.node_name != node.name:
            raise ArgumentError(f"{where}: ResourceSlice {s.name!r}: spec.nodeName must name "
                                f"the node type's node {node.name!r}, got {s.node_name!r}")
    return node, tuple(raw)


def _read(source: Any, where: str) -> Any:
    try:
        return read_objects(source)
    except KschedError as exc:
        raise ArgumentError(f"{where}: {exc}") from None


def _renamed(text: str, old: str, new: str) -> str:
    return new if text == old else f"{new}-{text}"


def slice_copies(template: Node, slices: Sequence[ResourceSlice], name: str
                 ) -> tuple[ResourceSlice, ...]:
    """The slices of new node ``name`` of ``template``'s type."""
    return tuple(attrs.evolve(s, name=_renamed(s.name, template.name, name), node_name=name,
                              pool=_renamed(s.pool, template.name, name)) for s in slices)


def with_claims(state: Any, pods: Sequence[Any]) -> tuple[Any, tuple[Any, ...]]:
    """(``state`` with the claims generated for the pending ``pods``' template entries, the
    pods with their claim statuses) as :func:`~ksched.planning.capacity_claims.claim_copies`
    makes them; entries with a status keep it."""
    if not any(has_template_claims(p) for p in pods):
        return state, tuple(pods)
    state, table = claim_copies(state, PodTable.of(list(pods)), keep_statuses=True)
    return state, tuple(table)


@attrs.frozen(eq=False)
class DeviceColumns:
    """The bound's device columns (``C`` classes).

    Attributes
    ----------
    classes : the ``C`` DeviceClass names.
    requests : int64[n_groups, C], a group's pod's devices per class.
    allocatable : int64[n_types, C], a new node's devices per class.
    free : int64[n_nodes, C], an existing node's free devices per class.
    """

    classes: tuple[str, ...]
    requests: npt.NDArray[np.int64]
    allocatable: npt.NDArray[np.int64]
    free: npt.NDArray[np.int64]


def device_columns(probes: Sequence[Any], types: Sequence[Node],
                   slices: Mapping[str, Sequence[ResourceSlice]], state: Any,
                   daemons: Mapping[str, Mapping[str, int]] | None = None) -> DeviceColumns:
    """The device columns of the groups ``probes`` over ``types`` and ``state``'s nodes;
    ``daemons``: type name -> class -> the devices its DaemonSet pods' claims from templates
    take on each new node (:func:`daemon_needs`), taken off the type's allocatable."""
    daemons = daemons or {}
    dra = dra_objects(state)
    needs = [(template_needs(p, dra) or {}) if has_template_claims(p) else {} for p in probes]
    inventory = device_inventory(state)
    local = [c for k, c in enumerate(inventory.classes) if not inventory.shared_allocatable[k]]
    classes = tuple(c for c in local if any(n.get(c, 0) > 0 for n in needs))
    requests = np.array([[n.get(c, 0) for c in classes] for n in needs],
                        dtype=np.int64).reshape(len(probes), len(classes))
    allocatable = np.array([[sum(class_matches(dra.classes[c], d, s.driver)
                                 for s in slices.get(t.name, ()) for d in s.devices)
                             - daemons.get(t.name, {}).get(c, 0)
                             for c in classes] for t in types],
                           dtype=np.int64).reshape(len(types), len(classes))
    free = inventory.free[:, [inventory.classes.index(c) for c in classes]]
    return DeviceColumns(classes, requests, np.clip(allocatable, 0, None), free.astype(np.int64))


def with_slices(state: Any, slices: Sequence[ResourceSlice]) -> DraObjects:
    """``state``'s DRA objects with ``slices`` (new nodes' copies) added."""
    dra = dra_objects(state)
    return DraObjects(dra.device_classes, dra.resource_slices + tuple(slices),
                      dra.resource_claims, dra.resource_claim_templates)


def daemon_probe(node: Node, slices: Sequence[ResourceSlice], cluster: ClusterState,
                 daemon_sets: Sequence[Mapping[str, Any]], profile: Any) -> Result | None:
    """The DaemonSet pods of the new node ``node`` (with ``slices``, its copies of its
    type's slices) scheduled in order on a cluster of it alone with ``cluster``'s DRA
    objects, each with its own claims generated from its templates; ``None`` when no
    DaemonSet pod there has a claim from a template (nothing for devices to change)."""
    one = ClusterState.from_records([node], (), dict(cluster.namespaces),
                                    {"dra": with_slices(cluster, slices)})
    pods = expand_workloads(daemon_sets, cluster=one).pods
    if not any(has_template_claims(p) for p in pods):
        return None
    one, table = claim_copies(one, PodTable.of(list(pods)))
    return schedule_batch(one, table, profile=profile)


def daemon_needs(result: Result | None) -> dict[str, int]:
    """Class -> the devices that the placed pods of ``result`` (DaemonSet pods scheduled on
    one new node, as :func:`daemon_probe` makes it) take by their claims from templates
    (exact counts, as :func:`device_columns` counts a group's); none for ``None``."""
    total: dict[str, int] = {}
    if result is None:
        return total
    dra = dra_objects(result.state)
    for p in result.placements:
        if p.node is not None and has_template_claims(p.pod):
            for c, n in (template_needs(p.pod, dra) or {}).items():
                total[c] = total.get(c, 0) + n
    return total


def daemon_claims(state: ClusterState, pending: Sequence[Any], new: Sequence[Any],
                  profile: Any) -> tuple[ClusterState, tuple[Any, ...]]:
    """(``state``, ``pending``) with claims of their own for DaemonSet pods' claims from
    templates: the ``pending`` pods (existing nodes') get theirs generated; the ``new`` pods
    (each pinned to a new node) get theirs and are scheduled, so that the scheduler allocates
    their devices; one whose claims cannot be allocated is left out, with its claims."""
    if new:
        state, table = claim_copies(state, PodTable.of(list(new)))
        result = schedule_batch(state, table, profile=profile)
        state = placed_claims_only(result.state, table, result.node_rows)
    return with_claims(state, pending)

"""The columnar cluster: nodes and the pods bound to them, as numpy arrays.

A :class:`ClusterState` is what kube-scheduler's snapshot holds (``NodeInfo`` per node), laid out
by column so that a Filter is a mask over nodes and a Score a vector. Strings are interned to
integer ids once, here; kernels only compare integers. A state is immutable: its arrays are
read-only, and scheduling returns a new state. The columns are built by
:mod:`ksched.state_columns`, the node order by :mod:`ksched.node_tree`, the bound pods kept by
:mod:`ksched.bound_pods`.
"""

from __future__ import annotations

import numbers
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import FrozenDict, Node, Pod
from ksched.bound_pods import BoundPods, check_unique, checked_bound_pods, pod_specs
from ksched.coerce import as_pod
from ksched.constants import CPU, EPHEMERAL_STORAGE, LABEL_HOSTNAME, MEMORY, PODS
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.io import Objects, is_client_model
from ksched.limits import MAX_NODES, check_count
from ksched.node_table import GeneratedNames, NameIndex, NodeTable, gather_csr
from ksched.node_tree import interleave_zones, node_tree_order, zone_key
from ksched.resources import is_tracked_resource, node_info_non_zero, pod_requests
from ksched.state_columns import (
    ABSENT,
    CLASS_COLUMNS,
    PROTOCOL_CODES,
    TAINT_EFFECT_CODES,
    UNKNOWN,
    WILDCARD_IP,
    Vocab,
    host_ports,
    image_columns,
    label_columns,
    node_classes,
    port_columns,
    resource_columns,
    resource_name_list,
    taint_columns,
)
from ksched.storage_listers import EMPTY_STORAGE, StorageObjects
from ksched.validation import go_quote, parse_go_int


def _bindings(pods: Any) -> Iterable[Any]:
    """``ClusterState.bind``'s argument as items: one pod, one (pod, node name) pair, or an
    iterable of them."""
    if isinstance(pods, tuple) and len(pods) == 2 and isinstance(pods[1], str) \
            and not isinstance(pods[0], str):
        return [pods]
    if isinstance(pods, Pod | Mapping) or is_client_model(pods):
        return [pods]
    if isinstance(pods, Iterable) and not isinstance(pods, str | bytes):
        return pods
    raise ArgumentError(f"pods: expected pods with spec.nodeName or (pod, node name) pairs, "
                        f"got {type(pods).__name__}")


#: ``ClusterState.pod_rows`` per state (states are immutable; entries go with them).
_POD_ROWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _is_index(value: Any, size: int) -> bool:
    """``value`` is an integer row in ``range(size)`` (numpy integers too, not booleans)."""
    return (isinstance(value, numbers.Integral) and not isinstance(value, bool)
            and 0 <= value < size)


def _check_templates(templates: Any) -> None:
    """``from_node_templates``' argument: (Node, count) pairs, at most
    :data:`~ksched.limits.MAX_NODES` nodes in all."""
    if isinstance(templates, str | bytes | Mapping) or not isinstance(templates, Sequence):
        raise ArgumentError(f"templates: expected a list of (Node, count) pairs, "
                            f"got {type(templates).__name__}")
    for i, item in enumerate(templates):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ArgumentError(f"templates[{i}]: expected a (Node, count) pair, "
                                f"got {type(item).__name__}")
        node, count = item
        if not isinstance(node, Node):
            raise ArgumentError(f"templates[{i}]: expected a Node, got {type(node).__name__}")
        check_count(count, f"templates[{i}]: count", MAX_NODES)
    check_count(sum(count for _, count in templates), "templates: nodes in all", MAX_NODES)


def _with_storage(objects: Mapping[str, Any] | None,
                  storage: StorageObjects | None) -> FrozenDict:
    """``objects`` (a state's :attr:`ClusterState.objects`) holding ``storage``, if given
    (none: no ``"storage"`` entry)."""
    found = storage if storage is not None else (objects or {}).get("storage")
    if found is not None and not isinstance(found, StorageObjects):
        raise ArgumentError(f"storage: expected a StorageObjects, got {type(found).__name__}")
    if storage is None:
        return objects if type(objects) is FrozenDict else FrozenDict(objects or {})
    kept = {k: v for k, v in (objects or {}).items() if k != "storage"}
    return FrozenDict({**kept, "storage": storage} if storage else kept)


def _readonly(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.flags.writeable = False



@attrs.frozen(eq=False)
class ClusterState:
    """Nodes and bound pods of a cluster, by column.

    Attributes (``N`` nodes, ``R`` resources, ``K`` label keys, ``P`` host-port keys)
    ----------
    nodes : tuple of Node, input order; ``pods`` : the bound pods, ``pod_node`` their node index.
    resource_names : the ``R`` columns: cpu (milli), memory, ephemeral-storage, pods, then scalars.
    allocatable, requested : int64[N, R]; ``requested[:, pods]`` is the number of pods.
    nonzero_requested : int64[N, 2], cpu and memory with the scoring defaults.
    labels : int32[N, K] value ids (:data:`ABSENT` when missing), ``label_ints`` / ``label_int_ok``
        the values parsed as Go int64 (for ``Gt`` / ``Lt``).
    taint_indptr, taint_keys, taint_values, taint_effects : the node taints as CSR rows.
    image_indptr, image_ids : the node images (every listed name) as CSR rows; per image id,
        ``image_sizes`` (the first reporting node's) and ``image_num_nodes`` (nodes listing it).
    port_keys, port_count : int32[N, P] how many bound pods use each (ip, protocol, port).
    tree_order : int64[N], the snapshot order the scheduler walks nodes in.
    """

    nodes: Sequence[Node]
    node_names: Sequence[str]
    pods: Sequence[Pod]
    pod_node: npt.NDArray[np.int64]
    namespaces: FrozenDict
    vocab: Vocab
    node_index: Mapping[str, int]
    resource_names: tuple[str, ...]
    allocatable: npt.NDArray[np.int64]
    requested: npt.NDArray[np.int64]
    nonzero_requested: npt.NDArray[np.int64]
    unschedulable: npt.NDArray[np.bool_]
    label_keys: Mapping[str, int]
    labels: npt.NDArray[np.int32]
    label_ints: npt.NDArray[np.int64]
    label_int_ok: npt.NDArray[np.bool_]
    taint_indptr: npt.NDArray[np.int64]
    taint_keys: npt.NDArray[np.int32]
    taint_values: npt.NDArray[np.int32]
    taint_effects: npt.NDArray[np.int8]
    image_index: Mapping[str, int]
    image_indptr: npt.NDArray[np.int64]
    image_ids: npt.NDArray[np.int32]
    image_sizes: npt.NDArray[np.int64]
    image_num_nodes: npt.NDArray[np.int64]
    port_keys: tuple[tuple[str, str, int], ...]
    port_count: npt.NDArray[np.int32]
    tree_order: npt.NDArray[np.int64]
    #: ``tree_position[node]``: where the node stands in ``tree_order``.
    tree_position: npt.NDArray[np.int64]
    #: Objects other plugins read (``"workloads"``: services, replica sets, ...;
    #: ``"storage"``: the :class:`~ksched.storage_listers.StorageObjects`), by kind.
    objects: FrozenDict = attrs.field(factory=FrozenDict)
    #: Positions in ``pods`` of the pods with pod affinity or anti-affinity
    #: (``NodeInfo.PodsWithAffinity``, over the whole cluster).
    affinity_pods: tuple[int, ...] = ()
    #: ``node_class[node]``: nodes of one class have the same taints, images, cordon and labels
    #: (the hostname label aside); ``class_nodes[k]`` is a node of class ``k``.
    #: Per (namespace, selector): how many bound pods match, per node, and how many pods of
    #: the log that count covers. Shared by the states of one batch (the pod log only grows).
    match_cache: dict = attrs.field(factory=dict, eq=False, repr=False)
    node_class: npt.NDArray[np.int64] = attrs.field(factory=lambda: np.zeros(0, np.int64))
    class_nodes: npt.NDArray[np.int64] = attrs.field(factory=lambda: np.zeros(0, np.int64))

    @property
    def num_nodes(self) -> int:
        return len(self.node_names)

    def in_tree_order(self, names: Iterable[str]) -> npt.NDArray[np.int64]:
        """The rows of the named nodes (unknown names dropped), in snapshot order."""
        rows = [self.node_index[n] for n in names if n in self.node_index]
        positions = np.sort(self.tree_position[np.asarray(rows, dtype=np.int64)])
        return self.tree_order[positions]

    def resource_column(self, name: str) -> int:
        """The column of resource ``name`` in the resource matrices, or -1."""
        try:
            return self.resource_names.index(name)
        except ValueError:
            return -1

    def label_column(self, key: str) -> int:
        return self.label_keys.get(key, -1)

    def pods_on(self, node: int) -> list[Pod]:
        """The bound pods of node index ``node`` (object-level view, for reference code)."""
        return [self.pods[i] for i in np.flatnonzero(self.pod_node == node)]

    def with_pods(self, removed: Iterable[int] = (),
                  added: Iterable[tuple[Pod, int]] = ()) -> ClusterState:
        """A copy without the bound pods at rows ``removed`` and with ``added`` (pod, node row)
        bound: the cloned ``NodeInfo`` that preemption's dry run and the nominated-pods filter
        pass work on (``NodeInfo.RemovePod`` / ``AddPod``). Columns for the added pods' host
        ports and resources are added first (:meth:`widened_for`), so none goes unrecorded.
        Costs a copy of the pod columns."""
        removed, added = self._checked_changes(removed, added)
        added = [(attrs.evolve(pod, node_name=self.node_names[node]), node)
                 for pod, node in added]
        state = self.widened_for([pod for pod, _ in added])
        keep = np.ones(len(state.pods), dtype=np.bool_)
        keep[list(removed)] = False
        pods = [p for p, k in zip(state.pods, keep) if k] + [p for p, _ in added]
        pod_node = np.concatenate([state.pod_node[keep],
                                   np.array([n for _, n in added], dtype=np.int64)])
        requested, nonzero = state.requested.copy(), state.nonzero_requested.copy()
        port_count = state.port_count.copy()
        columns = {name: j for j, name in enumerate(state.resource_names)}
        changes = [(state.pods[row], int(state.pod_node[row]), -1) for row in removed]
        for sign_pod, node, sign in changes + [(p, n, 1) for p, n in added]:
            requests = pod_requests(sign_pod)
            for name, amount in requests.items():
                if name in columns and name != PODS:
                    requested[node, columns[name]] += sign * amount
            requested[node, columns[PODS]] += sign
            nonzero[node] += [sign * v for v in node_info_non_zero(sign_pod, requests)]
            for port in set(host_ports(sign_pod)):
                port_count[node, state.port_keys.index(port)] += sign
        _readonly(pod_node, requested, nonzero, port_count)
        return attrs.evolve(
            state, pods=tuple(pods), pod_node=pod_node, requested=requested,
            nonzero_requested=nonzero, port_count=port_count, match_cache={},
            affinity_pods=tuple(i for i, p in enumerate(pods) if p.has_pod_affinity))

    def _checked_changes(self, removed: Iterable[int], added: Iterable[tuple[Pod, int]]
                         ) -> tuple[set[int], list[tuple[Pod, int]]]:
        """``with_pods``' arguments as a set of pod rows and (pod, node row) pairs, checked."""
        rows = set()
        for row in removed:
            if not _is_index(row, len(self.pods)):
                raise ArgumentError(f"removed: no bound pod at row {row!r} "
                                    f"(the state has {len(self.pods)})")
            rows.add(int(row))
        pairs = []
        for i, item in enumerate(added):
            pod, node = item if isinstance(item, tuple) and len(item) == 2 else (item, None)
            if not isinstance(pod, Pod):
                raise ArgumentError(f"added[{i}]: expected a (Pod, node row) pair, "
                                    f"got {type(pod).__name__}")
            if not _is_index(node, self.num_nodes):
                raise ArgumentError(f"added[{i}]: no node at row {node!r} "
                                    f"(the state has {self.num_nodes})")
            pairs.append((pod, int(node)))
        return rows, pairs

    def bind(self, pods: Iterable[Pod | tuple[Pod, str]] | tuple[Pod, str]) -> ClusterState:
        """A new state with ``pods`` bound: each a pod with ``spec.nodeName`` set, or a
        ``(pod, node name)`` pair (a pod as :func:`ksched.coerce.as_pod` takes it); the same
        columns and pod order ``schedule_batch``'s ``result.state`` has after placing them.

        Refused (``InvalidObjectError``): an unknown node, a pod without a node, a pod whose
        ``spec.nodeName`` names another node than its pair, a pod already bound here or twice
        in ``pods``, a terminal or terminating pod. ``self`` is not changed.

        Examples
        --------
        >>> from ksched import Container, Node, Pod
        >>> state = ClusterState.from_records([Node("n1", allocatable={"cpu": 1000})])
        >>> web = Pod("web", containers=[Container("c", requests={"cpu": 300})])
        >>> state = state.bind([(web, "n1")])
        >>> [p.key for p in state.pods], int(state.requested[0, 0])
        (['default/web'], 300)
        """
        added = [self._binding(item, i) for i, item in enumerate(_bindings(pods))]
        check_unique([pod for pod, _ in added])
        running = self.pod_rows()
        for pod, node in added:
            row = running.get((pod.namespace, pod.name))
            if row is not None:
                on = self.node_names[int(self.pod_node[row])]
                raise InvalidObjectError(f"pod {pod.key}", "", (
                    f"pod {pod.name} is already assigned to node {go_quote(on)}"))
        return self.with_pods(added=added)

    def unbind(self, keys: Iterable[str | Pod] | str | Pod) -> ClusterState:
        """A new state without the bound pods ``keys`` (``namespace/name`` strings, or pods),
        their resources and host ports freed as ``NodeInfo.RemovePod`` frees them. An unknown
        key, or one given twice, is refused. ``self`` is not changed."""
        keys = [keys] if isinstance(keys, str | Pod) else keys
        if not isinstance(keys, Iterable):
            raise ArgumentError(f"keys: expected pod keys (namespace/name) or pods, got "
                                f"{type(keys).__name__}")
        rows, wanted = self.pod_rows(), {}
        for i, key in enumerate(keys):
            if isinstance(key, Pod):
                key = key.key
            if not isinstance(key, str):
                raise ArgumentError(f"keys[{i}]: expected a pod key (namespace/name) or a "
                                    f"Pod, got {type(key).__name__}")
            namespace, _, name = key.rpartition("/")
            row = rows.get((namespace or "default", name))
            if row is None:
                raise InvalidObjectError(f"pod {namespace or 'default'}/{name}", "",
                                         f'pods "{name}" not found')
            if row in wanted:
                raise InvalidObjectError(f"pod {namespace or 'default'}/{name}", "metadata.name",
                                         f"Duplicate value: {go_quote(name)}")
            wanted[row] = None
        return self.with_pods(removed=wanted) if wanted else self

    def pod_rows(self) -> Mapping[tuple[str, str], int]:
        """``(namespace, name)`` -> row in :attr:`pods` of every bound pod (kept per state)."""
        found = _POD_ROWS.get(self)
        if found is None:
            specs = pod_specs(self.pods, 0, len(self.pods))
            found = _POD_ROWS[self] = {(p.namespace, p.name): row
                                       for row, p in enumerate(specs)}
        return found

    def _binding(self, item: Any, index: int) -> tuple[Pod, int]:
        """One ``bind`` item as (pod, node row), checked."""
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
            pod, node_name = as_pod(item[0], f"pods[{index}][0]"), item[1]
            if pod.node_name and pod.node_name != node_name:
                raise InvalidObjectError(f"pod {pod.key}", "", (
                    f"pod {pod.name} is already assigned to node {go_quote(pod.node_name)}"))
        else:
            pod = as_pod(item, f"pods[{index}]")
            node_name = pod.node_name
            if not node_name:
                raise InvalidObjectError(f"pod {pod.key}", "spec.nodeName", (
                    "Required value: a pod to bind needs spec.nodeName or a (pod, node name) "
                    "pair"))
        if pod.deleting:
            raise InvalidObjectError(f"pod {pod.key}", "", (
                f"pod {pod.name} is being deleted, cannot be assigned to a host"))
        if pod.terminal:
            raise InvalidObjectError(f"pod {pod.key}", "status.phase", (
                f"a {pod.phase} pod holds no node and cannot be bound"))
        if node_name not in self.node_index:
            raise InvalidObjectError(f"pod {pod.key}", "spec.nodeName",
                                     f'node "{node_name}" not found')
        return pod, int(self.node_index[node_name])

    def widened_for(self, pods: Iterable[Pod]) -> ClusterState:
        """:meth:`widened` with the resources and host ports ``pods`` use (the columns a
        state needs before they are bound to it)."""
        pods = list(pods)  # replicas share their containers: each distinct list read once
        specs = list({(id(p.containers), id(p.init_containers)): p for p in pods}.values())
        if not specs:
            return self
        overheads = {id(p.overhead): p.overhead for p in pods}.values()
        resources = {name for pod in specs for c in pod.containers + pod.init_containers
                     for name in c.requests.keys()} | {n for o in overheads for n in o.keys()}
        ports = {p for pod in specs for p in host_ports(pod)}
        return self.widened(resources=sorted(resources), ports=sorted(ports))

    # ------------------------------------------------------------------ construction

    @property
    def storage(self) -> StorageObjects:
        """The PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers and
        CSIStorageCapacities, with their lookups (``storage.claim(namespace, name)``, ...).
        Kept in :attr:`objects`, so every state built from this one's objects has them."""
        return self.objects.get("storage", EMPTY_STORAGE)

    def with_storage(self, storage: StorageObjects) -> ClusterState:
        """A copy holding ``storage`` (the volume binder's assumed bindings, say); the pods
        and columns are shared."""
        return attrs.evolve(self, objects=_with_storage(self.objects, storage))

    @classmethod
    def from_records(cls, nodes: Sequence[Node], pods: Sequence[Pod] = (),
                     namespaces: Mapping[str, Mapping[str, str]] | None = None,
                     objects: Mapping[str, Any] | None = None,
                     extra_resources: Iterable[str] = (),
                     extra_ports: Iterable[tuple[str, str, int]] = (), *,
                     storage: StorageObjects | None = None) -> ClusterState:
        """Build the columns from node and pod records; ``storage`` (or ``objects["storage"]``)
        holds the cluster's storage objects (:attr:`storage`).

        Pods without ``nodeName`` and terminal pods are left out; a pod naming a node that is not
        in ``nodes`` is an error, as are a duplicate node name and two bound pods with one
        namespace/name.
        """
        node_index: dict[str, int] = {}
        for i, node in enumerate(nodes):
            if node.name in node_index:
                raise InvalidObjectError(f"node {node.name}", "metadata.name",
                                         "duplicate node name")
            node_index[node.name] = i
        bound = checked_bound_pods(pods, node_index)
        resource_names = resource_name_list(nodes, bound, extra_resources)
        vocab = Vocab()
        state = dict(
            nodes=tuple(nodes), node_names=tuple(node_index), pods=tuple(bound),
            namespaces=FrozenDict(namespaces or {}),
            vocab=vocab, node_index=FrozenDict(node_index), resource_names=resource_names,
            objects=_with_storage(objects, storage),
            unschedulable=np.array([n.unschedulable for n in nodes], dtype=np.bool_),
            tree_order=(order := node_tree_order(nodes)),
            tree_position=np.argsort(order),
            pod_node=np.array([node_index[p.node_name] for p in bound], dtype=np.int64),
            affinity_pods=tuple(i for i, p in enumerate(bound) if p.has_pod_affinity),
        )
        state.update(resource_columns(nodes, bound, node_index, resource_names))
        state.update(label_columns(nodes, vocab))
        state.update(taint_columns(nodes, vocab))
        state.update(image_columns(nodes))
        state.update(port_columns(len(nodes), bound, node_index, extra_ports))
        state.update(node_classes(state))
        _readonly(*(v for v in state.values() if isinstance(v, np.ndarray)))
        return cls(**state)

    @classmethod
    def from_objects(cls, objects: Objects) -> ClusterState:
        """The cluster of parsed objects (:func:`ksched.io.read_objects`): nodes, the pods
        bound to them, namespaces, workloads, storage objects, and the PriorityClasses and
        PodDisruptionBudgets (``objects["priority_classes"]`` / ``["pdbs"]`` when there are
        any: pending pods are admitted with the former, preemption respects the latter)."""
        dra = objects.dra
        policy = {key: found for key, found in (("priority_classes", objects.priority_classes),
                                                ("pdbs", objects.pod_disruption_budgets))
                  if found}
        return cls.from_records(
            objects.nodes, objects.bound_pods,
            namespaces={ns.name: ns.labels for ns in objects.namespaces},
            objects={"workloads": objects.workloads, **({"dra": dra} if dra else {}), **policy},
            storage=objects.storage)

    @classmethod
    def from_node_templates(cls, templates: Sequence[tuple[Node, int]],
                            pods: Sequence[Pod] = (),
                            namespaces: Mapping[str, Mapping[str, str]] | None = None,
                            objects: Mapping[str, Any] | None = None, *,
                            storage: StorageObjects | None = None) -> ClusterState:
        """A fleet built from ``(node template, count)`` pairs, with no Python object per node.

        Node ``k`` of template ``t`` is named ``<t.name>-<k>``; a template's hostname label
        takes each node's name. Columns are the template's, repeated; ``pods`` may be bound
        to the generated names. At most :data:`ksched.limits.MAX_NODES` (1,000,000) nodes in
        all: larger counts are refused with an ``ArgumentError``.

        Examples
        --------
        >>> from ksched import Node
        >>> fleet = ClusterState.from_node_templates(
        ...     [(Node("m5", allocatable={"cpu": 2000, "pods": 110}), 3)])
        >>> list(fleet.node_names), int(fleet.allocatable[:, 0].sum())
        (['m5-0', 'm5-1', 'm5-2'], 6000)
        """
        _check_templates(templates)
        names_seen = [t.name for t, _ in templates]
        if len(set(names_seen)) != len(names_seen):
            raise InvalidObjectError("node template", "metadata.name", "duplicate template name")
        base = cls.from_records([t for t, _ in templates], (), extra_resources=[
            name for pod in pods for c in pod.containers + pod.init_containers
            for name in c.requests])
        counts = np.array([count for _, count in templates], dtype=np.int64)
        rows = np.repeat(np.arange(len(templates)), counts)
        names = GeneratedNames([(f"{t.name}-", count) for t, count in templates])
        vocab = base.vocab
        labels = base.labels[rows]
        hostname = base.label_column(LABEL_HOSTNAME)
        if hostname >= 0:
            first = vocab.add_generated(names)
            has = labels[:, hostname] != ABSENT
            labels[has, hostname] = first + np.flatnonzero(has)
        taint_indptr, taint_at = gather_csr(base.taint_indptr, rows)
        image_indptr, image_at = gather_csr(base.image_indptr, rows)
        per_template_images = np.zeros_like(base.image_num_nodes)
        np.add.at(per_template_images, base.image_ids,
                  np.repeat(counts, np.diff(base.image_indptr)))
        zones: dict[str, int] = {}
        template_zone = np.array([zones.setdefault(zone_key(t.labels), len(zones))
                                  for t, _ in templates], dtype=np.int64)
        order = interleave_zones(template_zone[rows])
        node_index = NameIndex(names)
        bound = checked_bound_pods(pods, node_index)
        state = dict(
            nodes=NodeTable([t for t, _ in templates], rows, names), node_names=names,
            pods=tuple(bound), namespaces=FrozenDict(namespaces or {}), vocab=vocab,
            node_index=node_index, resource_names=base.resource_names,
            unschedulable=base.unschedulable[rows], label_keys=base.label_keys,
            labels=labels, label_ints=base.label_ints[rows],
            label_int_ok=base.label_int_ok[rows], taint_indptr=taint_indptr,
            taint_keys=base.taint_keys[taint_at], taint_values=base.taint_values[taint_at],
            taint_effects=base.taint_effects[taint_at], image_index=base.image_index,
            image_indptr=image_indptr, image_ids=base.image_ids[image_at],
            image_sizes=base.image_sizes, image_num_nodes=per_template_images,
            tree_order=order, tree_position=np.argsort(order),
            objects=_with_storage(objects, storage),
            pod_node=np.array([node_index[p.node_name] for p in bound], dtype=np.int64),
            affinity_pods=tuple(i for i, p in enumerate(bound) if p.has_pod_affinity),
        )
        resources = resource_columns([], bound, node_index, base.resource_names,
                                      num_nodes=len(names))
        resources["allocatable"] = base.allocatable[rows]
        state.update(resources)
        state.update(port_columns(len(names), bound, node_index, ()))
        template_classes = node_classes({name: getattr(base, name) for name in CLASS_COLUMNS})
        state["node_class"] = template_classes["node_class"][rows]
        first_row = np.concatenate([[0], np.cumsum(counts)[:-1]])
        occupied = counts > 0
        reps = np.full(len(template_classes["class_nodes"]), -1, dtype=np.int64)
        for t in np.flatnonzero(occupied)[::-1]:
            reps[template_classes["node_class"][t]] = first_row[t]
        state["class_nodes"] = reps
        _readonly(*(v for v in state.values() if isinstance(v, np.ndarray)))
        return cls(**state)

    def widened(self, resources: Iterable[str] = (),
                ports: Iterable[tuple[str, str, int]] = ()) -> ClusterState:
        """A copy with zero columns added for resources and host ports it lacks."""
        new_resources = [r for r in dict.fromkeys(resources)
                         if r not in self.resource_names and is_tracked_resource(r)]
        new_ports = [p for p in dict.fromkeys(ports) if p not in self.port_keys]
        if not new_resources and not new_ports:
            return self
        n = self.num_nodes
        pad = np.zeros((n, len(new_resources)), dtype=np.int64)
        allocatable = np.hstack([self.allocatable, pad])
        requested = np.hstack([self.requested, pad])
        port_count = np.hstack([self.port_count, np.zeros((n, len(new_ports)), dtype=np.int32)])
        _readonly(allocatable, requested, port_count)
        return attrs.evolve(self, resource_names=self.resource_names + tuple(new_resources),
                            allocatable=allocatable, requested=requested,
                            port_keys=self.port_keys + tuple(new_ports), port_count=port_count)


__all__ = ["ABSENT", "CPU", "EPHEMERAL_STORAGE", "MEMORY", "PODS", "PROTOCOL_CODES",
           "TAINT_EFFECT_CODES", "UNKNOWN", "WILDCARD_IP", "BoundPods", "ClusterState", "Vocab",
           "check_unique", "host_ports", "node_tree_order", "parse_go_int", "pod_specs",
           "zone_key"]

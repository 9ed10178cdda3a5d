"""The columnar cluster: nodes and the pods bound to them, as numpy arrays.

A :class:`ClusterState` is what kube-scheduler's snapshot holds (``NodeInfo`` per node), laid out
by column so that a Filter is a mask over nodes and a Score a vector. Strings are interned to
integer ids once, here; kernels only compare integers. A state is immutable: its arrays are
read-only, and scheduling returns a new state.
"""

from __future__ import annotations

import numbers
import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import FrozenDict, Node, Pod
from ksched.constants import (
    BASE_RESOURCES,
    CPU,
    EPHEMERAL_STORAGE,
    LABEL_HOSTNAME,
    LABEL_REGION,
    LABEL_REGION_BETA,
    LABEL_ZONE,
    LABEL_ZONE_BETA,
    MEMORY,
    PODS,
)
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.node_table import GeneratedNames, LazySequence, NameIndex, NodeTable, gather_csr
from ksched.resources import is_tracked_resource, node_info_non_zero, pod_requests
from ksched.validation import go_quote

#: Label value id for "this node has no such label".
ABSENT = -1
#: Id of a string that no node carries (never equal to a node's value).
UNKNOWN = -2

TAINT_EFFECT_CODES = {"NoSchedule": 0, "PreferNoSchedule": 1, "NoExecute": 2}
NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE = 0, 1, 2
PROTOCOL_CODES = {"TCP": 0, "UDP": 1, "SCTP": 2}
WILDCARD_IP = "0.0.0.0"

_GO_INT = re.compile(r"[+-]?[0-9]+\Z")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def parse_go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: the integer, or ``None`` when Go would fail."""
    if not _GO_INT.match(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


class Vocab:
    """Interns strings to dense int32 ids. Built once per state, never grown afterwards."""

    def __init__(self, strings: Iterable[str] = ()) -> None:
        self._ids: dict[str, int] = {}
        self.strings: list[str] = []
        self._generated: list[tuple[int, GeneratedNames]] = []
        self._size = 0
        for s in strings:
            self.add(s)

    def add(self, text: str) -> int:
        found = self._ids.get(text)
        if found is None:
            if self._generated:
                raise RuntimeError("a vocabulary with generated names is complete")
            found = self._ids[text] = len(self.strings)
            self.strings.append(text)
        return found

    def get(self, text: str) -> int:
        """The id of ``text``, or :data:`UNKNOWN` when no interned object uses it."""
        found = self._ids.get(text)
        if found is not None:
            return found
        for base, names in self._generated:
            row = names.row_of(text)
            if row is not None:
                return base + row
        return UNKNOWN

    def add_generated(self, names: GeneratedNames) -> int:
        """Reserve one id per generated name (without storing the strings); returns the first."""
        base = len(self)
        self._generated.append((base, names))
        self._size += len(names)
        return base

    def __len__(self) -> int:
        return len(self.strings) + self._size


def host_ports(pod: Pod) -> list[tuple[str, str, int]]:
    """``schedutil.GetHostPorts``: sidecar init containers first, then app containers.

    Each entry is ``(hostIP, protocol, hostPort)`` sanitised as ``HostPortInfo`` does: an empty
    IP is ``0.0.0.0`` and ports <= 0 are dropped.
    """
    out = []
    for c in [c for c in pod.init_containers if c.is_sidecar] + list(pod.containers):
        for p in c.ports:
            if p.host_port > 0:
                out.append((p.host_ip or WILDCARD_IP, p.protocol or "TCP", p.host_port))
    return out


def zone_key(labels: Mapping[str, str]) -> str:
    """``utilnode.GetZoneKey``: region and zone (beta labels first); ``""`` for neither."""
    zone = labels.get(LABEL_ZONE_BETA, labels.get(LABEL_ZONE, ""))
    region = labels.get(LABEL_REGION_BETA, labels.get(LABEL_REGION, ""))
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


def node_tree_order(nodes: Sequence[Node]) -> npt.NDArray[np.int64]:
    """The snapshot's node list order (``backend/cache/node_tree.go``).

    Nodes are grouped by zone key (zones in first-seen order, nodes in input order) and the list
    takes one node from each zone in turn.
    """
    zones: dict[str, int] = {}
    zone_of = np.array([zones.setdefault(zone_key(n.labels), len(zones)) for n in nodes],
                       dtype=np.int64)
    return interleave_zones(zone_of)


def interleave_zones(zone_of: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Round-robin over zones (numbered in first-seen order), input order within each zone."""
    if len(zone_of) == 0:
        return np.zeros(0, dtype=np.int64)
    by_zone = np.argsort(zone_of, kind="stable")
    sizes = np.bincount(zone_of)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    depth = np.empty(len(zone_of), dtype=np.int64)
    depth[by_zone] = np.arange(len(zone_of)) - np.repeat(starts, sizes)
    return np.argsort(depth * len(sizes) + zone_of, kind="stable")


class BoundPods(LazySequence):
    """The bound pods of a state: an append-only log, read through a fixed-length view.

    Pods placed during a batch are logged as ``(pod, node name)`` and get their bound record
    (``spec.nodeName`` set) the first time they are read, so placing a pod costs no copy.
    """

    __slots__ = ("_log", "_length")

    def __init__(self, log: list, length: int | None = None) -> None:
        self._log = log
        self._length = len(log) if length is None else length

    def __len__(self) -> int:
        return self._length

    def _item(self, index: int) -> Pod:
        item = self._log[index]
        if type(item) is tuple:
            pod, node_name = item
            item = self._log[index] = attrs.evolve(pod, node_name=node_name)
        return item

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"BoundPods({self._length} pods)"

    def specs(self, start: int, stop: int) -> list[Pod]:
        """Pods ``start..stop`` as recorded, without making their bound copies (their labels,
        namespace and spec are those of the bound pods; only ``spec.nodeName`` may be unset)."""
        return [item[0] if type(item) is tuple else item for item in self._log[start:stop]]


def pod_specs(pods: Sequence[Pod], start: int, stop: int) -> Sequence[Pod]:
    """``pods[start:stop]``, cheaply when ``pods`` is a :class:`BoundPods` log."""
    return pods.specs(start, stop) if isinstance(pods, BoundPods) else pods[start:stop]


def check_unique(pods: Sequence[Pod]) -> None:
    """Refuse two pods with one namespace/name, in the API server's words
    (``pod default/web-1: metadata.name: Duplicate value: "web-1"``). Names are compared
    first (one set of strings); keys only when two names collide."""
    if len({p.name for p in pods}) == len(pods):
        return
    seen: set[tuple[str, str]] = set()
    for pod in pods:
        key = (pod.namespace, pod.name)
        if key in seen:
            raise InvalidObjectError(f"pod {pod.key}", "metadata.name",
                                     f"Duplicate value: {go_quote(pod.name)}")
        seen.add(key)


def _bound_pods(pods: Iterable[Pod], node_index: Mapping[str, int]) -> list[Pod]:
    """The pods that hold a node (``spec.nodeName`` set, not terminal), checked: each names a
    known node, and no two share a namespace/name."""
    bound = [p for p in pods if p.node_name and not p.terminal]
    for p in bound:
        if p.node_name not in node_index:
            raise InvalidObjectError(f"pod {p.key}", "spec.nodeName",
                                     f'node "{p.node_name}" not found')
    check_unique(bound)
    return bound


def _bindings(pods: Any) -> Iterable[Any]:
    """``ClusterState.bind``'s argument as items: one pod, one (pod, node name) pair, or an
    iterable of them."""
    from ksched.io import is_client_model

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
    """``from_node_templates``' argument: (Node, count >= 0) pairs."""
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
        if not _is_index(count, 2**62):
            raise ArgumentError(f"templates[{i}]: count: expected an integer >= 0, "
                                f"got {count!r}")


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
    #: Objects other plugins read (services, replica sets, ...), by kind.
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
        ``(pod, node name)`` pair (a pod as :func:`ksched.inputs.as_pod` takes it); the same
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
        from ksched.inputs import as_pod

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
        pods = list(pods)
        if not pods:
            return self
        resources = {name for pod in pods for c in pod.containers + pod.init_containers
                     for name in c.requests} | {name for pod in pods for name in pod.overhead}
        ports = {p for pod in pods for p in host_ports(pod)}
        return self.widened(resources=sorted(resources), ports=sorted(ports))

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_records(cls, nodes: Sequence[Node], pods: Sequence[Pod] = (),
                     namespaces: Mapping[str, Mapping[str, str]] | None = None,
                     objects: Mapping[str, tuple] | None = None,
                     extra_resources: Iterable[str] = (),
                     extra_ports: Iterable[tuple[str, str, int]] = ()) -> ClusterState:
        """Build the columns from node and pod records.

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
        bound = _bound_pods(pods, node_index)
        resource_names = _resource_names(nodes, bound, extra_resources)
        vocab = Vocab()
        state = dict(
            nodes=tuple(nodes), node_names=tuple(node_index), pods=tuple(bound),
            namespaces=FrozenDict(namespaces or {}),
            vocab=vocab, node_index=FrozenDict(node_index), resource_names=resource_names,
            objects=FrozenDict(objects or {}),
            unschedulable=np.array([n.unschedulable for n in nodes], dtype=np.bool_),
            tree_order=(order := node_tree_order(nodes)),
            tree_position=np.argsort(order),
            pod_node=np.array([node_index[p.node_name] for p in bound], dtype=np.int64),
            affinity_pods=tuple(i for i, p in enumerate(bound) if p.has_pod_affinity),
        )
        state.update(_resource_columns(nodes, bound, node_index, resource_names))
        state.update(_label_columns(nodes, vocab))
        state.update(_taint_columns(nodes, vocab))
        state.update(_image_columns(nodes))
        state.update(_port_columns(len(nodes), bound, node_index, extra_ports))
        state.update(_node_classes(state))
        _readonly(*(v for v in state.values() if isinstance(v, np.ndarray)))
        return cls(**state)

    @classmethod
    def from_node_templates(cls, templates: Sequence[tuple[Node, int]],
                            pods: Sequence[Pod] = (),
                            namespaces: Mapping[str, Mapping[str, str]] | None = None,
                            objects: Mapping[str, tuple] | None = None) -> ClusterState:
        """A fleet built from ``(node template, count)`` pairs, with no Python object per node.

        Node ``k`` of template ``t`` is named ``<t.name>-<k>``; a template's hostname label
        takes each node's name. Columns are the template's, repeated; ``pods`` may be bound
        to the generated names.

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
        bound = _bound_pods(pods, node_index)
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
            tree_order=order, tree_position=np.argsort(order), objects=FrozenDict(objects or {}),
            pod_node=np.array([node_index[p.node_name] for p in bound], dtype=np.int64),
            affinity_pods=tuple(i for i, p in enumerate(bound) if p.has_pod_affinity),
        )
        resources = _resource_columns([], bound, node_index, base.resource_names,
                                      num_nodes=len(names))
        resources["allocatable"] = base.allocatable[rows]
        state.update(resources)
        state.update(_port_columns(len(names), bound, node_index, ()))
        template_classes = _node_classes({name: getattr(base, name) for name in _CLASS_COLUMNS})
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


_CLASS_COLUMNS = ("labels", "label_keys", "taint_indptr", "taint_keys", "taint_values",
                  "taint_effects", "image_indptr", "image_ids", "unschedulable")


def _node_classes(columns: Mapping[str, object]) -> dict[str, np.ndarray]:
    """Group nodes whose static attributes match (labels other than the hostname, taints,
    images, cordon): static filters and scores are then judged once per group."""
    labels = np.asarray(columns["labels"])
    hostname = columns["label_keys"].get(LABEL_HOSTNAME, -1)
    if hostname >= 0:
        labels = np.delete(labels, hostname, axis=1)
    rows = np.ascontiguousarray(labels).view(np.dtype((np.void, labels.dtype.itemsize
                                                       * max(labels.shape[1], 1))))
    if labels.shape[1] == 0:
        rows = np.zeros(len(labels), dtype=np.int8)
    taint_indptr, image_indptr = columns["taint_indptr"], columns["image_indptr"]
    keys, values, effects = (columns["taint_keys"], columns["taint_values"],
                             columns["taint_effects"])
    image_ids, unschedulable = columns["image_ids"], columns["unschedulable"]
    classes: dict[tuple, int] = {}
    node_class = np.empty(len(labels), dtype=np.int64)
    for i in range(len(labels)):
        t0, t1 = taint_indptr[i], taint_indptr[i + 1]
        key = (rows[i].tobytes(), keys[t0:t1].tobytes(), values[t0:t1].tobytes(),
               effects[t0:t1].tobytes(),
               image_ids[image_indptr[i]:image_indptr[i + 1]].tobytes(), bool(unschedulable[i]))
        node_class[i] = classes.setdefault(key, len(classes))
    class_nodes = np.full(len(classes), -1, dtype=np.int64)
    class_nodes[node_class[::-1]] = np.arange(len(labels) - 1, -1, -1)
    return dict(node_class=node_class, class_nodes=class_nodes)


def _resource_names(nodes: Sequence[Node], pods: Sequence[Pod],
                    extra: Iterable[str]) -> tuple[str, ...]:
    names = dict.fromkeys(BASE_RESOURCES)
    for node in nodes:
        names.update(dict.fromkeys(node.allocatable))
    seen: set[int] = set()  # container tuples are shared by the pods of one controller
    for pod in pods:
        for part in (pod.containers, pod.init_containers):
            if id(part) not in seen:
                seen.add(id(part))
                for c in part:
                    names.update(dict.fromkeys(c.requests))
        names.update(dict.fromkeys(pod.overhead))
    names.update(dict.fromkeys(extra))
    return tuple(n for n in names if is_tracked_resource(n))


def _resource_columns(nodes: Sequence[Node], pods: Sequence[Pod], node_index: Mapping[str, int],
                      resource_names: tuple[str, ...],
                      num_nodes: int | None = None) -> dict[str, np.ndarray]:
    col = {name: j for j, name in enumerate(resource_names)}
    n, r = len(nodes) if num_nodes is None else num_nodes, len(resource_names)
    allocatable = np.zeros((n, r), dtype=np.int64)
    for i, node in enumerate(nodes):
        for name, amount in node.allocatable.items():
            if name in col:
                allocatable[i, col[name]] = amount
    requested = np.zeros((n, r), dtype=np.int64)
    nonzero = np.zeros((n, 2), dtype=np.int64)
    rows = np.fromiter((node_index[pod.node_name] for pod in pods), np.int64, len(pods))
    shape, shapes = _request_shapes(pods)
    per_shape = np.zeros((len(shapes), r + 2), dtype=np.int64)
    for k, pod in enumerate(shapes):
        requests = pod_requests(pod)
        for name, amount in requests.items():
            if name in col and name != PODS:
                per_shape[k, col[name]] += amount
        per_shape[k, col[PODS]] = 1
        per_shape[k, r:] = node_info_non_zero(pod, requests)
    np.add.at(requested, rows, per_shape[shape, :r])
    np.add.at(nonzero, rows, per_shape[shape, r:])
    return dict(allocatable=allocatable, requested=requested, nonzero_requested=nonzero)


def _request_shapes(pods: Sequence[Pod]) -> tuple[np.ndarray, list[Pod]]:
    """Each pod's request shape and a pod of each shape: pods whose containers, init
    containers, pod-level requests and overhead are the same objects request the same (the
    pods of one controller share their interned container tuples), so ``pod_requests`` runs
    once per shape. Loading-time only: ``id`` keys hold while ``pods`` lives."""
    index: dict[tuple[int, ...], int] = {}
    shapes: list[Pod] = []
    shape = np.empty(len(pods), dtype=np.int64)
    for k, pod in enumerate(pods):
        key = (id(pod.containers), id(pod.init_containers), id(pod.pod_requests),
               id(pod.overhead) if pod.overhead else 0)
        found = index.get(key)
        if found is None:
            found = index[key] = len(shapes)
            shapes.append(pod)
        shape[k] = found
    return shape, shapes


def _label_columns(nodes: Sequence[Node], vocab: Vocab) -> dict[str, object]:
    keys: dict[str, int] = {}
    for node in nodes:
        for key in node.labels:
            keys.setdefault(key, len(keys))
    labels = np.full((len(nodes), len(keys)), ABSENT, dtype=np.int32)
    ints = np.zeros((len(nodes), len(keys)), dtype=np.int64)
    int_ok = np.zeros((len(nodes), len(keys)), dtype=np.bool_)
    for i, node in enumerate(nodes):
        for key, value in node.labels.items():
            k = keys[key]
            labels[i, k] = vocab.add(value)
            parsed = parse_go_int(value)
            if parsed is not None:
                ints[i, k], int_ok[i, k] = parsed, True
    return dict(label_keys=FrozenDict(keys), labels=labels, label_ints=ints, label_int_ok=int_ok)


def _taint_columns(nodes: Sequence[Node], vocab: Vocab) -> dict[str, np.ndarray]:
    indptr = np.zeros(len(nodes) + 1, dtype=np.int64)
    keys, values, effects = [], [], []
    for i, node in enumerate(nodes):
        for taint in node.taints:
            keys.append(vocab.add(taint.key))
            values.append(vocab.add(taint.value))
            effects.append(TAINT_EFFECT_CODES[taint.effect])
        indptr[i + 1] = len(keys)
    return dict(taint_indptr=indptr, taint_keys=np.array(keys, dtype=np.int32),
                taint_values=np.array(values, dtype=np.int32),
                taint_effects=np.array(effects, dtype=np.int8))


def _image_columns(nodes: Sequence[Node]) -> dict[str, object]:
    """Node images keyed by every listed name; a name's size is the first node's (cache.go)."""
    index: dict[str, int] = {}
    sizes: list[int] = []
    num_nodes: list[int] = []
    indptr = np.zeros(len(nodes) + 1, dtype=np.int64)
    ids: list[int] = []
    for i, node in enumerate(nodes):
        seen: set[int] = set()
        for image in node.images:
            for name in image.names:
                if name not in index:
                    index[name] = len(sizes)
                    sizes.append(image.size_bytes)
                    num_nodes.append(0)
                image_id = index[name]
                if image_id not in seen:
                    seen.add(image_id)
                    num_nodes[image_id] += 1
                    ids.append(image_id)
        indptr[i + 1] = len(ids)
    return dict(image_index=FrozenDict(index), image_indptr=indptr,
                image_ids=np.array(ids, dtype=np.int32),
                image_sizes=np.array(sizes, dtype=np.int64),
                image_num_nodes=np.array(num_nodes, dtype=np.int64))


def _port_columns(num_nodes: int, pods: Sequence[Pod], node_index: Mapping[str, int],
                  extra: Iterable[tuple[str, str, int]]) -> dict[str, object]:
    keys: dict[tuple[str, str, int], int] = {}
    per_pod = []
    of_containers: dict[tuple[int, int], set] = {}  # shared container tuples: once each
    for pod in pods:
        key = (id(pod.containers), id(pod.init_containers))
        ports = of_containers.get(key)
        if ports is None:
            ports = of_containers[key] = set(host_ports(pod))
        per_pod.append(ports)
        for p in sorted(ports):
            keys.setdefault(p, len(keys))
    for p in extra:
        keys.setdefault(p, len(keys))
    count = np.zeros((num_nodes, len(keys)), dtype=np.int32)
    for pod, ports in zip(pods, per_pod):
        for p in ports:
            count[node_index[pod.node_name], keys[p]] += 1
    return dict(port_keys=tuple(keys), port_count=count)


__all__ = ["ClusterState", "Vocab", "check_unique", "host_ports", "node_tree_order", "zone_key",
           "parse_go_int", "ABSENT", "UNKNOWN", "CPU", "MEMORY", "EPHEMERAL_STORAGE", "PODS"]

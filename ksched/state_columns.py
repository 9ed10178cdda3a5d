"""The columns of a :class:`~ksched.state.ClusterState`, built from node and pod records: what
each ``NodeInfo`` holds (``pkg/scheduler/framework/types.go``: ``Allocatable``, ``Requested``,
``NonZeroRequested``, ``UsedPorts``, ``ImageStates``), node labels and taints interned to
integer ids (:class:`Vocab`), and the node classes the fused loop judges once each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ksched.api import PROTOCOLS, FrozenDict, Node, Pod
from ksched.constants import BASE_RESOURCES, LABEL_HOSTNAME, PODS
from ksched.kernels.taint_toleration import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE
from ksched.node_table import GeneratedNames
from ksched.resources import is_tracked_resource, node_info_non_zero, pod_requests
from ksched.validation import parse_go_int

__all__ = ["ABSENT", "CLASS_COLUMNS", "PROTOCOL_CODES", "TAINT_EFFECT_CODES", "UNKNOWN",
           "WILDCARD_IP", "Vocab", "host_ports", "image_columns", "label_columns",
           "node_classes", "port_columns", "resource_columns", "resource_name_list",
           "taint_columns"]

#: Label value id for "this node has no such label".
ABSENT = -1
#: Id of a string that no node carries (never equal to a node's value).
UNKNOWN = -2

#: Taint effect -> the code the kernels compare (``kernels/taint_toleration.py`` defines them).
TAINT_EFFECT_CODES = {"NoSchedule": NO_SCHEDULE, "PreferNoSchedule": PREFER_NO_SCHEDULE,
                      "NoExecute": NO_EXECUTE}
PROTOCOL_CODES = {protocol: code for code, protocol in enumerate(PROTOCOLS)}
WILDCARD_IP = "0.0.0.0"


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


CLASS_COLUMNS = ("labels", "label_keys", "taint_indptr", "taint_keys", "taint_values",
                  "taint_effects", "image_indptr", "image_ids", "unschedulable")


def node_classes(columns: Mapping[str, object]) -> dict[str, np.ndarray]:
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


def resource_name_list(nodes: Sequence[Node], pods: Sequence[Pod],
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


def resource_columns(nodes: Sequence[Node], pods: Sequence[Pod], node_index: Mapping[str, int],
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


def label_columns(nodes: Sequence[Node], vocab: Vocab) -> dict[str, object]:
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


def taint_columns(nodes: Sequence[Node], vocab: Vocab) -> dict[str, np.ndarray]:
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


def image_columns(nodes: Sequence[Node]) -> dict[str, object]:
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


def port_columns(num_nodes: int, pods: Sequence[Pod], node_index: Mapping[str, int],
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

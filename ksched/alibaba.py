"""Alibaba's public GPU cluster trace (cluster-trace-gpu-v2023, "openb") as a ksched workload.

The trace comes as two CSV files, published in the ``alibaba/clusterdata`` repository (folder
``cluster-trace-gpu-v2023/csv``) with the USENIX ATC 2023 paper "Beware of Fragmentation:
Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent" (Weng et al.); cite it
with results made from it. ksched ships no copy: :func:`load_gpu_trace` reads the folder a user
downloaded them to.

- ``openb_node_list_all_node.csv``: ``sn`` (node name), ``cpu_milli``, ``memory_mib``, ``gpu``
  (GPU count), ``model`` (GPU model; empty on CPU-only nodes).
- ``openb_pod_list_gpuspec33.csv`` (or another pod list of the trace): ``name``,
  ``cpu_milli``, ``memory_mib``, ``num_gpu``, ``gpu_milli``, ``gpu_spec`` (allowed GPU models,
  ``A|B``; empty: any), ``qos`` (LS, Guaranteed, Burstable, BE), ``pod_phase``,
  ``creation_time``, ``deletion_time``, ``scheduled_time`` (seconds; empty: never scheduled).

The conversion (the one this project's measurements use):

- Nodes: ``cpu``, ``memory``, ``pods: 110`` and ``nvidia.com/gpu`` (an extended resource);
  GPU nodes carry ``nvidia.com/gpu.product=<model>``; ``topology.kubernetes.io/zone`` is
  zone-a, zone-b, zone-c round-robin within each node shape (cpu, memory, GPUs, model); no
  taints.
- Pods, in creation order, all pending: requests = limits for cpu and memory;
  ``nvidia.com/gpu`` = ``num_gpu`` (a GPU-sharing pod, ``gpu_milli`` < 1000, asks for one whole
  GPU: stock Kubernetes cannot share a device-plugin GPU); a ``gpu_spec`` of one model becomes
  a ``nodeSelector`` on ``nvidia.com/gpu.product``, of several a required node affinity ``In``
  them; ``qos`` becomes a PriorityClass (LS and Guaranteed 1000, Burstable 500, BE 0).
- Timeline (:func:`gpu_trace_timeline`): each pod is created at ``creation_time`` and runs for
  ``deletion_time - scheduled_time``; a pod the trace never scheduled is deleted at its
  ``deletion_time`` instead.

A malformed file is refused with an :class:`~ksched.errors.InvalidObjectError` naming the
file, the line and the column.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from ksched.api import (
    Container,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PriorityClass,
)
from ksched.constants import CPU, LABEL_HOSTNAME, MEMORY, PODS
from ksched.errors import ArgumentError, InvalidObjectError, KschedError
from ksched.io import admit_priorities
from ksched.state import ClusterState
from ksched.timeline import Event

NODE_LIST = "openb_node_list_all_node.csv"
POD_LIST = "openb_pod_list_gpuspec33.csv"
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
               "creation_time", "deletion_time", "scheduled_time")
GPU = "nvidia.com/gpu"
GPU_PRODUCT = "nvidia.com/gpu.product"
ZONE = "topology.kubernetes.io/zone"
ZONES = ("zone-a", "zone-b", "zone-c")
MIB = 1024**2
PODS_PER_NODE = 110
#: The PriorityClass each ``qos`` value becomes.
PRIORITY_CLASSES = {"LS": PriorityClass("qos-ls", 1000),
                    "Guaranteed": PriorityClass("qos-guaranteed", 1000),
                    "Burstable": PriorityClass("qos-burstable", 500),
                    "BE": PriorityClass("qos-be", 0)}
NAMESPACE = "default"


@attrs.frozen(eq=False)
class GpuTrace:
    """The trace as ksched objects (see the module's docstring for the conversion).

    Attributes
    ----------
    cluster : the trace's nodes, no pod running.
    pods : the pending pods in creation order, their priorities admitted from
        :attr:`priority_classes` (``schedule_batch`` takes them as they are).
    priority_classes : one per ``qos`` value.
    created, deleted : each pod's ``creation_time`` and ``deletion_time`` (seconds).
    scheduled : each pod's ``scheduled_time``, ``None`` for a pod the trace never scheduled.
    """

    cluster: ClusterState
    pods: tuple[Pod, ...]
    priority_classes: tuple[PriorityClass, ...]
    created: tuple[float, ...]
    deleted: tuple[float, ...]
    scheduled: tuple[float | None, ...]

    def head(self, count: int) -> GpuTrace:
        """The same cluster with only the first ``count`` pods (smoke runs, warm-up)."""
        return attrs.evolve(self, pods=self.pods[:count], created=self.created[:count],
                            deleted=self.deleted[:count], scheduled=self.scheduled[:count])


def load_gpu_trace(folder: str | Path, pod_list: str = POD_LIST) -> GpuTrace:
    """Read the trace's node list and ``pod_list`` from ``folder`` and convert them.

    Parameters
    ----------
    folder : the folder holding ``openb_node_list_all_node.csv`` and ``pod_list``.
    pod_list : the pod list's file name (the trace has several; default: the one with a
        third of the GPU pods pinned to GPU models).

    Returns
    -------
    GpuTrace : the cluster, the pending pods and their PriorityClasses, and the pods' times.

    Raises
    ------
    ArgumentError : ``folder`` or a file is missing.
    InvalidObjectError : a malformed file, naming the file, the line and the column.

    Examples
    --------
    >>> import ksched
    >>> trace = load_gpu_trace("clusterdata/cluster-trace-gpu-v2023/csv")  # doctest: +SKIP
    >>> len(ksched.schedule_batch(trace.cluster, trace.pods).unschedulable)  # doctest: +SKIP
    1084
    """
    node_path, pod_path = trace_files(folder, pod_list)
    node_rows = list(_rows(node_path, NODE_COLUMNS))
    _refuse_duplicates(node_rows, "sn")
    nodes = _zoned([_node(row, where) for row, where in node_rows])
    rows = list(_rows(pod_path, POD_COLUMNS))
    _refuse_duplicates(rows, "name")
    times = [_times(row, where) for row, where in rows]
    order = sorted(range(len(rows)), key=lambda i: times[i][0])  # stable: file order on ties
    classes = tuple(PRIORITY_CLASSES.values())
    specs: dict[tuple, Pod] = {}
    pods = admit_priorities([_pod(*rows[i], specs) for i in order], classes)
    created, deleted, scheduled = ([times[i][k] for i in order] for k in range(3))
    return GpuTrace(ClusterState.from_records(nodes), pods, classes, tuple(created),
                    tuple(deleted), tuple(scheduled))


def trace_files(folder: str | Path, pod_list: str = POD_LIST) -> tuple[Path, Path]:
    """The paths of the node list and ``pod_list`` in ``folder``.

    Raises
    ------
    ArgumentError : ``folder`` is not a folder, or a file is missing from it.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ArgumentError(f"{folder}: not a folder (the one holding Alibaba's "
                            f"cluster-trace-gpu-v2023 CSVs, {NODE_LIST} and {POD_LIST})")
    paths = folder / NODE_LIST, folder / pod_list
    for path in paths:
        if not path.is_file():
            raise ArgumentError(f"{path}: no such file (the folder must hold {NODE_LIST} and "
                                f"{pod_list} of Alibaba's cluster-trace-gpu-v2023)")
    return paths


def gpu_trace_timeline(trace: GpuTrace) -> list[Event]:
    """The trace's timeline for the :class:`~ksched.simulator.Simulator`.

    Each pod is created at its creation time; a pod the trace scheduled runs for
    ``deletion_time - scheduled_time`` once bound, and one it never scheduled is deleted at its
    deletion time. Run it with ``Simulator(trace.cluster,
    priority_classes=trace.priority_classes)``.

    Returns
    -------
    list[Event] : one create per pod, in creation order, then the deletes in time order.
    """
    creates, deletes = [], []
    for pod, created, deleted, scheduled in zip(trace.pods, trace.created, trace.deleted,
                                                trace.scheduled):
        runs = None if scheduled is None else deleted - scheduled
        creates.append(Event(created, "create", pod=pod, duration=runs))
        if scheduled is None:
            deletes.append(Event(deleted, "delete", name=pod.key))
    return creates + sorted(deletes, key=lambda e: e.time)


# ---------------------------------------------------------------------------- reading the CSVs

@attrs.frozen
class _Where:
    """A row's place in its file, for error messages."""

    path: Path
    line: int
    header: tuple[str, ...]

    def error(self, column: str, problem: str) -> InvalidObjectError:
        number = self.header.index(column) + 1 if column in self.header else 0
        return InvalidObjectError(f"{self.path}: line {self.line}",
                                  f"column {number} ({column})" if number else "", problem)


def _rows(path: Path, columns: Sequence[str]) -> Iterator[tuple[dict[str, str], _Where]]:
    """Each data row of ``path`` as a dict, with its place; the header must name
    ``columns``."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        try:
            header = tuple(next(reader, ()))
            missing = [c for c in columns if c not in header]
            if missing:
                raise InvalidObjectError(f"{path}: line 1", "", f"missing column "
                                         f"{missing[0]!r} (the header has {list(header)})")
            for values in reader:
                where = _Where(path, reader.line_num, header)
                if len(values) != len(header):
                    raise where.error("", f"expected {len(header)} columns, got {len(values)}")
                yield dict(zip(header, values)), where
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InvalidObjectError(f"{path}: line {reader.line_num + 1}", "",
                                     f"cannot read: {exc}") from None


def _refuse_duplicates(rows: list[tuple[dict[str, str], _Where]], column: str) -> None:
    """Refuse a name (in ``column``) that an earlier row has."""
    first: dict[str, int] = {}
    for row, where in rows:
        name = row[column].strip()
        if name in first:
            raise where.error(column, f"duplicate name {name!r} (first on line {first[name]})")
        first[name] = where.line


def _integer(row: dict[str, str], column: str, where: _Where) -> int:
    """A count or amount: an integer >= 0."""
    text = row[column].strip()
    if not text.isdigit():
        raise where.error(column, f"must be an integer >= 0, got {row[column]!r}")
    return int(text)


def _time(row: dict[str, str], column: str, where: _Where) -> float:
    """Seconds: a finite number >= 0."""
    try:
        value = float(row[column])
    except ValueError:
        value = math.nan
    if not 0.0 <= value < math.inf:
        raise where.error(column, f"must be a number of seconds >= 0, got {row[column]!r}")
    return value


def _name(row: dict[str, str], column: str, where: _Where) -> str:
    name = row[column].strip()
    if not name:
        raise where.error(column, "must not be empty")
    return name


# ---------------------------------------------------------------------------- the conversion

def _node(row: dict[str, str], where: _Where) -> Node:
    name, model = _name(row, "sn", where), row["model"].strip()
    gpus = _integer(row, "gpu", where)
    allocatable = {CPU: _integer(row, "cpu_milli", where),
                   MEMORY: _integer(row, "memory_mib", where) * MIB, PODS: PODS_PER_NODE}
    if gpus:
        allocatable[GPU] = gpus
    labels = {LABEL_HOSTNAME: name}
    if model:
        labels[GPU_PRODUCT] = model
    return _checked(lambda: Node(name, labels=labels, allocatable=allocatable), where)


def _zoned(nodes: list[Node]) -> list[Node]:
    """The nodes with zones given round-robin within each shape (allocatable and model)."""
    seen: dict[tuple, int] = {}
    out = []
    for node in nodes:
        shape = (tuple(sorted(node.allocatable.items())), node.labels.get(GPU_PRODUCT))
        index = seen[shape] = seen.get(shape, -1) + 1
        out.append(attrs.evolve(node, labels={**node.labels, ZONE: ZONES[index % len(ZONES)]}))
    return out


def _pod(row: dict[str, str], where: _Where, specs: dict[tuple, Pod]) -> Pod:
    """The pending pod of one row; pods of one spec share one template (and its objects)."""
    spec = (_integer(row, "cpu_milli", where), _integer(row, "memory_mib", where),
            _integer(row, "num_gpu", where), _models(row["gpu_spec"]), _qos(row, where))
    _integer(row, "gpu_milli", where)  # checked; a shared GPU is asked for whole
    template = specs.get(spec)
    if template is None:
        template = specs[spec] = _checked(lambda: _template(*spec), where)
    name = _name(row, "name", where)
    # No creationTimestamp: the timeline carries it, and the fused loop classes pods by every
    # field but name and uid (pods that differ in it would each compile a class of their own).
    return _checked(lambda: attrs.evolve(template, name=name), where)


def _models(gpu_spec: str) -> tuple[str, ...]:
    """The allowed GPU models of ``A|B`` (repeats dropped, order kept)."""
    return tuple(dict.fromkeys(m.strip() for m in gpu_spec.split("|") if m.strip()))


def _qos(row: dict[str, str], where: _Where) -> str:
    qos = row["qos"].strip()
    if qos not in PRIORITY_CLASSES:
        raise where.error("qos", f"must be one of {', '.join(PRIORITY_CLASSES)}, got "
                                 f"{row['qos']!r}")
    return qos


def _template(cpu: int, memory_mib: int, gpus: int, models: tuple[str, ...], qos: str) -> Pod:
    resources = {CPU: cpu, MEMORY: memory_mib * MIB}
    if gpus:
        resources[GPU] = gpus
    selector = {GPU_PRODUCT: models[0]} if len(models) == 1 else None
    affinity = None
    if len(models) > 1:
        affinity = NodeAffinity(required=(NodeSelectorTerm((
            NodeSelectorRequirement(GPU_PRODUCT, "In", models),)),))
    container = Container("main", requests=resources, limits=resources)
    return Pod("template", NAMESPACE, containers=(container,), node_selector=selector,
               node_affinity=affinity, priority_class_name=PRIORITY_CLASSES[qos].name)


def _times(row: dict[str, str], where: _Where) -> tuple[float, float, float | None]:
    """(created, deleted, scheduled or ``None``), checked to run forward."""
    created, deleted = _time(row, "creation_time", where), _time(row, "deletion_time", where)
    scheduled = _time(row, "scheduled_time", where) if row["scheduled_time"].strip() else None
    if deleted < created:
        raise where.error("deletion_time", f"before creation_time ({deleted:g} < {created:g})")
    if scheduled is not None and not created <= scheduled <= deleted:
        raise where.error("scheduled_time", f"must lie between creation_time and "
                                            f"deletion_time, got {scheduled:g}")
    return created, deleted, scheduled


def _checked(make: Callable[[], Any], where: _Where) -> Any:
    """``make()``, a record's own refusal re-raised naming the file and line."""
    try:
        return make()
    except KschedError as exc:
        raise InvalidObjectError(f"{where.path}: line {where.line}", "", str(exc)) from None


__all__ = ["GpuTrace", "load_gpu_trace", "gpu_trace_timeline", "trace_files", "NODE_LIST",
           "POD_LIST", "PRIORITY_CLASSES"]

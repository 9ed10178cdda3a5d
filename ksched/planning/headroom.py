"""Headroom and fragmentation: how full the cluster is, per node, per label value and in
total; how many copies of a reference pod fit by resources alone and how much free capacity is
stranded for it; how balanced utilisation is; and, with ``without``, what happens when nodes
are lost (N-1, zone loss: :mod:`ksched.planning.zone_loss`).

Everything but the zone-loss run is vectorized over ``ClusterState.allocatable`` /
``requested`` (int64[N, R]); rows are built only when a report is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.errors import ArgumentError, KschedError
from ksched.explain import explain
from ksched.framework.capabilities import is_node_static_filter
from ksched.inputs import as_cluster, as_pod
from ksched.plugins import IN_TREE_REGISTRY
from ksched.dra.state import dra_objects
from ksched.planning.devices import DeviceInventory, device_inventory, reference_devices
from ksched.resources import is_extended_resource, pod_requests, request_vector
from ksched.planning.zone_loss import (
    Displaced,
    Displacement,
    Victim,
    displace,
    selected_nodes,
)
from ksched.state import ABSENT, ClusterState

__all__ = ["Displaced", "Displacement", "HeadroomReport", "Usage", "Victim", "could_host",
           "displace", "fits_and_stranded", "headroom", "human", "scaled", "selected_nodes",
           "unit"]

#: The group of nodes that lack the ``by`` label.
NO_LABEL = "<none>"
PODS = "pods"


# ---------------------------------------------------------------------------- report records


@attrs.frozen
class Usage:
    """One row: a node, a group of nodes (one label value) or the whole cluster.

    ``allocatable`` / ``requested`` / ``free`` are per resource in scheduler units (cpu in
    millicores, memory in bytes, pods as a count); ``percent`` is requested / allocatable * 100
    (0.0 where nothing is allocatable). With a reference pod, ``fits`` is how many copies fit
    by resources alone and ``stranded`` the free amount per resource on nodes where none fits
    because another resource is exhausted; otherwise ``fits`` is ``None`` and ``stranded``
    empty. ``devices``: per DeviceClass matching some device, its ``allocatable``,
    ``allocated`` and ``free`` devices (and ``stranded`` with a reference; see
    :attr:`HeadroomReport.devices`).
    """

    scope: str
    name: str
    nodes: int
    allocatable: Mapping[str, int]
    requested: Mapping[str, int]
    free: Mapping[str, int]
    percent: Mapping[str, float]
    fits: int | None = None
    stranded: Mapping[str, int] = attrs.field(factory=dict)
    devices: Mapping[str, Mapping[str, int]] = attrs.field(factory=dict)

    def to_record(self) -> dict[str, Any]:
        """The row flattened for CSV / pandas: ``scope``, ``name``, ``nodes``, then
        ``<resource>_allocatable`` / ``_requested`` / ``_free`` / ``_percent`` (and ``fits``,
        ``<resource>_stranded`` with a reference), then ``devices.<class>_allocatable`` /
        ``_allocated`` / ``_free`` (and ``_stranded``)."""
        record: dict[str, Any] = {"scope": self.scope, "name": self.name, "nodes": self.nodes}
        for r in self.allocatable:
            record[f"{r}_allocatable"] = self.allocatable[r]
            record[f"{r}_requested"] = self.requested[r]
            record[f"{r}_free"] = self.free[r]
            record[f"{r}_percent"] = round(self.percent[r], 4)
        if self.fits is not None:
            record["fits"] = self.fits
            record.update({f"{r}_stranded": v for r, v in self.stranded.items()})
        for name, entry in self.devices.items():
            record.update({f"devices.{name}_{what}": v for what, v in entry.items()})
        return record


@attrs.frozen(eq=False)
class HeadroomReport:
    """Headroom of a cluster, held as arrays; rows are made when read.

    Attributes
    ----------
    resources : the ``R`` resource names (the state's columns).
    node_names : the ``N`` node names, state order.
    allocatable, requested : int64[N, R].
    group_of : int64[N], each node's index in ``group_names`` (``by``), else all 0.
    fits_per_node : int64[N] copies of the reference pod per node, or ``None``.
    displaced : the zone-loss / N-1 outcome with ``without``, else ``None``.
    """

    resources: tuple[str, ...]
    node_names: Sequence[str] = attrs.field(repr=False)
    allocatable: npt.NDArray[np.int64] = attrs.field(repr=False)
    requested: npt.NDArray[np.int64] = attrs.field(repr=False)
    by: str | None
    group_names: tuple[str, ...]
    group_of: npt.NDArray[np.int64] = attrs.field(repr=False)
    reference: str | None = None
    fits_per_node: npt.NDArray[np.int64] | None = attrs.field(default=None, repr=False)
    stranded_per_node: npt.NDArray[np.int64] | None = attrs.field(default=None, repr=False)
    displaced: Displacement | None = None
    #: bool[N]: the nodes that could host the reference pod (``None`` without one).
    hosts: npt.NDArray[np.bool_] | None = attrs.field(default=None, repr=False)
    #: Devices per DeviceClass (``None`` when the cluster has no DeviceClass): rows count
    #: a node's node-local devices, the total those of other slices too; with a reference,
    #: ``stranded`` is the free devices on the nodes that cannot take it (not a host, or no
    #: copy fits now).
    devices: DeviceInventory | None = attrs.field(default=None, repr=False)

    @property
    def shown(self) -> tuple[str, ...]:
        """The resources some node has or some pod requests (the text leaves out the rest)."""
        used = (self.allocatable != 0).any(axis=0) | (self.requested != 0).any(axis=0)
        return tuple(r for j, r in enumerate(self.resources) if used[j])

    @property
    def extended(self) -> tuple[str, ...]:
        """The extended resources (GPUs and the like) some node has."""
        return tuple(r for r in self.shown if is_extended_resource(r))

    def fragmentation(self, rows: npt.NDArray[np.bool_] | None = None
                      ) -> dict[str, dict[str, int]]:
        """Per extended resource (GPUs ...), over the nodes ``rows`` (default all): ``free``;
        ``whole_free_nodes`` (nodes that have it and none of it requested) and
        ``whole_free`` (their amount); with a reference pod, ``fragmented``: the free amount
        on nodes that could host the reference but take no copy now (free GPUs that the
        reference cannot use)."""
        rows = np.ones(len(self.node_names), dtype=np.bool_) if rows is None else rows
        out = {}
        for r in self.extended:
            j = self.resources.index(r)
            alloc, free = self.allocatable[rows, j], self.free[rows, j]
            whole = (alloc > 0) & (self.requested[rows, j] == 0)
            entry = {"free": int(np.maximum(free, 0).sum()),
                     "whole_free_nodes": int(whole.sum()), "whole_free": int(alloc[whole].sum())}
            if self.fits_per_node is not None:
                stuck = self.hosts[rows] & (self.fits_per_node[rows] == 0)
                entry["fragmented"] = int(np.maximum(free[stuck], 0).sum())
            out[r] = entry
        return out

    def device_totals(self, rows: npt.NDArray[np.int64] | None = None,
                      shared: bool = True) -> dict[str, dict[str, int]]:
        """Per DeviceClass matching some device, over the node rows ``rows`` (default all;
        ``shared``: and the devices outside node-local slices): ``allocatable``,
        ``allocated``, ``free`` (and ``stranded`` with a reference)."""
        if self.devices is None:
            return {}
        stuck = None if self.fits_per_node is None else ~self.hosts | (self.fits_per_node == 0)
        return self.devices.totals(rows, shared, stuck)

    @property
    def free(self) -> npt.NDArray[np.int64]:
        """int64[N, R] allocatable - requested."""
        return self.allocatable - self.requested

    @property
    def utilisation(self) -> npt.NDArray[np.float64]:
        """float64[N, R] requested / allocatable (0 where nothing is allocatable)."""
        return _ratio(self.requested, self.allocatable)

    @property
    def nodes(self) -> list[Usage]:
        """One row per node, state order."""
        return [self._row("node", name, 1, self.allocatable[i], self.requested[i],
                          *self._fit_row(i), self.device_totals(np.array([i]), False))
                for i, name in enumerate(self.node_names)]

    @property
    def groups(self) -> list[Usage]:
        """One row per value of ``by`` (empty without ``by``), ``<none>`` last."""
        if self.by is None:
            return []
        sums = [_group_sum(a, self.group_of, len(self.group_names))
                for a in (self.allocatable, self.requested)]
        counts = np.bincount(self.group_of, minlength=len(self.group_names))
        fits = stranded = None
        if self.fits_per_node is not None:
            fits = np.bincount(self.group_of, self.fits_per_node,
                               minlength=len(self.group_names)).astype(np.int64)
            stranded = _group_sum(self.stranded_per_node, self.group_of, len(self.group_names))
        return [self._row("group", name, int(counts[g]), sums[0][g], sums[1][g],
                          None if fits is None else int(fits[g]),
                          None if stranded is None else stranded[g],
                          self.device_totals(np.flatnonzero(self.group_of == g), False))
                for g, name in enumerate(self.group_names)]

    @property
    def total(self) -> Usage:
        """The whole cluster."""
        fits = None if self.fits_per_node is None else int(self.fits_per_node.sum())
        return self._row("total", "total", len(self.node_names), self.allocatable.sum(0),
                         self.requested.sum(0), fits, None if fits is None else
                         self.stranded_per_node.sum(0), self.device_totals())

    @property
    def fits(self) -> int | None:
        """Copies of the reference pod that fit by resources alone, or ``None``."""
        return self.total.fits

    @property
    def stranded(self) -> dict[str, int]:
        """Per resource, the free amount stranded for the reference pod (empty without one)."""
        return dict(self.total.stranded)

    @property
    def balance(self) -> dict[str, float]:
        """Per resource, the population std-dev of utilisation (requested / allocatable, a
        fraction) across the nodes that have that resource."""
        util, has = self.utilisation, self.allocatable > 0
        return {r: float(util[has[:, j], j].std()) if has[:, j].any() else 0.0
                for j, r in enumerate(self.resources)}

    def _fit_row(self, i: int) -> tuple[int | None, np.ndarray | None]:
        if self.fits_per_node is None:
            return None, None
        return int(self.fits_per_node[i]), self.stranded_per_node[i]

    def _row(self, scope: str, name: str, count: int, alloc: np.ndarray, req: np.ndarray,
             fits: int | None = None, stranded: np.ndarray | None = None,
             devices: Mapping[str, Mapping[str, int]] | None = None) -> Usage:
        names = self.resources
        alloc_d = dict(zip(names, map(int, alloc)))
        req_d = dict(zip(names, map(int, req)))
        return Usage(scope, name, count, alloc_d, req_d,
                     {r: alloc_d[r] - req_d[r] for r in names},
                     {r: 100.0 * req_d[r] / alloc_d[r] if alloc_d[r] else 0.0 for r in names},
                     fits, {} if stranded is None else dict(zip(names, map(int, stranded))),
                     devices or {})

    def to_rows(self) -> list[dict[str, Any]]:
        """Every row (nodes, groups, total) flattened, for CSV or ``pandas.DataFrame``."""
        return [u.to_record() for u in [*self.nodes, *self.groups, self.total]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the rows, the balance, the reference's fits and stranded capacity,
        and the zone-loss outcome."""
        fragmentation = {"total": self.fragmentation()} | {
            name: self.fragmentation(self.group_of == g)
            for g, name in enumerate(self.group_names) if self.by is not None}
        return {"by": self.by, "reference": self.reference, "resources": list(self.resources),
                "units": {r: unit(r) for r in self.resources},
                "fragmentation": fragmentation,
                "hosts": None if self.hosts is None else int(self.hosts.sum()),
                "nodes": [u.to_record() for u in self.nodes],
                "groups": [u.to_record() for u in self.groups],
                "total": self.total.to_record(), "balance": self.balance,
                "fits": self.fits, "stranded": self.stranded,
                "devices": self.device_totals(),
                "displaced": None if self.displaced is None else self.displaced.to_dict()}

    def __str__(self) -> str:
        """A table in cores, GiB and counts (resources no node has left out), the balance,
        the reference's fits and stranded capacity, and the extended resources'
        fragmentation."""
        rows = [*self.groups, self.total] if self.by else [*self.nodes, self.total]
        shown = self.shown
        devices = self.devices.shown if self.devices is not None else ()
        lines = [_table(rows, shown, self.fits_per_node is not None, devices)]
        balance = self.balance
        lines.append("balance (std-dev of utilisation, 0 = even): " + ", ".join(
            f"{r} {balance[r]:.3f}" for r in shown))
        if self.fits_per_node is not None:
            stranded = ", ".join(human(r, v) for r, v in self.stranded.items() if v)
            lines.append(f"reference {self.reference}: {self.fits} copies fit on "
                         f"{int(self.hosts.sum())} node(s) that could host it; stranded "
                         f"there (free, but another resource is short): {stranded or 'none'}")
        lines += _fragmentation_lines(self) + _device_lines(self)
        if self.displaced is not None:
            lines.append(str(self.displaced))
        return "\n".join(lines)


# ---------------------------------------------------------------------------- entry point


def headroom(cluster: Any, *, reference: Any = None, by: str | None = None,
             without: str | Iterable[str] | None = None,
             profile: Any = None) -> HeadroomReport:
    """Headroom and fragmentation of ``cluster``.

    Parameters
    ----------
    cluster : a ``ClusterState`` or anything :func:`ksched.inputs.as_cluster` takes.
    reference : a pod shape (anything :func:`ksched.inputs.as_pod` takes): per node, how many
        copies fit by resources alone (min over its requested resources of free // request,
        and free pod slots), and the capacity stranded for it.
    by : a node label key (``"topology.kubernetes.io/zone"``): rows per label value, nodes
        without it under ``"<none>"``. With ``without``, the values are those of the cluster
        before the loss: a value whose nodes are all removed keeps its row, with 0 nodes and
        0 capacity.
    without : ``"key=value"``, ``"key in (a,b)"`` or a list of node names: these nodes are
        removed, their pods re-placed on the rest (highest priority first, then as listed)
        through :class:`ksched.simulator.Simulator`, with preemption; the report describes
        the remaining cluster after that, and ``report.displaced`` what moved and what no
        longer fits.
    profile : the scheduler profile for ``without`` (default: the default profile).

    Returns
    -------
    HeadroomReport

    Raises
    ------
    ArgumentError : a malformed ``by`` / ``without``, a label no node has, an unknown node.
    """
    cluster = as_cluster(cluster, "cluster")
    by = _check_by(cluster, by)
    ref = None if reference is None else as_pod(reference, "reference")
    groups = _groups(cluster, by)
    displaced = None
    if without is not None:
        displaced = displace(cluster, selected_nodes(cluster, without), profile)
        groups = groups[0], groups[1][_rows_in(cluster, displaced.state)]
        cluster = displaced.state
    return _report(cluster, ref, by, groups, displaced)


def _rows_in(before: ClusterState, after: ClusterState) -> np.ndarray:
    """int64[after's N]: each node of ``after`` as a row of ``before``."""
    index = before.node_index
    return np.fromiter((index[name] for name in after.node_names), dtype=np.int64,
                       count=after.num_nodes)


def _report(cluster: ClusterState, ref: Any, by: str | None,
            groups: tuple[tuple[str, ...], np.ndarray],
            displaced: Displacement | None) -> HeadroomReport:
    group_names, group_of = groups
    fits = stranded = hosts = None
    devices = device_inventory(cluster) if dra_objects(cluster).device_classes else None
    if ref is not None:
        request = _request_vector(cluster, ref)
        hosts = could_host(cluster, ref, request)
        limit = None
        found = None if devices is None else reference_devices(devices, ref,
                                                                  dra_objects(cluster))
        if found is not None:
            hosts, limit = hosts & found[0], found[1]
        fits, stranded = fits_and_stranded(cluster.allocatable, cluster.requested, request,
                                           hosts, limit)
    return HeadroomReport(
        tuple(cluster.resource_names), cluster.node_names, cluster.allocatable,
        cluster.requested, by, group_names, group_of,
        None if ref is None else ref.key, fits, stranded, displaced, hosts, devices)


def could_host(cluster: ClusterState, pod: Any, request: np.ndarray) -> np.ndarray:
    """bool[N]: the nodes that could host ``pod`` were they empty: allocatable covers every
    requested resource (a CPU-only node never hosts a GPU pod) and no node-static filter
    (unschedulable, taints, node affinity and selector, node name) rejects it."""
    if request.size and request[0] < 0:  # a resource no node has
        return np.zeros(cluster.num_nodes, dtype=np.bool_)
    big = (cluster.allocatable >= request).all(axis=1)
    try:
        why = explain(cluster, pod, percentage_of_nodes_to_score=100)
    except KschedError:
        return big
    static = _static_filters()
    open_ = np.ones(cluster.num_nodes, dtype=np.bool_)
    index = cluster.node_index
    for row in why.nodes:
        if not row.feasible and row.plugin in static:
            open_[index[row.node]] = False
    return big & open_


def _static_filters() -> frozenset[str]:
    """The in-tree filters whose verdict on a node no placement changes."""
    return frozenset(name for name, plugin in IN_TREE_REGISTRY.items()
                     if is_node_static_filter(plugin))


# ---------------------------------------------------------------------------- vectorized parts


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _group_sum(values: np.ndarray, group_of: np.ndarray, groups: int) -> np.ndarray:
    """int64[G, R]: ``values`` (int64[N, R]) summed per group."""
    out = np.zeros((groups, values.shape[1]), dtype=np.int64)
    np.add.at(out, group_of, values)
    return out


def _request_vector(cluster: ClusterState, pod: Any) -> np.ndarray:
    """int64[R] the pod's effective requests over the state's columns, pods = 1; a
    requested resource the state has no column for is returned as -1 (nothing fits)."""
    requests = pod_requests(pod)
    if any(amount > 0 and cluster.resource_column(name) < 0 for name, amount in requests.items()):
        return np.full(len(cluster.resource_names), -1, dtype=np.int64)
    return request_vector(requests, cluster.resource_names)


def fits_and_stranded(allocatable: np.ndarray, requested: np.ndarray, request: np.ndarray,
                      hosts: np.ndarray | None = None, limit: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Copies of one pod shape per node, and the stranded free capacity.

    Parameters
    ----------
    allocatable, requested : int64[N, R].
    request : int64[R], the pod's requests (pods = 1); all -1 when it asks for a resource
        no node has.
    hosts : bool[N], the nodes that could host the pod at all (default: all); stranded
        capacity is counted on these only (the CPU of a CPU-only node is not stranded for a
        GPU pod: it never could use it).
    limit : int64[N], at most these copies per node (what free devices allow), or ``None``.

    Returns
    -------
    fits : int64[N], min over requested resources of free // request (NodeResourcesFit's
        resource check, by resources alone).
    stranded : int64[N, R], on ``hosts`` where no copy fits, the free amount of each
        resource that alone would allow a copy (the capacity another resource's exhaustion
        strands).
    """
    free = np.maximum(allocatable - requested, 0)
    n = free.shape[0]
    if request.size and request[0] < 0:
        return np.zeros(n, dtype=np.int64), np.zeros_like(free)
    asked = request > 0
    if not asked.any():
        return np.zeros(n, dtype=np.int64), np.zeros_like(free)
    per = free[:, asked] // request[asked]
    fits = per.min(axis=1).astype(np.int64)
    if limit is not None:
        fits = np.minimum(fits, limit)
    alone = (free >= request) & (free > 0)
    if hosts is not None:
        alone &= hosts[:, None]
    stranded = np.where(alone & (fits == 0)[:, None], free, 0)
    return fits, stranded


def _check_by(cluster: ClusterState, by: Any) -> str | None:
    if by is None:
        return None
    if not isinstance(by, str) or not by:
        raise ArgumentError(f"by: expected a node label key, got {by!r}")
    if cluster.label_column(by) < 0:
        raise ArgumentError(f"by: no node has label {by!r}")
    return by


def _groups(cluster: ClusterState, by: str | None) -> tuple[tuple[str, ...], np.ndarray]:
    """The label values of ``by`` (sorted, ``<none>`` last) and each node's group index."""
    n = cluster.num_nodes
    if by is None:
        return ("all",), np.zeros(n, dtype=np.int64)
    codes = np.asarray(cluster.labels[:, cluster.label_column(by)])
    unique, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    names = [NO_LABEL if code == ABSENT else cluster.nodes[int(i)].labels[by]
             for code, i in zip(unique, first)]
    order = sorted(range(len(names)), key=lambda g: (names[g] == NO_LABEL, names[g]))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return tuple(names[g] for g in order), rank[inverse.reshape(-1)]


# ---------------------------------------------------------------------------- text


#: Resources counted in bytes, shown in GiB.
_GIB = 1 << 30


def unit(resource: str) -> str:
    """The unit the text shows ``resource`` in: ``cores``, ``GiB`` or a count (``""``)."""
    if resource == "cpu":
        return "cores"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return "GiB"
    return ""


def scaled(resource: str, value: int) -> float | int:
    """``value`` (scheduler units: millicores, bytes, counts) in :func:`unit`'s unit."""
    kind = unit(resource)
    if kind == "cores":
        return value / 1000
    if kind == "GiB":
        return value / _GIB
    return int(value)


def _number(resource: str, value: int) -> str:
    v = scaled(resource, value)
    return f"{v:,}" if isinstance(v, int) else f"{v:,.1f}"


def human(resource: str, value: int) -> str:
    """``cpu 3.5 cores``, ``memory 12.0 GiB``, ``nvidia.com/gpu 3``."""
    kind = unit(resource)
    return f"{resource} {_number(resource, value)}" + (f" {kind}" if kind else "")


def _fragmentation_lines(report: HeadroomReport) -> list[str]:
    """Per extended resource: free, whole free nodes and, with a reference, the free amount
    it cannot use."""
    lines = []
    for r, f in report.fragmentation().items():
        line = (f"{r}: {f['free']:,} free; {f['whole_free_nodes']:,} node(s) with all of it "
                f"free ({f['whole_free']:,})")
        if "fragmented" in f:
            line += (f"; {f['fragmented']:,} free on nodes that could host "
                     f"{report.reference} but take no copy now (fragmented)")
        lines.append(line)
    return lines


def _devices_cell(entry: Mapping[str, int]) -> str:
    used, alloc = entry["allocated"], entry["allocatable"]
    return f"{used:,}/{alloc:,} ({100.0 * used / alloc if alloc else 0.0:.1f}%)"


def _device_lines(report: HeadroomReport) -> list[str]:
    """Per DeviceClass matching some device: free, allocated and, with a reference, the
    free devices on nodes that cannot take it."""
    lines = []
    for name, e in report.device_totals().items():
        line = (f"devices {name}: {e['free']:,} free of {e['allocatable']:,} "
                f"({e['allocated']:,} allocated)")
        if "stranded" in e:
            line += (f"; {e['stranded']:,} free on nodes that cannot take {report.reference} "
                     "(stranded)")
        lines.append(line)
    return lines


def _table(rows: Sequence[Usage], resources: Sequence[str], with_fits: bool,
           devices: Sequence[str] = ()) -> str:
    header = ["name", "nodes"] + [
        f"{r} used/alloc" + (f" {unit(r)}" if unit(r) else "") + " (%)" for r in resources]
    header += [f"{c} devices used/alloc (%)" for c in devices]
    if with_fits:
        header.append("fits")
    body = [[u.name, str(u.nodes)] + [
        f"{_number(r, u.requested[r])}/{_number(r, u.allocatable[r])} ({u.percent[r]:.1f}%)"
        for r in resources] + [_devices_cell(u.devices[c]) for c in devices]
        + ([str(u.fits)] if with_fits else []) for u in rows]
    widths = [max(len(line[j]) for line in [header, *body]) for j in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()
                     for line in [header, *body])

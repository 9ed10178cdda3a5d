"""Headroom and fragmentation: how full the cluster is, per node, per label value and in
total; how many copies of a reference pod fit by resources alone and how much free capacity is
stranded for it; how balanced utilisation is; and what no longer fits when nodes are lost
(N-1, zone loss), re-placed through the simulator's cycle with preemption.

Everything but the zone-loss run is vectorized over ``ClusterState.allocatable`` /
``requested`` (int64[N, R]); rows are built only when a report is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.errors import ArgumentError
from ksched.inputs import as_cluster, as_pod
from ksched.resources import pod_requests, request_vector
from ksched.simulator import BOUND, PREEMPTED, UNSCHEDULABLE, Event, Simulator
from ksched.state import ABSENT, ClusterState

__all__ = ["Displaced", "Displacement", "HeadroomReport", "Usage", "Victim", "displace",
           "fits_and_stranded", "headroom", "selected_nodes"]

#: The group of nodes that lack the ``by`` label.
NO_LABEL = "<none>"
PODS = "pods"
_SELECTOR = re.compile(r"^\s*([^\s=!,()]+)\s*(?:==?\s*([^\s=,()]*)|\s+in\s+\(([^()]*)\))\s*$")


# ---------------------------------------------------------------------------- report records


@attrs.frozen
class Usage:
    """One row: a node, a group of nodes (one label value) or the whole cluster.

    ``allocatable`` / ``requested`` / ``free`` are per resource in scheduler units (cpu in
    millicores, memory in bytes, pods as a count); ``percent`` is requested / allocatable * 100
    (0.0 where nothing is allocatable). With a reference pod, ``fits`` is how many copies fit
    by resources alone and ``stranded`` the free amount per resource on nodes where none fits
    because another resource is exhausted; otherwise ``fits`` is ``None`` and ``stranded``
    empty.
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

    def to_record(self) -> dict[str, Any]:
        """The row flattened for CSV / pandas: ``scope``, ``name``, ``nodes``, then
        ``<resource>_allocatable`` / ``_requested`` / ``_free`` / ``_percent`` (and ``fits``,
        ``<resource>_stranded`` with a reference)."""
        record: dict[str, Any] = {"scope": self.scope, "name": self.name, "nodes": self.nodes}
        for r in self.allocatable:
            record[f"{r}_allocatable"] = self.allocatable[r]
            record[f"{r}_requested"] = self.requested[r]
            record[f"{r}_free"] = self.free[r]
            record[f"{r}_percent"] = round(self.percent[r], 4)
        if self.fits is not None:
            record["fits"] = self.fits
            record.update({f"{r}_stranded": v for r, v in self.stranded.items()})
        return record


@attrs.frozen
class Displaced:
    """A pod of a removed node, re-placed: ``outcome`` is ``"placed"`` (on ``node``),
    ``"pending"`` (with the scheduler's ``reason``) or ``"preempted"`` (placed, then evicted
    by a displaced pod of higher priority)."""

    pod: str
    priority: int
    from_node: str
    outcome: str
    node: str | None = None
    reason: str = ""


@attrs.frozen
class Victim:
    """A pod that was running on a remaining node and was preempted by ``by``."""

    pod: str
    node: str
    by: str


@attrs.frozen(eq=False)
class Displacement:
    """What removing ``removed_nodes`` does: each displaced pod's fate, the running pods
    preempted for them, and ``state``, the remaining cluster afterwards. DaemonSet pods of
    the removed nodes go with their nodes and are counted in ``daemon_pods``."""

    removed_nodes: tuple[str, ...]
    pods: tuple[Displaced, ...]
    victims: tuple[Victim, ...]
    daemon_pods: int
    state: ClusterState = attrs.field(repr=False)
    wall_seconds: float = 0.0

    @property
    def placed(self) -> tuple[Displaced, ...]:
        return tuple(d for d in self.pods if d.outcome == "placed")

    @property
    def pending(self) -> tuple[Displaced, ...]:
        """The displaced pods that no longer fit (or were preempted again)."""
        return tuple(d for d in self.pods if d.outcome != "placed")

    def __str__(self) -> str:
        """One summary line, then a line per displaced pod that no longer fits and per
        running pod preempted."""
        lines = [f"without {len(self.removed_nodes)} node(s): {len(self.pods)} pod(s) "
                 f"displaced, {len(self.placed)} placed, {len(self.pending)} no longer fit, "
                 f"{len(self.victims)} preempted"]
        lines += [f"  pending {p.pod} (from {p.from_node}): {p.reason}" for p in self.pending]
        lines += [f"  preempted {v.pod} on {v.node} by {v.by}" for v in self.victims]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"removed_nodes": list(self.removed_nodes), "daemon_pods": self.daemon_pods,
                "pods": [attrs.asdict(d) for d in self.pods],
                "victims": [attrs.asdict(v) for v in self.victims]}


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
                          *self._fit_row(i)) for i, name in enumerate(self.node_names)]

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
                          None if stranded is None else stranded[g])
                for g, name in enumerate(self.group_names)]

    @property
    def total(self) -> Usage:
        """The whole cluster."""
        fits = None if self.fits_per_node is None else int(self.fits_per_node.sum())
        return self._row("total", "total", len(self.node_names), self.allocatable.sum(0),
                         self.requested.sum(0), fits, None if fits is None else
                         self.stranded_per_node.sum(0))

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
             fits: int | None = None, stranded: np.ndarray | None = None) -> Usage:
        names = self.resources
        alloc_d = dict(zip(names, map(int, alloc)))
        req_d = dict(zip(names, map(int, req)))
        return Usage(scope, name, count, alloc_d, req_d,
                     {r: alloc_d[r] - req_d[r] for r in names},
                     {r: 100.0 * req_d[r] / alloc_d[r] if alloc_d[r] else 0.0 for r in names},
                     fits, {} if stranded is None else dict(zip(names, map(int, stranded))))

    def to_rows(self) -> list[dict[str, Any]]:
        """Every row (nodes, groups, total) flattened, for CSV or ``pandas.DataFrame``."""
        return [u.to_record() for u in [*self.nodes, *self.groups, self.total]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the rows, the balance, the reference's fits and stranded capacity,
        and the zone-loss outcome."""
        return {"by": self.by, "reference": self.reference, "resources": list(self.resources),
                "nodes": [u.to_record() for u in self.nodes],
                "groups": [u.to_record() for u in self.groups],
                "total": self.total.to_record(), "balance": self.balance,
                "fits": self.fits, "stranded": self.stranded,
                "displaced": None if self.displaced is None else self.displaced.to_dict()}

    def __str__(self) -> str:
        rows = [*self.groups, self.total] if self.by else [*self.nodes, self.total]
        lines = [_table(rows, self.resources, self.fits_per_node is not None)]
        lines.append("balance (std-dev of utilisation): " + ", ".join(
            f"{r} {v:.3f}" for r, v in self.balance.items()))
        if self.fits_per_node is not None:
            stranded = ", ".join(f"{r} {v}" for r, v in self.stranded.items() if v)
            lines.append(f"reference {self.reference}: {self.fits} fit; stranded: "
                         f"{stranded or 'none'}")
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
        without it under ``"<none>"``.
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
    displaced = None
    if without is not None:
        displaced = displace(cluster, selected_nodes(cluster, without), profile)
        cluster = displaced.state
    return _report(cluster, ref, by, displaced)


def _report(cluster: ClusterState, ref: Any, by: str | None,
            displaced: Displacement | None) -> HeadroomReport:
    group_names, group_of = _groups(cluster, by)
    fits = stranded = None
    if ref is not None:
        fits, stranded = fits_and_stranded(cluster.allocatable, cluster.requested,
                                           _request_vector(cluster, ref))
    return HeadroomReport(
        tuple(cluster.resource_names), cluster.node_names, cluster.allocatable,
        cluster.requested, by, group_names, group_of,
        None if ref is None else ref.key, fits, stranded, displaced)


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


def fits_and_stranded(allocatable: np.ndarray, requested: np.ndarray, request: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Copies of one pod shape per node, and the stranded free capacity.

    Parameters
    ----------
    allocatable, requested : int64[N, R].
    request : int64[R], the pod's requests (pods = 1); all -1 when it asks for a resource
        no node has.

    Returns
    -------
    fits : int64[N], min over requested resources of free // request (NodeResourcesFit's
        resource check, by resources alone).
    stranded : int64[N, R], on nodes where no copy fits, the free amount of each resource
        that alone would allow a copy (the capacity another resource's exhaustion strands).
    """
    free = np.maximum(allocatable - requested, 0)
    n = free.shape[0]
    if request.size and request[0] < 0:
        return np.zeros(n, dtype=np.int64), free.copy()
    asked = request > 0
    if not asked.any():
        return np.zeros(n, dtype=np.int64), np.zeros_like(free)
    per = free[:, asked] // request[asked]
    fits = per.min(axis=1).astype(np.int64)
    alone = (free >= request) & (free > 0)
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


# ---------------------------------------------------------------------------- node loss


def selected_nodes(cluster: ClusterState, nodes: Any, argument: str = "without") -> np.ndarray:
    """int64 rows of the nodes that ``nodes`` names: a selector (``"key=value"``, ``"key in
    (a,b)"``) or node names, checked; errors name ``argument``."""
    if isinstance(nodes, str):
        return _selected_rows(cluster, nodes, argument)
    if not isinstance(nodes, Iterable):
        raise ArgumentError(f"{argument}: expected a label selector or node names, got "
                            f"{type(nodes).__name__}")
    rows = []
    for i, name in enumerate(nodes):
        if not isinstance(name, str):
            raise ArgumentError(f"{argument}[{i}]: expected a node name, got "
                                f"{type(name).__name__}")
        row = cluster.node_index.get(name)
        if row is None:
            raise ArgumentError(f"{argument}[{i}]: node {name!r} not found")
        rows.append(int(row))
    if not rows:
        raise ArgumentError(f"{argument}: names no node")
    return np.unique(np.asarray(rows, dtype=np.int64))


def _selected_rows(cluster: ClusterState, selector: str, argument: str) -> np.ndarray:
    match = _SELECTOR.match(selector)
    if match is None:
        raise ArgumentError(f"{argument}: malformed selector {selector!r}: expected "
                            f"\"key=value\" or \"key in (v1,v2)\"")
    key, value, values = match.groups()
    wanted = [value] if values is None else [v.strip() for v in values.split(",") if v.strip()]
    column = cluster.label_column(key)
    ids = [cluster.vocab.get(v) for v in wanted]
    rows = (np.flatnonzero(np.isin(cluster.labels[:, column], ids)) if column >= 0
            else np.zeros(0, dtype=np.int64))
    if not rows.size:
        raise ArgumentError(f"{argument}: selector {selector!r} matches no node")
    return rows.astype(np.int64)


def _is_daemon(pod: Any) -> bool:
    return pod.controller is not None and pod.controller[1] == "DaemonSet"


def displace(cluster: ClusterState, removed: np.ndarray, profile: Any = None) -> Displacement:
    """Remove the nodes at rows ``removed``; re-place their pods (DaemonSet pods excepted)
    on the rest through the simulator, highest priority first, with preemption."""
    gone = np.zeros(cluster.num_nodes, dtype=np.bool_)
    gone[removed] = True
    on_gone = gone[np.asarray(cluster.pod_node)]
    pods = cluster.pods
    keep_nodes = [cluster.nodes[int(i)] for i in np.flatnonzero(~gone)]
    keep_pods = [pods[int(i)] for i in np.flatnonzero(~on_gone)]
    moved = [pods[int(i)] for i in np.flatnonzero(on_gone)]
    daemons = sum(map(_is_daemon, moved))
    moved = sorted((p for p in moved if not _is_daemon(p)), key=lambda p: -p.priority)
    remaining = ClusterState.from_records(keep_nodes, keep_pods, namespaces=cluster.namespaces,
                                          objects=cluster.objects)
    pending = [attrs.evolve(p.with_status(None, ""), node_name="") for p in moved]
    result = Simulator(remaining, profile=profile).run(
        [Event(0.0, "create", pod=p) for p in pending])
    fates, victims = _fates(result.decisions, {p.key for p in moved})
    from_node = {p.key: p.node_name for p in moved}
    displaced = tuple(Displaced(p.key, p.priority, from_node[p.key], *fates[p.key])
                      for p in moved)
    return Displacement(tuple(cluster.node_names[int(i)] for i in removed), displaced,
                        tuple(victims), int(daemons), result.state, result.wall_seconds)


def _fates(decisions: Sequence[Any], moved: set[str]
           ) -> tuple[dict[str, tuple[str, str | None, str]], list[Victim]]:
    """Each displaced pod's last outcome (placed / pending / preempted) and the running pods
    preempted, from the simulator's decisions."""
    fates: dict[str, tuple[str, str | None, str]] = {}
    victims: list[Victim] = []
    for d in decisions:
        if d.pod in moved:
            if d.outcome == BOUND:
                fates[d.pod] = ("placed", d.node, "")
            elif d.outcome == UNSCHEDULABLE:
                fates[d.pod] = ("pending", None, d.reason)
            elif d.outcome == PREEMPTED:
                fates[d.pod] = ("preempted", None, d.reason)
        elif d.outcome == PREEMPTED:
            victims.append(Victim(d.pod, d.node, d.reason.removeprefix("preempted by ")))
    for key in moved:
        fates.setdefault(key, ("pending", None, ""))
    return fates, victims


# ---------------------------------------------------------------------------- text


def _table(rows: Sequence[Usage], resources: Sequence[str], with_fits: bool) -> str:
    header = ["name", "nodes"] + [f"{r} used/alloc (%)" for r in resources]
    if with_fits:
        header.append("fits")
    body = [[u.name, str(u.nodes)] + [
        f"{u.requested[r]}/{u.allocatable[r]} ({u.percent[r]:.1f}%)" for r in resources]
        + ([str(u.fits)] if with_fits else []) for u in rows]
    widths = [max(len(line[j]) for line in [header, *body]) for j in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()
                     for line in [header, *body])

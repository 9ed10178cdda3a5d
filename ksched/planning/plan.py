"""Node-type what-ifs: how many nodes of which given types make every pending pod schedule.

:func:`plan` answers in two steps:

1. **Lower bound** (``scipy.optimize.milp``): integer counts ``n_t >= 0`` of each type with,
   for every resource ``r`` the pods request (cpu, memory, the pod slots, extended
   resources), ``sum_t n_t * alloc_t[r] >= max(0, demand[r] - free[r])``; ``free`` is the
   unused allocatable of the existing schedulable (not cordoned) nodes, and ``alloc_t`` is a
   new node's allocatable less the requests of the DaemonSet pods that would land on it.
   The objective is the total price (several optima: the fewest nodes among them) or, with no
   prices, the node count. The bound ignores where a pod may go (node selectors, affinity,
   taints, spreading, host ports): it is exact only for pods that fit every type; the next
   step makes the answer right.
2. **Verification by exact scheduling**: the cluster with the new nodes (named
   ``<type>-plan-<k>``, hostname label set, DaemonSet pods bound to them) gets every pending
   pod through :func:`ksched.schedule_batch` (DaemonSet pods of the existing nodes first). While
   some pod fails, nodes of the cheapest type the first failing pod fits on (judged by
   scheduling it alone on a one-node cluster of that type; ties: the given order) are added:
   as many as the failing pods that fit that type need by their summed requests (at least
   one; a lower bound for them, since placed pods stay where they are).
   Then nodes are taken away one at a time (the type added last first) while everything still
   schedules, until one node fewer of any chosen type leaves a pod out.

Pods that fit no type are reported in :attr:`PlanReport.unschedulable` with each type's
reason, and do not count as failures in step 2.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Node, Pod
from ksched.engine import Result, schedule_batch
from ksched.errors import ArgumentError
from ksched.inputs import as_cluster, as_node, as_pods, check_progress, node_from_template
from ksched.io import iter_manifests
from ksched.planning.workloads import CONTROLLER_KINDS, expand_workloads
from ksched.resources import pod_requests
from ksched.state import ClusterState

__all__ = ["PlanReport", "Unfit", "plan"]

#: The pod-slot resource: every pod takes one.
_PODS = "pods"


# =========================================================================== report


@attrs.frozen
class Unfit:
    """A pending pod that no node type takes even on a node of its own.

    Attributes
    ----------
    pod : the pod.
    reasons : node type name -> the scheduler's message on a one-node cluster of that type.
    """

    pod: Pod
    reasons: dict[str, str]


@attrs.frozen(eq=False)
class PlanReport:
    """What :func:`plan` found.

    Attributes
    ----------
    bound : node type name -> count, the integer program's lower bound (``None`` when it has
        no solution: some requested resource no type provides).
    nodes : node type name -> count verified by exact scheduling.
    prices : node type name -> price per node (empty without prices).
    result : the verifying :func:`ksched.schedule_batch` result (new nodes included).
    unschedulable : the pods no type fits, with the reasons.
    message : why the search stopped short (``max_nodes`` reached), else ``""``.
    schedules : how many full verification schedules were run.
    """

    bound: dict[str, int] | None
    nodes: dict[str, int]
    prices: dict[str, float]
    result: Result
    unschedulable: tuple[Unfit, ...]
    message: str = ""
    schedules: int = 0

    @property
    def placements(self) -> tuple:
        """The verifying schedule's placements (pending pods, DaemonSet pods first)."""
        return self.result.placements

    @property
    def cost(self) -> float | None:
        """The verified nodes' total price (``None`` without prices)."""
        return _cost(self.nodes, self.prices) if self.prices else None

    @property
    def bound_cost(self) -> float | None:
        """The bound's total price (``None`` without prices or without a bound)."""
        return _cost(self.bound, self.prices) if self.prices and self.bound is not None else None

    @property
    def complete(self) -> bool:
        """Every pending pod schedules with the verified nodes."""
        return not self.result.unschedulable

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: bound, verified counts, costs, the unschedulable pods and reasons."""
        return {"bound": None if self.bound is None else dict(self.bound),
                "nodes": dict(self.nodes), "prices": dict(self.prices), "cost": self.cost,
                "bound_cost": self.bound_cost, "complete": self.complete,
                "scheduled": len(self.result.scheduled),
                "pending": len(self.result.placements), "message": self.message,
                "unschedulable": [{"pod": u.pod.key, "reasons": dict(u.reasons)}
                                  for u in self.unschedulable]}

    def __str__(self) -> str:
        head = ("NODE TYPE", "BOUND", "NODES") + (("PRICE", "COST") if self.prices else ())
        rows = [head]
        for name, count in self.nodes.items():
            row = (name, "-" if self.bound is None else str(self.bound.get(name, 0)), str(count))
            if self.prices:
                price = self.prices.get(name, 0.0)
                row += (f"{price:g}", f"{price * count:g}")
            rows.append(row)
        lines = _table(rows)
        total = f"total: {sum(self.nodes.values())} nodes"
        if self.prices:
            total += f", cost {self.cost:g}"
        lines.append(total + f"; {len(self.result.scheduled)}/{len(self.result.placements)}"
                     " pods scheduled")
        lines += [f"unschedulable {u.pod.key}: " + "; ".join(
            f"{t}: {r}" for t, r in u.reasons.items()) for u in self.unschedulable]
        if self.message:
            lines.append(self.message)
        return "\n".join(lines)


def _cost(counts: Mapping[str, int], prices: Mapping[str, float]) -> float:
    return float(sum(prices.get(t, 0.0) * n for t, n in counts.items()))


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


# =========================================================================== arguments


def _node_types(node_types: Any) -> tuple[Node, ...]:
    if isinstance(node_types, Node | Mapping) or not isinstance(node_types, Sequence) \
            or isinstance(node_types, str | bytes):
        raise ArgumentError("node_types: expected a list of Node records or Node manifests, "
                            f"got {type(node_types).__name__}")
    if not node_types:
        raise ArgumentError("node_types: empty; give at least one node type")
    types = tuple(as_node(t, f"node_types[{i}]") for i, t in enumerate(node_types))
    names = [t.name for t in types]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ArgumentError(f"node_types[{i}]: duplicate node type name {name!r}")
    return types


def _prices(prices: Any, types: Sequence[Node]) -> dict[str, float]:
    if prices is None:
        return {}
    if not isinstance(prices, Mapping):
        raise ArgumentError(f"prices: expected a mapping of node type name to price, "
                            f"got {type(prices).__name__}")
    names = [t.name for t in types]
    out: dict[str, float] = {}
    for name, price in prices.items():
        if name not in names:
            raise ArgumentError(f"prices[{name!r}]: no such node type (types: "
                                f"{', '.join(names)})")
        if isinstance(price, bool) or not isinstance(price, numbers.Real) \
                or not math.isfinite(price) or price < 0:
            raise ArgumentError(f"prices[{name!r}]: expected a finite number >= 0, got {price!r}")
        out[name] = float(price)
    return {name: out.get(name, 0.0) for name in names}


def _max_nodes(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ArgumentError(f"max_nodes: expected an integer >= 0, got {value!r}")
    return int(value)


@attrs.frozen
class _Workloads:
    """The pending pods that need no node to expand, and the DaemonSet manifests."""

    pods: tuple[Pod, ...]
    objects: tuple
    daemon_sets: tuple[Mapping[str, Any], ...]


def _workloads(source: Any) -> _Workloads:
    if isinstance(source, Pod) or (isinstance(source, list | tuple)
                                   and all(isinstance(p, Pod) for p in source)):
        return _Workloads(as_pods(source, "workloads"), (), ())
    manifests = list(iter_manifests(source))
    pods = [m for m in manifests if m.get("kind") == "Pod"]
    others = [m for m in manifests if m.get("kind") not in CONTROLLER_KINDS
              and m.get("kind") != "Pod"]
    if others:
        kind = others[0].get("kind")
        raise ArgumentError(f"workloads: expected workload manifests or pods, got kind {kind!r}")
    controllers = [m for m in manifests if m.get("kind") in CONTROLLER_KINDS
                   and m.get("kind") != "DaemonSet"]
    expansion = expand_workloads(controllers)
    return _Workloads(as_pods(pods, "workloads") + expansion.pods, expansion.workloads,
                      tuple(m for m in manifests if m.get("kind") == "DaemonSet"))


# =========================================================================== clusters


def _new_node(template: Node, k: int) -> Node:
    return node_from_template(template, f"{template.name}-plan-{k}")


@attrs.frozen(eq=False)
class _Planner:
    """The fixed inputs of one :func:`plan` call."""

    cluster: ClusterState
    types: tuple[Node, ...]
    prices: dict[str, float]
    work: _Workloads
    profile: Any

    def build(self, counts: Mapping[str, int]) -> tuple[ClusterState, tuple[Pod, ...]]:
        """The cluster with ``counts`` new nodes of each type (their DaemonSet pods bound) and
        the pending pods: DaemonSet pods of the existing nodes first, then the workloads'."""
        nodes = list(self.cluster.nodes) + [_new_node(t, k) for t in self.types
                                            for k in range(counts.get(t.name, 0))]
        objects = dict(self.cluster.objects)
        if self.work.objects:
            objects["workloads"] = tuple(objects.get("workloads", ())) + self.work.objects
        state = ClusterState.from_records(nodes, tuple(self.cluster.pods),
                                          dict(self.cluster.namespaces), objects)
        if not self.work.daemon_sets:
            return state, self.work.pods
        daemons = expand_workloads(self.work.daemon_sets, cluster=state).pods
        existing = set(self.cluster.node_names)
        on_new = [(p, _pinned_node(p)) for p in daemons if _pinned_node(p) not in existing]
        pending = tuple(p for p in daemons if _pinned_node(p) in existing)
        state = state.widened_for([p for p, _ in on_new]).bind(on_new) if on_new else state
        return state, pending + self.work.pods

    def run(self, counts: Mapping[str, int]) -> Result:
        state, pods = self.build(counts)
        return schedule_batch(state, pods, profile=self.profile)

    def daemon_requests(self, template: Node) -> dict[str, int]:
        """The requests of the DaemonSet pods a new node of ``template``'s type carries."""
        if not self.work.daemon_sets:
            return {}
        one = ClusterState.from_records([_new_node(template, 0)])
        total: dict[str, int] = {}
        for pod in expand_workloads(self.work.daemon_sets, cluster=one).pods:
            for name, value in {**pod_requests(pod), _PODS: 1}.items():
                total[name] = total.get(name, 0) + value
        return total


def _pinned_node(pod: Pod) -> str:
    """The node a DaemonSet pod is pinned to (``metadata.name In [node]``)."""
    return pod.node_affinity.required[0].match_fields[0].values[0]


# =========================================================================== lower bound


def _shapes(pods: Sequence[Pod]) -> list[tuple[dict[str, int], int]]:
    """Distinct request vectors of ``pods`` (the pod slot included) with their counts; one
    ``pod_requests`` per distinct request shape, not per pod."""
    shapes: dict[tuple, int] = {}
    for pod in pods:
        key = (pod.containers, pod.init_containers, pod.overhead, pod.pod_requests)
        shapes[key] = shapes.get(key, 0) + 1
    out = []
    for (containers, init, overhead, level), count in shapes.items():
        probe = Pod("probe", containers=containers, init_containers=init, overhead=overhead,
                    pod_requests=level)
        out.append(({**pod_requests(probe), _PODS: 1}, count))
    return out


def _demand(shapes: Sequence[tuple[dict[str, int], int]],
            per_node: Sequence[Mapping[str, int]]) -> dict[str, int]:
    """Total requests of the shapes that fit the effective allocatable of some type (a pod
    larger than every type is left out: it fits nowhere, see ``PlanReport.unschedulable``)."""
    total: dict[str, int] = {_PODS: 0}
    for request, count in shapes:
        if not any(all(v <= alloc.get(n, 0) for n, v in request.items() if v > 0)
                   for alloc in per_node):
            continue
        for name, value in request.items():
            total[name] = total.get(name, 0) + value * count
    return total


def _free(cluster: ClusterState, names: Sequence[str]) -> npt.NDArray[np.int64]:
    """Unused allocatable of the schedulable existing nodes, per resource of ``names``."""
    open_rows = ~np.asarray(cluster.unschedulable, dtype=bool)
    free = np.clip(cluster.allocatable[open_rows] - cluster.requested[open_rows], 0, None)
    sums = free.sum(axis=0)
    column = {name: j for j, name in enumerate(cluster.resource_names)}
    return np.array([int(sums[column[n]]) if n in column else 0 for n in names], np.int64)


def _lower_bound(planner: _Planner, pods: Sequence[Pod]) -> dict[str, int] | None:
    """The integer program's counts, or ``None`` when no counts cover the demand."""
    shapes = _shapes(pods)
    names = sorted({n for request, _ in shapes for n in request} | {_PODS})
    alloc = [_effective(t, planner.daemon_requests(t), names) for t in planner.types]
    demand = _demand(shapes, [dict(zip(names, a)) for a in alloc])
    need = np.maximum(np.array([demand.get(n, 0) for n in names], np.float64)
                      - _free(planner.cluster, names), 0.0)
    per_node = np.array(alloc, np.float64).T  # [R, T]
    keep = need > 0
    if not keep.any():
        return {t.name: 0 for t in planner.types}
    a, b = per_node[keep], need[keep]
    if (a.max(axis=1) <= 0).any():
        return None
    scale = a.max(axis=1)
    a, b = a / scale[:, None], b / scale
    cost = np.array([planner.prices.get(t.name, 1.0) if planner.prices else 1.0
                     for t in planner.types])
    counts = _solve(cost, a, b)
    if counts is not None and planner.prices:
        total = float(cost @ counts)
        a2 = np.vstack([a, -cost])
        b2 = np.append(b, -(total + 1e-9 * max(1.0, total)))
        counts = _solve(np.ones(len(cost)), a2, b2)
        if counts is None:  # the second stage lost the optimum to rounding: keep the first
            counts = _solve(cost, a, b)
    if counts is None:
        return None
    return {t.name: int(c) for t, c in zip(planner.types, counts)}


def _solve(cost: npt.NDArray, a: npt.NDArray, lower: npt.NDArray) -> npt.NDArray | None:
    from scipy.optimize import Bounds, LinearConstraint, milp

    res = milp(cost, constraints=LinearConstraint(a, lower, np.inf),
               integrality=np.ones(len(cost)), bounds=Bounds(0, np.inf))
    if res.x is None:
        return None
    return np.round(res.x).astype(np.int64)


def _effective(template: Node, daemons: Mapping[str, int], names: Sequence[str]) -> list[int]:
    """A new node's allocatable per resource of ``names``, less its DaemonSet pods'."""
    return [max(0, int(template.allocatable.get(n, 0)) - int(daemons.get(n, 0)))
            for n in names]


# =========================================================================== verification


def plan(cluster: ClusterState | Any, workloads: Any, node_types: Sequence[Node | Mapping],
         *, prices: Mapping[str, float] | None = None, max_nodes: int = 1000,
         profile: Any = None, progress: Callable[[int], None] | None = None) -> PlanReport:
    """The fewest (or, with prices, cheapest) new nodes of the given types that make every
    pending pod schedule, with the integer program's lower bound beside the verified answer.

    Parameters
    ----------
    cluster : ClusterState or Any
        The cluster now (anything :func:`ksched.load_cluster` reads); never modified.
    workloads : Any
        Workload manifests (anything :func:`ksched.planning.expand_workloads` reads: a
        DaemonSet gives one pod per eligible node, new nodes included) or pods (any form
        :func:`ksched.inputs.as_pods` takes): the pending pods that must all schedule.
    node_types : sequence of Node or Mapping
        Node records or Node manifests used as templates; node ``k`` of type ``t`` is named
        ``<t.name>-plan-<k>`` with that hostname label, other labels, taints and allocatable
        copied.
    prices : Mapping[str, float], optional
        Node type name -> price per node (>= 0; types left out cost 0). Without prices the
        node count is minimised.
    max_nodes : int, default 1000
        The most new nodes the search adds.
    profile : Profile or SchedulerConfig, optional
        The scheduling profile of the verification (the default one when ``None``).
    progress : callable, optional
        ``progress(1)`` after each verifying ``schedule_batch`` of the search (e.g. a tqdm
        ``update``).

    Returns
    -------
    PlanReport

    Raises
    ------
    ArgumentError
        ``node_types`` empty or holding something else than nodes, a price for an unknown
        type or a negative price, a bad ``max_nodes`` or ``workloads``.

    Examples
    --------
    >>> from ksched import Container, Node, Pod
    >>> pods = [Pod(f"p{i}", containers=[Container("c", requests={"cpu": "1"})])
    ...         for i in range(10)]
    >>> m = Node("m", allocatable={"cpu": "4", "memory": "16Gi", "pods": 110})
    >>> report = plan(ClusterState.from_records([]), pods, [m])
    >>> report.bound, report.nodes
    ({'m': 3}, {'m': 3})
    """
    types = _node_types(node_types)
    planner = _Planner(as_cluster(cluster), types, _prices(prices, types),
                       _workloads(workloads), profile)
    limit = _max_nodes(max_nodes)
    progress = check_progress(progress)
    _, pending = planner.build({})
    bound = _lower_bound(planner, pending)
    counts = {t.name: min((bound or {}).get(t.name, 0), limit) for t in types}
    order = [t.name for t in types for _ in range(counts[t.name])]
    search = _Search(planner, limit, progress)
    result, message = search.grow(counts, order)
    if not message:
        result = search.shrink(counts, order, result)
    return PlanReport(bound, dict(counts), planner.prices, result,
                      tuple(search.unfit.values()), message, search.schedules)


class _Search:
    """The add-then-remove search over node counts (``counts`` and ``order`` change)."""

    def __init__(self, planner: _Planner, limit: int,
                 progress: Callable[[int], None] | None = None) -> None:
        self.planner = planner
        self.limit = limit
        self.progress = progress
        self.schedules = 0
        #: Pod key -> why it fits no type; and per probe shape, the types that take it.
        self.unfit: dict[str, Unfit] = {}
        self._fits: dict[Any, tuple[list[str], dict[str, str]]] = {}
        self._single: dict[str, tuple[ClusterState, tuple[Pod, ...]]] = {}

    def schedule(self, counts: Mapping[str, int]) -> tuple[Result, list[Pod]]:
        self.schedules += 1
        result = self.planner.run(counts)
        if self.progress is not None:
            self.progress(1)
        failed = [p.pod for p in result.placements if p.node is None]
        return result, [p for p in failed if p.key not in self.unfit]

    def grow(self, counts: dict[str, int], order: list[str]) -> tuple[Result, str]:
        """Add nodes until every pod that fits some type schedules (or the limit)."""
        while True:
            result, failed = self.schedule(counts)
            chosen = self._choose(failed)
            if chosen is None:
                return result, ""
            if sum(counts.values()) >= self.limit:
                return result, (f"max_nodes reached: {self.limit} new nodes and "
                                f"{len(failed)} pods still unscheduled")
            step = min(self._step(chosen, failed), self.limit - sum(counts.values()))
            counts[chosen] += step
            order.extend([chosen] * step)

    def shrink(self, counts: dict[str, int], order: list[str], result: Result) -> Result:
        """Remove nodes (the type added last first) while every pod still schedules."""
        changed = True
        while changed:
            changed = False
            for name in list(dict.fromkeys(reversed(order))):
                while counts[name] > 0:
                    counts[name] -= 1
                    trial, failed = self.schedule(counts)
                    if failed:
                        counts[name] += 1
                        break
                    del order[len(order) - 1 - order[::-1].index(name)]
                    result, changed = trial, True
        return result

    def _step(self, name: str, failed: Sequence[Pod]) -> int:
        """Nodes of type ``name`` to add at once: the fewest whose effective allocatable
        covers the requests of the failing pods that fit the type (at least one; the removal
        step takes back any surplus)."""
        template = next(t for t in self.planner.types if t.name == name)
        daemons = self.planner.daemon_requests(template)
        shapes = _shapes([p for p in failed if name in self._fit(p)[0]])
        names = sorted({n for request, _ in shapes for n in request})
        alloc = dict(zip(names, _effective(template, daemons, names)))
        demand = _demand(shapes, [alloc])
        return max([1] + [-(-demand[n] // alloc[n]) for n in names if alloc[n] > 0])

    def _choose(self, failed: Sequence[Pod]) -> str | None:
        """For the first failing pod that fits some type: the type that holds copies of it
        at the lowest price per copy (without prices: the most copies per node), the first
        given on a tie."""
        for pod in failed:
            fitting, reasons = self._fit(pod)
            if fitting:
                return min(fitting, key=lambda name: self._cost_per_copy(name, pod))
            self.unfit[pod.key] = Unfit(pod, reasons)
        return None

    def _cost_per_copy(self, name: str, pod: Pod) -> float:
        """Price (1 without prices) over the copies of ``pod`` that one new node of type
        ``name`` holds by its allocatable less its DaemonSet pods'."""
        ((request, _),) = _shapes([pod])
        template = next(t for t in self.planner.types if t.name == name)
        alloc = _effective(template, self.planner.daemon_requests(template), list(request))
        copies = min(a // v for a, v in zip(alloc, request.values()) if v > 0)
        price = self.planner.prices.get(name, 0.0) if self.planner.prices else 1.0
        return price / max(copies, 1)

    def _fit(self, pod: Pod) -> tuple[list[str], dict[str, str]]:
        key = attrs.evolve(pod, name="probe", uid="", labels={})
        if key not in self._fits:
            fitting, reasons = [], {}
            for t in self.planner.types:
                state, _ = self._one(t)
                placement = schedule_batch(state, [pod], profile=self.planner.profile
                                           ).placements[0]
                if placement.node is None:
                    reasons[t.name] = placement.reason
                else:
                    fitting.append(t.name)
            self._fits[key] = (fitting, reasons)
        return self._fits[key]

    def _one(self, template: Node) -> tuple[ClusterState, tuple[Pod, ...]]:
        """A cluster of one new node of ``template``'s type, its DaemonSet pods bound."""
        if template.name not in self._single:
            single = attrs.evolve(self.planner, cluster=ClusterState.from_records([]))
            self._single[template.name] = single.build({template.name: 1})
        return self._single[template.name]

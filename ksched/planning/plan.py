"""Node-type what-ifs: how many nodes of which given types make every pending pod schedule,
at the lowest price.

:func:`plan` answers in two steps (details in the modules named):

1. **Lower bound** (:mod:`ksched.planning.plan_bound`, ``scipy.optimize.milp``): pods are
   grouped by spec; each group may use only the node types the scheduler places one of its
   pods on (a one-node cluster of each type, its DaemonSet pods bound) and the existing nodes
   on which it passes every filter but the resource ones; the integer program then buys the
   cheapest nodes whose room, with the existing nodes' unused room, holds every group's
   requests. Pods that fit no type are listed apart (:attr:`PlanReport.unschedulable`) and
   left out of the bound.
2. **Exact search** (:mod:`ksched.planning.plan_search`): from the bound's counts, the
   scheduler itself (:func:`ksched.schedule_batch` of every pending pod on the cluster with
   the new nodes) judges each candidate: grow until every pod that fits some type is placed,
   bisect each type, then take single moves (one node fewer, one node swapped for a cheaper
   type, cheaper nodes traded for a dearer one) while one keeps everything placed, and block
   trades (1/8, 1/16, 1/32 of a type's nodes for cheaper ones) where single moves stall.

The report gives the cost, the bound, the gap between them and, for the gap
(:mod:`ksched.planning.plan_gap`): how full the scheduler leaves each type's new nodes, which
pods fail with one node fewer of each type, what they need and the scheduler's reasons, and
why in one sentence (the share of a node the neediest of them takes, the scoring strategy).
A budget (``max_nodes``, ``max_cost``, ``time_limit``) stops the search; the report then says
so and is not :attr:`complete`.
New node ``k`` of type ``t`` is named ``<t>-plan-<k>``.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Node, Pod, PriorityClass
from ksched.engine import Placement, Result
from ksched.errors import ArgumentError
from ksched.inputs import (
    as_cluster,
    as_pods,
    check_progress,
    check_seed,
    check_tie_break,
    merged_classes,
)
from ksched.io import admit_priorities, iter_manifests
from ksched.limits import MAX_NODES, check_count
from ksched.planning import plan_bound, plan_devices, plan_gap
from ksched.planning.plan_gap import Need, TypeUse
from ksched.planning.plan_model import Groups, Planner, Unfit, Workloads, pinned_to_existing
from ksched.planning.plan_search import Budget, OutOfBudget, Search, Trial
from ksched.planning.workloads import CONTROLLER_KINDS, expand_workloads
from ksched.state import ClusterState

__all__ = ["PlanReport", "Unfit", "plan"]

#: :attr:`PlanReport.status` values.
COMPLETE, OUT_OF_BUDGET, UNFIT = "complete", "out of budget", "some pods fit no type"


# =========================================================================== report


@attrs.frozen(eq=False)
class PlanReport:
    """What :func:`plan` found.

    Attributes
    ----------
    bound : node type name -> count, the integer program's answer (``None``: no solution).
    bound_cost : a proven lower bound on the price of any plan (without prices: on the node
        count); ``None`` without a bound.
    nodes : node type name -> count, judged by exact scheduling.
    prices : node type name -> price per node (empty without prices).
    result : the last exact schedule of ``nodes`` (new nodes included).
    unschedulable : pending pods that fit no type and were not placed, with each type's
        reason (a DaemonSet pod of an existing node: the scheduler's there, for every type);
        and DaemonSet pods that do not fit the new nodes of a type the plan buys.
    failed : pods that fit some type but were not placed: only when the search stopped on
        its budget.
    message : why the search stopped short, else ``""``.
    schedules : exact schedules run.
    local_minimum : no single move (one node fewer, one node swapped for a cheaper type, one
        node added for the fewest nodes of another type that pay for it) and no block trade
        (:meth:`~ksched.planning.plan_search.Search.block_trade`) keeps every pod placed:
        checked by exact scheduling.
    fewer : node type name -> (pods that fail with one node of it fewer, the first few of
        them as (pod, the scheduler's reason)): why the plan does not go down to the bound.
    seconds : the time the plan took.
    usage : node type name -> how its new nodes are used at the end of :attr:`result`
        (:class:`~ksched.planning.plan_gap.TypeUse`: pods, how many could use another type,
        the share of each resource requested, devices allocated per DeviceClass).
    needs : pod key -> what a pod named in :attr:`fewer` needs (its requests, the types it
        fits and the share of a new node of the first it takes).
    why : how the scheduler filled the new nodes (its scoring strategy), the gap's cause.
    """

    bound: dict[str, int] | None
    bound_cost: float | None
    nodes: dict[str, int]
    prices: dict[str, float]
    result: Result
    unschedulable: tuple[Unfit, ...] = ()
    failed: tuple[Placement, ...] = ()
    message: str = ""
    schedules: int = 0
    local_minimum: bool = False
    fewer: dict[str, tuple[int, tuple[tuple[str, str], ...]]] = attrs.field(factory=dict)
    seconds: float = 0.0
    usage: dict[str, TypeUse] = attrs.field(factory=dict)
    needs: dict[str, Need] = attrs.field(factory=dict)
    why: str = ""

    @property
    def placements(self) -> tuple:
        """The final schedule's placements (pending pods, DaemonSet pods first)."""
        return self.result.placements

    @property
    def cost(self) -> float:
        """The nodes' total price (without prices: the node count)."""
        return _cost(self.nodes, self.prices)

    @property
    def gap(self) -> float | None:
        """``cost - bound_cost`` (``None`` without a bound)."""
        return None if self.bound_cost is None else self.cost - self.bound_cost

    @property
    def status(self) -> str:
        """``"complete"``, ``"out of budget"`` (the search stopped on a limit) or ``"some
        pods fit no type"`` (everything else is placed)."""
        if self.message:
            return OUT_OF_BUDGET
        return UNFIT if self.unschedulable else COMPLETE

    @property
    def complete(self) -> bool:
        """Every pending pod is placed, within the budget."""
        return self.status == COMPLETE

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: counts, costs, the gap and its reasons, the pods left out."""
        return {"status": self.status, "complete": self.complete, "message": self.message,
                "bound": None if self.bound is None else dict(self.bound),
                "nodes": dict(self.nodes), "prices": dict(self.prices), "cost": self.cost,
                "bound_cost": self.bound_cost, "gap": self.gap,
                "local_minimum": self.local_minimum,
                "pending": len(self.result.placements),
                "scheduled": len(self.result.placements) - len(self.result.unschedulable),
                "failed": [{"pod": p.pod.key, "reason": p.reason} for p in self.failed],
                "unschedulable": [{"pod": u.pod.key, "reasons": dict(u.reasons)}
                                  for u in self.unschedulable],
                "fewer": {t: {"failing": n, "examples": [
                    {"pod": k, "needs": str(self.needs.get(k, "")), "reason": r}
                    for k, r in shown]}
                          for t, (n, shown) in self.fewer.items()},
                "usage": {t: u.to_dict() for t, u in self.usage.items()}, "why": self.why,
                "schedules": self.schedules, "seconds": round(self.seconds, 3)}

    def __str__(self) -> str:
        lines = _table(self._rows())
        lines.append(self._totals())
        lines += self._gap_lines()
        lines += [f"fits no type: {u.pod.key}: " + "; ".join(
            f"{t}: {r}" for t, r in u.reasons.items()) for u in self.unschedulable]
        lines += [f"not scheduled: {p.pod.key}: {p.reason}" for p in self.failed[:10]]
        if len(self.failed) > 10:
            lines.append(f"... and {len(self.failed) - 10} more not scheduled")
        lines.append(f"status: {self.status}" + (f": {self.message}" if self.message else ""))
        return "\n".join(lines)

    def _rows(self) -> list[tuple[str, ...]]:
        head = ("NODE TYPE", "BOUND", "NODES") + (("PRICE", "COST") if self.prices else ())
        rows = [head]
        for name, count in self.nodes.items():
            row = (name, "-" if self.bound is None else str(self.bound.get(name, 0)), str(count))
            if self.prices:
                price = self.prices.get(name, 0.0)
                row += (f"{price:g}", f"{price * count:,.2f}")
            rows.append(row)
        return rows

    def _totals(self) -> str:
        pending = len(self.result.placements)
        placed = pending - len(self.result.unschedulable)
        unfit = len(self.result.unschedulable) - len(self.failed)
        daemons = len(self.unschedulable) - unfit
        text = f"total: {sum(self.nodes.values()):,} new nodes"
        if self.prices:
            text += f", cost {self.cost:,.2f}"
        text += f"; {placed:,}/{pending:,} pending pods scheduled"
        extra = []
        if self.failed:
            extra.append(f"{len(self.failed):,} not for want of budget")
        if unfit:
            extra.append(f"{unfit:,} fit no node type")
        if daemons > 0:
            extra.append(f"{daemons:,} DaemonSet pods fit no new node of their type")
        return text + (f" ({', '.join(extra)})" if extra else "") + \
            f"; {self.schedules} exact schedules, {self.seconds:.1f} s"

    def _gap_lines(self) -> list[str]:
        if self.bound_cost is None or self.message:
            return []
        unit = "cost" if self.prices else "nodes"
        share = f" ({self.gap / self.bound_cost:.1%})" if self.bound_cost > 0 else ""
        lines = [f"gap: {unit} {self.cost:,.2f} against the bound {self.bound_cost:,.2f}: "
                 f"+{self.gap:,.2f}{share}; the bound packs pods by their summed requests "
                 "(no fragmentation, no scheduling order or scores)"]
        if self.usage:
            lines.append("new nodes at the end:")
            width = max(len(name) for name in self.usage)
            lines += [f"  {name.ljust(width)}  {use}" for name, use in self.usage.items()]
        if self.why:
            lines.append(f"why: {self.why}")
        if self.local_minimum:
            lines.append("local minimum: no single node fewer, no swap for a cheaper type, no "
                         "trade of cheaper nodes for one dearer and no block of 1/8, 1/16 or "
                         "1/32 of a type's nodes traded for cheaper ones keeps every pod "
                         "scheduled")
        for name, (failing, shown) in self.fewer.items():
            verb = "pod fails" if failing == 1 else "pods fail"
            lines.append(f"  one {name} fewer: {failing:,} {verb}, e.g. " + "; ".join(
                f"{key} ({self.needs[key]}): {reason}" if key in self.needs
                else f"{key}: {reason}" for key, reason in shown))
        return lines


def _cost(counts: Mapping[str, int], prices: Mapping[str, float]) -> float:
    if not prices:
        return float(sum(counts.values()))
    return float(sum(prices.get(t, 0.0) * n for t, n in counts.items()))


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


# =========================================================================== arguments


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


def _max_cost(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or value < 0:
        raise ArgumentError(f"max_cost: expected a finite number >= 0, got {value!r}")
    return float(value)


def _time_limit(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or value <= 0:
        raise ArgumentError(f"time_limit: expected a number of seconds > 0, got {value!r}")
    return float(value)


def _priority_classes(value: Any) -> tuple[PriorityClass, ...]:
    if isinstance(value, PriorityClass | Mapping | str) or not isinstance(value, Iterable):
        raise ArgumentError("priority_classes: expected a list of PriorityClass records or "
                            f"manifests, got {type(value).__name__}")
    return tuple(v if isinstance(v, PriorityClass) else PriorityClass.from_manifest(v)
                 for v in value)


def _workloads(source: Any, classes: Sequence[PriorityClass]) -> Workloads:
    """The pending pods (priorities admitted with ``classes`` and the workloads' own
    PriorityClasses), the DaemonSets, the workloads' objects and claims."""
    if isinstance(source, Pod) or (isinstance(source, list | tuple)
                                   and all(isinstance(p, Pod) for p in source)):
        return Workloads(admit_priorities(as_pods(source, "workloads"), classes))
    manifests = list(iter_manifests(source))
    known = set(CONTROLLER_KINDS) | {"Pod", "PriorityClass"}
    others = [m for m in manifests if m.get("kind") not in known]
    if others:
        kind = others[0].get("kind")
        raise ArgumentError(f"workloads: expected workload manifests or pods, got kind {kind!r}")
    own = tuple(PriorityClass.from_manifest(m) for m in manifests
                if m.get("kind") == "PriorityClass")
    names = {pc.name for pc in own}  # the workloads' own class replaces one of its name
    classes = tuple(pc for pc in classes if pc.name not in names) + own
    pods = [m for m in manifests if m.get("kind") == "Pod"]
    controllers = [m for m in manifests if m.get("kind") in CONTROLLER_KINDS
                   and m.get("kind") != "DaemonSet"]
    expansion = expand_workloads(controllers)
    return Workloads(admit_priorities(as_pods(pods, "workloads") + expansion.pods, classes),
                     expansion.workloads,
                     tuple(m for m in manifests if m.get("kind") == "DaemonSet"),
                     expansion.claims)


# =========================================================================== the plan


def plan(cluster: ClusterState | Any, workloads: Any, node_types: Sequence[Node | Mapping],
         *, prices: Mapping[str, float] | None = None, max_nodes: int | None = None,
         max_cost: float | None = None, time_limit: float | None = None,
         profile: Any = None, priority_classes: Iterable[Any] = (),
         progress: Callable[[int], None] | None = None, tie_break: str = "round-robin",
         seed: int | None = 0) -> PlanReport:
    """The cheapest (without prices: the fewest) new nodes of the given types that make every
    pending pod schedule, with the integer program's lower bound and the gap between them.

    Parameters
    ----------
    cluster : ClusterState or Any
        The cluster now (anything :func:`ksched.load_cluster` reads); never modified.
    workloads : Any
        Workload manifests (anything :func:`ksched.planning.expand_workloads` reads: a
        DaemonSet gives one pod per eligible node, new nodes included; a StatefulSet's
        volumeClaimTemplates give its claims), PriorityClasses, or pods (any form
        :func:`ksched.inputs.as_pods` takes): the pending pods that must all schedule, in
        the order the queue pops them.
    node_types : sequence of Node, Mapping or (Node, slices)
        Node records or Node manifests used as templates; node ``k`` of type ``t`` is named
        ``<t.name>-plan-<k>`` with that hostname label, other labels, taints and allocatable
        copied. A type with devices is a ``(node, ResourceSlices)`` pair or a ``List``
        manifest of one Node and its ResourceSlices (node-local, naming the node): each new
        node gets its own copies (:mod:`ksched.planning.plan_devices`); pending and DaemonSet
        pods' claims from templates are generated as the resourceclaim controller makes them.
    prices : Mapping[str, float], optional
        Node type name -> price per node (>= 0; types left out cost 0). Without prices the
        node count is minimised.
    max_nodes : int, optional
        The most new nodes in all (default and at most :data:`ksched.limits.MAX_NODES`).
    max_cost : float, optional
        The highest total price of the new nodes.
    time_limit : float, optional
        Seconds for the whole plan; the search stops when they are spent.
    profile : Profile or SchedulerConfig, optional
        The scheduling profile (the default one when ``None``).
    priority_classes : iterable of PriorityClass or manifests
        PriorityClasses besides the cluster's own (one of the same name replaces the
        cluster's): pods naming one get its value and preemption policy, as
        :func:`ksched.schedule_batch` admits them; a pod naming a class that neither holds
        is refused.
    progress : callable, optional
        ``progress(1)`` after each exact schedule of the search (e.g. a tqdm ``update``).
    tie_break, seed : str, int, optional
        How each exact schedule breaks ties between equal-scoring nodes, as
        :func:`ksched.schedule_batch` takes them (``"heap"``: v1.35.4's own order).

    Returns
    -------
    PlanReport

    Raises
    ------
    ArgumentError
        ``node_types`` empty or holding something else than nodes, a price for an unknown
        type or a negative price, a bad budget or ``workloads``.

    Examples
    --------
    >>> from ksched import Container, Node, Pod
    >>> pods = [Pod(f"p{i}", containers=[Container("c", requests={"cpu": "1"})])
    ...         for i in range(10)]
    >>> m = Node("m", allocatable={"cpu": "4", "memory": "16Gi", "pods": 110})
    >>> report = plan(ClusterState.from_records([]), pods, [m])
    >>> report.bound, report.nodes, report.status
    ({'m': 3}, {'m': 3}, 'complete')
    """
    start = time.monotonic()
    types, slices = plan_devices.node_types(node_types)
    price_map = _prices(prices, types)
    budget = Budget(_max_nodes(max_nodes), _max_cost(max_cost), _time_limit(time_limit), start)
    progress = check_progress(progress)
    state = as_cluster(cluster)
    classes = merged_classes(state, _priority_classes(priority_classes))
    work = _workloads(workloads, classes)
    state, pods = plan_devices.with_claims(state, work.pods)
    planner = Planner(state, types, price_map, attrs.evolve(work, pods=pods),
                      profile, check_tie_break(tie_break), check_seed(seed), slices)
    return _Plan(planner, budget, progress).run()


def _max_nodes(value: Any) -> int:
    return MAX_NODES if value is None else check_count(value, "max_nodes", MAX_NODES)


class _Plan:
    """One :func:`plan` run: the groups, the bound, the search, the report."""

    def __init__(self, planner: Planner, budget: Budget,
                 progress: Callable[[int], None] | None) -> None:
        self.planner, self.budget = planner, budget
        names = [t.name for t in planner.types]
        self.prices = np.array([planner.prices[n] if planner.prices else 1.0 for n in names])
        self.base, self.pending = planner.build({})
        pinned = pinned_to_existing(self.pending, planner.cluster)
        self.free_rows = [i for i, p in enumerate(pinned) if not p]
        self.groups = Groups.of([self.pending[i] for i in self.free_rows])
        self.fits, self.reasons = planner.type_fit(self.groups)
        self.alloc = planner.effective(self.groups.resources)
        self.devices = plan_devices.device_columns(
            self.groups.probes, planner.types, planner.slices, self.base,
            {t.name: plan_devices.daemon_needs(planner.daemon_schedule(t))
             for t in planner.types})
        self.requests = np.hstack([self.groups.requests, self.devices.requests])
        self.group_of = np.full(len(self.pending), -1, np.int64)
        for g, members in enumerate(self.groups.members):
            self.group_of[[self.free_rows[i] for i in members]] = g
        fittable_group = self.fits.any(axis=1)
        self.fittable = (self.group_of >= 0) & fittable_group[self.group_of]
        self.progress = progress

    def run(self) -> PlanReport:
        bound = self._bound()
        search = Search(self.planner, self.fittable, self.prices, self.budget, self._deficit,
                        self.progress)
        start = bound.counts if bound.counts is not None else np.zeros(len(self.prices),
                                                                        np.int64)
        start = self._clip(start)
        message, trial, local = "", None, False
        try:
            trial, below = search.grow(start)
            trial = search.bisect(trial, below)
            trial = search.descend(trial)
            local = True
        except OutOfBudget as stop:
            message = str(stop)
            trial = search.best or (trial if trial is not None else self._last(search, start))
        return self._report(bound, search, trial, message, local)

    def _clip(self, counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """``counts`` scaled down into the budget (the bound may lie beyond it)."""
        counts = counts.copy()
        while counts.sum() and not self.budget.fits(counts, self.prices):
            counts = counts * 9 // 10
        return counts

    def _last(self, search: Search, start: npt.NDArray[np.int64]) -> Trial:
        """The latest trial (the time ran out before the first feasible one)."""
        if search.trials:
            return list(search.trials.values())[-1]
        return Trial(start, self.planner.run(dict(zip([t.name for t in self.planner.types],
                                                      start.tolist()))),
                     np.zeros(0, np.int64))

    def _bound(self) -> plan_bound.Bound:
        keep = self.fits.any(axis=1)
        req, counts = self.requests[keep], self.groups.counts[keep]
        static = self.planner.existing_fit(Groups(
            tuple(p for p, k in zip(self.groups.probes, keep) if k), (), self.groups.resources,
            self.groups.requests[keep]), self.base)
        free = np.hstack([self._free(), self.devices.free])
        pools = plan_bound.existing_pools(static, free, req)
        left = self.budget.left()
        alloc = np.hstack([self.alloc, self.devices.allocatable])
        return plan_bound.solve(req, counts, self.fits[keep], alloc, self.prices, pools,
                                None if left is None else max(left / 4, 1.0))

    def _free(self) -> npt.NDArray[np.int64]:
        """Unused allocatable per existing node and group resource, less the requests of
        the DaemonSet pods pinned to it; 0 on cordoned nodes."""
        base = self.base
        free = np.zeros((base.num_nodes, len(self.groups.resources)), np.int64)
        column = {name: j for j, name in enumerate(base.resource_names)}
        for k, name in enumerate(self.groups.resources):
            if name in column:
                j = column[name]
                free[:, k] = base.allocatable[:, j] - base.requested[:, j]
        pinned = [i for i in range(len(self.pending)) if self.group_of[i] < 0]
        if pinned:
            extra = Groups.of([self.pending[i] for i in pinned])
            for probe, members, wanted in zip(extra.probes, extra.members, extra.requests):
                node = base.node_index[probe.node_affinity.required[0].match_fields[0]
                                       .values[0]]
                for name, value in zip(extra.resources, wanted):
                    if name in self.groups.resources:
                        free[node, self.groups.resources.index(name)] -= value * len(members)
        free[np.asarray(base.unschedulable, dtype=bool)] = 0
        return np.clip(free, 0, None)

    def _deficit(self, failed: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The cheapest new nodes that hold the ``failed`` pods alone (at least one)."""
        counts = np.bincount(self.group_of[failed], minlength=len(self.groups.probes))
        keep = counts > 0
        bound = plan_bound.solve(self.requests[keep], counts[keep], self.fits[keep],
                                 np.hstack([self.alloc, self.devices.allocatable]),
                                 self.prices, plan_bound.Pools.none(int(keep.sum()),
                                                                    self.requests.shape[1]))
        step = bound.counts if bound.counts is not None else np.zeros_like(self.prices,
                                                                          np.int64)
        if not step.sum():
            step[int(np.argmin(self.prices))] = 1
        return step

    def _unfit(self, trial: Trial) -> tuple[Unfit, ...]:
        """Unplaced pods that fit no type (a DaemonSet pod pinned to an existing node: the
        scheduler's reason in ``trial``, for each type), then DaemonSet pods that fit no type
        bought."""
        out = []
        for i in np.flatnonzero(trial.result.node_rows < 0):
            if not self.fittable[i]:
                g = self.group_of[i]
                reasons = self.reasons[g] if g >= 0 else dict.fromkeys(
                    (t.name for t in self.planner.types), trial.result.placements[int(i)].reason)
                out.append(Unfit(self.pending[i], reasons))
        for t, count in zip(self.planner.types, trial.counts):
            if count:
                out += self.planner.daemon_fit(t)[1]
        return tuple(out)

    def _report(self, bound: plan_bound.Bound, search: Search, trial: Trial, message: str,
                local: bool) -> PlanReport:
        types = self.planner.types
        names = [t.name for t in types]
        placements = trial.result.placements
        fewer, needs = {}, {}
        for t, (n, shown) in (search.fewer(trial.counts).items() if local else ()):
            fewer[names[t]] = (n, tuple((self.pending[i].key, reason) for i, reason in shown))
            for i, _ in shown:
                g = self.group_of[i]
                allowed = self.fits[g] if g >= 0 else np.zeros(len(types), np.bool_)
                needs[self.pending[i].key] = plan_gap.needs(
                    self.pending[i], types, allowed, self.alloc, self.groups.resources)
        use = self._usage(trial)
        why = ""
        gap = bound.counts is not None and float(self.prices @ trial.counts) > bound.lower + 1e-9
        if local and needs and gap:  # the pod that takes the largest share of a node
            pod = max(needs, key=lambda key: needs[key].largest[1])
            why = plan_gap.spread_note(plan_gap.scoring_strategy(self.planner.profile), use,
                                       pod, needs[pod])
            decoys = [name for name, (_, shown) in fewer.items()
                      if name not in needs[pod].types and any(k == pod for k, _ in shown)]
            if why and decoys:
                why += (f"; with one {' or one '.join(decoys)} fewer it fails too, though it "
                        f"does not fit {'/'.join(decoys)}: those nodes draw other pods away")
        return PlanReport(
            None if bound.counts is None else dict(zip(names, bound.counts.tolist())),
            None if bound.counts is None else bound.lower,
            dict(zip(names, trial.counts.tolist())), self.planner.prices, trial.result,
            self._unfit(trial), tuple(placements[int(i)] for i in trial.failed), message,
            search.schedules, local, fewer, time.monotonic() - self.budget.start, use, needs,
            why)

    def _usage(self, trial: Trial) -> dict[str, plan_gap.TypeUse]:
        """How the final schedule uses each type's new nodes."""
        types = self.planner.types
        pod_types = np.zeros((len(self.pending), len(types)), np.bool_)
        placed = self.group_of >= 0
        pod_types[placed] = self.fits[self.group_of[placed]]
        new = {t.name: [n.name for n in self.planner.new_nodes(t, int(count))]
               for t, count in zip(types, trial.counts)}
        return plan_gap.usage(trial.result.state, trial.result.node_rows, new, pod_types)

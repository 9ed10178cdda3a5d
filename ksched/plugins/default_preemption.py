"""DefaultPreemption (``plugins/defaultpreemption/default_preemption.go``).

The PostFilter plugin: when no node fits, it looks for a node where evicting lower-priority
pods makes room, evicts the fewest and least important, and nominates that node. The flow
(candidates, dry run, choice of node) is :mod:`ksched.framework.preemption`'s ``Evaluator``;
this module holds the plugin's own rules: eligibility, victims on one node, PDBs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import attrs

import numpy as np

from ksched.api import Pod
from ksched.constants import PODS
from ksched.framework import preemption
from ksched.framework.interfaces import Cycle, Handle, PostFilterResult
from ksched.framework.runtime import NODE_STATIC_FILTERS, NodeStatuses, NominatedPods
from ksched.kernels import preemption as kernels
from ksched.state import ClusterState
from ksched.status import SUCCESS, Code, Status, unresolvable

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."


@attrs.frozen
class DefaultPreemptionArgs:
    """``DefaultPreemptionArgs``: how many nodes the dry run must yield as candidates."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


def _args(raw: Any) -> DefaultPreemptionArgs:
    if isinstance(raw, DefaultPreemptionArgs):
        return raw
    if isinstance(raw, dict):
        return DefaultPreemptionArgs(raw.get("minCandidateNodesPercentage", 10),
                                     raw.get("minCandidateNodesAbsolute", 100))
    return DefaultPreemptionArgs()


def start_time(pod: Pod) -> float:
    """``GetPodStartTime``: ``status.startTime``; a pod that has not started counts as now,
    later than any recorded time."""
    value = getattr(pod, "start_time", None)
    return float("inf") if value is None else value


def more_important(a: Pod, b: Pod) -> bool:
    """``MoreImportantPod``: higher priority, then the earlier start."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return start_time(a) < start_time(b)


def sort_by_importance(pods: list[Pod]) -> list[Pod]:
    """``sort.Slice(pods, MoreImportantPod)``. Go sorts short slices (12 or fewer, every node
    in practice) by insertion, which keeps ties in their order; so does this stable sort."""
    return sorted(pods, key=lambda p: (-p.priority, start_time(p)))


def split_by_pdb_violation(pods: Sequence[Pod], pdbs: Sequence[Any]) -> tuple[list[Pod],
                                                                              list[Pod]]:
    """``filterPodsWithPDBViolation``: walking the pods in order, each matching PDB's
    ``disruptionsAllowed`` is used up; a pod that takes one below 0 is violating."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating, non_violating = [], []
    for pod in pods:
        violated = False
        for i, pdb in enumerate(pdbs):
            if pdb.matches(pod) and pod.name not in pdb.disrupted_pods:
                allowed[i] -= 1
                violated |= allowed[i] < 0
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


@attrs.frozen
class DefaultPreemption:
    NAME: ClassVar[str] = "DefaultPreemption"
    args: DefaultPreemptionArgs = attrs.field(factory=DefaultPreemptionArgs, converter=_args)

    def pre_enqueue(self, pod: Pod) -> Status:
        """With async preemption a pod waits for its own preemption to finish; ksched's
        preemption completes within the cycle, so the pod is never held here."""
        return SUCCESS

    def post_filter(self, cycle: Cycle, diagnosis: Any,
                    handle: Handle) -> tuple[PostFilterResult | None, Status]:
        """``PostFilter``: the Evaluator's verdict, its message prefixed with "preemption: "."""
        result, status = preemption.Evaluator(self, handle).preempt(cycle, diagnosis)
        if status.message:
            status = Status(status.code, (f"preemption: {status.message}",), status.plugin)
        return result, status

    # ------------------------------------------------------------------ the plugin's rules

    def num_candidates(self, num_nodes: int) -> int:
        """``calculateNumCandidates``: a percentage of the potential nodes, at least the
        absolute minimum, at most all of them."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        return min(max(n, self.args.min_candidate_nodes_absolute), num_nodes)

    def eligible(self, pod: Pod, state: ClusterState, nominated_status: Status | None
                 ) -> tuple[bool, str]:
        """``PodEligibleToPreemptOthers``: not with preemptionPolicy Never, and not while a
        victim of its earlier preemption is still terminating on its nominated node."""
        if getattr(pod, "preemption_policy", "") == "Never":
            return False, NOT_ELIGIBLE_NEVER
        node = state.node_index.get(getattr(pod, "nominated_node_name", "") or "")
        if node is not None:
            if nominated_status is not None and \
                    nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            for other in state.pods_on(node):
                if other.priority < pod.priority and other.deleting:
                    return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def select_victims_on_node(self, cycle: Cycle, node: int, handle: Handle,
                               skipped: frozenset[str]) -> tuple[list[Pod], int, Status]:
        """``SelectVictimsOnNode``: remove every lower-priority pod; if the pod then fits,
        add them back one by one, most important first (PDB-violating ones before the
        others), keeping out only those without which it no longer fits."""
        state, pod, framework = cycle.state, cycle.pod, handle.framework
        nominated = handle.nominated.get(node, ())
        rows = [r for r in handle.pods_of(state, node) if state.pods[r].priority < pod.priority]
        if not rows:
            return [], 0, unresolvable(NO_VICTIMS)
        removed = set(rows)

        def fits() -> Status:
            return framework.filter_node_with_nominated(state, pod, node, nominated, skipped,
                                                        removed=sorted(removed), cycle=cycle)

        status = fits()
        if not status.is_success:
            return [], 0, status
        row_of = {id(state.pods[r]): r for r in rows}
        ordered = sort_by_importance([state.pods[r] for r in rows])
        violating, non_violating = split_by_pdb_violation(ordered, handle.pdbs)
        victims, num_violating = [], 0
        for group, counts in ((violating, True), (non_violating, False)):
            for victim in group:
                removed.discard(row_of[id(victim)])
                if not fits().is_success:
                    removed.add(row_of[id(victim)])
                    victims.append(victim)
                    num_violating += counts
        if violating and non_violating:
            victims = sort_by_importance(victims)
        return victims, num_violating, Status()

    def dry_run(self, cycle: Cycle, potential: np.ndarray, offset: int, wanted: int,
                handle: Handle, diagnosis: Any) -> preemption.CompiledDryRun | None:
        """``DryRunPreemption`` with :meth:`select_victims_on_node` in the compiled kernel,
        where that is exact: of the filters that run only NodeResourcesFit looks at pods, no
        PodDisruptionBudgets, the bound pods' table at hand (``handle.node_pods`` of an
        Assumer), the node-static filters pass on every potential node. ``None`` otherwise."""
        state, framework = cycle.state, handle.framework
        skipped = diagnosis.pre_filter_skipped
        assumer = getattr(handle.node_pods, "__self__", None)
        if (handle.pdbs or diagnosis.pre_filter_status is not None
                or not (framework.vectorized and framework.resource_only(skipped))
                or not hasattr(assumer, "pod_table")):
            return None
        table = assumer.pod_table()
        if assumer.state is not state or not _statics_pass(cycle, framework, potential,
                                                           diagnosis):
            return None
        fit_enabled, inputs = fit_check(framework, cycle, skipped)
        index = NominatedPods.of(state, handle.nominated)
        out, tried = compiled_dry_run(table, index, state, cycle.pod, inputs, fit_enabled,
                                      potential, offset, wanted)
        fit = framework.plugins.get("NodeResourcesFit")
        return preemption.CompiledDryRun(state, out, tried, assumer.serials(),
                                         lambda code: fit.status_of_code(cycle, code))


def fit_check(framework: Any, cycle: Cycle, skipped: frozenset[str]) -> tuple[bool, tuple]:
    """Whether NodeResourcesFit filters this cycle's pod, and what it checks: (request
    vector, checked columns, count only, missing codes), as the kernels take them."""
    fit = framework.plugins.get("NodeResourcesFit")
    enabled = fit is not None and "NodeResourcesFit" not in skipped and \
        "NodeResourcesFit" in dict(framework.points["filter"])
    if not enabled:
        width = len(cycle.state.resource_names)
        return False, (np.zeros(width, np.int64), np.zeros(0, np.int64), True, np.int64(0))
    vector, checked, _, count_only, missing = fit._wanted(cycle)
    return True, (vector, checked, count_only, np.int64(missing))


def compiled_dry_run(table: Any, index: NominatedPods, state: ClusterState, pod: Pod,
                     fit_inputs: tuple, fit_enabled: bool, potential: np.ndarray, offset: int,
                     wanted: int) -> tuple[dict[str, np.ndarray], int]:
    """The kernel's ``DryRunPreemption`` over ``potential`` from ``offset`` (see
    :func:`ksched.kernels.preemption.dry_run`) with the bound pods' ``table`` (an
    :class:`~ksched.engine.PodTable`), the nominations ``index`` and the pod's fit check
    ``fit_inputs`` (request vector, checked columns, count only, missing codes): the output
    arrays and how many nodes were tried."""
    vector, checked, count_only, missing = fit_inputs
    mask, extra = index.relevant(pod)
    own = index.own_rows(pod)
    bypass = np.zeros(state.num_nodes, dtype=np.bool_)
    if own:
        bypass[own] = True
    key = (id(index), pod.priority, vector[checked].tobytes(), checked.tobytes(),
           bool(count_only), int(missing), fit_enabled)
    cache = _cache(table, key, index)
    m, count = len(potential), max(table.size, 1)
    out = {"node": np.empty(m, np.int64), "kind": np.empty(m, np.int64),
           "code": np.empty(m, np.int64), "indptr": np.empty(m + 1, np.int64),
           "victims": np.empty(count, np.int64), "priority": np.empty(count, np.int64),
           "start": np.empty(count, np.float64)}
    tried = kernels.dry_run(
        potential, offset, wanted, pod.priority, state.allocatable, state.requested,
        state.resource_column(PODS), vector, checked, count_only, np.int64(missing),
        fit_enabled, mask, extra, table.slots, table.counts, table.priority, table.start,
        table.request, table.stamp, index.stamp, bypass, *cache[1:], out["node"],
        out["kind"], out["code"], out["indptr"], out["victims"], out["priority"],
        out["start"])
    return out, int(tried)


def _cache(table: Any, key: tuple, index: NominatedPods) -> tuple:
    """The dry run's outcome cache of one pod class on one table and nominations index:
    (index, stamps, kinds, codes, victim counts, victims, their priorities and starts)."""
    n, width = table.slots.shape
    found = table.caches.get(key)
    if found is None or found[0] is not index or found[5].shape[1] != width:
        if len(table.caches) >= 8:
            table.caches.pop(next(iter(table.caches)))
        found = table.caches[key] = (
            index, np.full(n, -1, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
            np.zeros(n, np.int64), np.zeros((n, width), np.int64),
            np.zeros((n, width), np.int64), np.zeros((n, width), np.float64))
    return found


def _statics_pass(cycle: Cycle, framework: Any, potential: np.ndarray, diagnosis: Any) -> bool:
    """Whether the node-static filters pass on every potential node: those before the first
    plugin a potential node failed did; the others are asked."""
    filters = [name for name, _ in framework.points["filter"]]
    failed = {s.plugin for s in NodeStatuses.of(diagnosis.failures).distinct()
              if s.code == Code.UNSCHEDULABLE}
    first = min((filters.index(p) if p in filters else 0 for p in failed), default=0)
    for position, (name, plugin) in enumerate(framework.points["filter"]):
        if position >= first and name in NODE_STATIC_FILTERS and \
                name not in diagnosis.pre_filter_skipped and \
                not plugin.filter(cycle, potential).passed.all():
            return False
    return True

"""Compiled cycles for a pod that must preempt, and for its retry on the nominated node.

A pod that fits nowhere costs kube-scheduler a cycle over every node
(``findNodesThatPassFilters`` with ``RunFilterPluginsWithNominatedPods``), then PostFilter:
DefaultPreemption dry-runs victim selection (``DryRunPreemption``), picks a node
(``SelectCandidate``), evicts and nominates it. The pod's next cycle tries the nominated node
first (``evaluateNominatedNode``). When, of the filters that run for the pod's class, only
NodeResourcesFit looks at pods, all of that is request arithmetic on the state's arrays, the
regime of the compiled dry run (:meth:`DefaultPreemption.dry_run
<ksched.plugins.default_preemption.DefaultPreemption.dry_run>`). The simulator then runs
both cycles here, with no plugin called per pod.

Whatever this does not model is handed back to the framework before anything changes (it
gives the same answers; tests compare the two): a node that passes after all, a node where
preemption might help that fails a node-static filter, a nominated node that no longer fits,
PodDisruptionBudgets, PostFilter plugins besides DefaultPreemption and DynamicResources.
"""

from __future__ import annotations

import attrs
import numpy as np

from ksched.api import Pod
from ksched.constants import PODS
from ksched.engine import Assumer
from ksched.framework import preemption
from ksched.framework.interfaces import Cycle
from ksched.framework.runtime import (
    Framework,
    NominatedPods,
    StaticVerdicts,
    counted_failure_message,
    failure_message,
    nominated_before,
)
from ksched.kernels import preemption as kernels
from ksched.plugins.default_preemption import DefaultPreemption, compiled_dry_run, fit_check
from ksched.plugins.dynamic_resources import DynamicResources
from ksched.state import ClusterState
from ksched.status import SUCCESS, Code, Status, unresolvable, unschedulable, with_post_filter

#: The most distinct fit codes a failing walk keeps (more: the framework words them).
MAX_FIT_CODES = 64
#: The status of nodes the dry run did not try (``Evaluator.Preempt``).
_NOT_HELPFUL = unresolvable(preemption.NOT_HELPFUL)


@attrs.frozen(eq=False)
class ClassPlan:
    """What the compiled cycles need of one pod class: the class's cycle (its PreFilter
    state, for wording statuses), the node-static verdicts, whether each static status is
    resolvable by preemption, and NodeResourcesFit's position and check."""

    cycle: Cycle = attrs.field(repr=False)
    static: StaticVerdicts
    static_resolvable: np.ndarray
    fit_position: int
    fit_enabled: bool
    fit_inputs: tuple


@attrs.frozen
class Failure:
    """A failed cycle and its PostFilter: the FitError message, the plugins that rejected
    nodes, the node nominated (``None``: no PostFilter result; ``""``: none helps) and the
    victims to evict (pod keys)."""

    message: str
    plugins: frozenset[str]
    nominated_node: str | None = None
    victims: tuple[str, ...] = ()


class _ClassWalk:
    """One class's failing walk: its cache of fit codes (valid with one nominations index),
    its output buffers, and the diagnoses worded so far."""

    __slots__ = ("index", "stamps", "codes", "static_counts", "potential", "diagnoses")

    def __init__(self, index: NominatedPods, num_nodes: int, num_static: int) -> None:
        self.index = index
        self.stamps = np.full(num_nodes, -1, dtype=np.int64)
        self.codes = np.zeros(num_nodes, dtype=np.int64)
        self.static_counts = np.zeros(max(num_static, 1), dtype=np.int64)
        self.potential = np.empty(num_nodes, dtype=np.int64)
        self.diagnoses: dict[tuple[bytes, bytes, bytes], tuple[str, frozenset[str]]] = {}


class FastPreemption:
    """The compiled failing cycle and nominated retry for one framework and state layout."""

    def __init__(self, framework: Framework, node_version: np.ndarray,
                 affinity_version: int = 0) -> None:
        self.framework = framework
        #: Bumped whenever a node's requests change (the failing walk's cache reads it).
        self.node_version = node_version
        #: The Assumer's ``affinity_version`` the plans hold for (InterPodAffinity's PreFilter
        #: skips or not by the bound pods with anti-affinity).
        self.affinity_version = affinity_version
        post = framework.points["postFilter"]
        preemptions = [plugin for _, plugin in post if isinstance(plugin, DefaultPreemption)]
        self.preemption = preemptions[0] if len(preemptions) == 1 else None
        #: Whether PostFilter is modelled: DefaultPreemption once at most, besides
        #: DynamicResources (whose PostFilter reads only the pod's claims, none here).
        self.usable = len(preemptions) <= 1 and all(
            isinstance(plugin, (DefaultPreemption, DynamicResources)) for _, plugin in post)
        self._plans: dict[int, ClassPlan | None] = {}
        self._walks: dict[int, _ClassWalk] = {}
        self._codes = np.empty(MAX_FIT_CODES, dtype=np.int64)
        self._code_counts = np.empty(MAX_FIT_CODES, dtype=np.int64)

    def plan(self, c: int, pod: Pod, state: ClusterState) -> ClassPlan | None:
        """The plan of pod class ``c`` (``pod`` one of its pods), made on first use;
        ``None`` when the class's filters look at pods beyond NodeResourcesFit, or PreFilter
        narrows the nodes."""
        if c not in self._plans:
            self._plans[c] = self._make_plan(pod, state) if self.usable else None
        return self._plans[c]

    def _make_plan(self, pod: Pod, state: ClusterState) -> ClassPlan | None:
        framework = self.framework
        cycle = Cycle(state, pod)
        rejection, names, skipped, _ = framework.run_pre_filter(cycle)
        if rejection is not None or names is not None or not (
                framework.vectorized and framework.resource_only(skipped)):
            return None
        static = framework._static_verdicts(cycle, skipped)
        if static is None:
            return None
        fit_enabled, fit_inputs = fit_check(framework, cycle, skipped)
        filters = [name for name, _ in framework.points["filter"]]
        resolvable = np.array([s.code == Code.UNSCHEDULABLE for s in static.table] or [False],
                              dtype=np.bool_)
        return ClassPlan(cycle, static, resolvable,
                         filters.index("NodeResourcesFit") if fit_enabled else -1,
                         fit_enabled, fit_inputs)

    # ------------------------------------------------------------------ the retry

    def fits_nominated_node(self, plan: ClassPlan, pod: Pod, node: int, state: ClusterState,
                            index: NominatedPods) -> bool:
        """``evaluateNominatedNode``: whether the filters pass on the pod's nominated node,
        with the pods nominated there before it (both passes)."""
        if plan.static.first[node] >= 0:
            return False
        if plan.fit_position < 0:
            return True
        vector, checked, count_only, missing = plan.fit_inputs
        added = np.zeros(len(vector), dtype=np.int64)
        for other in nominated_before(pod, index.get(node, ())):
            added += index.vector(other)
        return kernels.fit_code_with(node, state.allocatable, state.requested,
                                     state.resource_column(PODS), vector, checked, count_only,
                                     missing, added) == 0

    # ------------------------------------------------------------------ the failing cycle

    def fail(self, c: int, plan: ClassPlan, pod: Pod, assumer: Assumer, index: NominatedPods,
             rng: np.random.Generator | None) -> Failure | None:
        """The cycle of a pod of class ``c`` that fits nowhere, then PostFilter; ``None``
        when it fits somewhere after all, or the case is not modelled here (nothing changed
        then)."""
        state = assumer.state
        if pod.nominated_node_name or state.num_nodes == 0:
            return None
        vector, checked, count_only, missing = plan.fit_inputs
        mask, extra = index.relevant(pod)
        walk = self._walks.get(c)
        if walk is None or walk.index is not index:
            walk = self._walks[c] = _ClassWalk(index, state.num_nodes, len(plan.static.table))
        # The cached codes hold for the class's own priority: not where the pod's own
        # nomination or pods straddling its priority made the index sum nodes afresh.
        cached = extra is index.total
        distinct, found = kernels.failing_walk(
            state.tree_order, plan.static.first, plan.static.ids, plan.static_resolvable,
            plan.fit_position, state.allocatable, state.requested, state.resource_column(PODS),
            vector, checked, count_only, missing, mask, extra, cached, self.node_version,
            index.stamp, walk.stamps, walk.codes, walk.static_counts, self._codes,
            self._code_counts, walk.potential)
        if distinct < 0:
            return None
        message, plugins = self._diagnosis(plan, walk, distinct)
        return self._post_filter(plan, pod, assumer, index, rng, walk.potential[:found],
                                 message, plugins)

    def _diagnosis(self, plan: ClassPlan, walk: _ClassWalk, distinct: int
                   ) -> tuple[str, frozenset[str]]:
        """The FitError message of a failing walk and the plugins that rejected nodes (kept
        per class for each tally of statuses met)."""
        codes, counts = self._codes[:distinct], self._code_counts[:distinct]
        key = (walk.static_counts.tobytes(), codes.tobytes(), counts.tobytes())
        found = walk.diagnoses.get(key)
        if found is None:
            fit = self.framework.plugins.get("NodeResourcesFit")
            tally = [(s, n) for s, n in zip(plan.static.table, walk.static_counts.tolist())
                     if n]
            tally += [(fit.status_of_code(plan.cycle, code).with_plugin("NodeResourcesFit"), n)
                      for code, n in zip(codes.tolist(), counts.tolist())]
            found = (counted_failure_message(len(walk.stamps), tally, None),
                     frozenset(s.plugin for s, _ in tally))
            if len(walk.diagnoses) >= 256:
                walk.diagnoses.clear()
            walk.diagnoses[key] = found
        return found

    def _post_filter(self, plan: ClassPlan, pod: Pod, assumer: Assumer, index: NominatedPods,
                     rng: np.random.Generator | None, potential: np.ndarray, message: str,
                     plugins: frozenset[str]) -> Failure:
        """``RunPostFilterPlugins`` (as :meth:`Framework.run_post_filter`): the first success
        wins; otherwise every plugin's reasons follow the FitError message."""
        reasons: list[str] = []
        nominated = None
        for _, plugin in self.framework.points["postFilter"]:
            if plugin is self.preemption:
                node, victims, status = self._preempt(plan, pod, assumer, index, rng,
                                                      potential)
                if status.is_success:
                    return Failure(message, plugins, node, victims)
                nominated = node if node is not None else nominated
            else:
                _, status = plugin.post_filter(plan.cycle, None, None)
                if status.is_success:
                    return Failure(message, plugins)
            reasons += status.reasons
        return Failure(with_post_filter(message, Status(Code.UNSCHEDULABLE, tuple(reasons))),
                       plugins, nominated)

    def _preempt(self, plan: ClassPlan, pod: Pod, assumer: Assumer, index: NominatedPods,
                 rng: np.random.Generator | None, potential: np.ndarray
                 ) -> tuple[str | None, tuple[str, ...], Status]:
        """DefaultPreemption's PostFilter (``Evaluator.Preempt``): the node nominated
        (``None``: the pod may not preempt; ``""``: no node helps), the victims' keys and the
        status. The dry run goes from a random offset; ``pickOneNodeForPreemption``'s ties go
        to the smallest node name."""
        state = assumer.state
        ok, reason = self.preemption.eligible(pod, state, None)
        if not ok:
            return None, (), unschedulable(f"preemption: {reason}")
        if not len(potential):
            reason = counted_failure_message(state.num_nodes, (), _NOT_HELPFUL)
            return "", (), unschedulable(f"preemption: {reason}")
        wanted = self.preemption.num_candidates(len(potential))
        offset = int(rng.integers(len(potential))) if rng is not None else 0
        out, tried = compiled_dry_run(assumer.pod_table(), index, state, pod, plan.fit_inputs,
                                      plan.fit_enabled, potential, offset, wanted)
        indptr, nodes = out["indptr"], out["node"]
        at = kernels.best_candidate(tried, out["kind"], nodes, indptr, out["priority"],
                                    out["start"], preemption.name_rank(state.node_names))
        if at < 0:
            fit = self.framework.plugins.get("NodeResourcesFit")
            found = preemption.CompiledDryRun(state, out, tried, assumer.serials(),
                                              lambda code: fit.status_of_code(plan.cycle, code))
            reason = failure_message(state.num_nodes, found.failures, _NOT_HELPFUL)
            return "", (), unschedulable(f"preemption: {reason}")
        victims = assumer.keys_of_serials(out["victims"][indptr[at]:indptr[at + 1]])
        return state.node_names[int(nodes[at])], tuple(victims), SUCCESS

"""Compiled preemption: the dry run, the failing cycle and the retry on the nominated node.

A pod that fits nowhere costs kube-scheduler a cycle over every node
(``findNodesThatPassFilters`` with ``RunFilterPluginsWithNominatedPods``), then PostFilter:
DefaultPreemption dry-runs victim selection (``DryRunPreemption``), picks a node
(``SelectCandidate``), evicts and nominates it. The pod's next cycle tries the nominated node
first (``evaluateNominatedNode``). When, of the filters that run for the pod's class, only
NodeResourcesFit looks at pods, all of that is request arithmetic on the state's arrays:

- :class:`CompiledDryRunner`: the Evaluator's ``DryRunPreemption`` with DefaultPreemption's
  ``SelectVictimsOnNode`` in the compiled kernel (:func:`ksched.kernels.preemption.dry_run`),
  over the cache's :class:`~ksched.cache.PodTable`; :func:`preemption_handle` hands it to
  the framework's PostFilter;
- :class:`CompiledPreemption`: the simulator's failing cycle and its PostFilter, and the retry,
  with no plugin called per pod.

Whatever this does not model is handed back to the framework before anything changes (it
gives the same answers; tests compare the two): a node that passes after all, a node where
preemption might help that fails a node-static filter, a nominated node that no longer fits,
PodDisruptionBudgets, PostFilter plugins besides DefaultPreemption and DynamicResources.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.cache import Assumer, PodTable
from ksched.constants import PODS
from ksched.framework.diagnosis import (
    NodeStatuses,
    StaticVerdicts,
    counted_failure_message,
    failure_message,
)
from ksched.framework.interfaces import Cycle, Handle
from ksched.framework.nominator import NominatedPods, nominated_before
from ksched.framework.preemption import (
    NO_VICTIMS,
    NOT_HELPFUL,
    Candidate,
    Deferred,
    no_victim_left,
)
from ksched.framework.runtime import Framework
from ksched.kernels import preemption as kernels
from ksched.plugins.default_preemption import DefaultPreemption
from ksched.plugins.dynamic_resources import DynamicResources
from ksched.state import ClusterState
from ksched.status import SUCCESS, Code, Status, unresolvable, unschedulable, with_post_filter

#: The most distinct fit codes a failing walk keeps (more: the framework words them).
MAX_FIT_CODES = 64
#: The status of nodes the dry run did not try (``Evaluator.Preempt``).
_NOT_HELPFUL = unresolvable(NOT_HELPFUL)
_NO_FIT_INPUTS = (np.zeros(0, np.int64), True, np.int64(0))


def compiles_rules_of(plugin: Any) -> bool:
    """Whether the compiled preemption is ``plugin``'s: DefaultPreemption's rules exactly (a
    subclass may change any of its ``preemption.Interface`` methods)."""
    return type(plugin) is DefaultPreemption


@attrs.frozen(eq=False)
class FitCheck:
    """What the filter that judges a node by its pods' summed requests (NodeResourcesFit)
    checks of one cycle's pod, as the kernels take it: its position among the filters (-1:
    it does not run), and (request vector, checked columns, count only, missing codes)."""

    position: int
    inputs: tuple
    name: str = ""
    plugin: Any = None

    @property
    def enabled(self) -> bool:
        return self.position >= 0

    def status_of_code(self, cycle: Cycle, code: int) -> Status:
        """The filter's status for a fit code of ``cycle``'s pod, naming the plugin."""
        return self.plugin.status_of_code(cycle, code).with_plugin(self.name)


def fit_check(framework: Framework, cycle: Cycle, skipped: frozenset[str]) -> FitCheck:
    """:class:`FitCheck` of ``cycle``'s pod under ``framework`` (its
    :meth:`~ksched.framework.runtime.Framework.request_filter`'s
    :meth:`~ksched.framework.capabilities.RequestDeltaFilter.request_check`)."""
    position, name, plugin = framework.request_filter(skipped)
    if position < 0:
        width = len(cycle.state.resource_names)
        return FitCheck(-1, (np.zeros(width, np.int64),) + _NO_FIT_INPUTS)
    return FitCheck(position, plugin.request_check(cycle).kernel_args, name, plugin)


@attrs.frozen(eq=False)
class ClassPlan:
    """What the compiled cycles need of one pod class: the class's cycle (its PreFilter
    state, for wording statuses), the node-static verdicts, whether each static status is
    resolvable by preemption, and the request filter's check."""

    cycle: Cycle = attrs.field(repr=False)
    static: StaticVerdicts
    static_resolvable: np.ndarray
    fit: FitCheck


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
    """One class's failing walk: the nodes it visits and the static counts of the others
    (:func:`~ksched.kernels.preemption.static_split`), its cache of fit codes (valid with one
    nominations index), its output buffers, and the diagnoses worded so far."""

    __slots__ = ("index", "order", "base_counts", "stamps", "codes", "static_counts",
                 "potential", "diagnoses", "walked")

    def __init__(self, index: NominatedPods, plan: ClassPlan, state: ClusterState) -> None:
        num_nodes, num_static = state.num_nodes, max(len(plan.static.table), 1)
        self.index = index
        self.order, self.base_counts = kernels.static_split(
            state.tree_order, plan.static.first, plan.static.ids, plan.static_resolvable,
            plan.fit.position, num_static)
        self.stamps = np.full(num_nodes, -1, dtype=np.int64)
        self.codes = np.zeros(num_nodes, dtype=np.int64)
        self.static_counts = np.zeros(num_static, dtype=np.int64)
        self.potential = np.empty(num_nodes, dtype=np.int64)
        self.diagnoses: dict[tuple[bytes, bytes, bytes], tuple[str, frozenset[str]]] = {}
        self.walked = np.zeros(num_nodes, dtype=np.bool_)
        self.walked[self.order] = True


class CompiledPreemption:
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
        preemptions = [plugin for _, plugin in post if compiles_rules_of(plugin)]
        self.preemption = preemptions[0] if len(preemptions) == 1 else None
        #: Whether PostFilter is modelled: DefaultPreemption once at most, besides
        #: DynamicResources (whose PostFilter reads only the pod's claims, none here).
        self.usable = len(preemptions) <= 1 and all(
            compiles_rules_of(plugin) or isinstance(plugin, DynamicResources)
            for _, plugin in post)
        self._plans: dict[int, ClassPlan | None] = {}
        self._walks: dict[int, _ClassWalk] = {}
        #: The failures of classes with no node where preemption might help (see
        #: :meth:`_post_filter`).
        self._nowhere: dict[tuple, Failure] = {}
        self._hopeless: dict[int, bool] = {}
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
                framework.vectorized and framework.resource_only(skipped, pod, state)):
            return None
        static = framework.static_verdicts(cycle, skipped)
        if static is None:
            return None
        resolvable = np.array([s.code == Code.UNSCHEDULABLE for s in static.table] or [False],
                              dtype=np.bool_)
        return ClassPlan(cycle, static, resolvable, fit_check(framework, cycle, skipped))

    # ------------------------------------------------------------------ the retry

    def fits_nominated_node(self, plan: ClassPlan, pod: Pod, node: int, state: ClusterState,
                            index: NominatedPods) -> bool:
        """``evaluateNominatedNode``: whether the filters pass on the pod's nominated node,
        with the pods nominated there before it (both passes)."""
        if plan.static.first[node] >= 0:
            return False
        if not plan.fit.enabled:
            return True
        vector, checked, count_only, missing = plan.fit.inputs
        added = np.zeros(len(vector), dtype=np.int64)
        for other in nominated_before(pod, index.get(node, ())):
            added += index.vector(other)
        return kernels.fit_code_with(node, state.allocatable, state.requested,
                                     state.resource_column(PODS), vector, checked, count_only,
                                     missing, added) == 0

    # ------------------------------------------------------------------ the failing cycle

    def fail(self, c: int, plan: ClassPlan, pod: Pod, assumer: Assumer, index: NominatedPods,
             rng: np.random.Generator | None, requested: np.ndarray | None = None
             ) -> Failure | None:
        """The cycle of a pod of class ``c`` that fits nowhere, then PostFilter; ``None``
        when it fits somewhere after all, or the case is not modelled here (nothing changed
        then). ``requested``: the nodes' requests to judge by instead of the state's (the
        simulator's retries inside a stretch of the loop; the cache of fit codes stays
        out of it)."""
        state = assumer.state
        if pod.nominated_node_name or state.num_nodes == 0:
            return None
        vector, checked, count_only, missing = plan.fit.inputs
        mask, extra = index.relevant(pod)
        walk = self._walk(c, plan, index, state)
        # The cached codes hold for the class's own priority: not where the pod's own
        # nomination or pods straddling its priority made the index sum nodes afresh.
        cached = extra is index.total and requested is None
        distinct, found = kernels.failing_walk(
            walk.order, plan.static.first, plan.static.ids, plan.static_resolvable,
            plan.fit.position, state.allocatable,
            state.requested if requested is None else requested, state.resource_column(PODS),
            vector, checked, count_only, missing, mask, extra, cached, self.node_version,
            index.stamp, walk.stamps, walk.codes, walk.base_counts, walk.static_counts,
            self._codes, self._code_counts, walk.potential)
        if distinct < 0:
            return None
        message, plugins = self._diagnosis(plan, walk, distinct)
        return self._post_filter(plan, pod, assumer, index, rng, walk.potential[:found],
                                 message, plugins)

    def _walk(self, c: int, plan: ClassPlan, index: NominatedPods, state: ClusterState
              ) -> _ClassWalk:
        walk = self._walks.get(c)
        if walk is None or walk.index is not index:
            walk = self._walks[c] = _ClassWalk(index, plan, state)
        return walk

    def walked(self, c: int, plan: ClassPlan, index: NominatedPods, state: ClusterState
               ) -> np.ndarray:
        """bool[N]: the nodes the failing walk of class ``c`` visits, whose verdicts can
        change (the others fail a node-static filter before NodeResourcesFit)."""
        return self._walk(c, plan, index, state).walked

    def hopeless(self, c: int, plan: ClassPlan, state: ClusterState) -> bool:
        """Whether a pod of class ``c`` (its ``plan``) fits nowhere, and preemption helps nowhere,
        whatever pods the nodes run: each node fails a node-static filter that runs before
        NodeResourcesFit with an unresolvable status, or asks more of some resource than the
        node has (``fitsRequest``'s unresolvable insufficiency, whatever else runs there);
        and its failing walk counts every mix of insufficiencies it can meet (at most
        :data:`MAX_FIT_CODES`). Kept per class."""
        found = self._hopeless.get(c)
        if found is None:
            found = self._hopeless[c] = _hopeless(plan, state)
        return found

    def _diagnosis(self, plan: ClassPlan, walk: _ClassWalk, distinct: int
                   ) -> tuple[str, frozenset[str]]:
        """The FitError message of a failing walk and the plugins that rejected nodes (kept
        per class for each tally of statuses met)."""
        codes, counts = self._codes[:distinct], self._code_counts[:distinct]
        key = (walk.static_counts.tobytes(), codes.tobytes(), counts.tobytes())
        found = walk.diagnoses.get(key)
        if found is None:
            tally = [(s, n) for s, n in zip(plan.static.table, walk.static_counts.tolist())
                     if n]
            tally += [(plan.fit.status_of_code(plan.cycle, code), n)
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
        wins; otherwise every plugin's reasons follow the FitError message. With no node
        where preemption might help, the outcome is the class's for that message and the
        pod's preemption policy (kept: a pod that fits nowhere is retried often)."""
        key = None
        if not len(potential):
            key = (plan, message, plugins, getattr(pod, "preemption_policy", "") == "Never")
            found = self._nowhere.get(key)
            if found is not None:
                return found
        failure = self._run_post_filter(plan, pod, assumer, index, rng, potential, message,
                                        plugins)
        if key is not None:
            if len(self._nowhere) >= 1024:
                self._nowhere.clear()
            self._nowhere[key] = failure
        return failure

    def _run_post_filter(self, plan: ClassPlan, pod: Pod, assumer: Assumer,
                         index: NominatedPods, rng: np.random.Generator | None,
                         potential: np.ndarray, message: str, plugins: frozenset[str]
                         ) -> Failure:
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
        ok, reason = self.preemption.pod_eligible_to_preempt_others(pod, state, None)
        if not ok:
            return None, (), unschedulable(f"preemption: {reason}")
        if not len(potential):
            return "", (), _nowhere_helps(state.num_nodes)
        offset, wanted = self.preemption.get_offset_and_num_candidates(len(potential), rng)
        out, tried = compiled_dry_run(assumer.pod_table(), index, state, pod, plan.fit,
                                      potential, offset, wanted)
        indptr, nodes = out["indptr"], out["node"]
        at = kernels.best_candidate(tried, out["kind"], nodes, indptr, out["priority"],
                                    out["start"], name_rank(state.node_names))
        if at < 0:
            found = CompiledDryRun(state, out, tried, assumer.serials(),
                                   functools.partial(plan.fit.status_of_code, plan.cycle))
            reason = failure_message(state.num_nodes, found.failures, _NOT_HELPFUL)
            return "", (), unschedulable(f"preemption: {reason}")
        victims = assumer.keys_of_serials(out["victims"][indptr[at]:indptr[at + 1]])
        return state.node_names[int(nodes[at])], tuple(victims), SUCCESS


@functools.lru_cache(maxsize=64)
def _nowhere_helps(num_nodes: int) -> Status:
    """Preemption's status when no node is a potential one: every node's is not helpful."""
    reason = counted_failure_message(num_nodes, (), _NOT_HELPFUL)
    return unschedulable(f"preemption: {reason}")


def _hopeless(plan: ClassPlan, state: ClusterState) -> bool:
    """:meth:`CompiledPreemption.hopeless`."""
    vector, checked, count_only, _ = plan.fit.inputs
    if plan.fit.enabled and 2 << len(checked) > MAX_FIT_CODES:
        return False
    first = plan.static.first
    before = (first >= 0) & ((plan.fit.position < 0) | (first < plan.fit.position))
    unresolvable = before.copy()
    unresolvable[before] = ~plan.static_resolvable[plan.static.ids[before]]
    if plan.fit.enabled and not count_only and len(checked):
        want = vector[checked]
        unresolvable |= ((want > 0) & (want > state.allocatable[:, checked])).any(axis=1)
    return bool(unresolvable.all())


# ----------------------------------------------------------------------- the dry run


@attrs.frozen(eq=False)
class CompiledDryRunner:
    """The :class:`~ksched.framework.interfaces.DryRun` of a cache: ``DryRunPreemption``
    with DefaultPreemption's ``SelectVictimsOnNode`` in the compiled kernel, where that is
    exact: of the filters that run only NodeResourcesFit looks at pods, no
    PodDisruptionBudgets, the cycle on the cache's state, the node-static filters pass on
    every potential node. ``None`` otherwise (the Evaluator goes node by node)."""

    cache: Assumer

    def __call__(self, interface: Any, cycle: Cycle, potential: np.ndarray, offset: int,
                 wanted: int, handle: Handle, diagnosis: Any) -> CompiledDryRun | None:
        state, framework = cycle.state, handle.framework
        skipped = diagnosis.pre_filter_skipped
        if (not compiles_rules_of(interface) or handle.pdbs
                or diagnosis.pre_filter_status is not None
                or not (framework.vectorized
                        and framework.resource_only(skipped, cycle.pod, state))):
            return None
        table = self.cache.pod_table()
        static = framework.static_verdicts(cycle, skipped)
        if self.cache.state is not state or static is None or (static.first[potential] >= 0).any():
            return None
        fit = fit_check(framework, cycle, skipped)
        index = NominatedPods.of(state, handle.nominated)
        out, tried = compiled_dry_run(table, index, state, cycle.pod, fit, potential, offset,
                                      wanted)
        return CompiledDryRun(state, out, tried, self.cache.serials(),
                              functools.partial(fit.status_of_code, cycle))


def preemption_handle(framework: Framework, cache: Assumer, *,
                      nominated: Mapping[int, Sequence[Pod]] | None = None,
                      pdbs: Sequence[Any] = (), rng: np.random.Generator | None = None
                      ) -> Handle:
    """The :class:`Handle` PostFilter gets on ``cache``: its pods per node and its compiled
    dry run."""
    return Handle(framework, nominated=nominated if nominated is not None else {},
                  pdbs=tuple(pdbs), cache=cache, rng=rng, dry_run=CompiledDryRunner(cache))


def compiled_dry_run(table: PodTable, index: NominatedPods, state: ClusterState, pod: Pod,
                     fit: FitCheck, potential: np.ndarray, offset: int,
                     wanted: int) -> tuple[dict[str, np.ndarray], int]:
    """The kernel's ``DryRunPreemption`` over ``potential`` from ``offset`` (see
    :func:`ksched.kernels.preemption.dry_run`) with the bound pods' ``table``, the
    nominations ``index`` and the pod's ``fit`` check: the output arrays and how many nodes
    were tried."""
    vector, checked, count_only, missing = fit.inputs
    mask, extra = index.relevant(pod)
    own = index.own_rows(pod)
    bypass = np.zeros(state.num_nodes, dtype=np.bool_)
    if own:
        bypass[own] = True
    key = (id(index), pod.priority, vector[checked].tobytes(), checked.tobytes(),
           bool(count_only), int(missing), fit.enabled)
    cache = _cache(table, key, index)
    m, count = len(potential), max(table.size, 1)
    out = {"node": np.empty(m, np.int64), "kind": np.empty(m, np.int64),
           "code": np.empty(m, np.int64), "indptr": np.empty(m + 1, np.int64),
           "victims": np.empty(count, np.int64), "priority": np.empty(count, np.int64),
           "start": np.empty(count, np.float64)}
    tried = kernels.dry_run(
        potential, offset, wanted, pod.priority, state.allocatable, state.requested,
        state.resource_column(PODS), vector, checked, count_only, np.int64(missing),
        fit.enabled, mask, extra, table.slots, table.counts, table.priority, table.start,
        table.request, table.stamp, index.stamp, bypass, *cache[1:], out["node"],
        out["kind"], out["code"], out["indptr"], out["victims"], out["priority"],
        out["start"])
    return out, int(tried)


def _cache(table: PodTable, key: tuple, index: NominatedPods) -> tuple:
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


class CompiledDryRun:
    """What the compiled dry run found on the nodes it tried (a
    :class:`~ksched.framework.interfaces.DryRunResult`): candidates with their victims (pod
    rows of ``state``), and failures."""

    def __init__(self, state: ClusterState, out: dict[str, np.ndarray], tried: int,
                 serials: np.ndarray, fit_status: Callable[[int], Status]) -> None:
        self.state = state
        self.nodes = out["node"][:tried]
        self.kinds = out["kind"][:tried]
        self.codes = out["code"][:tried]
        self.indptr = out["indptr"][:tried + 1]
        end = int(self.indptr[-1])
        #: The victims by serial; ``serials`` (ascending) gives their rows in ``state``.
        self.victims, self.serials = out["victims"][:end], serials
        self.priority, self.start = out["priority"][:end], out["start"][:end]
        self.positions = np.flatnonzero(self.kinds == kernels.CANDIDATE)
        self.found_any = len(self.positions) > 0
        self._fit_status, self._statuses = fit_status, None
        make = functools.partial(_candidate, state, serials, self.nodes, self.indptr,
                                 self.victims)
        positions = self.positions.tolist()
        self.candidates = Deferred(lambda: [make(i) for i in positions])

    @property
    def failures(self) -> NodeStatuses:
        """The nodes where no candidate was found, with why (made on first use)."""
        if self._statuses is None:
            self._statuses = self._failures(self._fit_status)
        return self._statuses

    def _failures(self, fit_status: Callable[[int], Status]) -> NodeStatuses:
        failing = np.flatnonzero(self.kinds != kernels.CANDIDATE)
        kinds, codes = self.kinds[failing], self.codes[failing]
        ids = np.zeros(len(failing), dtype=np.int64)
        table = [unresolvable(NO_VICTIMS)]
        fit = kinds == kernels.FIT_FAILURE
        if fit.any():
            distinct, inverse = kernels.group_codes(codes[fit])
            if not len(distinct):
                distinct, inverse = np.unique(codes[fit], return_inverse=True)
            ids[fit] = len(table) + inverse.reshape(-1)
            table += [fit_status(int(code)) for code in distinct]
        for i in np.flatnonzero(kinds == kernels.NO_VICTIM_LEFT).tolist():
            ids[i] = len(table)
            table.append(no_victim_left(self.state.node_names[int(self.nodes[failing[i]])]))
        return NodeStatuses(self.nodes[failing], ids, table)

    def candidate(self, position: int) -> Candidate:
        return _candidate(self.state, self.serials, self.nodes, self.indptr, self.victims,
                          position)

    def pick(self) -> tuple[Candidate, tuple[str, ...]]:
        """``SelectCandidate`` (``pickOneNodeForPreemption``'s criteria) on the candidates'
        arrays: the candidate, and the nodes tied for it."""
        positions = self.positions
        rank = name_rank(self.state.node_names)[self.nodes[positions]]
        tied, best = kernels.pick_candidate(
            self.indptr[positions], self.indptr[positions + 1],
            np.zeros(len(positions), dtype=np.int64), self.priority, self.start, rank)
        names = self.state.node_names
        ties = tuple(sorted(names[int(n)] for n in self.nodes[positions[tied]]))
        return self.candidate(int(positions[best])), ties


def _candidate(state: ClusterState, serials: np.ndarray, nodes: np.ndarray,
               indptr: np.ndarray, victims: np.ndarray, position: int) -> Candidate:
    """The candidate the dry run found at ``position`` (no PDB violations counted)."""
    pods = state.pods
    rows = np.searchsorted(serials, victims[indptr[position]:indptr[position + 1]]).tolist()
    return Candidate(state.node_names[int(nodes[position])], tuple(pods[r] for r in rows), 0)


_RANKS: dict[int, tuple[Any, np.ndarray]] = {}


def name_rank(names: Sequence[str]) -> np.ndarray:
    """Each node row's position among the node names sorted (kept per names object)."""
    found = _RANKS.get(id(names))
    if found is None or found[0] is not names:
        order = sorted(range(len(names)), key=names.__getitem__)
        rank = np.empty(len(names), dtype=np.int64)
        rank[order] = np.arange(len(names), dtype=np.int64)
        if len(_RANKS) > 8:
            _RANKS.clear()
        found = _RANKS[id(names)] = (names, rank)
    return found[1]


__all__ = ["CompiledPreemption", "Failure", "ClassPlan", "FitCheck", "CompiledDryRunner",
           "CompiledDryRun", "preemption_handle", "compiled_dry_run", "fit_check"]

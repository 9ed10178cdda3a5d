"""The object-level framework: one pod's scheduling cycle over a :class:`ClusterState`.

Mirrors ``pkg/scheduler/schedule_one.go`` (``schedulePod``, ``findNodesThatFitPod``,
``findNodesThatPassFilters``, ``prioritizeNodes``) and ``framework/runtime/framework.go``
(``RunPreFilterPlugins``, ``RunFilterPlugins``, ``RunScorePlugins``). Each plugin judges all
candidate nodes at once; the node walk of ``percentageOfNodesToScore`` is then cut where the
sequential scan would have stopped.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Pod
from ksched.constants import MAX_NODE_SCORE, MIN_NODE_SCORE, PODS
from ksched.errors import ConfigError, KschedError
from ksched.framework.interfaces import (
    Cycle,
    FilterResult,
    Handle,
    PostFilterResult,
    PreFilterResult,
    implements,
)
from ksched.framework.registry import Registry
from ksched.framework.tiebreak import TieBreaker
from ksched.profile import ALL_POINTS, Profile, num_feasible_nodes_to_find
from ksched.resources import pod_requests
from ksched.state import ClusterState
from ksched.status import (
    NO_NODES_AVAILABLE,
    SUCCESS,
    Code,
    Status,
    fit_error_message,
    unresolvable,
    unschedulable,
)

_EMPTY = np.zeros(0, dtype=np.int64)
#: Filters whose verdict depends on the node alone, never on the pods on it.
NODE_STATIC_FILTERS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration",
                                 "NodeAffinity"})
#: ``maxTimeout``: the longest a Permit plugin may make a pod wait, in seconds.
MAX_PERMIT_TIMEOUT = 15 * 60.0


class SchedulingError(KschedError):
    """A plugin returned an Error status (the scheduling attempt fails, as upstream)."""


@attrs.frozen(eq=False)
class ScheduleResult:
    """Everything one scheduling cycle found out about one pod.

    Node references are indices into ``state.nodes``. ``scores`` maps each scored plugin to its
    weighted ``int64[len(feasible)]`` scores (``raw_scores`` / ``normalized_scores`` before
    weighting); ``totals`` is their sum.
    """

    pod: Pod
    node: int | None
    feasible: npt.NDArray[np.int64]
    evaluated: npt.NDArray[np.int64]
    failures: Mapping[int, Status]
    pre_filter_status: Status | None
    pre_filter_nodes: frozenset[str] | None
    pre_filter_skipped: frozenset[str]
    pre_score_skipped: frozenset[str]
    raw_scores: Mapping[str, npt.NDArray[np.int64]]
    normalized_scores: Mapping[str, npt.NDArray[np.int64]]
    scores: Mapping[str, npt.NDArray[np.int64]]
    totals: npt.NDArray[np.int64]
    max_nodes: npt.NDArray[np.int64]
    num_nodes_to_find: int
    next_start_index: int
    message: str = ""
    #: The pod went to its nominated node without a node search (``evaluateNominatedNode``).
    nominated_fast_path: bool = False
    #: The status of nodes with no explicit failure (``NodeToStatus``'s absent-nodes status).
    absent_status: Status = attrs.field(factory=lambda: unresolvable())
    #: The cycle (its PreFilter state), for PostFilter to go on with.
    cycle: Cycle | None = attrs.field(default=None, repr=False)
    #: The PreFilter plugins whose result narrowed the nodes (``RunPreFilterPlugins``'
    #: ``pluginsWithNodes``; empty when a plugin rejected the pod as unresolvable).
    pre_filter_plugins: frozenset[str] = frozenset()

    @property
    def scheduled(self) -> bool:
        return self.node is not None

    def status_of(self, node: int) -> Status:
        """The node's status in the diagnosis (``NodeToStatus.Get``)."""
        return self.failures.get(node, self.absent_status)

    @property
    def unschedulable_plugins(self) -> frozenset[str]:
        """The diagnosis set (``Diagnosis.UnschedulablePlugins``): the PreFilter plugins that
        narrowed the nodes (``findNodesThatFitPod`` starts from them), the plugin that
        rejected the pod at PreFilter, and the plugins that rejected some node
        (``AddPluginStatus``: statuses without a plugin add none)."""
        failures = self.failures
        statuses = failures.distinct() if isinstance(failures, NodeStatuses) \
            else failures.values()
        plugins = {s.plugin for s in statuses} | self.pre_filter_plugins
        if self.pre_filter_status is not None:
            plugins.add(self.pre_filter_status.plugin)
        return frozenset(plugins - {""})


class Framework:
    """Plugins of one :class:`Profile`, instantiated and ordered per extension point."""

    def __init__(self, profile: Profile, registry: Registry | None = None) -> None:
        if registry is None:
            from ksched.plugins import IN_TREE_REGISTRY as registry
        self.profile = profile
        self.plugins: dict[str, Any] = {}
        for name in profile.plugin_names():
            if name not in registry:
                raise ConfigError(f'{name} does not exist')
            self.plugins[name] = registry[name](profile.args.get(name))
        self.points: dict[str, tuple[tuple[str, Any], ...]] = {}
        for point in ALL_POINTS:
            entries = []
            for name in profile.plugins[point]:
                if not implements(self.plugins[name], point):
                    raise ConfigError(f'plugin "{name}" does not extend {point} plugin')
                entries.append((name, self.plugins[name]))
            self.points[point] = tuple(entries)
        self.weights = {name: profile.weights.get(name, 1) for name, _ in self.points["score"]}
        #: When only NodeResourcesFit of the filters looks at pods, judge a changed node by
        #: request arithmetic instead of a copy of the cluster (``False``: always copy).
        self.request_arithmetic = True
        #: In that regime, also judge all nodes' nominated pods at once, and dry-run
        #: preemption in the compiled kernel (``False``: node by node, in Python).
        self.vectorized = True
        #: Node-static filter verdicts per pod class (see :meth:`_static_verdicts`).
        self._statics: dict[Any, StaticVerdicts] = {}

    @property
    def has_scoring(self) -> bool:
        return bool(self.points["score"])

    # ------------------------------------------------------------------ extension points

    def run_pre_filter(self, cycle: Cycle) -> tuple[Status | None, frozenset[str] | None,
                                                    frozenset[str], tuple[str, ...]]:
        """``RunPreFilterPlugins``: (rejection, node-name subset, skipped, subset makers)."""
        skipped: set[str] = set()
        names: frozenset[str] | None = None
        subset_plugins: list[str] = []
        rejection: Status | None = None
        for name, plugin in self.points["preFilter"]:
            outcome = plugin.pre_filter(cycle)
            if isinstance(outcome, PreFilterResult):
                if outcome.node_names is not None:
                    names = outcome.node_names if names is None else names & outcome.node_names
                    subset_plugins.append(name)
                    if not names:
                        return (_unsatisfied(subset_plugins), names, frozenset(skipped),
                                tuple(subset_plugins))
                continue
            if outcome is None or outcome.is_success:
                continue
            if outcome.is_skip:
                skipped.add(name)
            elif outcome.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return outcome.with_plugin(name), None, frozenset(skipped), ()
            elif outcome.is_rejected:
                rejection = outcome.with_plugin(name)
            else:
                raise SchedulingError(f'running PreFilter plugin "{name}": {outcome.message}')
        return rejection, names, frozenset(skipped), tuple(subset_plugins)

    def run_filter(self, cycle: Cycle, nodes: npt.NDArray[np.int64],
                   skipped: frozenset[str]
                   ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int16], list[FilterResult]]:
        """``RunFilterPlugins`` over ``nodes``: the pass mask, the first failing plugin's
        position per node (-1 where the node passed) and each plugin's result."""
        passed = np.ones(len(nodes), dtype=np.bool_)
        first_failure = np.full(len(nodes), -1, dtype=np.int16)
        results: list[FilterResult] = []
        for position, (name, plugin) in enumerate(self.points["filter"]):
            if name in skipped:
                results.append(FilterResult.from_mask(np.ones(len(nodes), np.bool_), Status()))
                continue
            result = plugin.filter(cycle, nodes)
            if isinstance(result, np.ndarray):  # a plain mask from an out-of-tree plugin
                result = FilterResult.from_mask(np.asarray(result, dtype=np.bool_),
                                                unschedulable(f"node(s) rejected by {name}"))
            for status in result.statuses:
                if status.code == Code.ERROR:
                    raise SchedulingError(f'running "{name}" filter plugin: {status.message}')
            newly_failed = passed & ~result.passed
            first_failure[newly_failed] = position
            passed &= result.passed
            results.append(result)
        return passed, first_failure, results

    def run_score(self, cycle: Cycle, feasible: npt.NDArray[np.int64]) -> tuple[
            frozenset[str], dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
        """``RunPreScorePlugins`` + ``RunScorePlugins``: (skipped, raw, normalised, weighted)."""
        skipped = set()
        for name, plugin in self.points["preScore"]:
            status = plugin.pre_score(cycle, feasible)
            if status is None or status.is_success:
                continue
            if status.is_skip:
                skipped.add(name)
            else:
                raise SchedulingError(f'running PreScore plugin "{name}": {status.message}')
        raw, normalized, weighted = {}, {}, {}
        for name, plugin in self.points["score"]:
            if name in skipped:
                continue
            scores = np.asarray(plugin.score(cycle, feasible), dtype=np.int64)
            raw[name] = scores.copy()
            if hasattr(plugin, "normalize_score"):
                plugin.normalize_score(cycle, scores)
            bad = (scores > MAX_NODE_SCORE) | (scores < MIN_NODE_SCORE)
            if bad.any():
                raise SchedulingError(
                    f'plugin "{name}" returns an invalid score {int(scores[bad][0])}, '
                    f"it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] "
                    "after normalizing")
            normalized[name] = scores
            weighted[name] = scores * self.weights[name]
        return frozenset(skipped), raw, normalized, weighted

    def run_post_filter(self, cycle: Cycle, diagnosis: ScheduleResult,
                        handle: Handle) -> tuple[PostFilterResult | None, Status]:
        """``RunPostFilterPlugins``: the first success wins; otherwise the reasons of every
        plugin, the first rejecting plugin named, and the last result that nominates."""
        result, reasons, rejector = None, [], ""
        for name, plugin in self.points["postFilter"]:
            found, status = plugin.post_filter(cycle, diagnosis, handle)
            if status.is_success:
                return found, status
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return found, status.with_plugin(name)
            if not status.is_rejected:
                raise SchedulingError(f'running PostFilter plugin "{name}": {status.message}')
            if found is not None and found.nominated_node is not None:
                result = found
            reasons += status.reasons
            rejector = rejector or name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    def run_reserve(self, cycle: Cycle, node: str) -> Status:
        """``RunReservePluginsReserve``; on a failure the caller runs :meth:`run_unreserve`."""
        for name, plugin in self.points["reserve"]:
            status = plugin.reserve(cycle, node) or SUCCESS
            if not status.is_success:
                return status.with_plugin(name)
        return SUCCESS

    def run_unreserve(self, cycle: Cycle, node: str) -> None:
        """``RunReservePluginsUnreserve``: every Reserve plugin, in reverse order."""
        for _, plugin in reversed(self.points["reserve"]):
            plugin.unreserve(cycle, node)

    def run_permit(self, cycle: Cycle, node: str) -> tuple[Status, dict[str, float]]:
        """``RunPermitPlugins``: a rejection stops; otherwise the plugins that said Wait, each
        with its timeout (capped at 15 minutes). The pod waits until all of them allow it, or
        is rejected when the first timeout passes."""
        waits: dict[str, float] = {}
        for name, plugin in self.points["permit"]:
            status, timeout = plugin.permit(cycle, node)
            if status.code == Code.WAIT:
                waits[name] = min(float(timeout), MAX_PERMIT_TIMEOUT)
            elif not (status.is_success or status.is_skip):
                return status.with_plugin(name), {}
        return (Status(Code.WAIT), waits) if waits else (SUCCESS, waits)

    def run_pre_bind(self, cycle: Cycle, node: str) -> Status:
        """``RunPreBindPlugins``: the first failure stops."""
        for name, plugin in self.points["preBind"]:
            status = plugin.pre_bind(cycle, node) or SUCCESS
            if not (status.is_success or status.is_skip):
                return status.with_plugin(name)
        return SUCCESS

    def run_bind(self, cycle: Cycle, node: str) -> Status:
        """``RunBindPlugins``: the first plugin that does not Skip binds."""
        for name, plugin in self.points["bind"]:
            status = plugin.bind(cycle, node)
            if not status.is_skip:
                return status if status.plugin == name else status.with_plugin(name)
        return Status(Code.SKIP)

    def run_post_bind(self, cycle: Cycle, node: str) -> None:
        """``RunPostBindPlugins``: informational."""
        for _, plugin in self.points["postBind"]:
            plugin.post_bind(cycle, node)

    # ------------------------------------------------------------------ the cycle

    def filter_node(self, state: ClusterState, pod: Pod, node: int,
                    skipped: frozenset[str] = frozenset()) -> Status:
        """``RunFilterPlugins`` on one node of ``state``: the first failing plugin's status, or
        success. PreFilter runs first on ``state`` itself, which is what upstream's
        ``AddPod`` / ``RemovePod`` extensions make of a cloned cycle state."""
        cycle = Cycle(state, pod)
        self.run_pre_filter(cycle)
        nodes = np.array([node], dtype=np.int64)
        passed, first_failure, results = self.run_filter(cycle, nodes, skipped)
        if passed[0]:
            return SUCCESS
        position = int(first_failure[0])
        return results[position].status_at(0).with_plugin(self.points["filter"][position][0])

    def filter_node_with_nominated(self, state: ClusterState, pod: Pod, node: int,
                                   nominated: Sequence[Pod],
                                   skipped: frozenset[str] = frozenset(),
                                   removed: Sequence[int] = (),
                                   cycle: Cycle | None = None) -> Status:
        """``RunFilterPluginsWithNominatedPods`` on a copy of the node without the pods at
        rows ``removed``: with the pods nominated to the node that have at least the pod's
        priority added (``addGENominatedPods``), then without; both passes must succeed.

        When only NodeResourcesFit of the filters that run looks at pods, the copies are
        just request arithmetic (``cycle``, on ``state``, carries what is reused)."""
        others = nominated_before(pod, nominated)
        if self.resource_only(skipped):
            cycle = cycle or Cycle(state, pod)
            delta = -sum((request_vector(state, state.pods[r]) for r in removed),
                         np.zeros(len(state.resource_names), dtype=np.int64))
            if others:
                added = sum(request_vector(state, p) for p in others)
                status = self.filter_changed(cycle, node, delta + added, skipped)
                if not status.is_success:
                    return status
            return self.filter_changed(cycle, node, delta, skipped)
        if removed:
            state = state.with_pods(removed=removed)
        if others:
            status = self.filter_node(state.with_pods(added=[(p, node) for p in others]), pod,
                                      node, skipped)
            if not status.is_success:
                return status
        return self.filter_node(state, pod, node, skipped)

    def resource_only(self, skipped: frozenset[str]) -> bool:
        """Whether, of the filters that run, only NodeResourcesFit depends on the node's pods
        (the others are node-static or skipped for this pod)."""
        return self.request_arithmetic and all(
            name in NODE_STATIC_FILTERS or name == "NodeResourcesFit" or name in skipped
            for name, _ in self.points["filter"])

    def filter_changed(self, cycle: Cycle, node: int, delta: npt.NDArray[np.int64],
                       skipped: frozenset[str]) -> Status:
        """``RunFilterPlugins`` on one node whose requests changed by ``delta``, for a
        :meth:`resource_only` profile: node-static verdicts are judged once per cycle."""
        static = self._cycle_statics(cycle, skipped) if self.vectorized else None
        if static is not None:
            return self._changed_with_statics(cycle, node, delta, skipped, static)
        verdicts = cycle.data.setdefault("framework/static", {})
        nodes = None
        for name, plugin in self.points["filter"]:
            if name in skipped:
                continue
            if name == "NodeResourcesFit":
                status = plugin.filter_changed(cycle, node, delta)
            else:
                status = verdicts.get((name, node))
                if status is None:
                    nodes = np.array([node], dtype=np.int64) if nodes is None else nodes
                    result = plugin.filter(cycle, nodes)
                    status = Status() if result.passed[0] else result.status_at(0)
                    verdicts[(name, node)] = status
            if not status.is_success:
                return status.with_plugin(name)
        return SUCCESS

    def _cycle_statics(self, cycle: Cycle, skipped: frozenset[str]) -> StaticVerdicts | None:
        """:meth:`_static_verdicts`, looked up once per cycle."""
        key = ("framework/statics", skipped)
        if key not in cycle.data:
            cycle.data[key] = self._static_verdicts(cycle, skipped)
        return cycle.data[key]

    def _changed_with_statics(self, cycle: Cycle, node: int, delta: npt.NDArray[np.int64],
                              skipped: frozenset[str], static: StaticVerdicts) -> Status:
        """:meth:`filter_changed` from the class's node-static verdicts: the first failing
        filter is the first failing node-static one or NodeResourcesFit, in filter order."""
        names = [name for name, _ in self.points["filter"]]
        fit = self.plugins.get("NodeResourcesFit")
        at = names.index("NodeResourcesFit") if fit is not None and "NodeResourcesFit" in \
            names and "NodeResourcesFit" not in skipped else -1
        first = int(static.first[node])
        if first >= 0 and (at < 0 or first < at):
            return static.table[static.ids[node]]
        if at >= 0:
            status = fit.filter_changed(cycle, node, delta)
            if not status.is_success:
                return status.with_plugin("NodeResourcesFit")
        return static.table[static.ids[node]] if first >= 0 else Status()

    def schedule_one(self, state: ClusterState, pod: Pod, *, next_start_index: int = 0,
                     percentage_of_nodes_to_score: int = 0,
                     tie_breaker: TieBreaker | None = None,
                     always_score: bool = False,
                     nominated: Mapping[int, Sequence[Pod]] | None = None) -> ScheduleResult:
        """One scheduling cycle (``schedulePod``) for ``pod`` on ``state``.

        ``always_score`` also scores a single feasible node (upstream skips that; explanations
        and trace replays want the numbers). ``nominated`` maps node rows to the pods nominated
        there (the queue's nominator): their filter runs twice (``filter_node_with_nominated``).
        A pod with ``status.nominatedNodeName`` is first tried on that node alone
        (``evaluateNominatedNode``).
        """
        num_all = state.num_nodes
        base = dict(pod=pod, node=None, feasible=_EMPTY, evaluated=_EMPTY, failures={},
                    pre_filter_status=None, pre_filter_nodes=None,
                    pre_filter_skipped=frozenset(), pre_score_skipped=frozenset(), raw_scores={},
                    normalized_scores={}, scores={}, totals=_EMPTY, max_nodes=_EMPTY,
                    num_nodes_to_find=0, next_start_index=next_start_index)
        if num_all == 0:
            return ScheduleResult(**base, message=NO_NODES_AVAILABLE)
        index = NominatedPods.of(state, nominated or {})
        cycle = base["cycle"] = Cycle(state, pod)
        rejection, names, skipped, subset_plugins = self.run_pre_filter(cycle)
        base.update(pre_filter_skipped=skipped, pre_filter_nodes=names,
                    pre_filter_plugins=frozenset(subset_plugins))
        if rejection is not None:
            return ScheduleResult(**{**base, "pre_filter_status": rejection},
                                  absent_status=rejection,
                                  message=fit_error_message(num_all, (), pre_filter_message=(
                                      rejection.message)))
        early: tuple[int, Status] | None = None
        target = state.node_index.get(getattr(pod, "nominated_node_name", "") or "")
        if target is not None:
            status = self.filter_node_with_nominated(state, pod, target, index.get(target, ()),
                                                     skipped, cycle=cycle)
            if status.is_success:
                return self._score(cycle, {**base, "feasible": np.array([target]),
                                           "evaluated": np.array([target]),
                                           "num_nodes_to_find": 1,
                                           "nominated_fast_path": True}, tie_breaker,
                                   always_score)
            early = (target, status)
        candidates, absent = state.tree_order, unresolvable()
        if names is not None:
            candidates = state.in_tree_order(names)
            absent = unresolvable(
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(subset_plugins))}]")
        percentage = self.profile.percentage_of_nodes_to_score
        if percentage is None:
            percentage = percentage_of_nodes_to_score
        n = len(candidates)
        to_find = num_feasible_nodes_to_find(percentage, n) if self.has_scoring else 1
        start = next_start_index % n if n else 0
        walk = np.concatenate([candidates[start:], candidates[:start]]) if n else candidates
        if not self.points["filter"]:
            evaluated = feasible = walk[:to_find]
            failures = NodeStatuses((), (), ())
        else:
            passed, failures_up_to = self._filter_walk(cycle, index, walk, skipped)
            passing = np.flatnonzero(passed)
            cut = int(passing[to_find]) if len(passing) > to_find else n
            evaluated, feasible = walk[:cut], walk[:cut][passed[:cut]]
            failures = failures_up_to(cut)
        if early is not None and early[0] not in failures:
            failures = failures.with_first(*early)
        base.update(feasible=feasible, evaluated=evaluated, failures=failures,
                    num_nodes_to_find=to_find,
                    next_start_index=(next_start_index + len(evaluated)) % num_all)
        if len(feasible) == 0:
            message = failure_message(num_all, failures, absent)
            return ScheduleResult(**base, message=message, absent_status=absent)
        return self._score(cycle, base, tie_breaker, always_score)

    def _filter_walk(self, cycle: Cycle, index: NominatedPods, walk: npt.NDArray[np.int64],
                     skipped: frozenset[str]) -> tuple[npt.NDArray[np.bool_], Any]:
        """``findNodesThatPassFilters`` with ``RunFilterPluginsWithNominatedPods`` over the
        whole walk: whether each node passed, and a function giving the failing nodes'
        statuses up to a position (where the walk was cut)."""
        static = self._cycle_statics(cycle, skipped) \
            if self.vectorized and self.resource_only(skipped) else None
        if static is not None:
            return self._filter_walk_compiled(cycle, index, walk, static, skipped)
        passed, first_failure, results = self.run_filter(cycle, walk, skipped)
        nominated_failures = self._nominated_pass(cycle, index, walk, passed, skipped)
        return passed, lambda cut: self._failures(walk, passed[:cut], first_failure, results,
                                                  nominated_failures)

    def _static_verdicts(self, cycle: Cycle, skipped: frozenset[str]) -> StaticVerdicts | None:
        """The node-static filters' verdicts on every node for this pod's class (its spec
        but its name), kept per class, skipped set and node layout; ``None`` when one of them
        errs (:meth:`run_filter` then says so)."""
        state = cycle.state
        signature = _static_signature(cycle.pod)
        layout = tuple(getattr(state, name) for name in _STATIC_COLUMNS)
        key = (tuple(map(id, signature)), skipped, tuple(map(id, layout)))
        found = self._statics.get(key)
        if found is not None and _same(found.signature, signature) \
                and _same(found.layout, layout):
            return found
        nodes = np.arange(state.num_nodes, dtype=np.int64)
        first = np.full(state.num_nodes, -1, dtype=np.int64)
        ids = np.zeros(state.num_nodes, dtype=np.int64)
        table: list[Status] = []
        for position, (name, plugin) in enumerate(self.points["filter"]):
            if name in skipped or name not in NODE_STATIC_FILTERS:
                continue
            result = plugin.filter(cycle, nodes)
            if isinstance(result, np.ndarray) or any(s.code == Code.ERROR
                                                     for s in result.statuses):
                return None
            newly = (first < 0) & ~result.passed
            first[newly] = position
            ids[newly] = len(table) + result.status_ids[newly]
            table += [s.with_plugin(name) for s in result.statuses]
        if len(self._statics) >= 64:
            self._statics.clear()
        found = self._statics[key] = StaticVerdicts(signature, layout, first, ids, tuple(table))
        return found

    def _filter_walk_compiled(self, cycle: Cycle, index: NominatedPods,
                              walk: npt.NDArray[np.int64], static: StaticVerdicts,
                              skipped: frozenset[str]) -> tuple[npt.NDArray[np.bool_], Any]:
        """:meth:`_filter_walk` in one compiled pass: the node-static verdicts of the pod's
        class, NodeResourcesFit on each node, then with its nominated pods on the nodes that
        passed."""
        from ksched.kernels.preemption import walk_failures, walk_filters

        state, fit = cycle.state, self.plugins.get("NodeResourcesFit")
        names = [name for name, _ in self.points["filter"]]
        fit_enabled = fit is not None and "NodeResourcesFit" in names and \
            "NodeResourcesFit" not in skipped
        if fit_enabled:
            vector, checked, _, count_only, missing = fit._wanted(cycle)
        else:
            vector, checked, count_only, missing = _EMPTY, _EMPTY, True, 0
        mask, extra = index.relevant(cycle.pod)
        kinds = np.empty(len(walk), dtype=np.int64)
        codes = np.empty(len(walk), dtype=np.int64)
        walk_filters(walk, static.first, names.index("NodeResourcesFit") if fit_enabled else -1,
                     state.allocatable, state.requested, state.resource_column(PODS), vector,
                     checked, count_only, np.int64(missing), mask, extra, kinds, codes)

        def failures_up_to(cut: int) -> NodeStatuses:
            at, ids = np.empty(cut, np.int64), np.empty(cut, np.int64)
            pair_kinds, pair_codes = np.empty(cut, np.int64), np.empty(cut, np.int64)
            count, pairs = walk_failures(walk, kinds, codes, cut, static.ids, len(static.table),
                                         at, ids, pair_kinds, pair_codes)
            table = static.table + tuple(
                fit.status_of_code(cycle, c).with_plugin("NodeResourcesFit")
                for c in pair_codes[:pairs].tolist())
            return NodeStatuses(walk[at[:count]], ids[:count], table)

        return kinds == 0, failures_up_to

    def _nominated_pass(self, cycle: Cycle, index: NominatedPods, walk: npt.NDArray[np.int64],
                        passed: npt.NDArray[np.bool_], skipped: frozenset[str]
                        ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[Status]]:
        """``RunFilterPluginsWithNominatedPods`` on the walked nodes with nominated pods that
        count for this pod: the first pass (with them) decides where it fails, else the
        second (the one already run). Nodes failing are struck from ``passed``. Returns their
        positions in ``walk``, and for each an index into the list of their statuses."""
        state, pod = cycle.state, cycle.pod
        mask, extra = index.relevant(pod)
        if not (self.vectorized and self.resource_only(skipped)):
            at = np.flatnonzero(mask[walk])
            statuses = [self.filter_node_with_nominated(state, pod, int(walk[i]),
                                                        index.get(int(walk[i]), ()), skipped,
                                                        cycle=cycle) for i in at.tolist()]
            failed = np.array([not s.is_success for s in statuses], dtype=np.bool_)
            passed[at[failed]] = False
            table = [s for s, f in zip(statuses, failed) if f]
            return at[failed], np.arange(len(table), dtype=np.int64), table
        fit = self.plugins.get("NodeResourcesFit")
        if "NodeResourcesFit" in skipped or fit is None or \
                "NodeResourcesFit" not in dict(self.points["filter"]):
            return _EMPTY, _EMPTY, []
        at, result = fit.filter_nominated(cycle, walk, passed, mask, extra)
        passed[at] = False
        table = [s.with_plugin("NodeResourcesFit") for s in result.statuses]
        return at, result.status_ids.astype(np.int64), table

    def _failures(self, walk: npt.NDArray[np.int64], passed: npt.NDArray[np.bool_],
                  first_failure: npt.NDArray[np.int16], results: list[FilterResult],
                  nominated: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[Status]]
                  ) -> NodeStatuses:
        """Each failing walked node's status, in walk order: the nominated pass's where it
        ran, else its first failing plugin's."""
        failing = np.flatnonzero(~passed)
        first = first_failure[failing]
        ids = np.empty(len(failing), dtype=np.int64)
        table: list[Status] = []
        for position in np.flatnonzero(np.bincount(first + 1)[1:]).tolist():
            chosen = first == position
            local = results[position].status_ids[failing[chosen]]
            statuses = results[position].statuses
            used = np.flatnonzero(np.bincount(local, minlength=len(statuses)))
            remap = np.zeros(len(statuses), dtype=np.int64)
            remap[used] = np.arange(len(table), len(table) + len(used))
            ids[chosen] = remap[local]
            name = self.points["filter"][position][0]
            table += [statuses[u].with_plugin(name) for u in used.tolist()]
        positions, nominated_ids, nominated_table = nominated
        if len(positions):
            slot = np.full(len(passed), -1, dtype=np.int64)
            inside = positions < len(passed)
            slot[positions[inside]] = nominated_ids[inside] + len(table)
            chosen = slot[failing] >= 0
            ids[chosen] = slot[failing[chosen]]
            table += nominated_table
        return NodeStatuses(walk[failing], ids, table)

    def _score(self, cycle: Cycle, base: dict[str, Any], tie_breaker: TieBreaker | None,
               always_score: bool) -> ScheduleResult:
        """``prioritizeNodes`` and ``selectHost`` over the feasible nodes.

        One feasible node is chosen without scoring (``schedulePod``); with ``always_score``
        its scores are still computed for information, as the traces record them: the Score
        plugins' sum (0 without any), and none at all if PreScore fails (upstream never runs
        it). Without Score plugins, ``prioritizeNodes`` gives several nodes 1 each and runs
        no PreScore."""
        feasible = base["feasible"]
        if len(feasible) == 1 and not always_score:
            return ScheduleResult(**{**base, "node": int(feasible[0]), "max_nodes": feasible})
        skipped_scores, raw, normalized, weighted = frozenset(), {}, {}, {}
        if self.has_scoring:
            try:
                skipped_scores, raw, normalized, weighted = self.run_score(cycle, feasible)
            except SchedulingError:
                if len(feasible) > 1:
                    raise
                return ScheduleResult(**{**base, "node": int(feasible[0]), "max_nodes": feasible})
        totals = np.zeros(len(feasible), dtype=np.int64)
        for scores in weighted.values():
            totals += scores
        if not self.has_scoring and len(feasible) > 1:
            totals[:] = 1
        max_nodes = feasible[totals == totals.max()]
        if len(feasible) == 1:
            chosen = int(feasible[0])
        else:
            chosen = (tie_breaker or TieBreaker()).choose(max_nodes)
        base.update(pre_score_skipped=skipped_scores, raw_scores=raw,
                    normalized_scores=normalized, scores=weighted, totals=totals,
                    max_nodes=max_nodes)
        return ScheduleResult(**{**base, "node": chosen})


@attrs.frozen(eq=False)
class StaticVerdicts:
    """The node-static filters of one pod class on every node: the position (in the filter
    list) of the first that fails (-1: none) and its status, an index into ``table``."""

    signature: tuple
    layout: tuple
    first: npt.NDArray[np.int64]
    ids: npt.NDArray[np.int64]
    table: tuple[Status, ...]


#: What the node-static filters read of a state (the verdicts are kept while these stand).
_STATIC_COLUMNS = ("nodes", "node_names", "labels", "taint_indptr", "taint_keys",
                   "taint_values", "taint_effects", "unschedulable", "label_ints",
                   "label_int_ok", "vocab", "label_keys")


#: Pod fields no filter reads: pods differing only in them share node-static verdicts.
_NOT_FILTERED = frozenset({"name", "uid", "nominated_node_name", "start_time",
                           "creation_time"})
_static_signature = operator.attrgetter(*(f.name for f in attrs.fields(Pod)
                                          if f.name not in _NOT_FILTERED))


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class NodeStatuses(Mapping[int, Status]):
    """Node row -> failure status (``NodeToStatus``), held as arrays: the nodes in order, and
    for each an index into ``table``, the statuses they share. Reading it as a mapping is
    node by node; :meth:`counts` and :meth:`codes` are not."""

    __slots__ = ("nodes", "ids", "table", "_counts", "_lookups", "_where")

    def __init__(self, nodes: Any, ids: Any, table: Sequence[Status]) -> None:
        self.nodes = np.asarray(nodes, dtype=np.int64)
        self.ids = np.asarray(ids, dtype=np.int64)
        self.table = tuple(table)
        self._counts: list[tuple[Status, int]] | None = None
        self._lookups, self._where = 0, None

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[int]:
        return iter(self.nodes.tolist())

    def _position(self, node: object) -> int | None:
        """Where ``node`` stands (a scan for the first few lookups, then a dict)."""
        if self._where is None:
            self._lookups += 1
            if self._lookups <= 4:
                found = np.flatnonzero(self.nodes == node)
                return int(found[0]) if len(found) else None
            self._where = {n: i for i, n in reversed(list(enumerate(self.nodes.tolist())))}
        return self._where.get(node)

    def __getitem__(self, node: int) -> Status:
        at = self._position(node)
        if at is None:
            raise KeyError(node)
        return self.table[self.ids[at]]

    def __contains__(self, node: object) -> bool:
        return self._position(node) is not None

    def __repr__(self) -> str:
        return f"NodeStatuses({dict(self.items())!r})"

    def values(self) -> list[Status]:  # type: ignore[override]
        return [self.table[i] for i in self.ids.tolist()]

    def items(self) -> list[tuple[int, Status]]:  # type: ignore[override]
        return list(zip(self.nodes.tolist(), self.values()))

    def with_first(self, node: int, status: Status) -> NodeStatuses:
        """A copy with ``node`` put first, failing with ``status``."""
        return NodeStatuses(np.concatenate([[node], self.nodes]),
                            np.concatenate([[len(self.table)], self.ids]),
                            self.table + (status,))

    def counts(self) -> list[tuple[Status, int]]:
        """Each status of the table with the number of nodes that have it."""
        if self._counts is None:
            numbers = np.bincount(self.ids, minlength=len(self.table)).tolist()
            self._counts = list(zip(self.table, numbers))
        return self._counts

    def distinct(self) -> list[Status]:
        """The statuses some node has."""
        return [s for s, count in self.counts() if count]

    def codes(self, num_nodes: int, absent: Status) -> npt.NDArray[np.int64]:
        """Every node row's status code (``absent``'s where the node has no entry)."""
        out = np.full(num_nodes, int(absent.code), dtype=np.int64)
        if len(self.nodes):
            table = np.array([int(s.code) for s in self.table], dtype=np.int64)
            out[self.nodes] = table[self.ids]
        return out

    @classmethod
    def of(cls, statuses: Mapping[int, Status]) -> NodeStatuses:
        if isinstance(statuses, NodeStatuses):
            return statuses
        return cls(list(statuses), np.arange(len(statuses)), list(statuses.values()))


def failure_message(num_all: int, failures: Mapping[int, Status], absent: Status | None) -> str:
    """:func:`fit_error_message` over ``failures``, counting each distinct status once."""
    if not isinstance(failures, NodeStatuses):
        return fit_error_message(num_all, failures.values(), absent=absent)
    return counted_failure_message(num_all, failures.counts(), absent)


def counted_failure_message(num_all: int, counts: Iterable[tuple[Status, int]],
                            absent: Status | None) -> str:
    """:func:`fit_error_message` from the distinct statuses and how many nodes have each."""
    histogram: Counter[str] = Counter()
    explicit = 0
    for status, count in counts:
        if not count:
            continue
        explicit += count
        for reason in status.reasons:
            histogram[reason] += count
    if absent is not None and explicit < num_all:
        for reason in absent.reasons:
            histogram[reason] += num_all - explicit
    entries = sorted(f"{count} {reason}" for reason, count in histogram.items())
    message = f"0/{num_all} nodes are available:"
    return message + (" " + ", ".join(entries) + "." if entries else "")


_MAX_PRIORITY, _MIN_PRIORITY = np.iinfo(np.int64).max, np.iinfo(np.int64).min


class NominatedPods(Mapping[int, Sequence[Pod]]):
    """Node row -> the pods nominated to it (the queue's nominator), with each node's summed
    request vector and priority range: a cycle finds the nodes whose nominated pods it must
    leave room for (``addGENominatedPods``) without visiting every nomination."""

    def __init__(self, state: ClusterState) -> None:
        n, r = state.num_nodes, len(state.resource_names)
        self.node_index, self.names = state.node_index, state.resource_names
        self.total = np.zeros((n, r), dtype=np.int64)
        self.low = np.full(n, _MAX_PRIORITY, dtype=np.int64)
        self.high = np.full(n, _MIN_PRIORITY, dtype=np.int64)
        self._pods: dict[int, tuple[Pod, ...]] = {}
        #: ("uid", uid) / ("key", key) -> rows where such a pod is nominated.
        self._who: dict[tuple[str, str], set[int]] = {}
        self._vectors: dict[int, tuple[Pod, npt.NDArray[np.int64]]] = {}
        self._spec_vectors: dict[tuple, tuple[tuple, npt.NDArray[np.int64]]] = {}
        #: How many nominated pods have each priority.
        self._priorities: Counter[int] = Counter()
        self._rows: npt.NDArray[np.int64] | None = None
        self._has = np.zeros(n, dtype=np.bool_)
        #: Bumped whenever a node's nominated pods are set.
        self.stamp = np.zeros(n, dtype=np.int64)
        self._relevant: tuple[Pod, tuple[Any, Any]] | None = None
        #: What the index follows (for its owner to tell).
        self.source: Any = None

    @classmethod
    def of(cls, state: ClusterState, nominated: Mapping[int, Sequence[Pod]]) -> NominatedPods:
        """``nominated`` itself when it is an index of ``state``'s layout, else an index of it."""
        if isinstance(nominated, NominatedPods) and nominated.matches(state):
            return nominated
        index = cls(state)
        for row, pods in nominated.items():
            index.set_node(row, pods)
        return index

    def matches(self, state: ClusterState) -> bool:
        return self.node_index is state.node_index and self.names == state.resource_names

    def __getitem__(self, row: int) -> Sequence[Pod]:
        return self._pods[row]

    def __iter__(self) -> Iterator[int]:
        return iter(self._pods)

    def __len__(self) -> int:
        return len(self._pods)

    def set_node(self, row: int, pods: Sequence[Pod]) -> None:
        """The pods now nominated to node ``row``."""
        pods = tuple(pods)
        staying = set(map(id, pods))
        for pod in self._pods.pop(row, ()):
            self._priorities[pod.priority] -= 1
            if not self._priorities[pod.priority]:
                del self._priorities[pod.priority]
            for who in _identities(pod):
                rows = self._who.get(who)
                if rows is not None:
                    rows.discard(row)
                    if not rows:
                        del self._who[who]
            if id(pod) not in staying:
                self._vectors.pop(id(pod), None)
        self.total[row] = 0
        self.low[row], self.high[row] = _MAX_PRIORITY, _MIN_PRIORITY
        if pods:
            self._pods[row] = pods
            for pod in pods:
                self.total[row] += self.vector(pod)
                self._priorities[pod.priority] += 1
                for who in _identities(pod):
                    self._who.setdefault(who, set()).add(row)
            self.low[row] = min(p.priority for p in pods)
            self.high[row] = max(p.priority for p in pods)
        self._has[row] = bool(pods)
        self.stamp[row] += 1
        self._rows, self._relevant = None, None

    def vector(self, pod: Pod) -> npt.NDArray[np.int64]:
        """:func:`request_vector` of a nominated pod (kept while it is nominated)."""
        found = self._vectors.get(id(pod))
        if found is None or found[0] is not pod:
            found = self._vectors[id(pod)] = (pod, self._spec_vector(pod))
        return found[1]

    def _spec_vector(self, pod: Pod) -> npt.NDArray[np.int64]:
        """:func:`request_vector` of a pod, shared by pods with the same spec objects
        (replicas)."""
        spec = (pod.containers, pod.init_containers, pod.overhead, pod.pod_requests)
        identity = tuple(map(id, spec))
        seen = self._spec_vectors.get(identity)
        if seen is None or not all(map(operator.is_, seen[0], spec)):
            requests = pod_requests(pod)
            vector = np.array([requests.get(name, 0) if name != PODS else 1
                               for name in self.names], dtype=np.int64)
            if len(self._spec_vectors) >= 4096:
                self._spec_vectors.clear()
            seen = self._spec_vectors[identity] = (spec, vector)
        return seen[1]

    def own_rows(self, pod: Pod) -> list[int]:
        """The rows where a pod :func:`nominated_before` may leave out as ``pod`` itself."""
        found = [self._who[who] for who in _identities(pod) if who in self._who]
        return sorted(set().union(*found)) if found else []

    def rows(self) -> npt.NDArray[np.int64]:
        """The node rows with nominated pods, ascending."""
        if self._rows is None:
            self._rows = np.flatnonzero(self._has)
        return self._rows

    def relevant(self, pod: Pod) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
        """Per node row: whether it has pods :func:`nominated_before` ``pod``, and the sum of
        their request vectors (read-only; valid where marked). The last answer is kept until
        the index changes."""
        if self._relevant is not None and self._relevant[0] is pod:
            return self._relevant[1]
        found = self._find_relevant(pod)
        self._relevant = (pod, found)
        return found

    def any_before(self, pod: Pod) -> bool:
        """Whether some node has pods :func:`nominated_before` ``pod``."""
        return bool(self.relevant(pod)[0].any())

    def _find_relevant(self, pod: Pod) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
        p = pod.priority
        has, low = self._has, self.low
        mask = has & (low >= p)
        exact = set(self.own_rows(pod))
        priorities = self._priorities
        if any(q >= p for q in priorities) and any(q < p for q in priorities):
            # Some node's pods may straddle p: those nodes are summed pod by pod.
            exact.update(np.flatnonzero(has & (self.high >= p) & (low < p)).tolist())
        extra = self.total
        if exact:
            extra = self.total.copy()
            for row in sorted(exact):
                others = nominated_before(pod, self._pods.get(row, ()))
                mask[row] = bool(others)
                extra[row] = sum((self.vector(o) for o in others),
                                 np.zeros(len(self.names), dtype=np.int64))
        return mask, extra


def _identities(pod: Pod) -> list[tuple[str, str]]:
    """What :func:`nominated_before` tells a pod apart by."""
    return [("uid", pod.uid), ("key", pod.key)] if pod.uid else [("key", pod.key)]


def request_vector(state: ClusterState, pod: Pod) -> npt.NDArray[np.int64]:
    """What the pod adds to its node's ``requested`` row (the pod count included)."""
    requests = pod_requests(pod)
    vector = np.array([requests.get(name, 0) if name != PODS else 1
                       for name in state.resource_names], dtype=np.int64)
    return vector


def nominated_before(pod: Pod, nominated: Sequence[Pod]) -> list[Pod]:
    """The nominated pods a pod's filters must leave room for: other pods with at least its
    priority (``addGENominatedPods``)."""
    return [p for p in nominated if p.priority >= pod.priority
            and (p.uid != pod.uid if p.uid and pod.uid else p.key != pod.key)]


def _unsatisfied(plugins: Sequence[str]) -> Status:
    """``RunPreFilterPlugins``' status when the merged node subsets leave no node: the
    plugins sorted (``sets.List``), and no plugin set on the status."""
    if len(plugins) == 1:
        return unresolvable(f"node(s) didn't satisfy plugin {plugins[0]}")
    return unresolvable(
        f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}] simultaneously")

"""One pod's scheduling cycle: ``schedulePod`` (``pkg/scheduler/schedule_one.go``).

``findNodesThatFitPod`` / ``findNodesThatPassFilters`` (with ``RunFilterPluginsWithNominatedPods``
and ``evaluateNominatedNode``), ``prioritizeNodes`` and ``selectHost``, over the plugin runners
of :class:`~ksched.framework.runtime.Framework` (``framework/runtime/framework.go``), which
takes these methods in as :class:`ScheduleOne`. Each plugin judges all candidate nodes at once;
the node walk of ``percentageOfNodesToScore`` is then cut where the sequential scan would have
stopped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Pod
from ksched.constants import PODS
from ksched.framework.diagnosis import (
    NodeStatuses,
    SchedulingError,
    StaticVerdicts,
    failure_message,
)
from ksched.framework.interfaces import Cycle, FilterResult
from ksched.framework.nominator import NominatedPods
from ksched.framework.tiebreak import TieBreaker
from ksched.kernels.preemption import walk_failures, walk_filters
from ksched.kernels.select import num_feasible_nodes_to_find
from ksched.state import ClusterState
from ksched.status import NO_NODES_AVAILABLE, Status, fit_error_message, unresolvable

_EMPTY = np.zeros(0, dtype=np.int64)


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


class ScheduleOne:
    """The cycle's steps, as methods of the :class:`~ksched.framework.runtime.Framework` that
    inherits them (its ``points``, ``profile``, ``run_*`` runners and node-static verdicts)."""

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
            if self.vectorized and self.resource_only(skipped, cycle.pod, cycle.state) else None
        if static is not None:
            return self._filter_walk_compiled(cycle, index, walk, static, skipped)
        passed, first_failure, results = self.run_filter(cycle, walk, skipped)
        nominated_failures = self._nominated_pass(cycle, index, walk, passed, skipped)
        return passed, lambda cut: self._failures(walk, passed[:cut], first_failure, results,
                                                  nominated_failures)

    def _filter_walk_compiled(self, cycle: Cycle, index: NominatedPods,
                              walk: npt.NDArray[np.int64], static: StaticVerdicts,
                              skipped: frozenset[str]) -> tuple[npt.NDArray[np.bool_], Any]:
        """:meth:`_filter_walk` in one compiled pass: the node-static verdicts of the pod's
        class, the request filter (NodeResourcesFit) on each node, then with its nominated
        pods on the nodes that passed."""
        state = cycle.state
        position, name, fit = self.request_filter(skipped)
        if fit is not None:
            vector, checked, count_only, missing = fit.request_check(cycle).kernel_args
        else:
            vector, checked, count_only, missing = _EMPTY, _EMPTY, True, np.int64(0)
        mask, extra = index.relevant(cycle.pod)
        kinds = np.empty(len(walk), dtype=np.int64)
        codes = np.empty(len(walk), dtype=np.int64)
        walk_filters(walk, static.first, position, state.allocatable, state.requested,
                     state.resource_column(PODS), vector, checked, count_only, missing, mask,
                     extra, kinds, codes)

        def failures_up_to(cut: int) -> NodeStatuses:
            at, ids = np.empty(cut, np.int64), np.empty(cut, np.int64)
            pair_kinds, pair_codes = np.empty(cut, np.int64), np.empty(cut, np.int64)
            count, pairs = walk_failures(walk, kinds, codes, cut, static.ids, len(static.table),
                                         at, ids, pair_kinds, pair_codes)
            table = static.table + tuple(fit.status_of_code(cycle, c).with_plugin(name)
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
        if not (self.vectorized and self.resource_only(skipped, pod, state)):
            at = np.flatnonzero(mask[walk])
            statuses = [self.filter_node_with_nominated(state, pod, int(walk[i]),
                                                        index.get(int(walk[i]), ()), skipped,
                                                        cycle=cycle) for i in at.tolist()]
            failed = np.array([not s.is_success for s in statuses], dtype=np.bool_)
            passed[at[failed]] = False
            table = [s for s, f in zip(statuses, failed) if f]
            return at[failed], np.arange(len(table), dtype=np.int64), table
        _, name, fit = self.request_filter(skipped)
        if fit is None:
            return _EMPTY, _EMPTY, []
        at, result = fit.filter_nominated(cycle, walk, passed, mask, extra)
        passed[at] = False
        table = [s.with_plugin(name) for s in result.statuses]
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
            chosen = int(feasible[(tie_breaker or TieBreaker()).select(totals)])
        base.update(pre_score_skipped=skipped_scores, raw_scores=raw,
                    normalized_scores=normalized, scores=weighted, totals=totals,
                    max_nodes=max_nodes)
        return ScheduleResult(**{**base, "node": chosen})

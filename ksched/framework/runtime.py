"""The framework of one profile: its plugins at each extension point, and their runners.

Mirrors ``pkg/scheduler/framework/runtime/framework.go`` (``NewFramework``,
``RunPreFilterPlugins``, ``RunFilterPlugins``, ``RunFilterPluginsWithNominatedPods``,
``RunScorePlugins``, ``RunPostFilterPlugins`` and the binding cycle's runners). What plugins
declare of themselves (:mod:`ksched.framework.capabilities`) lets the runner judge node-static
filters once per pod class and a node with pods added or removed by request arithmetic. The
cycle itself is :mod:`ksched.framework.schedule_one`'s; the diagnosis types are
:mod:`ksched.framework.diagnosis`'s and the nominated pods :mod:`ksched.framework.nominator`'s
(their names are importable from here too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ksched.api import Pod
from ksched.constants import MAX_NODE_SCORE, MIN_NODE_SCORE
from ksched.errors import ConfigError
from ksched.framework.capabilities import (
    FilterKind,
    filter_kind,
    is_node_static_filter,
    node_static_for,
)
from ksched.framework.diagnosis import (
    NodeStatuses,
    SchedulingError,
    StaticVerdicts,
    counted_failure_message,
    failure_message,
    unsatisfied_subsets,
)
from ksched.framework.interfaces import (
    Cycle,
    FilterResult,
    Handle,
    PostFilterResult,
    PreFilterResult,
    implements,
)
from ksched.framework.nominator import NominatedPods, nominated_before, request_vector
from ksched.framework.registry import Registry
from ksched.framework.schedule_one import ScheduleOne, ScheduleResult
from ksched.pods import filter_signature
from ksched.profile import ALL_POINTS, Profile
from ksched.state import ClusterState
from ksched.status import SUCCESS, Code, Status, unschedulable

#: ``maxTimeout``: the longest a Permit plugin may make a pod wait, in seconds.
MAX_PERMIT_TIMEOUT = 15 * 60.0
_DEFAULT_REGISTRY: list[Registry] = []


def set_default_registry(registry: Registry) -> None:
    """Make ``registry`` the one a :class:`Framework` built without one uses
    (:mod:`ksched.plugins` sets its in-tree registry when it is imported)."""
    _DEFAULT_REGISTRY[:] = [registry]


def default_registry() -> Registry:
    """The registry of :func:`set_default_registry` (the in-tree plugins)."""
    if not _DEFAULT_REGISTRY:
        raise ConfigError("no plugin registry: import ksched.plugins or pass one")
    return _DEFAULT_REGISTRY[0]


class Framework(ScheduleOne):
    """Plugins of one :class:`Profile`, instantiated and ordered per extension point."""

    def __init__(self, profile: Profile, registry: Registry | None = None) -> None:
        if registry is None:
            registry = default_registry()
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
        #: When only the request filter (NodeResourcesFit) of the filters looks at pods,
        #: judge a changed node by request arithmetic instead of a copy of the cluster
        #: (``False``: always copy).
        self.request_arithmetic = True
        #: In that regime, also judge all nodes' nominated pods at once, and dry-run
        #: preemption in the compiled kernel (``False``: node by node, in Python).
        self.vectorized = True
        #: Node-static filter verdicts per pod class (see :meth:`static_verdicts`).
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
                        return (unsatisfied_subsets(subset_plugins), names, frozenset(skipped),
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

    # ------------------------------------------------------------------ one node, changed

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

        When only the request filter of the filters that run looks at pods, the copies are
        just request arithmetic (``cycle``, on ``state``, carries what is reused)."""
        others = nominated_before(pod, nominated)
        if self.resource_only(skipped, pod, state):
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

    def resource_only(self, skipped: frozenset[str], pod: Pod, state: ClusterState) -> bool:
        """Whether, of the filters that run, only one depends on the node's pods, and only
        through their summed requests (a :class:`RequestDeltaFilter`, NodeResourcesFit): the
        others are node-static for ``pod`` in ``state`` (:func:`node_static_for`) or skipped."""
        if not self.request_arithmetic:
            return False
        running = [plugin for name, plugin in self.points["filter"] if name not in skipped]
        requests = sum(filter_kind(p) is FilterKind.REQUEST_DELTA for p in running)
        return requests <= 1 and all(
            (is_node_static_filter(p) and node_static_for(p, pod, state))
            or filter_kind(p) is FilterKind.REQUEST_DELTA for p in running)

    def request_filter(self, skipped: frozenset[str]) -> tuple[int, str, Any]:
        """The filter that judges a node by its pods' summed requests (a
        :class:`RequestDeltaFilter`, NodeResourcesFit), when it runs for a cycle that skips
        ``skipped``: its position among the filters, its name and the plugin
        (``(-1, "", None)`` when none runs)."""
        for position, (name, plugin) in enumerate(self.points["filter"]):
            if name not in skipped and filter_kind(plugin) is FilterKind.REQUEST_DELTA:
                return position, name, plugin
        return -1, "", None

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
            if filter_kind(plugin) is FilterKind.REQUEST_DELTA:
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
        """:meth:`static_verdicts`, looked up once per cycle."""
        key = ("framework/statics", skipped)
        if key not in cycle.data:
            cycle.data[key] = self.static_verdicts(cycle, skipped)
        return cycle.data[key]

    def _changed_with_statics(self, cycle: Cycle, node: int, delta: npt.NDArray[np.int64],
                              skipped: frozenset[str], static: StaticVerdicts) -> Status:
        """:meth:`filter_changed` from the class's node-static verdicts: the first failing
        filter is the first failing node-static one or the request filter, in filter order."""
        at, name, fit = self.request_filter(skipped)
        first = int(static.first[node])
        if first >= 0 and (at < 0 or first < at):
            return static.table[static.ids[node]]
        if at >= 0:
            status = fit.filter_changed(cycle, node, delta)
            if not status.is_success:
                return status.with_plugin(name)
        return static.table[static.ids[node]] if first >= 0 else Status()

    def static_verdicts(self, cycle: Cycle, skipped: frozenset[str]) -> StaticVerdicts | None:
        """The node-static filters' verdicts on every node for this pod's class (its spec
        but its name), kept per class, skipped set and node layout; ``None`` when one of them
        errs (:meth:`run_filter` then says so)."""
        state = cycle.state
        signature = filter_signature(cycle.pod)
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
            if name in skipped or not is_node_static_filter(plugin):
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


#: What the node-static filters read of a state (the verdicts are kept while these stand).
_STATIC_COLUMNS = ("nodes", "node_names", "labels", "taint_indptr", "taint_keys",
                   "taint_values", "taint_effects", "unschedulable", "label_ints",
                   "label_int_ok", "vocab", "label_keys", "image_indptr", "image_ids",
                   "allocatable", "storage")


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


__all__ = [
    "Framework", "ScheduleResult", "SchedulingError", "StaticVerdicts", "NodeStatuses",
    "NominatedPods", "failure_message", "counted_failure_message", "nominated_before",
    "request_vector", "set_default_registry", "default_registry", "MAX_PERMIT_TIMEOUT",
]

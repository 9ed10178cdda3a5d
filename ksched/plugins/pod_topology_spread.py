"""PodTopologySpread (``plugins/podtopologyspread/{common,filtering,scoring,plugin}.go``).

Filter (``DoNotSchedule`` constraints): placing the pod in a node's domain must keep
``matching pods in the domain + self match - global minimum <= maxSkew``. Score
(``ScheduleAnyway`` constraints, or the system defaults for pods without constraints): fewer
matching pods in the node's domains is better, each constraint weighted by ``ln(domains + 2)``.
Counts are taken over all nodes that pass the constraint's node-inclusion policies. The
judging and scoring arithmetic is :mod:`ksched.kernels.pod_topology_spread`'s, shared with the
fused loop; the reference the plugin is tested against is
:mod:`ksched.plugins.reference.pod_topology_spread`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

import attrs
import numpy as np

from ksched.api import Pod, TopologySpreadConstraint
from ksched.constants import LABEL_HOSTNAME, LABEL_ZONE
from ksched.framework.capabilities import FilterKind, ScoreKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.kernels import pod_topology_spread as kernels
from ksched.kernels import taint_toleration as taint_kernels
from ksched.labels import Selector
from ksched.plugins._helpers import cycle_data
from ksched.plugins.node_affinity import required_node_affinity_mask
from ksched.plugins.taint_toleration import encode_tolerations
from ksched.state import ABSENT, ClusterState, pod_specs
from ksched.status import SKIP, Code, Status, unresolvable, unschedulable

REASON_SKEW = "node(s) didn't match pod topology spread constraints"
REASON_MISSING_LABEL = ("node(s) didn't match pod topology spread constraints "
                        "(missing required label)")
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
SYSTEM, LIST = "System", "List"

#: ``systemDefaultConstraints`` (plugin.go).
SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(3, LABEL_HOSTNAME, SCHEDULE_ANYWAY),
    TopologySpreadConstraint(5, LABEL_ZONE, SCHEDULE_ANYWAY),
)


@attrs.frozen
class PodTopologySpreadArgs:
    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = SYSTEM


@attrs.frozen
class Constraint:
    """An internal ``topologySpreadConstraint`` with its selector resolved."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    honor_affinity: bool = True
    honor_taints: bool = False


def default_selector(pod: Pod, state: ClusterState) -> Selector:
    """``helper.DefaultSelector``: the selectors of the Services selecting the pod, and of the
    ReplicationController, ReplicaSet or StatefulSet that controls it."""
    workloads = state.objects.get("workloads", ())
    label_set: dict[str, str] = {}
    for w in workloads:
        if (w.kind == "Service" and w.namespace == pod.namespace and w.selector is not None
                and Selector.from_set(w.selector.match_labels).matches(pod.labels)):
            label_set.update(w.selector.match_labels)
    extra: list = []
    if pod.controller is not None:
        api_version, kind, name = pod.controller
        owner = next((w for w in workloads if w.kind == kind and w.name == name
                      and w.namespace == pod.namespace), None)
        expected = {"ReplicationController": "v1", "ReplicaSet": "apps/v1",
                    "StatefulSet": "apps/v1"}.get(kind)
        if owner is not None and api_version == expected and owner.selector is not None:
            if kind == "ReplicationController":
                label_set.update(owner.selector.match_labels)
            else:
                try:
                    extra = list(Selector.from_label_selector(owner.selector).requirements)
                except ValueError:
                    extra = []
    return Selector(list(Selector.from_set(dict(sorted(label_set.items()))).requirements) + extra)


def build_constraints(pod: Pod, action: str, args: PodTopologySpreadArgs,
                      state: ClusterState) -> list[Constraint]:
    """The pod's constraints of one action (``filterTopologySpreadConstraints``), or the
    profile's default constraints with the default selector when the pod has none."""
    if pod.topology_spread_constraints:
        return [_resolve(c, pod) for c in pod.topology_spread_constraints
                if c.when_unsatisfiable == action]
    defaults = (SYSTEM_DEFAULT_CONSTRAINTS if args.defaulting_type == SYSTEM
                else args.default_constraints)
    chosen = [c for c in defaults if c.when_unsatisfiable == action]
    if not chosen:
        return []
    selector = default_selector(pod, state)
    if selector.empty:
        return []
    return [attrs.evolve(_resolve(c, pod), selector=selector) for c in chosen]


def _resolve(c: TopologySpreadConstraint, pod: Pod) -> Constraint:
    selector = Selector.from_label_selector(c.label_selector)
    own = {k: pod.labels[k] for k in c.match_label_keys if k in pod.labels}
    if own:
        selector = selector.merged(own)
    return Constraint(
        max_skew=c.max_skew, topology_key=c.topology_key, selector=selector,
        min_domains=c.min_domains if c.min_domains is not None else 1,
        honor_affinity=(c.node_affinity_policy or "Honor") == "Honor",
        honor_taints=(c.node_taints_policy or "Ignore") == "Honor",
    )


def counts_pod(selector: Selector, namespace: str, pod_namespace: str,
               labels: Mapping[str, str], deleting: bool) -> bool:
    """``countPodsMatchSelector``'s test of one pod: never with an empty selector (upstream
    returns 0 for ``selector.Empty()``), nor a terminating pod or one of another namespace."""
    return (not selector.empty and not deleting and pod_namespace == namespace
            and selector.matches(labels))


def matching_pods_per_node(state: ClusterState, selector: Selector, namespace: str) -> np.ndarray:
    """``countPodsMatchSelector`` for every node: int64[n_nodes] (see :func:`counts_pod`)."""
    if selector.empty:
        return np.zeros(state.num_nodes, dtype=np.int64)
    key = (namespace, selector.nothing, selector.requirements)
    counted, counts = state.match_cache.get(key, (0, None))
    total = len(state.pods)
    if counts is None or counted > total:
        counted, counts = 0, np.zeros(state.num_nodes, dtype=np.int64)
    if counted < total:  # count only the pods placed since, as they are placed
        new = pod_specs(state.pods, counted, total)
        hits = [node for pod, node in zip(new, state.pod_node[counted:total])
                if counts_pod(selector, namespace, pod.namespace, pod.labels, pod.deleting)]
        counts = counts + np.bincount(np.asarray(hits, dtype=np.int64),
                                      minlength=state.num_nodes)
        state.match_cache[key] = (total, counts)
    return counts


class _Nodes:
    """Per-cycle node facts every constraint reuses."""

    def __init__(self, cycle: Cycle) -> None:
        state, pod = cycle.state, cycle.pod
        everything = np.arange(state.num_nodes, dtype=np.int64)
        self.affinity_ok = required_node_affinity_mask(pod, state, everything)
        self.taints_ok = ~taint_kernels.untolerated_mask(
            state.taint_indptr, state.taint_keys, state.taint_values, state.taint_effects,
            everything, *encode_tolerations(pod.tolerations, state.vocab))

    def included(self, c: Constraint) -> np.ndarray:
        """``matchNodeInclusionPolicies`` for every node."""
        ok = np.ones(len(self.affinity_ok), dtype=np.bool_)
        if c.honor_affinity:
            ok &= self.affinity_ok
        if c.honor_taints:
            ok &= self.taints_ok
        return ok


def _label_values(state: ClusterState, key: str) -> np.ndarray:
    column = state.label_column(key)
    if column < 0:
        return np.full(state.num_nodes, ABSENT, dtype=np.int64)
    return state.labels[:, column].astype(np.int64)


def _has_all_keys(state: ClusterState, constraints: Sequence[Constraint]) -> np.ndarray:
    ok = np.ones(state.num_nodes, dtype=np.bool_)
    for c in constraints:
        ok &= _label_values(state, c.topology_key) != ABSENT
    return ok


@attrs.frozen(eq=False)
class FilterCounts:
    """``preFilterState``: the pods matching each hard constraint per domain, in the layout
    of :mod:`ksched.kernels.pod_topology_spread` (constraint ``i`` is counter ``i``).

    keyed : bool[n_nodes] the nodes with every constraint's key
        (``nodeLabelsMatchSpreadConstraints``); included : per constraint, bool[n_nodes] the
        nodes counted (keyed, and passing its node-inclusion policies); domains : per
        constraint, int64[] the domain ids of those nodes. columns : int64[c] each key's label
        column; counts : int64[c, n_values + 1] matching pods per domain id; entries :
        int64[c, 4] (counter, maxSkew, self match, minDomains); minimum : int64[c]
        ``minMatchNum``.
    """

    constraints: tuple[Constraint, ...]
    keyed: np.ndarray
    included: tuple[np.ndarray, ...]
    domains: tuple[np.ndarray, ...]
    columns: np.ndarray
    counts: np.ndarray
    entries: np.ndarray
    minimum: np.ndarray


@attrs.frozen(eq=False)
class SoftConstraints:
    """What ``initPreScoreState`` counts for the soft constraints, before the feasible nodes
    are known: whether nodes lacking a key are ignored (``requireAllTopologies``), keyed :
    bool[n_nodes] the nodes not ignored for that, and per constraint the nodes counted
    (``included``, bool[n_nodes]) and the matching pods on each node (``matching``,
    int64[n_nodes])."""

    constraints: tuple[Constraint, ...]
    require_all: bool
    keyed: np.ndarray
    included: tuple[np.ndarray, ...]
    matching: tuple[np.ndarray, ...]


@attrs.frozen(eq=False)
class _ScoreState:
    constraints: tuple[Constraint, ...]
    ignored: np.ndarray  # bool[n_nodes]
    weights: tuple[float, ...]
    domain_counts: tuple[np.ndarray, ...]  # int64[domain id], 0 for domains without nodes
    node_counts: tuple[np.ndarray, ...]


@attrs.frozen
class PodTopologySpread:
    NAME: ClassVar[str] = "PodTopologySpread"
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.TOPOLOGY_SPREAD
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.TOPOLOGY_SPREAD
    args: PodTopologySpreadArgs = attrs.field(
        default=None, converter=lambda a: a if a is not None else PodTopologySpreadArgs())

    @property
    def system_defaulted(self) -> bool:
        return self.args.defaulting_type == SYSTEM

    def constraints(self, cycle: Cycle) -> tuple[list[Constraint], list[Constraint]] | Status:
        """The pod's hard and soft constraints (its own, or the profile's defaults with the
        default selector); the Error status of an invalid selector."""
        hard = self._constraints(cycle, DO_NOT_SCHEDULE)
        if isinstance(hard, Status):
            return hard
        soft = self._constraints(cycle, SCHEDULE_ANYWAY)
        return soft if isinstance(soft, Status) else (hard, soft)

    def _constraints(self, cycle: Cycle, action: str) -> list[Constraint] | Status:
        """The pod's constraints of ``action``, or the Error status of an invalid selector,
        worded as ``calPreFilterState`` / ``getConstraints`` (hard) and ``PreScore`` /
        ``initPreScoreState`` (soft) wrap ``LabelSelectorAsSelector``'s error."""
        try:
            return build_constraints(cycle.pod, action, self.args, cycle.state)
        except ValueError as exc:
            hard = action == DO_NOT_SCHEDULE
            source = ("obtaining pod's" if cycle.pod.topology_spread_constraints
                      else "setting default")
            context = "get constraints from pod" if hard else "calculating preScoreState"
            return Status(Code.ERROR, (f"{context}: {source} {'hard' if hard else 'soft'} "
                                       f"topology spread constraints: {exc}",))

    def pre_filter(self, cycle: Cycle) -> Status | None:
        constraints = self._constraints(cycle, DO_NOT_SCHEDULE)
        if isinstance(constraints, Status):
            return constraints
        if not constraints:
            return SKIP
        cycle.data[self.NAME] = self._filter_state(cycle, constraints)
        return None

    def _filter_state(self, cycle: Cycle, constraints: list[Constraint]) -> FilterCounts:
        state, pod = cycle.state, cycle.pod
        nodes = cycle_data(cycle, self.NAME + "/nodes", lambda: _Nodes(cycle))
        keyed = _has_all_keys(state, constraints)
        size = len(state.vocab) + 1
        counts = np.zeros((len(constraints), size), dtype=np.int64)
        included, domains, entries = [], [], []
        for i, c in enumerate(constraints):
            matching = matching_pods_per_node(state, c.selector, pod.namespace)
            included.append(keyed & nodes.included(c))
            counts[i], present = _per_domain(_label_values(state, c.topology_key), matching,
                                             included[-1], size)
            domains.append(np.flatnonzero(present))
            entries.append((i, c.max_skew, 1 if c.selector.matches(pod.labels) else 0,
                            c.min_domains))
        entries = np.array(entries, dtype=np.int64).reshape(-1, 4)
        indptr = np.zeros(len(domains) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(d) for d in domains])
        minimum = kernels.spread_minimums(entries, indptr, np.concatenate(domains), counts)
        columns = np.array([state.label_column(c.topology_key) for c in constraints],
                           dtype=np.int64)
        return FilterCounts(tuple(constraints), keyed, tuple(included), tuple(domains), columns,
                            counts, entries, minimum)

    def filter_counts(self, cycle: Cycle) -> FilterCounts | Status | None:
        """This cycle's :class:`FilterCounts` (PreFilter's, or made now); ``None`` without
        hard constraints, the Error status of an invalid selector."""
        found = cycle.data.get(self.NAME)
        if found is None:
            constraints = self._constraints(cycle, DO_NOT_SCHEDULE)
            if isinstance(constraints, Status):
                return constraints
            if not constraints:
                return None
            found = cycle.data[self.NAME] = self._filter_state(cycle, constraints)
        return found

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        s = self.filter_counts(cycle)
        if not isinstance(s, FilterCounts):
            return FilterResult.from_mask(np.ones(len(nodes), np.bool_), Status())
        codes = kernels.spread_filter_codes(nodes, s.entries, s.minimum, cycle.state.labels,
                                            s.columns, s.counts)
        return FilterResult.from_codes(codes, lambda code: unresolvable(REASON_MISSING_LABEL)
                                       if code == kernels.MISSING_LABEL
                                       else unschedulable(REASON_SKEW))

    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status | None:
        if cycle.state.num_nodes == 0:
            return SKIP
        soft = self.soft_constraints(cycle)
        if isinstance(soft, Status):
            return soft
        if not soft.constraints:
            return SKIP
        cycle.data[self.NAME + "/score"] = self._score_state(cycle, soft, nodes)
        return None

    def soft_constraints(self, cycle: Cycle) -> SoftConstraints | Status:
        """The soft constraints (explicit ScheduleAnyway ones, or the profile's defaults) and
        what they count (:class:`SoftConstraints`); the Error status of an invalid
        selector."""
        found = cycle.data.get(self.NAME + "/soft")
        if found is not None:
            return found
        constraints = self._constraints(cycle, SCHEDULE_ANYWAY)
        if isinstance(constraints, Status):
            return constraints
        state, pod = cycle.state, cycle.pod
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        if not constraints:
            return SoftConstraints((), require_all, np.ones(state.num_nodes, np.bool_), (), ())
        nodes = cycle_data(cycle, self.NAME + "/nodes", lambda: _Nodes(cycle))
        keyed = _has_all_keys(state, constraints) if require_all else np.ones(
            state.num_nodes, dtype=np.bool_)
        found = cycle.data[self.NAME + "/soft"] = SoftConstraints(
            tuple(constraints), require_all, keyed,
            tuple(keyed & nodes.included(c) for c in constraints),
            tuple(matching_pods_per_node(state, c.selector, pod.namespace)
                  for c in constraints))
        return found

    def _score_state(self, cycle: Cycle, soft: SoftConstraints,
                     feasible: NodeIndices) -> _ScoreState:
        state = cycle.state
        keyed = soft.keyed
        ignored = np.zeros(state.num_nodes, dtype=np.bool_)
        ignored[feasible[~keyed[feasible]]] = True
        scored = feasible[keyed[feasible]]
        weights, domain_counts = [], []
        for c, included, counts in zip(soft.constraints, soft.included, soft.matching):
            if c.topology_key == LABEL_HOSTNAME:
                domain_counts.append(np.zeros(0, dtype=np.int64))
                weights.append(math.log(len(feasible) - int(ignored.sum()) + 2))
                continue
            values = _domain_ids(state, c.topology_key)
            size = len(state.vocab) + 1
            seen = np.zeros(size, dtype=np.bool_)
            seen[values[scored]] = True  # only domains of scored nodes get counters
            weights.append(math.log(int(seen.sum()) + 2))
            per_domain, _ = _per_domain(values, counts, included, size)
            domain_counts.append(np.where(seen, per_domain, 0))
        return _ScoreState(soft.constraints, ignored, tuple(weights), tuple(domain_counts),
                           soft.matching)

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        s: _ScoreState = cycle.data[self.NAME + "/score"]
        totals = np.zeros(len(nodes), dtype=np.float64)
        for i, c in enumerate(s.constraints):
            present = _label_values(cycle.state, c.topology_key)[nodes] != ABSENT
            if c.topology_key == LABEL_HOSTNAME:
                counts = s.node_counts[i][nodes]
            else:
                counts = s.domain_counts[i][_domain_ids(cycle.state, c.topology_key)[nodes]]
            term = counts.astype(np.float64) * s.weights[i] + float(c.max_skew - 1)
            totals = np.where(present, totals + term, totals)
        scores = kernels.round_scores(totals)
        scores[s.ignored[nodes]] = 0
        cycle.data[self.NAME + "/ignored"] = s.ignored[nodes]
        return scores

    def normalize_score(self, cycle: Cycle, scores: np.ndarray) -> None:
        kernels.normalize_spread_scores(scores, cycle.data[self.NAME + "/ignored"])

    def schedulable_after_pod_added(self, target: Pod, added: Pod, state: ClusterState) -> bool:
        """``isSchedulableAfterPodChange`` for an added pod (registered for Pod/Add): Queue
        when ``added`` takes part in ``target``'s spreading (``involvedInTopologySpreading``:
        itself, or bound in its namespace) and one of ``target``'s hard constraints
        (``getConstraints``) selects its labels (``podLabelsMatchSpreadConstraints``); Queue
        too when a selector does not parse (the hint's error)."""
        if added.key != target.key and not (added.node_name
                                            and added.namespace == target.namespace):
            return False
        try:
            constraints = build_constraints(target, DO_NOT_SCHEDULE, self.args, state)
        except ValueError:
            return True
        return any(c.selector.matches(added.labels) for c in constraints)

    #: The assigned-pod updates it registers for (``EventsToRegister``: Pod/UpdatePodLabel).
    POD_UPDATE_ACTIONS: ClassVar[tuple[str, ...]] = ("UpdatePodLabel",)

    def schedulable_after_pod_updated(self, target: Pod, old: Pod, new: Pod,
                                      state: ClusterState) -> bool:
        """``isSchedulableAfterPodChange`` for an updated bound pod: Queue when it takes part
        in ``target``'s spreading (bound in its namespace), its labels changed and one of
        ``target``'s hard constraints selects the old labels but not the new ones or the
        reverse; Queue too when a selector does not parse."""
        if not (new.node_name and old.node_name and new.namespace == target.namespace):
            return False
        try:
            constraints = build_constraints(target, DO_NOT_SCHEDULE, self.args, state)
        except ValueError:
            return True
        if dict(old.labels) == dict(new.labels):
            return False
        return any(c.selector.matches(old.labels) != c.selector.matches(new.labels)
                   for c in constraints)


def _per_domain(values: np.ndarray, counts: np.ndarray, eligible: np.ndarray,
                size: int) -> tuple[np.ndarray, np.ndarray]:
    """Matching pods summed per domain over the eligible nodes, and which domains exist:
    (int64[size], bool[size]) indexed by domain id."""
    domains = values[eligible]
    per_domain = np.bincount(domains, weights=counts[eligible], minlength=size)
    present = np.zeros(size, dtype=np.bool_)
    present[domains] = True
    return per_domain.astype(np.int64), present


def _domain_ids(state: ClusterState, key: str) -> np.ndarray:
    """Label value ids with a missing label read as the empty value (``node.Labels[key]``)."""
    values = _label_values(state, key)
    empty = state.vocab.get("")
    return np.where(values == ABSENT, empty if empty >= 0 else len(state.vocab), values)

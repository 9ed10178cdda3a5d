"""PodTopologySpread (``plugins/podtopologyspread/{common,filtering,scoring,plugin}.go``).

Filter (``DoNotSchedule`` constraints): placing the pod in a node's domain must keep
``matching pods in the domain + self match - global minimum <= maxSkew``. Score
(``ScheduleAnyway`` constraints, or the system defaults for pods without constraints): fewer
matching pods in the node's domains is better, each constraint weighted by ``ln(domains + 2)``.
Counts are taken over all nodes that pass the constraint's node-inclusion policies.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import attrs
import numpy as np

from ksched.api import Pod, TopologySpreadConstraint
from ksched.constants import LABEL_HOSTNAME, LABEL_ZONE, MAX_NODE_SCORE
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
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


def matching_pods_per_node(state: ClusterState, selector: Selector, namespace: str) -> np.ndarray:
    """``countPodsMatchSelector`` for every node: int64[n_nodes].

    Terminating pods and pods of other namespaces never count; an empty selector counts none.
    """
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
                if not pod.deleting and pod.namespace == namespace
                and selector.matches(pod.labels)]
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
class _FilterState:
    """``preFilterState``: per constraint the matches per domain and the global minimum."""

    constraints: tuple[Constraint, ...]
    domain_counts: tuple[np.ndarray, ...]  # int64[domain id]
    min_match: tuple[int, ...]
    self_match: tuple[int, ...]


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
    args: PodTopologySpreadArgs = attrs.field(
        default=None, converter=lambda a: a if a is not None else PodTopologySpreadArgs())

    @property
    def system_defaulted(self) -> bool:
        return self.args.defaulting_type == SYSTEM

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

    def _filter_state(self, cycle: Cycle, constraints: list[Constraint]) -> _FilterState:
        state, pod = cycle.state, cycle.pod
        nodes = cycle_data(cycle, self.NAME + "/nodes", lambda: _Nodes(cycle))
        keyed = _has_all_keys(state, constraints)
        domain_counts, min_match, self_match = [], [], []
        for c in constraints:
            counts = matching_pods_per_node(state, c.selector, pod.namespace)
            eligible = keyed & nodes.included(c)
            per_domain, present = _per_domain(_label_values(state, c.topology_key), counts,
                                              eligible, len(state.vocab) + 1)
            domain_counts.append(per_domain)
            domains = int(present.sum())
            enough = domains >= c.min_domains
            min_match.append(int(per_domain[present].min()) if enough and domains else 0)
            self_match.append(1 if c.selector.matches(pod.labels) else 0)
        return _FilterState(tuple(constraints), tuple(domain_counts), tuple(min_match),
                            tuple(self_match))

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        s = cycle.data.get(self.NAME)
        if s is None:
            constraints = self._constraints(cycle, DO_NOT_SCHEDULE)
            if isinstance(constraints, Status) or not constraints:
                return FilterResult.from_mask(np.ones(len(nodes), np.bool_), Status())
            s = cycle.data[self.NAME] = self._filter_state(cycle, constraints)
        codes = np.zeros(len(nodes), dtype=np.int64)
        for i, c in enumerate(s.constraints):
            values = _label_values(cycle.state, c.topology_key)[nodes]
            undecided = codes == 0
            codes[undecided & (values == ABSENT)] = 1
            matched = s.domain_counts[i][np.where(values == ABSENT, 0, values)]
            skew = matched + s.self_match[i] - s.min_match[i]
            codes[undecided & (values != ABSENT) & (skew > c.max_skew)] = 2
        return FilterResult.from_codes(codes, lambda code: unresolvable(REASON_MISSING_LABEL)
                                       if code == 1 else unschedulable(REASON_SKEW))

    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status | None:
        if cycle.state.num_nodes == 0:
            return SKIP
        constraints = self._constraints(cycle, SCHEDULE_ANYWAY)
        if isinstance(constraints, Status):
            return constraints
        if not constraints:
            return SKIP
        cycle.data[self.NAME + "/score"] = self._score_state(cycle, constraints, nodes)
        return None

    def _score_state(self, cycle: Cycle, constraints: list[Constraint],
                     feasible: NodeIndices) -> _ScoreState:
        state, pod = cycle.state, cycle.pod
        nodes = cycle_data(cycle, self.NAME + "/nodes", lambda: _Nodes(cycle))
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        keyed = _has_all_keys(state, constraints) if require_all else np.ones(
            state.num_nodes, dtype=np.bool_)
        ignored = np.zeros(state.num_nodes, dtype=np.bool_)
        ignored[feasible[~keyed[feasible]]] = True
        scored = feasible[keyed[feasible]]
        weights, domain_counts, node_counts = [], [], []
        for c in constraints:
            counts = matching_pods_per_node(state, c.selector, pod.namespace)
            node_counts.append(counts)
            if c.topology_key == LABEL_HOSTNAME:
                domain_counts.append(np.zeros(0, dtype=np.int64))
                weights.append(math.log(len(feasible) - int(ignored.sum()) + 2))
                continue
            values = _domain_ids(state, c.topology_key)
            size = len(state.vocab) + 1
            seen = np.zeros(size, dtype=np.bool_)
            seen[values[scored]] = True  # only domains of scored nodes get counters
            weights.append(math.log(int(seen.sum()) + 2))
            per_domain, _ = _per_domain(values, counts, keyed & nodes.included(c), size)
            domain_counts.append(np.where(seen, per_domain, 0))
        return _ScoreState(tuple(constraints), ignored, tuple(weights), tuple(domain_counts),
                           tuple(node_counts))

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
        rounded = np.floor(totals)
        rounded += (totals - rounded) >= 0.5
        scores = rounded.astype(np.int64)
        scores[s.ignored[nodes]] = 0
        cycle.data[self.NAME + "/ignored"] = s.ignored[nodes]
        return scores

    def normalize_score(self, cycle: Cycle, scores: np.ndarray) -> None:
        ignored = cycle.data[self.NAME + "/ignored"]
        valid = scores[~ignored]
        low = int(valid.min()) if len(valid) else 0
        high = max(int(valid.max()), 0) if len(valid) else 0
        if high == 0:
            scores[:] = MAX_NODE_SCORE
        else:
            scores[:] = MAX_NODE_SCORE * (high + low - scores) // high
        scores[ignored] = 0


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


# ----------------------------------------------------------------------- reference
#
# A plain per-node transliteration of ``podtopologyspread/{common,filtering,scoring}.go`` and
# ``helper/spread.go`` over NodeInfo records: label values are strings, domains are dicts keyed
# by them, and every function recomputes the PreFilter / PreScore state it needs from all nodes.


def _reference_default_selector(pod: Pod, workloads: Sequence) -> Selector:
    """``helper.DefaultSelector`` over Workload records."""
    label_set: dict[str, str] = {}
    for w in workloads:
        if w.kind != "Service" or w.namespace != pod.namespace or w.selector is None:
            continue
        wanted = w.selector.match_labels
        if all(k in pod.labels and pod.labels[k] == v for k, v in wanted.items()):
            label_set.update(wanted)
    requirements = [(k, "In", (v,)) for k, v in sorted(label_set.items())]
    if pod.controller is None:
        return Selector(requirements)
    api_version, kind, name = pod.controller
    owner = None
    for w in workloads:
        if w.kind == kind and w.name == name and w.namespace == pod.namespace:
            owner = w
            break
    if owner is None:
        return Selector(requirements)
    if (api_version, kind) == ("v1", "ReplicationController"):
        if owner.selector is not None:
            label_set.update(owner.selector.match_labels)
        requirements = [(k, "In", (v,)) for k, v in sorted(label_set.items())]
    elif (api_version, kind) in (("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")):
        try:
            other = Selector.from_label_selector(owner.selector)
        except ValueError:
            other = None
        if other is not None and not other.nothing:
            requirements += list(other.requirements)
    return Selector(requirements)


def _reference_constraints(pod: Pod, action: str, args: PodTopologySpreadArgs,
                           workloads: Sequence) -> list[Constraint]:
    """``filterTopologySpreadConstraints`` on the pod's constraints, or
    ``buildDefaultConstraints``. Raises ``ValueError`` on an invalid label selector."""
    explicit = bool(pod.topology_spread_constraints)
    if explicit:
        specs = pod.topology_spread_constraints
    elif args.defaulting_type == SYSTEM:
        specs = SYSTEM_DEFAULT_CONSTRAINTS
    else:
        specs = args.default_constraints
    out = []
    for c in specs:
        if c.when_unsatisfiable != action:
            continue
        selector = Selector.from_label_selector(c.label_selector)
        match_labels = {}
        for key in c.match_label_keys:
            if key in pod.labels:
                match_labels[key] = pod.labels[key]
        if match_labels and not selector.nothing:
            selector = Selector([(k, "In", (v,)) for k, v in match_labels.items()]
                                + list(selector.requirements))
        out.append(Constraint(
            max_skew=c.max_skew, topology_key=c.topology_key, selector=selector,
            min_domains=1 if c.min_domains is None else c.min_domains,
            honor_affinity=c.node_affinity_policy in (None, "Honor"),
            honor_taints=c.node_taints_policy == "Honor",
        ))
    if explicit or not out:
        return out
    selector = _reference_default_selector(pod, workloads)
    if selector.empty:
        return []
    return [attrs.evolve(c, selector=selector) for c in out]


def _reference_included(c: Constraint, pod: Pod, node: object) -> bool:
    """``matchNodeInclusionPolicies``."""
    from ksched.plugins.node_affinity import reference_filter as affinity_filter
    from ksched.plugins.taint_toleration import reference_filter as taint_filter

    if c.honor_affinity and not affinity_filter(pod, node).is_success:
        return False
    if c.honor_taints and not taint_filter(pod, node).is_success:
        return False
    return True


def _reference_count(pods: Sequence[Pod], selector: Selector, namespace: str) -> int:
    """``countPodsMatchSelector``."""
    if selector.empty:
        return 0
    return sum(1 for p in pods
               if not p.deleting and p.namespace == namespace and selector.matches(p.labels))


def _has_keys(labels: object, constraints: Sequence[Constraint]) -> bool:
    """``nodeLabelsMatchSpreadConstraints``."""
    return all(c.topology_key in labels for c in constraints)


def reference_filter(pod: Pod, node_info: object, all_nodes: Sequence,
                     args: PodTopologySpreadArgs = PodTopologySpreadArgs(),
                     workloads: Sequence = ()) -> Status:
    """``PreFilter`` (over ``all_nodes``) then ``Filter`` of one NodeInfo.

    A PreFilter Skip reads as success; an invalid selector as an Error status.
    """
    from ksched.status import SUCCESS

    try:
        constraints = _reference_constraints(pod, DO_NOT_SCHEDULE, args, workloads)
    except ValueError as exc:
        return Status(Code.ERROR, (str(exc),))
    if not constraints:
        return SUCCESS
    tp_value_to_match_num: list[dict[str, int]] = [{} for _ in constraints]
    for info in all_nodes:
        node = info.node
        if not _has_keys(node.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not _reference_included(c, pod, node):
                continue
            value = node.labels[c.topology_key]
            count = _reference_count(info.pods, c.selector, pod.namespace)
            counts = tp_value_to_match_num[i]
            counts[value] = counts.get(value, 0) + count
    labels = node_info.node.labels
    for i, c in enumerate(constraints):
        if c.topology_key not in labels:
            return unresolvable(REASON_MISSING_LABEL)
        counts = tp_value_to_match_num[i]
        # criticalPaths[0] always ends as the smallest count (MaxInt32 when there is none).
        min_match = min(counts.values(), default=2**31 - 1)
        if len(counts) < c.min_domains:
            min_match = 0
        self_match = 1 if c.selector.matches(pod.labels) else 0
        skew = counts.get(labels[c.topology_key], 0) + self_match - min_match
        if skew > c.max_skew:
            return unschedulable(REASON_SKEW)
    return SUCCESS


def reference_skips(pod: Pod, all_nodes: Sequence,
                    args: PodTopologySpreadArgs = PodTopologySpreadArgs(),
                    workloads: Sequence = ()) -> bool:
    """Whether ``PreScore`` returns Skip (no nodes, or no soft constraints)."""
    if not all_nodes:
        return True
    return not _reference_constraints(pod, SCHEDULE_ANYWAY, args, workloads)


def _reference_pre_score(pod: Pod, feasible: Sequence, all_nodes: Sequence,
                         args: PodTopologySpreadArgs, workloads: Sequence) -> tuple:
    """``initPreScoreState`` + the counting pass of ``PreScore``."""
    constraints = _reference_constraints(pod, SCHEDULE_ANYWAY, args, workloads)
    require_all = bool(pod.topology_spread_constraints) or args.defaulting_type != SYSTEM
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    topo_size = [0] * len(constraints)
    for info in feasible:
        labels = info.node.labels
        if require_all and not _has_keys(labels, constraints):
            ignored.add(info.node.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == LABEL_HOSTNAME:
                continue
            value = labels.get(c.topology_key, "")
            if value not in counts[i]:
                counts[i][value] = 0
                topo_size[i] += 1
    weights = []
    for i, c in enumerate(constraints):
        size = topo_size[i]
        if c.topology_key == LABEL_HOSTNAME:
            size = len(feasible) - len(ignored)
        weights.append(math.log(float(size + 2)))
    for info in all_nodes:
        labels = info.node.labels
        if require_all and not _has_keys(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not _reference_included(c, pod, info.node):
                continue
            value = labels.get(c.topology_key, "")
            if value not in counts[i]:
                continue
            counts[i][value] += _reference_count(info.pods, c.selector, pod.namespace)
    return constraints, ignored, counts, weights


def _go_round(x: float) -> int:
    """``math.Round``: half away from zero, on the exact binary value."""
    from decimal import ROUND_HALF_UP, Decimal

    return int(Decimal(x).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def reference_score(pod: Pod, node_info: object, feasible: Sequence, all_nodes: Sequence,
                    args: PodTopologySpreadArgs = PodTopologySpreadArgs(),
                    workloads: Sequence = ()) -> int:
    """``PreScore`` (over ``feasible`` and ``all_nodes``) then ``Score`` of one NodeInfo.

    Call only when :func:`reference_skips` is false.
    """
    constraints, ignored, counts, weights = _reference_pre_score(pod, feasible, all_nodes,
                                                                 args, workloads)
    node = node_info.node
    if node.name in ignored:
        return 0
    score = 0.0
    for i, c in enumerate(constraints):
        if c.topology_key in node.labels:
            if c.topology_key == LABEL_HOSTNAME:
                cnt = _reference_count(node_info.pods, c.selector, pod.namespace)
            else:
                cnt = counts[i][node.labels[c.topology_key]]
            score += float(cnt) * weights[i] + float(c.max_skew - 1)
    return _go_round(score)


def reference_normalize(pod: Pod, feasible: Sequence, scores: Sequence[int],
                        args: PodTopologySpreadArgs = PodTopologySpreadArgs(),
                        workloads: Sequence = ()) -> list[int]:
    """``NormalizeScore`` of the scores of ``feasible`` (in that order)."""
    invalid_score = -1
    _, ignored, _, _ = _reference_pre_score(pod, feasible, feasible, args, workloads)
    out = list(scores)
    min_score, max_score = 2**63 - 1, 0
    for i, info in enumerate(feasible):
        if info.node.name in ignored:
            out[i] = invalid_score
            continue
        min_score = min(min_score, out[i])
        max_score = max(max_score, out[i])
    for i in range(len(out)):
        if out[i] == invalid_score:
            out[i] = 0
        elif max_score == 0:
            out[i] = MAX_NODE_SCORE
        else:
            # Operands are non-negative, so // is Go's truncating division.
            out[i] = MAX_NODE_SCORE * (max_score + min_score - out[i]) // max_score
    return out

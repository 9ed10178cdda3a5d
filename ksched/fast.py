"""The fast path: runs of pods scheduled by one compiled loop (:mod:`ksched.kernels.schedule_loop`).

Pods with identical scheduling specs share a *pod class*, compiled once: the static filters and
scores of the class are evaluated over all nodes by the same plugin code the object-level
framework runs, so both paths agree by construction; the loop adds the dynamic parts (host
ports, resource fit and resource scores) and the node walk, host selection and assume.

A pod takes the fast path when everything its cycle needs is modelled by the loop: no pod
affinity anywhere, no volumes or resource claims, a profile whose plugins the loop knows.
Topology spreading is in the loop: each class's constraints get counters of matching pods per
domain, seeded from the bound pods and updated as pods are placed. Other pods go through the
framework, one cycle at a time, on the same arrays.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.constants import LABEL_HOSTNAME, PODS
from ksched.framework.interfaces import Cycle, PreFilterResult
from ksched.framework.runtime import Framework
from ksched.kernels import node_resources_fit as fit_kernels
from ksched.kernels import schedule_loop as loop_kernels
from ksched.plugins import _volumes
from ksched.plugins.node_ports import conflicting_columns
from ksched.plugins.node_resources_fit import (
    _STRATEGY_CODES,
    is_ignored,
    resource_score_inputs,
    shape_arrays,
)
from ksched.plugins import inter_pod_affinity as ipa_plugin
from ksched.plugins import pod_topology_spread as spread_plugin
from ksched.plugins.pod_topology_spread import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, build_constraints
from ksched.resources import NON_ZERO_DEFAULTS, node_info_non_zero, pod_requests
from ksched.state import ClusterState, host_ports
from ksched.status import Status

#: Filter plugins whose verdict does not change while pods are placed.
STATIC_FILTERS = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity")
#: Plugins that are no-ops for the pods the loop accepts (they Skip, or score 0).
INERT = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
         "PodTopologySpread", "InterPodAffinity", "DynamicResources")
KNOWN_FILTERS = STATIC_FILTERS + ("NodePorts", "NodeResourcesFit") + INERT
SCORED = ("TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation",
          "ImageLocality", "PodTopologySpread", "InterPodAffinity")
KNOWN_SCORES = SCORED + INERT


def supports(framework: Framework) -> bool:
    """Whether the loop can run this profile's plugins."""
    points = framework.points
    return (bool(points["filter"])
            and all(name in KNOWN_FILTERS for name, _ in points["filter"])
            and all(name in KNOWN_FILTERS + ("NodeResourcesBalancedAllocation",)
                    for name, _ in points["preFilter"])
            and all(name in KNOWN_SCORES for name, _ in points["score"])
            and all(name in KNOWN_SCORES for name, _ in points["preScore"]))


#: Pod fields that do not change how the loop treats a pod: its identity. (Labels, namespace
#: and the controlling owner count: topology spreading counts pods by them and builds its
#: default selector from them.)
_IDENTITY = frozenset({"name", "uid"})
#: What decides a pod's class: its spec without its identity, as a tuple (``pod_signature(pod)``).
pod_signature = operator.attrgetter(*(f.name for f in attrs.fields(Pod) if f.name not in _IDENTITY))


def _names_nodes(pod: Pod, framework: Framework) -> bool:
    """Whether the pod's node selection (or the profile's added affinity) reads node names or
    hostname labels, which differ between nodes of one class."""
    if pod.node_name or (pod.node_selector and LABEL_HOSTNAME in pod.node_selector):
        return True
    node_affinity = framework.plugins.get("NodeAffinity")
    added = node_affinity.args.added_affinity if node_affinity and node_affinity.args else None
    terms = []
    for affinity in (pod.node_affinity, added):
        if affinity is not None:
            terms += list(affinity.required or ())
            terms += [t.preference for t in affinity.preferred or ()]
    return any(term.match_fields or any(r.key == LABEL_HOSTNAME for r in term.match_expressions)
               for term in terms)


def eligible(pod: Pod, state: ClusterState, framework: Framework) -> bool:
    """Whether the loop models everything this pod's cycle does."""
    if pod.resource_claims:
        return False
    if pod.has_pod_affinity:
        if ipa_plugin.parse_pod_terms(pod)[1] is not None:
            return False  # a parse error: the framework words it
        points = framework.points
        if not ({"InterPodAffinity"} <= {n for n, _ in points["preFilter"]}
                and {"InterPodAffinity"} <= {n for n, _ in points["filter"]}):
            return False
    if _volumes.uses(pod, _volumes.IN_TREE_DISKS + _volumes.CSI_COUNTED):
        return False
    spread = framework.plugins.get("PodTopologySpread")
    if spread is not None and (pod.topology_spread_constraints or state.objects.get("workloads")):
        try:
            hard = build_constraints(pod, DO_NOT_SCHEDULE, spread.args, state)
            soft = build_constraints(pod, SCHEDULE_ANYWAY, spread.args, state)
        except ValueError:
            return False
        points = framework.points
        runs = {n for n, _ in points["preFilter"]} & {n for n, _ in points["filter"]}
        if hard and "PodTopologySpread" not in runs:
            return False
        scores = {n for n, _ in points["preScore"]} & {n for n, _ in points["score"]}
        if soft and "PodTopologySpread" in {n for n, _ in points["score"]} \
                and "PodTopologySpread" not in scores:
            return False
    return True


_UNSEEN = object()
BY_LABEL, BY_LABEL_OR_EMPTY, BY_NODE = (loop_kernels.BY_LABEL, loop_kernels.BY_LABEL_OR_EMPTY,
                                        loop_kernels.BY_NODE)


def _affinity_key_columns(state: ClusterState,
                          pods: Sequence[Pod]) -> tuple[list[int], list[int]]:
    """The label columns that running or pending pods' terms can file InterPodAffinity
    counts under: required anti-affinity keys, and every affinity key (for scores)."""
    anti_keys, scored_keys = set(), set()
    for affinity, anti in {(p.pod_affinity, p.pod_anti_affinity) for p in pods
                           if p.has_pod_affinity}:
        if anti is not None:
            anti_keys |= {t.topology_key for t in anti.required}
            scored_keys |= {w.term.topology_key for w in anti.preferred}
        if affinity is not None:
            scored_keys |= {t.topology_key for t in affinity.required}
            scored_keys |= {w.term.topology_key for w in affinity.preferred}
    columns = lambda keys: sorted({state.label_column(k) for k in keys} - {-1})  # noqa: E731
    return columns(anti_keys), columns(scored_keys)


def _row_indptr(rows: Sequence[Sequence]) -> np.ndarray:
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    return indptr


@attrs.define
class ClassTables:
    """The per-class arrays of the loop (see :mod:`ksched.kernels.schedule_loop`)."""

    static_ok: list = attrs.field(factory=list)
    taint_raw: list = attrs.field(factory=list)
    affinity_raw: list = attrs.field(factory=list)
    image_score: list = attrs.field(factory=list)
    request: list = attrs.field(factory=list)
    fit_check_cols: list = attrs.field(factory=list)
    fit_check_want: list = attrs.field(factory=list)
    count_only: list = attrs.field(factory=list)
    nonzero_add: list = attrs.field(factory=list)
    port_check: list = attrs.field(factory=list)
    port_add: list = attrs.field(factory=list)
    subset: list = attrs.field(factory=list)
    has_subset: list = attrs.field(factory=list)
    fit_inputs: list = attrs.field(factory=list)
    ba_inputs: list = attrs.field(factory=list)
    ba_skip: list = attrs.field(factory=list)
    affinity_skip: list = attrs.field(factory=list)
    #: Per class: its hard spread constraints as (counter, maxSkew, self match, minDomains).
    spread: list = attrs.field(factory=list)
    #: Per class: its soft spread constraints as (counter, maxSkew, per-node flag), and
    #: whether nodes lacking a topology key are ignored (``requireAllTopologies``).
    soft_spread: list = attrs.field(factory=list)
    require_all: list = attrs.field(factory=list)
    #: Per class: (namespace, labels, terminating), to match it against spread counters.
    identity: list = attrs.field(factory=list)
    #: Per class: a pod of it (what inter-pod affinity terms are matched against).
    pods: list = attrs.field(factory=list)
    #: Per class: InterPodAffinity rows (row, label column) of its required affinity terms,
    #: anti-affinity terms, the running pods' anti-affinity, and its scores; its own
    #: affinity matches (self match) and whether no pod matched its affinity yet.
    ipa_affinity: list = attrs.field(factory=list)
    ipa_anti: list = attrs.field(factory=list)
    ipa_existing: list = attrs.field(factory=list)
    ipa_score: list = attrs.field(factory=list)
    ipa_self_match: list = attrs.field(factory=list)


@attrs.frozen
class SpreadCounter:
    """Pods matching one class's spread constraint, per domain of its topology key, counted
    over the nodes that constraint includes (``TpValueToMatchNum``)."""

    namespace: str
    selector: Any
    key_column: int
    included: np.ndarray  # bool[n_nodes]
    domains: np.ndarray  # the domain ids of the included nodes
    #: BY_LABEL (hard constraints), BY_LABEL_OR_EMPTY (soft: a missing label is the domain
    #: ""), BY_NODE (soft hostname constraints count each node's own pods).
    kind: int = 0


class FastPath:
    """Compiles pod classes for one framework and state layout, and runs the loop."""

    def __init__(self, framework: Framework, state: ClusterState,
                 node_version: np.ndarray | None = None, pending: Sequence[Pod] = ()) -> None:
        self.framework = framework
        self.layout = state
        self.classes: dict[tuple, int | None] = {}
        self.classes_by_identity: dict[tuple, int | None] = {}
        self.tables = ClassTables()
        names = lambda point: {n for n, _ in framework.points[point]}  # noqa: E731
        self.filters, self.scores = names("filter"), names("score")
        self.weights = np.array([framework.weights.get(n, 0) if n in self.scores else 0
                                 for n in SCORED], dtype=np.int64)
        fit = framework.plugins.get("NodeResourcesFit")
        self.fit_args = fit.args if fit is not None else None
        balanced = framework.plugins.get("NodeResourcesBalancedAllocation")
        self.ba_resources = balanced.args.resources if balanced is not None else ()
        self.fail_epoch = np.zeros(0, dtype=np.int64)
        n = state.num_nodes
        #: Bumped whenever a node's requests change (shared by the batch's fast paths).
        self.node_version = node_version if node_version is not None else np.zeros(n, np.int64)
        self.cached_version = np.zeros((0, n), dtype=np.int64)
        self.cached_score = np.zeros((0, n), dtype=np.int64)
        self.counters: list[SpreadCounter] = []
        ipa = framework.plugins.get("InterPodAffinity")
        self.ipa_args = ipa.args if ipa is not None else None
        self.ipa_filter = "InterPodAffinity" in self.filters
        self.ipa_scored = "InterPodAffinity" in self.scores
        self.anti_columns, self.score_columns = _affinity_key_columns(
            state, [state.pods[i] for i in state.affinity_pods] + list(pending))
        self.ipa_rows = np.zeros((0, max(len(state.vocab), n) + 1), dtype=np.int64)
        self.ipa_affinity_empty = np.zeros(0, dtype=np.bool_)
        self.domain_space = max(len(state.vocab), n) + 1
        self.empty_id = state.vocab.get("")
        self.counter_counts = np.zeros((0, self.domain_space), dtype=np.int64)
        self._arrays: dict[str, Any] | None = None

    def class_of(self, pod: Pod, state: ClusterState) -> int | None:
        """The pod's class index, compiling it on first sight; ``None``: use the framework.

        Replicas made with ``attrs.evolve`` share their field objects, so the class is found
        first by the identities of the fields (valid while the batch holds the pods), then by
        value.
        """
        identity = tuple(map(id, pod_signature(pod)))
        found = self.classes_by_identity.get(identity, _UNSEEN)
        if found is _UNSEEN or (found is not None and state.objects.get("workloads")):
            found = None
            if eligible(pod, state, self.framework):
                key = pod_signature(pod)
                if key not in self.classes:
                    self.classes[key] = self._compile(pod, state)
                found = self.classes[key]
            self.classes_by_identity[identity] = found
        return found

    def _compile(self, pod: Pod, state: ClusterState) -> int | None:
        framework, t, n = self.framework, self.tables, state.num_nodes
        cycle = Cycle(state, pod)
        subset = None
        for name, plugin in framework.points["preFilter"]:
            outcome = plugin.pre_filter(cycle)
            if isinstance(outcome, PreFilterResult) and outcome.node_names is not None:
                subset = outcome.node_names if subset is None else subset & outcome.node_names
            elif isinstance(outcome, Status) and not (outcome.is_success or outcome.is_skip):
                return None
        if subset is not None and not subset:
            return None
        # Static verdicts are judged once per node class, unless the pod looks at what sets
        # nodes of a class apart (their names and hostname labels).
        if _names_nodes(pod, framework):
            judged, spread = np.arange(n, dtype=np.int64), slice(None)
        else:
            judged, spread = state.class_nodes, state.node_class
        ok = np.ones(len(judged), dtype=np.bool_)
        for name, plugin in framework.points["filter"]:
            if name in STATIC_FILTERS:
                ok &= plugin.filter(cycle, judged).passed
        affinity_skip = True
        for name, plugin in framework.points["preScore"]:
            status = plugin.pre_score(cycle, judged)
            if name == "NodeAffinity":
                if status is not None and not (status.is_success or status.is_skip):
                    return None
                affinity_skip = status is not None and status.is_skip
        entries, keyed = self._spread_entries(cycle, state)
        t.static_ok.append(ok[spread] & keyed)
        t.affinity_skip.append(affinity_skip)
        t.taint_raw.append(self._raw("TaintToleration", cycle, judged)[spread])
        t.affinity_raw.append(self._raw("NodeAffinity", cycle, judged)[spread]
                              if not affinity_skip else np.zeros(n, dtype=np.int64))
        t.image_score.append(self._raw("ImageLocality", cycle, judged)[spread])
        self._compile_resources(pod, state)
        wanted = host_ports(pod) if "NodePorts" in self.filters else []
        t.port_check.append(conflicting_columns(wanted, state.port_keys))
        t.port_add.append(np.array([state.port_keys.index(p) for p in set(host_ports(pod))],
                                   dtype=np.int64))
        t.spread.append(entries)
        self._affinity_rows(pod, state)
        soft, require_all = self._soft_spread_entries(cycle, state)
        t.soft_spread.append(soft)
        t.require_all.append(require_all)
        t.identity.append((pod.namespace, pod.labels, pod.deleting))
        t.pods.append(pod)
        t.has_subset.append(subset is not None)
        t.subset.append(state.in_tree_order(subset) if subset is not None
                        else np.zeros(0, np.int64))
        self.fail_epoch = np.append(self.fail_epoch, -1)
        self.cached_version = np.vstack([self.cached_version, np.full((1, n), -1, np.int64)])
        self.cached_score = np.vstack([self.cached_score, np.zeros((1, n), np.int64)])
        self._arrays = None
        return len(t.static_ok) - 1

    def _spread_entries(self, cycle: Cycle, state: ClusterState
                        ) -> tuple[list[tuple[int, int, int, int]], np.ndarray]:
        """The class's hard spread constraints, each with a new counter seeded from the bound
        pods (PodTopologySpread's PreFilter state, which ran just before), and which nodes
        have every constraint's topology key: the others fail the Filter whatever is placed
        (``nodeLabelsMatchSpreadConstraints``), so the loop takes that as a static verdict."""
        prepared = cycle.data.get("PodTopologySpread")
        if prepared is None or "PodTopologySpread" not in self.filters:
            return [], np.ones(state.num_nodes, dtype=np.bool_)
        keyed = spread_plugin._has_all_keys(state, prepared.constraints)
        nodes = cycle.data.get("PodTopologySpread/nodes") or spread_plugin._Nodes(cycle)
        entries = []
        for c, counts, self_match in zip(prepared.constraints, prepared.domain_counts,
                                         prepared.self_match):
            included = keyed & nodes.included(c)
            column = state.label_column(c.topology_key)
            self.counters.append(SpreadCounter(
                cycle.pod.namespace, c.selector, column, included,
                np.unique(spread_plugin._label_values(state, c.topology_key)[included])))
            row = np.zeros((1, self.domain_space), dtype=np.int64)
            row[0, :len(counts)] = counts
            self.counter_counts = np.vstack([self.counter_counts, row])
            entries.append((len(self.counters) - 1, c.max_skew, self_match, c.min_domains))
        return entries, keyed

    def _soft_spread_entries(self, cycle: Cycle,
                             state: ClusterState) -> tuple[list[tuple[int, int, int]], bool]:
        """The class's soft spread constraints (explicit ScheduleAnyway ones, or the profile's
        defaults), each with a counter seeded from the bound pods (``initPreScoreState``)."""
        spread = self.framework.plugins.get("PodTopologySpread")
        if spread is None or "PodTopologySpread" not in self.scores:
            return [], False
        pod = cycle.pod
        constraints = build_constraints(pod, SCHEDULE_ANYWAY, spread.args, state)
        require_all = bool(pod.topology_spread_constraints) or not spread.system_defaulted
        if not constraints:
            return [], require_all
        keyed = (spread_plugin._has_all_keys(state, constraints) if require_all
                 else np.ones(state.num_nodes, dtype=np.bool_))
        nodes = cycle.data.get("PodTopologySpread/nodes") or spread_plugin._Nodes(cycle)
        entries = []
        for c in constraints:
            matching = spread_plugin.matching_pods_per_node(state, c.selector, pod.namespace)
            column = state.label_column(c.topology_key)
            row = np.zeros((1, self.domain_space), dtype=np.int64)
            if c.topology_key == LABEL_HOSTNAME:
                kind, included = BY_NODE, np.ones(state.num_nodes, dtype=np.bool_)
                row[0, :state.num_nodes] = matching
            else:
                kind, included = BY_LABEL_OR_EMPTY, keyed & nodes.included(c)
                slots = self._slots(state, column, kind)
                row[0] = np.bincount(slots[included], weights=matching[included],
                                     minlength=self.domain_space).astype(np.int64)
            self.counters.append(SpreadCounter(pod.namespace, c.selector, column, included,
                                               np.zeros(0, np.int64), kind))
            self.counter_counts = np.vstack([self.counter_counts, row])
            entries.append((len(self.counters) - 1, c.max_skew, kind == BY_NODE))
        return entries, require_all

    def _slots(self, state: ClusterState, column: int, kind: int) -> np.ndarray:
        """Each node's slot in a counter row (see :func:`counter_slot`)."""
        values = (state.labels[:, column].astype(np.int64) if column >= 0
                  else np.full(state.num_nodes, -1, dtype=np.int64))
        if kind == BY_NODE:
            return np.arange(state.num_nodes, dtype=np.int64)
        if kind == BY_LABEL_OR_EMPTY:
            empty = state.vocab.get("")
            return np.where((values < 0) | (values == empty), self.domain_space - 1, values)
        return values

    def _new_rows(self, count: int) -> list[int]:
        first = len(self.ipa_rows)
        self.ipa_rows = np.vstack([self.ipa_rows,
                                   np.zeros((count, self.ipa_rows.shape[1]), np.int64)])
        return list(range(first, first + count))

    def _affinity_rows(self, pod: Pod, state: ClusterState) -> None:
        """InterPodAffinity's PreFilter and PreScore state for the class, as rows of topology
        domains seeded from the bound pods; placements add to them (:meth:`_affinity_updates`)."""
        t = self.tables
        affinity, anti, existing, score, self_match, empty = [], [], [], [], False, True
        if self.ipa_filter:
            terms = ipa_plugin.parse_pod_terms(pod)[0]
            prepared = ipa_plugin._pre_filter_state(state, pod, terms)
            for row, (column, values) in zip(self._new_rows(len(prepared.affinity)),
                                             prepared.affinity):
                self.ipa_rows[row, values] = 1
                affinity.append((row, column))
            for row, (column, values) in zip(self._new_rows(len(prepared.anti_affinity)),
                                             prepared.anti_affinity):
                self.ipa_rows[row, values] = 1
                anti.append((row, column))
            for row, column in zip(self._new_rows(len(self.anti_columns)), self.anti_columns):
                self.ipa_rows[row, prepared.existing_anti_affinity.get(column, [])] = 1
                existing.append((row, column))
            self_match, empty = prepared.self_match, prepared.affinity_empty
        if self.ipa_scored and not (self.ipa_args.ignore_preferred_terms_of_existing_pods
                                    and not ipa_plugin._has_preferred_terms(pod)):
            terms = ipa_plugin.parse_pod_terms(pod)[0]
            prepared = ipa_plugin._pre_score_state(state, pod, terms, self.ipa_args,
                                                   ipa_plugin._has_preferred_terms(pod))
            tables = {c: (d, v) for c, d, v in (prepared.tables if prepared else ())}
            columns = sorted((set(self.score_columns) | set(tables)
                              | {state.label_column(w.term.topology_key)
                                 for w in terms.preferred_affinity
                                 + terms.preferred_anti_affinity}) - {-1})
            for row, column in zip(self._new_rows(len(columns)), columns):
                if column in tables:
                    self.ipa_rows[row, tables[column][0]] = tables[column][1]
                score.append((row, column))
        t.ipa_affinity.append(affinity)
        t.ipa_anti.append(anti)
        t.ipa_existing.append(existing)
        t.ipa_score.append(score)
        t.ipa_self_match.append(self_match)
        self.ipa_affinity_empty = np.append(self.ipa_affinity_empty, empty)

    def _affinity_updates(self, placed: Pod, c: int, state: ClusterState) -> list[tuple]:
        """What placing ``placed`` adds to class ``c``'s InterPodAffinity rows: (row, amount,
        label column, marks-affinity) entries, filed under the node's value of the column.
        Terms on a key no node has add nothing (``topologyToMatchedTermCount.update`` skips
        nodes without the label), so their entries are left out."""
        t = self.tables
        target = t.pods[c]
        out = []
        if t.ipa_affinity[c] or t.ipa_anti[c] or t.ipa_existing[c] or t.ipa_score[c]:
            mine = ipa_plugin.parse_pod_terms(target)[0].merged(state.namespaces)
            if t.ipa_affinity[c] and all(term.matches(placed, None)
                                         for term in mine.required_affinity):
                out += [(row, 1, column, True) for row, column in t.ipa_affinity[c]]
            for (row, column), term in zip(t.ipa_anti[c], mine.required_anti_affinity):
                if term.matches(placed, None):
                    out.append((row, 1, column, False))
            ns_labels = ipa_plugin._namespace_labels(state, target.namespace)
            theirs = ipa_plugin._existing_pod_terms(placed) if placed.has_pod_affinity else None
            if theirs is not None and ipa_plugin._has_required_anti_affinity(placed):
                rows = dict((column, row) for row, column in t.ipa_existing[c])
                for term in theirs.required_anti_affinity:
                    column = state.label_column(term.topology_key)
                    if column in rows and term.matches(target, ns_labels):
                        out.append((rows[column], 1, column, False))
            if t.ipa_score[c]:
                rows = dict((column, row) for row, column in t.ipa_score[c])
                weighted = [(w.term, w.weight) for w in mine.preferred_affinity]
                weighted += [(w.term, -w.weight) for w in mine.preferred_anti_affinity]
                for term, amount in weighted:
                    column = state.label_column(term.topology_key)
                    if column in rows and term.matches(placed, None):
                        out.append((rows[column], ipa_plugin._int32(amount), column, False))
                if theirs is not None:
                    hard = self.ipa_args.hard_pod_affinity_weight
                    others = [(term, hard) for term in theirs.required_affinity] if hard > 0 else []
                    others += [(w.term, w.weight) for w in theirs.preferred_affinity]
                    others += [(w.term, -w.weight) for w in theirs.preferred_anti_affinity]
                    for term, amount in others:
                        column = state.label_column(term.topology_key)
                        if column in rows and term.matches(target, ns_labels):
                            out.append((rows[column], ipa_plugin._int32(amount), column, False))
        return [entry for entry in out if entry[2] >= 0]

    def note_placement(self, pod: Pod, node: int, state: ClusterState) -> None:
        """A pod was placed outside this loop: count it where it matches (``AddPod``)."""
        for c in range(len(self.tables.pods)):
            for row, amount, column, marks in self._affinity_updates(pod, c, state):
                value = state.labels[node, column]
                if value >= 0:
                    self.ipa_rows[row, value] += amount
                    if marks:
                        self.ipa_affinity_empty[c] = False
        for k, counter in enumerate(self.counters):
            if (counter.included[node] and not pod.deleting and pod.namespace == counter.namespace
                    and counter.selector.matches(pod.labels)):
                self.counter_counts[k, loop_kernels.counter_slot(
                    counter.kind, node, state.labels, counter.key_column, self.empty_id,
                    self.domain_space - 1)] += 1

    def _raw(self, name: str, cycle: Cycle, nodes: np.ndarray) -> np.ndarray:
        plugin = self.framework.plugins.get(name)
        if plugin is None or name not in self.scores:
            return np.zeros(len(nodes), dtype=np.int64)
        return np.asarray(plugin.score(cycle, nodes), dtype=np.int64)

    def _compile_resources(self, pod: Pod, state: ClusterState) -> None:
        t = self.tables
        requests = pod_requests(pod)
        vector = np.array([requests.get(r, 0) if r != PODS else 0 for r in state.resource_names],
                          dtype=np.int64)
        args = self.fit_args
        t.request.append(vector)
        checked = [j for j, (r, v) in enumerate(zip(state.resource_names, vector))
                   if r != PODS and v > 0 and not (args and is_ignored(r, args))]
        t.fit_check_cols.append(np.array(checked, dtype=np.int64))
        t.fit_check_want.append(vector[checked])
        t.count_only.append(not any(v for r, v in requests.items() if r != PODS))
        t.nonzero_add.append(np.array(node_info_non_zero(pod, requests), dtype=np.int64))
        fit_resources = args.resources if args is not None else ()
        t.fit_inputs.append(resource_score_inputs(
            state, fit_resources, pod_requests(pod, NON_ZERO_DEFAULTS), True))
        ba = resource_score_inputs(state, self.ba_resources, requests, False)
        t.ba_inputs.append(ba)
        t.ba_skip.append(not ba[2].any())

    def arrays(self) -> dict[str, Any]:
        """The class tables stacked for the loop (cached until a class is added)."""
        if self._arrays is None:
            self._arrays = {**self._stacked(), **self._parameters()}
        return self._arrays

    def _stacked(self) -> dict[str, Any]:
        t = self.tables

        def csr(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
            indptr = np.zeros(len(parts) + 1, dtype=np.int64)
            indptr[1:] = np.cumsum([len(p) for p in parts])
            return indptr, (np.concatenate(parts).astype(np.int64) if parts
                            else np.zeros(0, np.int64))

        def stack(parts: list, width: int, dtype: Any) -> np.ndarray:
            return np.array(parts, dtype=dtype).reshape(len(parts), width)

        n, r = self.layout.num_nodes, len(self.layout.resource_names)
        port_check_indptr, port_check = csr(t.port_check)
        fit_check_indptr, fit_check_cols = csr(t.fit_check_cols)
        _, fit_check_want = csr(t.fit_check_want)
        port_add_indptr, port_add = csr(t.port_add)
        subset_indptr, subset = csr(t.subset)
        fit_width = len(self.fit_args.resources) if self.fit_args is not None else 0
        spread_entries = np.array([e for entries in t.spread for e in entries],
                                  dtype=np.int64).reshape(-1, 4)
        counters = self.counters
        match = np.array([[namespace == k.namespace and not deleting and k.selector.matches(labels)
                           for k in counters] for namespace, labels, deleting in t.identity],
                         dtype=np.bool_).reshape(len(t.identity), len(counters))
        counter_domain_indptr, counter_domains = csr([k.domains for k in counters])
        updates = [[(row, amount, column, c if marks else -1)
                    for c in range(len(t.pods))
                    for row, amount, column, marks in self._affinity_updates(placed, c,
                                                                             self.layout)]
                   for placed in t.pods]
        flat = lambda lists: np.array([e for entries in lists for e in entries],  # noqa: E731
                                      dtype=np.int64).reshape(-1, 2)
        soft_entries = np.array([e for entries in t.soft_spread for e in entries],
                                dtype=np.int64).reshape(-1, 3)
        return dict(
            spread_indptr=_row_indptr(t.spread),
            spread_entries=spread_entries,
            counter_column=np.array([k.key_column for k in counters], dtype=np.int64),
            counter_kind=np.array([k.kind for k in counters], dtype=np.int64),
            ipa_affinity_indptr=_row_indptr(t.ipa_affinity), ipa_affinity=flat(t.ipa_affinity),
            ipa_anti_indptr=_row_indptr(t.ipa_anti), ipa_anti=flat(t.ipa_anti),
            ipa_existing_indptr=_row_indptr(t.ipa_existing), ipa_existing=flat(t.ipa_existing),
            ipa_score_indptr=_row_indptr(t.ipa_score), ipa_score=flat(t.ipa_score),
            ipa_self_match=np.array(t.ipa_self_match, dtype=np.bool_),
            ipa_update_indptr=_row_indptr(updates),
            ipa_updates=np.array([e for entries in updates for e in entries],
                                 dtype=np.int64).reshape(-1, 4),
            soft_indptr=_row_indptr(t.soft_spread), soft_entries=soft_entries,
            require_all=np.array(t.require_all, dtype=np.bool_),
            empty_id=self.empty_id, empty_slot=self.domain_space - 1,
            counter_included=np.array([k.included for k in counters], dtype=np.bool_).reshape(
                len(counters), self.layout.num_nodes),
            counter_domain_indptr=counter_domain_indptr, counter_domains=counter_domains,
            counter_match=match,
            static_ok=stack(t.static_ok, n, np.bool_),
            taint_raw=stack(t.taint_raw, n, np.int64),
            taint_varies=np.array([row.any() for row in t.taint_raw], dtype=np.bool_),
            affinity_raw=stack(t.affinity_raw, n, np.int64),
            image_score=stack(t.image_score, n, np.int64),
            request=stack(t.request, r, np.int64), fit_check_indptr=fit_check_indptr,
            fit_check_cols=fit_check_cols, fit_check_want=fit_check_want,
            count_only=np.array(t.count_only, dtype=np.bool_),
            nonzero_add=stack(t.nonzero_add, 2, np.int64),
            port_check_indptr=port_check_indptr, port_check=port_check,
            port_add_indptr=port_add_indptr, port_add=port_add,
            subset_indptr=subset_indptr, subset=subset,
            has_subset=np.array(t.has_subset, dtype=np.bool_),
            fit_cols=stack([f[0] for f in t.fit_inputs], fit_width, np.int64),
            fit_src=stack([f[1] for f in t.fit_inputs], fit_width, np.int64),
            fit_req=stack([f[2] for f in t.fit_inputs], fit_width, np.int64),
            ba_cols=stack([b[0] for b in t.ba_inputs], len(self.ba_resources), np.int64),
            ba_req=stack([b[2] for b in t.ba_inputs], len(self.ba_resources), np.int64),
            ba_skip=np.array(t.ba_skip, dtype=np.bool_),
            affinity_skip=np.array(t.affinity_skip, dtype=np.bool_),
        )

    def _parameters(self) -> dict[str, Any]:
        args = self.fit_args
        shape_x, shape_y = shape_arrays(args.shape if args is not None else ())
        return dict(
            fit_strategy=_STRATEGY_CODES[args.strategy] if args is not None
            else fit_kernels.LEAST_ALLOCATED,
            fit_weights=np.array([w for _, w in args.resources] if args is not None else [],
                                 dtype=np.int64),
            shape_x=shape_x, shape_y=shape_y, weights=self.weights, labels=self.layout.labels,
            has_scoring=self.framework.has_scoring,
            fit_enabled="NodeResourcesFit" in self.filters,
        )

    def run(self, state: ClusterState, classes: np.ndarray, begin: int, percentage: int,
            tie_mode: int, draws: np.ndarray, counters: np.ndarray, out_node: np.ndarray,
            out_start: np.ndarray) -> int:
        """Run the loop over ``classes[begin:]`` on ``state``'s (writable) arrays; returns
        where it stopped (see :func:`ksched.kernels.schedule_loop.schedule_loop`)."""
        stop = loop_kernels.schedule_loop(
            begin, classes, state.allocatable, state.requested, state.nonzero_requested,
            state.port_count, state.tree_order, state.resource_column(PODS), **self.arrays(),
            percentage=percentage, tie_mode=tie_mode, draws=draws, state=counters,
            fail_epoch=self.fail_epoch, node_version=self.node_version,
            counter_counts=self.counter_counts, ipa_rows=self.ipa_rows,
            ipa_affinity_empty=self.ipa_affinity_empty,
            cached_version=self.cached_version, cached_score=self.cached_score,
            out_node=out_node, out_start=out_start)
        return int(stop)

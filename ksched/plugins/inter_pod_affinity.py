"""InterPodAffinity (``plugins/interpodaffinity/{plugin,filtering,scoring}.go``).

Filter: the incoming pod's required pod affinity (some pod matching *all* its terms must run in
the node's domain of every term, unless no pod matches and the pod matches its own terms), its
required anti-affinity (no pod matching a term in the node's domain of that term), and the
required anti-affinity terms of the pods already running (the incoming pod must not land in the
domain of a pod whose anti-affinity term it matches). Score: the incoming pod's preferred terms
against the running pods, plus the running pods' required affinity (weighted by
``hardPodAffinityWeight``) and preferred terms against the incoming pod, summed per topology
domain and min-max normalised.

A topology domain is a pair ``(label key, label value)``: a pod on node X occupies
``(key, X.labels[key])``. Here the pair is ``(label column, value id)`` of
:attr:`ClusterState.labels`; the counts are gathered per pair (a loop over the running pods) and
read back for all nodes at once (``np.isin`` / ``np.searchsorted`` over a label column).

Term parsing follows ``framework.NewPodInfo``: ``labelSelector`` and ``namespaceSelector`` go
through ``LabelSelectorAsSelector`` (absent: matches nothing; ``{}``: matches everything); with
neither ``namespaces`` nor ``namespaceSelector`` the term covers the owner pod's namespace.
``matchLabelKeys`` / ``mismatchLabelKeys`` are not read (v1.35's scheduler leaves them to the API
server, which merges them into the label selector at pod creation). The incoming pod's
``namespaceSelector`` is resolved against the cluster's namespaces
(``mergeAffinityTermNamespacesIfNotEmpty``); running pods' selectors are matched against the
incoming pod's namespace labels. Terminating pods count like any other (upstream does not look at
``deletionTimestamp`` here).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import ClassVar

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import FrozenDict, Pod, PodAffinity, PodAffinityTerm, WeightedPodAffinityTerm
from ksched.constants import MAX_NODE_SCORE
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.labels import Selector
from ksched.state import ABSENT, ClusterState
from ksched.status import SKIP, SUCCESS, Code, Status, unresolvable, unschedulable

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"

_NOTHING = Selector(nothing=True)
_NO_NAMESPACES: Mapping[str, Mapping[str, str]] = FrozenDict()


@attrs.frozen
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


# --------------------------------------------------------------------------- terms


@attrs.frozen(eq=False)
class AffinityTerm:
    """``fwk.AffinityTerm``: a parsed ``PodAffinityTerm``."""

    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """``AffinityTerm.Matches``: the pod's namespace is covered and its labels match."""
        if pod.namespace in self.namespaces or self.namespace_selector.matches(ns_labels or {}):
            return self.selector.matches(pod.labels)
        return False

    def merged_namespaces(self, namespaces: Mapping[str, Mapping[str, str]]) -> AffinityTerm:
        """``mergeAffinityTermNamespacesIfNotEmpty``: a non-empty namespace selector becomes
        the names of the namespaces it selects (``{}`` stays: every namespace)."""
        if self.namespace_selector.empty:
            return self
        chosen = {name for name, labels in namespaces.items()
                  if self.namespace_selector.matches(labels)}
        return attrs.evolve(self, namespaces=self.namespaces | chosen,
                            namespace_selector=_NOTHING)


@attrs.frozen(eq=False)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


@attrs.frozen(eq=False)
class PodTerms:
    """The affinity part of ``framework.PodInfo``."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()

    def merged(self, namespaces: Mapping[str, Mapping[str, str]]) -> PodTerms:
        """Every term with its namespace selector resolved (the incoming pod's view)."""
        return PodTerms(
            tuple(t.merged_namespaces(namespaces) for t in self.required_affinity),
            tuple(t.merged_namespaces(namespaces) for t in self.required_anti_affinity),
            tuple(attrs.evolve(w, term=w.term.merged_namespaces(namespaces))
                  for w in self.preferred_affinity),
            tuple(attrs.evolve(w, term=w.term.merged_namespaces(namespaces))
                  for w in self.preferred_anti_affinity),
        )


def _term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    """``newAffinityTerm``; raises ``ValueError`` on an invalid selector."""
    selector = Selector.from_label_selector(term.label_selector)
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    ns_selector = Selector.from_label_selector(term.namespace_selector)
    return AffinityTerm(namespaces, selector, term.topology_key, ns_selector)


def _required(pod: Pod, affinity: PodAffinity | None) -> tuple[AffinityTerm, ...]:
    return tuple(_term(pod, t) for t in (affinity.required if affinity else ()))


def _preferred(pod: Pod, affinity: PodAffinity | None) -> tuple[WeightedAffinityTerm, ...]:
    terms: Sequence[WeightedPodAffinityTerm] = affinity.preferred if affinity else ()
    return tuple(WeightedAffinityTerm(_term(pod, w.term), w.weight) for w in terms)


def parse_pod_terms(pod: Pod) -> tuple[PodTerms, str | None]:
    """``framework.NewPodInfo``: the four term lists and the aggregated parse error.

    A list with an invalid term is left empty (the others are kept), as upstream does; the
    error text is ``None`` when every term parsed, else ``<list>: <LabelSelectorAsSelector's
    error>`` per failing list (:func:`ksched.labels.label_selector_error`), aggregated.
    """
    lists, errors = {}, []
    for name, parse, affinity in (
            ("requiredAffinityTerms", _required, pod.pod_affinity),
            ("requiredAntiAffinityTerms", _required, pod.pod_anti_affinity),
            ("preferredAffinityTerms", _preferred, pod.pod_affinity),
            ("preferredAntiAffinityTerms", _preferred, pod.pod_anti_affinity)):
        try:
            lists[name] = parse(pod, affinity)
        except ValueError as exc:
            lists[name] = ()
            errors.append(f"{name}: {exc}")
    terms = PodTerms(lists["requiredAffinityTerms"], lists["requiredAntiAffinityTerms"],
                     lists["preferredAffinityTerms"], lists["preferredAntiAffinityTerms"])
    return terms, _aggregate(errors)


def _aggregate(errors: list[str]) -> str | None:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or ``[a, b]`` deduplicated."""
    if not errors:
        return None
    distinct = list(dict.fromkeys(errors))
    return distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"


@functools.lru_cache(maxsize=1 << 16)
def _existing_pod_terms(pod: Pod) -> PodTerms:
    """The terms of a running pod (``NodeInfo.AddPod`` ignores the parse error)."""
    return parse_pod_terms(pod)[0]


def _has_required_anti_affinity(pod: Pod) -> bool:
    """``podWithRequiredAntiAffinity`` (``NodeInfo.PodsWithRequiredAntiAffinity``)."""
    return pod.pod_anti_affinity is not None and len(pod.pod_anti_affinity.required) > 0


def _int32(value: int) -> int:
    """Wrap to int32, as Go's ``weight * multiplier`` on ``int32`` operands does."""
    return (value + 2**31) % 2**32 - 2**31


# --------------------------------------------------------------------------- topology counts


def _match_mask(term: AffinityTerm, pods: Sequence[Pod],
                ns_labels: Mapping[str, str] | None = None) -> npt.NDArray[np.bool_]:
    """``term.Matches(pod, ns_labels)`` for each pod (memoised on namespace and labels, which
    is all a match reads when ``ns_labels`` is fixed)."""
    out = np.zeros(len(pods), dtype=np.bool_)
    seen: dict[tuple, bool] = {}
    for i, pod in enumerate(pods):
        key = (pod.namespace, pod.labels)
        hit = seen.get(key)
        if hit is None:
            hit = seen[key] = term.matches(pod, ns_labels)
        out[i] = hit
    return out


def _domain_values(state: ClusterState, key: str,
                   pod_rows: npt.NDArray[np.int64]) -> tuple[int, npt.NDArray[np.int64]]:
    """The label column of ``key`` and the value ids (``ABSENT`` dropped) of the nodes of the
    pods at ``pod_rows`` (positions in ``state.pods``): one entry per pod and term."""
    column = state.label_column(key)
    if column < 0 or len(pod_rows) == 0:
        return column, np.zeros(0, dtype=np.int64)
    values = state.labels[state.pod_node[pod_rows], column].astype(np.int64)
    return column, values[values != ABSENT]


def _in_domains(state: ClusterState, nodes: NodeIndices, column: int,
                values: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """bool[len(nodes)]: the node has label column ``column`` with a value in ``values``."""
    if column < 0 or len(values) == 0:
        return np.zeros(len(nodes), dtype=np.bool_)
    return np.isin(state.labels[nodes, column], values)


@attrs.frozen(eq=False)
class _FilterState:
    """``preFilterState``: per term, the domains holding a matching pod.

    affinity : per required affinity term, (label column, int64[] value ids of domains with a
        pod matching all the terms).
    affinity_empty : ``len(affinityCounts) == 0``.
    self_match : the pod matches all its own required affinity terms.
    anti_affinity : per required anti-affinity term, (label column, value ids).
    existing_anti_affinity : label column -> value ids of domains whose running pods' required
        anti-affinity terms match the incoming pod.
    """

    terms: PodTerms
    affinity: tuple[tuple[int, npt.NDArray[np.int64]], ...]
    affinity_empty: bool
    self_match: bool
    anti_affinity: tuple[tuple[int, npt.NDArray[np.int64]], ...]
    existing_anti_affinity: Mapping[int, npt.NDArray[np.int64]]


def _matched_domains(state: ClusterState, node: int, terms: Sequence[tuple[AffinityTerm, int]],
                     pod: Pod, ns_labels: Mapping[str, str]):
    """(label column, value id, amount) for each of a running pod's terms that matches the
    incoming pod, filed under the running pod's node's value of the term's topology key."""
    for term, amount in terms:
        column = state.label_column(term.topology_key)
        if column < 0 or not term.matches(pod, ns_labels):
            continue
        value = int(state.labels[node, column])
        if value != ABSENT:
            yield column, value, amount


def _namespace_labels(state: ClusterState, namespace: str) -> Mapping[str, str]:
    """``GetNamespaceLabelsSnapshot``: the labels, or none when the namespace is unknown."""
    return state.namespaces.get(namespace) or {}


def _pre_filter_state(state: ClusterState, pod: Pod, terms: PodTerms) -> _FilterState:
    terms = PodTerms(
        tuple(t.merged_namespaces(state.namespaces) for t in terms.required_affinity),
        tuple(t.merged_namespaces(state.namespaces) for t in terms.required_anti_affinity))
    ns_labels = _namespace_labels(state, pod.namespace)

    # getExistingAntiAffinityCounts
    existing_cols: list[int] = []
    existing_vals: list[int] = []
    for row in state.affinity_pods:
        other = state.pods[row]
        if not _has_required_anti_affinity(other):
            continue
        anti_terms = [(t, 0) for t in _existing_pod_terms(other).required_anti_affinity]
        for column, value, _ in _matched_domains(state, int(state.pod_node[row]), anti_terms,
                                                 pod, ns_labels):
            existing_cols.append(column)
            existing_vals.append(value)
    existing: dict[int, npt.NDArray[np.int64]] = {}
    if existing_cols:
        cols, vals = np.asarray(existing_cols), np.asarray(existing_vals, dtype=np.int64)
        existing = {int(c): np.unique(vals[cols == c]) for c in np.unique(cols)}

    # getIncomingAffinityAntiAffinityCounts
    pods = state.pods
    affinity, affinity_entries = [], 0
    if terms.required_affinity:
        matches_all = np.ones(len(pods), dtype=np.bool_)
        for t in terms.required_affinity:
            matches_all &= _match_mask(t, pods)
        rows = np.flatnonzero(matches_all)
        for t in terms.required_affinity:
            column, values = _domain_values(state, t.topology_key, rows)
            affinity_entries += len(values)
            affinity.append((column, np.unique(values)))
    anti_affinity = []
    for t in terms.required_anti_affinity:
        column, values = _domain_values(state, t.topology_key,
                                        np.flatnonzero(_match_mask(t, pods)))
        anti_affinity.append((column, np.unique(values)))
    self_match = bool(terms.required_affinity) and all(
        t.matches(pod, None) for t in terms.required_affinity)
    return _FilterState(terms, tuple(affinity), affinity_entries == 0, self_match,
                        tuple(anti_affinity), existing)


def _skips_filter(s: _FilterState) -> bool:
    return (not s.existing_anti_affinity and not s.terms.required_affinity
            and not s.terms.required_anti_affinity)


# --------------------------------------------------------------------------- scoring state


@attrs.frozen(eq=False)
class _ScoreState:
    """``preScoreState.topologyScore``: per label column, the sorted value ids of the scored
    domains and their summed weights (int64)."""

    tables: tuple[tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64]], ...]


def _pre_score_state(state: ClusterState, pod: Pod, terms: PodTerms,
                     args: InterPodAffinityArgs, all_pods: bool) -> _ScoreState | None:
    """``PreScore``'s accumulation; ``None`` when nothing was accumulated (Skip)."""
    terms = terms.merged(state.namespaces)
    ns_labels = _namespace_labels(state, pod.namespace)
    labelled = (state.labels != ABSENT).any(axis=1)  # len(node.Labels) != 0
    # Contributions (label column, value id, amount), one per matched term and pod: from
    # the incoming pod's terms as arrays, from the running pods' terms one by one.
    cols: list[npt.NDArray[np.int64]] = []
    vals: list[npt.NDArray[np.int64]] = []
    amounts: list[npt.NDArray[np.int64]] = []
    one_col: list[int] = []
    one_val: list[int] = []
    one_amount: list[int] = []

    # The incoming pod's preferred terms against every running pod on a labelled node.
    pods = state.pods
    if all_pods and (terms.preferred_affinity or terms.preferred_anti_affinity):
        on_labelled = labelled[state.pod_node] if len(pods) else np.zeros(0, dtype=np.bool_)
        for weighted, sign in ([(w, 1) for w in terms.preferred_affinity]
                               + [(w, -1) for w in terms.preferred_anti_affinity]):
            rows = np.flatnonzero(_match_mask(weighted.term, pods) & on_labelled)
            column, values = _domain_values(state, weighted.term.topology_key, rows)
            if len(values):
                cols.append(np.full(len(values), column, dtype=np.int64))
                vals.append(values)
                amounts.append(np.full(len(values), _int32(weighted.weight * sign),
                                       dtype=np.int64))

    # The running pods' terms (only pods with affinity have any) against the incoming pod.
    hard = args.hard_pod_affinity_weight
    for row in state.affinity_pods:
        node = int(state.pod_node[row])
        if not labelled[node]:
            continue
        other = _existing_pod_terms(pods[row])
        weighted = []
        if hard > 0:
            weighted += [(t, _int32(hard)) for t in other.required_affinity]
        weighted += [(w.term, _int32(w.weight)) for w in other.preferred_affinity]
        weighted += [(w.term, _int32(-w.weight)) for w in other.preferred_anti_affinity]
        for column, value, amount in _matched_domains(state, node, weighted, pod, ns_labels):
            one_col.append(column)
            one_val.append(value)
            one_amount.append(amount)

    if one_col:
        cols.append(np.asarray(one_col, dtype=np.int64))
        vals.append(np.asarray(one_val, dtype=np.int64))
        amounts.append(np.asarray(one_amount, dtype=np.int64))
    if not cols:
        return None
    col, val, amount = np.concatenate(cols), np.concatenate(vals), np.concatenate(amounts)
    tables = []
    for c in np.unique(col):
        here = col == c
        domains, inverse = np.unique(val[here], return_inverse=True)
        sums = np.zeros(len(domains), dtype=np.int64)
        np.add.at(sums, inverse.reshape(-1), amount[here])
        tables.append((int(c), domains, sums))
    return _ScoreState(tuple(tables))


def _has_preferred_terms(pod: Pod) -> bool:
    """``hasPreferredAffinityConstraints || hasPreferredAntiAffinityConstraints``."""
    return any(a is not None and len(a.preferred) > 0
               for a in (pod.pod_affinity, pod.pod_anti_affinity))


# --------------------------------------------------------------------------- the plugin


@attrs.frozen
class InterPodAffinity:
    NAME: ClassVar[str] = "InterPodAffinity"
    args: InterPodAffinityArgs = attrs.field(
        default=None, converter=lambda a: a if a is not None else InterPodAffinityArgs())

    def _filter_state(self, cycle: Cycle) -> _FilterState | Status:
        terms, error = parse_pod_terms(cycle.pod)
        if error is not None:
            return unresolvable(f"parsing pod: {error}")
        return _pre_filter_state(cycle.state, cycle.pod, terms)

    def pre_filter(self, cycle: Cycle) -> Status | None:
        s = self._filter_state(cycle)
        if isinstance(s, Status):
            return s
        if _skips_filter(s):
            return SKIP
        cycle.data[self.NAME] = s
        return None

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        s = cycle.data.get(self.NAME)
        if s is None:
            s = self._filter_state(cycle)
            if isinstance(s, Status):
                return FilterResult.from_mask(np.zeros(len(nodes), np.bool_), s)
            cycle.data[self.NAME] = s
        state = cycle.state
        codes = np.zeros(len(nodes), dtype=np.int8)
        if s.terms.required_affinity:
            has_keys = np.ones(len(nodes), dtype=np.bool_)
            pods_exist = np.ones(len(nodes), dtype=np.bool_)
            for column, values in s.affinity:
                if column < 0:
                    has_keys[:] = False
                    continue
                has_keys &= state.labels[nodes, column] != ABSENT
                pods_exist &= _in_domains(state, nodes, column, values)
            if s.affinity_empty and s.self_match:
                pods_exist[:] = True
            codes[~(has_keys & pods_exist)] = 1
        anti = np.zeros(len(nodes), dtype=np.bool_)
        for column, values in s.anti_affinity:
            anti |= _in_domains(state, nodes, column, values)
        codes[(codes == 0) & anti] = 2
        existing = np.zeros(len(nodes), dtype=np.bool_)
        for column, values in s.existing_anti_affinity.items():
            existing |= _in_domains(state, nodes, column, values)
        codes[(codes == 0) & existing] = 3
        return FilterResult.from_codes(codes, _filter_status)

    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status | None:
        s = self._score_state(cycle)
        if isinstance(s, Status):
            return s
        return SKIP if s is None else None

    def _score_state(self, cycle: Cycle) -> _ScoreState | Status | None:
        key = self.NAME + "/score"
        if key in cycle.data:
            return cycle.data[key]
        pod = cycle.pod
        has_constraints = _has_preferred_terms(pod)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            s = None
        else:
            terms, error = parse_pod_terms(pod)
            if error is not None:
                return Status(Code.ERROR, (f"failed to parse pod: {error}",))
            s = _pre_score_state(cycle.state, pod, terms, self.args, has_constraints)
        cycle.data[key] = s
        return s

    def score(self, cycle: Cycle, nodes: NodeIndices) -> npt.NDArray[np.int64]:
        s = self._score_state(cycle)
        scores = np.zeros(len(nodes), dtype=np.int64)
        if not isinstance(s, _ScoreState):
            return scores
        for column, domains, sums in s.tables:
            values = cycle.state.labels[nodes, column].astype(np.int64)
            at = np.minimum(np.searchsorted(domains, values), len(domains) - 1)
            hit = (domains[at] == values) & (values != ABSENT)
            scores += np.where(hit, sums[at], 0)
        return scores

    def normalize_score(self, cycle: Cycle, scores: npt.NDArray[np.int64]) -> None:
        s = cycle.data.get(self.NAME + "/score")
        if not isinstance(s, _ScoreState) or not s.tables or len(scores) == 0:
            return
        low, high = int(scores.min()), int(scores.max())
        diff = high - low
        if diff > 0:
            scaled = float(MAX_NODE_SCORE) * ((scores - low).astype(np.float64) / float(diff))
            scores[:] = scaled.astype(np.int64)
        else:
            scores[:] = 0


def _filter_status(code: int) -> Status:
    if code == 1:
        return unresolvable(REASON_AFFINITY)
    if code == 2:
        return unschedulable(REASON_ANTI_AFFINITY)
    return unschedulable(REASON_EXISTING_ANTI_AFFINITY)


# ----------------------------------------------------------------------- reference
#
# A plain per-node transliteration of ``interpodaffinity/{filtering,scoring}.go`` over NodeInfo
# records: topology pairs are (key, value) strings in dicts, every function recomputes the
# PreFilter / PreScore state it needs from all nodes, and terms are parsed here on their own.


def _reference_term(pod: Pod, term: PodAffinityTerm) -> dict:
    selector = Selector.from_label_selector(term.label_selector)
    if len(term.namespaces) == 0 and term.namespace_selector is None:
        namespaces = {pod.namespace}
    else:
        namespaces = set(term.namespaces)
    ns_selector = Selector.from_label_selector(term.namespace_selector)
    return {"namespaces": namespaces, "selector": selector, "key": term.topology_key,
            "ns_selector": ns_selector}


def _reference_pod_info(pod: Pod) -> tuple[dict[str, list], list[str]]:
    """``NewPodInfo``: the four term lists (a list with a bad term is empty) and the errors."""
    info: dict[str, list] = {}
    errors: list[str] = []
    sources = {
        "requiredAffinityTerms": (pod.pod_affinity, False),
        "requiredAntiAffinityTerms": (pod.pod_anti_affinity, False),
        "preferredAffinityTerms": (pod.pod_affinity, True),
        "preferredAntiAffinityTerms": (pod.pod_anti_affinity, True),
    }
    for name, (affinity, weighted) in sources.items():
        terms = []
        try:
            if affinity is not None:
                if weighted:
                    for w in affinity.preferred:
                        t = _reference_term(pod, w.term)
                        t["weight"] = w.weight
                        terms.append(t)
                else:
                    for term in affinity.required:
                        terms.append(_reference_term(pod, term))
        except ValueError as exc:
            terms = []
            errors.append(f"{name}: {exc}")
        info[name] = terms
    return info, errors


def _reference_matches(term: dict, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
    if pod.namespace in term["namespaces"] or term["ns_selector"].matches(ns_labels or {}):
        return term["selector"].matches(pod.labels)
    return False


def _reference_merge(term: dict, namespaces: Mapping[str, Mapping[str, str]]) -> dict:
    """``mergeAffinityTermNamespacesIfNotEmpty``."""
    if term["ns_selector"].empty:
        return term
    merged = dict(term)
    merged["namespaces"] = set(term["namespaces"])
    for name, labels in namespaces.items():
        if term["ns_selector"].matches(labels):
            merged["namespaces"].add(name)
    merged["ns_selector"] = Selector(nothing=True)
    return merged


def _reference_matches_all(terms: list[dict], pod: Pod) -> bool:
    """``podMatchesAllAffinityTerms``."""
    if len(terms) == 0:
        return False
    for t in terms:
        if not _reference_matches(t, pod, None):
            return False
    return True


def _reference_pre_filter(pod: Pod, all_nodes: Sequence,
                          namespaces: Mapping[str, Mapping[str, str]]) -> dict | Status:
    """``PreFilter``: the three counters, or the rejection / Skip status."""
    info, errors = _reference_pod_info(pod)
    if errors:
        return unresolvable(f"parsing pod: {_aggregate(errors)}")
    affinity_terms = [_reference_merge(t, namespaces) for t in info["requiredAffinityTerms"]]
    anti_terms = [_reference_merge(t, namespaces) for t in info["requiredAntiAffinityTerms"]]
    ns_labels = namespaces.get(pod.namespace)

    existing_anti: dict[tuple[str, str], int] = {}
    for node_info in all_nodes:
        labels = node_info.node.labels
        for other in node_info.pods:
            if not _has_required_anti_affinity(other):
                continue
            other_info, _ = _reference_pod_info(other)
            for t in other_info["requiredAntiAffinityTerms"]:
                if _reference_matches(t, pod, ns_labels) and t["key"] in labels:
                    pair = (t["key"], labels[t["key"]])
                    existing_anti[pair] = existing_anti.get(pair, 0) + 1

    affinity_counts: dict[tuple[str, str], int] = {}
    anti_counts: dict[tuple[str, str], int] = {}
    if affinity_terms or anti_terms:
        for node_info in all_nodes:
            labels = node_info.node.labels
            for other in node_info.pods:
                if _reference_matches_all(affinity_terms, other):
                    for t in affinity_terms:
                        if t["key"] in labels:
                            pair = (t["key"], labels[t["key"]])
                            affinity_counts[pair] = affinity_counts.get(pair, 0) + 1
                for t in anti_terms:
                    if _reference_matches(t, other, None) and t["key"] in labels:
                        pair = (t["key"], labels[t["key"]])
                        anti_counts[pair] = anti_counts.get(pair, 0) + 1

    if not existing_anti and not affinity_terms and not anti_terms:
        return SKIP
    return {"affinity_terms": affinity_terms, "anti_terms": anti_terms, "pod": pod,
            "existing_anti": existing_anti, "affinity": affinity_counts, "anti": anti_counts}


def reference_pre_filter(pod: Pod, all_nodes: Sequence,
                         namespaces: Mapping[str, Mapping[str, str]] = _NO_NAMESPACES
                         ) -> Status | None:
    """``PreFilter``'s status: ``None`` to go on, Skip, or the parse rejection."""
    s = _reference_pre_filter(pod, all_nodes, namespaces)
    return s if isinstance(s, Status) else None


def reference_filter(pod: Pod, node_info: object, all_nodes: Sequence,
                     namespaces: Mapping[str, Mapping[str, str]] = _NO_NAMESPACES) -> Status:
    """``PreFilter`` (over ``all_nodes``) then ``Filter`` of one NodeInfo.

    A PreFilter Skip reads as success, a PreFilter rejection as that status.
    """
    s = _reference_pre_filter(pod, all_nodes, namespaces)
    if isinstance(s, Status):
        return SUCCESS if s.is_skip else s
    labels = node_info.node.labels

    # satisfyPodAffinity
    pods_exist = True
    affinity_ok = True
    for t in s["affinity_terms"]:
        if t["key"] in labels:
            if s["affinity"].get((t["key"], labels[t["key"]]), 0) <= 0:
                pods_exist = False
        else:
            affinity_ok = False
            break
    if affinity_ok and not pods_exist:
        affinity_ok = (len(s["affinity"]) == 0
                       and _reference_matches_all(s["affinity_terms"], s["pod"]))
    if not affinity_ok:
        return unresolvable(REASON_AFFINITY)

    # satisfyPodAntiAffinity
    if len(s["anti"]) > 0:
        for t in s["anti_terms"]:
            if t["key"] in labels and s["anti"].get((t["key"], labels[t["key"]]), 0) > 0:
                return unschedulable(REASON_ANTI_AFFINITY)

    # satisfyExistingPodsAntiAffinity
    if len(s["existing_anti"]) > 0:
        for key, value in labels.items():
            if s["existing_anti"].get((key, value), 0) > 0:
                return unschedulable(REASON_EXISTING_ANTI_AFFINITY)
    return SUCCESS


def _reference_pre_score(pod: Pod, all_nodes: Sequence,
                         namespaces: Mapping[str, Mapping[str, str]],
                         args: InterPodAffinityArgs) -> dict | None | Status:
    """``PreScore``: the topology score map, ``None`` for Skip, or an Error status."""
    has_constraints = _has_preferred_terms(pod)
    if args.ignore_preferred_terms_of_existing_pods and not has_constraints:
        return None
    if has_constraints:
        nodes = list(all_nodes)
    else:
        nodes = [n for n in all_nodes if any(p.has_pod_affinity for p in n.pods)]
    info, errors = _reference_pod_info(pod)
    if errors:
        return Status(Code.ERROR, (f"failed to parse pod: {_aggregate(errors)}",))
    preferred = [_reference_merge(t, namespaces) for t in info["preferredAffinityTerms"]]
    preferred_anti = [_reference_merge(t, namespaces)
                      for t in info["preferredAntiAffinityTerms"]]
    ns_labels = namespaces.get(pod.namespace)

    topology_score: dict[str, dict[str, int]] = {}

    def process_term(term: dict, weight: int, target: Pod, target_ns_labels: object,
                     labels: Mapping[str, str], multiplier: int) -> None:
        if _reference_matches(term, target, target_ns_labels) and term["key"] in labels:
            scores = topology_score.setdefault(term["key"], {})
            value = labels[term["key"]]
            scores[value] = scores.get(value, 0) + _int32(weight * multiplier)

    for node_info in nodes:
        labels = node_info.node.labels
        if has_constraints:
            to_process = list(node_info.pods)
        else:
            to_process = [p for p in node_info.pods if p.has_pod_affinity]
        for existing in to_process:
            if len(labels) == 0:  # processExistingPod
                continue
            existing_info, _ = _reference_pod_info(existing)
            for t in preferred:
                process_term(t, t["weight"], existing, None, labels, 1)
            for t in preferred_anti:
                process_term(t, t["weight"], existing, None, labels, -1)
            if args.hard_pod_affinity_weight > 0:
                for t in existing_info["requiredAffinityTerms"]:
                    process_term(t, args.hard_pod_affinity_weight, pod, ns_labels, labels, 1)
            for t in existing_info["preferredAffinityTerms"]:
                process_term(t, t["weight"], pod, ns_labels, labels, 1)
            for t in existing_info["preferredAntiAffinityTerms"]:
                process_term(t, t["weight"], pod, ns_labels, labels, -1)
    if not topology_score:
        return None
    return topology_score


def reference_skips(pod: Pod, all_nodes: Sequence,
                    namespaces: Mapping[str, Mapping[str, str]] = _NO_NAMESPACES,
                    args: InterPodAffinityArgs = InterPodAffinityArgs()) -> bool:
    """Whether ``PreScore`` returns Skip."""
    return _reference_pre_score(pod, all_nodes, namespaces, args) is None


def reference_score(pod: Pod, node_info: object, all_nodes: Sequence,
                    namespaces: Mapping[str, Mapping[str, str]] = _NO_NAMESPACES,
                    args: InterPodAffinityArgs = InterPodAffinityArgs()) -> int:
    """``PreScore`` (over ``all_nodes``) then ``Score`` of one NodeInfo.

    Call only when :func:`reference_skips` is false.
    """
    topology_score = _reference_pre_score(pod, all_nodes, namespaces, args)
    score = 0
    for key, values in topology_score.items():
        if key in node_info.node.labels:
            score += values.get(node_info.node.labels[key], 0)
    return score


def reference_normalize(scores: Sequence[int]) -> list[int]:
    """``NormalizeScore`` of the raw scores of the scored nodes (PreScore did not skip)."""
    min_count, max_count = 2**63 - 1, -(2**63)
    for s in scores:
        if s > max_count:
            max_count = s
        if s < min_count:
            min_count = s
    diff = max_count - min_count
    out = []
    for s in scores:
        f_score = 0.0
        if diff > 0:
            f_score = float(MAX_NODE_SCORE) * (float(s - min_count) / float(diff))
        out.append(int(f_score))
    return out

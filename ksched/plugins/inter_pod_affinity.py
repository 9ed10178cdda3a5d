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

The judging and scoring arithmetic is :mod:`ksched.kernels.inter_pod_affinity`'s, shared with
the fused loop (which keeps the counts up to date with :meth:`InterPodAffinity.filter_increments`
and :meth:`InterPodAffinity.score_increments`); the reference the plugin is tested against is
:mod:`ksched.plugins.reference.inter_pod_affinity`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Pod, PodAffinity, PodAffinityTerm, WeightedPodAffinityTerm
from ksched.framework.capabilities import FilterKind, ScoreKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.kernels import inter_pod_affinity as kernels
from ksched.labels import Selector
from ksched.plugins.inter_pod_affinity_index import running_pods
from ksched.state import ABSENT, ClusterState
from ksched.status import SKIP, Code, Status, unresolvable, unschedulable

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"

_NOTHING = Selector(nothing=True)


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
    return terms, aggregate_errors(errors)


def aggregate_errors(errors: list[str]) -> str | None:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or ``[a, b]`` deduplicated."""
    if not errors:
        return None
    distinct = list(dict.fromkeys(errors))
    return distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"


#: Parsed terms by (namespace, identities of the pod's two affinity fields): what the terms
#: depend on. Each entry holds the field objects, so their ids stay theirs while it lives.
_TERMS: dict[tuple[str, int, int], tuple[Any, Any, PodTerms]] = {}


def existing_pod_terms(pod: Pod) -> PodTerms:
    """The terms of a running pod (``NodeInfo.AddPod`` ignores the parse error), parsed once
    per namespace and affinity objects (replicas share theirs; hashing a whole pod costs more
    than parsing)."""
    affinity, anti = pod.pod_affinity, pod.pod_anti_affinity
    key = (pod.namespace, id(affinity), id(anti))
    found = _TERMS.get(key)
    if found is not None and found[0] is affinity and found[1] is anti:
        return found[2]
    if len(_TERMS) >= 1 << 16:
        _TERMS.clear()
    terms = parse_pod_terms(pod)[0]
    _TERMS[key] = (affinity, anti, terms)
    return terms


def has_required_anti_affinity(pod: Pod) -> bool:
    """``podWithRequiredAntiAffinity`` (``NodeInfo.PodsWithRequiredAntiAffinity``)."""
    return pod.pod_anti_affinity is not None and len(pod.pod_anti_affinity.required) > 0


def wrap_int32(value: int) -> int:
    """Wrap to int32, as Go's ``weight * multiplier`` on ``int32`` operands does."""
    return (value + 2**31) % 2**32 - 2**31


# --------------------------------------------------------------------------- topology counts


def _match_mask(term: AffinityTerm, state: ClusterState) -> npt.NDArray[np.bool_]:
    """``term.Matches(pod, nil)`` for each running pod of ``state`` (asked once per namespace
    and labels, which is all a match reads, :mod:`~ksched.plugins.inter_pod_affinity_index`)."""
    return running_pods(state).match_mask(lambda pod: term.matches(pod, None))


def _domain_values(state: ClusterState, key: str,
                   pod_rows: npt.NDArray[np.int64]) -> tuple[int, npt.NDArray[np.int64]]:
    """The label column of ``key`` and the value ids (``ABSENT`` dropped) of the nodes of the
    pods at ``pod_rows`` (positions in ``state.pods``): one entry per pod and term."""
    column = state.label_column(key)
    if column < 0 or len(pod_rows) == 0:
        return column, np.zeros(0, dtype=np.int64)
    values = state.labels[state.pod_node[pod_rows], column].astype(np.int64)
    return column, values[values != ABSENT]


@attrs.frozen(eq=False)
class FilterCounts:
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

    def kernel_rows(self, width: int) -> tuple[npt.NDArray[np.int64], ...]:
        """The counts in the layout of :mod:`ksched.kernels.inter_pod_affinity`: rows
        int64[t, width] (1 in the domains holding a matching pod), then the (row, label
        column) entries of the affinity terms, the anti-affinity terms and the running pods'
        anti-affinity (one row per label column)."""
        lists = (self.affinity, self.anti_affinity, tuple(self.existing_anti_affinity.items()))
        rows = np.zeros((sum(map(len, lists)), width), dtype=np.int64)
        entries, row = [], 0
        for terms in lists:
            out = np.zeros((len(terms), 2), dtype=np.int64)
            for k, (column, values) in enumerate(terms):
                rows[row, values] = 1
                out[k] = row, column
                row += 1
            entries.append(out)
        return (rows, *entries)


def _term_groups(state: ClusterState, keep: Any) -> list[tuple[PodTerms, np.ndarray]]:
    """The running pods with affinity that ``keep`` keeps (it reads a pod's namespace and
    affinity fields), grouped by those (:mod:`~ksched.plugins.inter_pod_affinity_index`):
    (their terms, their rows)."""
    return [(existing_pod_terms(pod), rows) for pod, rows in running_pods(state).term_groups(keep)]


def _matched_domains(state: ClusterState, rows: np.ndarray,
                     terms: Sequence[tuple[AffinityTerm, int]], pod: Pod,
                     ns_labels: Mapping[str, str]):
    """(label column, value ids, amount) for each term, shared by the running pods ``rows``,
    that matches the incoming pod: the pods' nodes' values of the term's topology key (nodes
    lacking it left out)."""
    for term, amount in terms:
        column = state.label_column(term.topology_key)
        if column < 0 or not term.matches(pod, ns_labels):
            continue
        values = state.labels[state.pod_node[rows], column].astype(np.int64)
        yield column, values[values != ABSENT], amount


def namespace_labels(state: ClusterState, namespace: str) -> Mapping[str, str]:
    """``GetNamespaceLabelsSnapshot``: the labels, or none when the namespace is unknown."""
    return state.namespaces.get(namespace) or {}


def _pre_filter_state(state: ClusterState, pod: Pod, terms: PodTerms) -> FilterCounts:
    terms = PodTerms(
        tuple(t.merged_namespaces(state.namespaces) for t in terms.required_affinity),
        tuple(t.merged_namespaces(state.namespaces) for t in terms.required_anti_affinity))
    ns_labels = namespace_labels(state, pod.namespace)

    # getExistingAntiAffinityCounts
    found: dict[int, list[npt.NDArray[np.int64]]] = {}
    for other, rows in _term_groups(state, has_required_anti_affinity):
        anti_terms = [(t, 0) for t in other.required_anti_affinity]
        for column, values, _ in _matched_domains(state, rows, anti_terms, pod, ns_labels):
            if len(values):
                found.setdefault(column, []).append(values)
    existing = {column: np.unique(np.concatenate(found[column])) for column in sorted(found)}

    # getIncomingAffinityAntiAffinityCounts
    pods = state.pods
    affinity, affinity_entries = [], 0
    if terms.required_affinity:
        matches_all = np.ones(len(pods), dtype=np.bool_)
        for t in terms.required_affinity:
            matches_all &= _match_mask(t, state)
        rows = np.flatnonzero(matches_all)
        for t in terms.required_affinity:
            column, values = _domain_values(state, t.topology_key, rows)
            affinity_entries += len(values)
            affinity.append((column, np.unique(values)))
    anti_affinity = []
    for t in terms.required_anti_affinity:
        column, values = _domain_values(state, t.topology_key,
                                        np.flatnonzero(_match_mask(t, state)))
        anti_affinity.append((column, np.unique(values)))
    self_match = bool(terms.required_affinity) and all(
        t.matches(pod, None) for t in terms.required_affinity)
    return FilterCounts(terms, tuple(affinity), affinity_entries == 0, self_match,
                        tuple(anti_affinity), existing)


def _skips_filter(s: FilterCounts) -> bool:
    return (not s.existing_anti_affinity and not s.terms.required_affinity
            and not s.terms.required_anti_affinity)


# --------------------------------------------------------------------------- scoring state


@attrs.frozen(eq=False)
class ScoreCounts:
    """``preScoreState.topologyScore``: per label column, the sorted value ids of the scored
    domains and their summed weights (int64)."""

    tables: tuple[tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64]], ...]

    def kernel_rows(self, width: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The sums in the layout of :mod:`ksched.kernels.inter_pod_affinity`: rows
        int64[t, width] and their (row, label column) entries."""
        rows = np.zeros((len(self.tables), width), dtype=np.int64)
        entries = np.zeros((len(self.tables), 2), dtype=np.int64)
        for row, (column, domains, sums) in enumerate(self.tables):
            rows[row, domains] = sums
            entries[row] = row, column
        return rows, entries


def _on_labelled_node(state: ClusterState, rows: npt.NDArray[np.int64]
                      ) -> npt.NDArray[np.bool_]:
    """Whether each running pod of ``rows`` is on a node with labels
    (``len(node.Labels) != 0``): read for those pods' nodes only."""
    return (state.labels[state.pod_node[rows]] != ABSENT).any(axis=1)


def _pre_score_state(state: ClusterState, pod: Pod, terms: PodTerms,
                     args: InterPodAffinityArgs, all_pods: bool) -> ScoreCounts | None:
    """``PreScore``'s accumulation; ``None`` when nothing was accumulated (Skip)."""
    terms = terms.merged(state.namespaces)
    ns_labels = namespace_labels(state, pod.namespace)
    # Contributions (label column, value id, amount), one per matched term and pod: from
    # the incoming pod's terms and from the running pods' terms (grouped), as arrays.
    cols: list[npt.NDArray[np.int64]] = []
    vals: list[npt.NDArray[np.int64]] = []
    amounts: list[npt.NDArray[np.int64]] = []

    # The incoming pod's preferred terms against every running pod on a labelled node.
    pods = state.pods
    if all_pods and (terms.preferred_affinity or terms.preferred_anti_affinity):
        on_labelled = _on_labelled_node(state, np.arange(len(pods)))
        for weighted, sign in ([(w, 1) for w in terms.preferred_affinity]
                               + [(w, -1) for w in terms.preferred_anti_affinity]):
            rows = np.flatnonzero(_match_mask(weighted.term, state) & on_labelled)
            column, values = _domain_values(state, weighted.term.topology_key, rows)
            if len(values):
                cols.append(np.full(len(values), column, dtype=np.int64))
                vals.append(values)
                amounts.append(np.full(len(values), wrap_int32(weighted.weight * sign),
                                       dtype=np.int64))

    # The running pods' terms (only pods with affinity have any) against the incoming pod.
    hard = args.hard_pod_affinity_weight
    for other, rows in _term_groups(state, lambda _: True):
        rows = rows[_on_labelled_node(state, rows)]
        weighted = []
        if hard > 0:
            weighted += [(t, wrap_int32(hard)) for t in other.required_affinity]
        weighted += [(w.term, wrap_int32(w.weight)) for w in other.preferred_affinity]
        weighted += [(w.term, wrap_int32(-w.weight)) for w in other.preferred_anti_affinity]
        for column, values, amount in _matched_domains(state, rows, weighted, pod, ns_labels):
            if not len(values):
                continue
            cols.append(np.full(len(values), column, dtype=np.int64))
            vals.append(values)
            amounts.append(np.full(len(values), amount, dtype=np.int64))
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
    return ScoreCounts(tuple(tables))


def has_preferred_terms(pod: Pod) -> bool:
    """``hasPreferredAffinityConstraints || hasPreferredAntiAffinityConstraints``."""
    return any(a is not None and len(a.preferred) > 0
               for a in (pod.pod_affinity, pod.pod_anti_affinity))


# --------------------------------------------------------------------------- the plugin


@attrs.frozen
class InterPodAffinity:
    NAME: ClassVar[str] = "InterPodAffinity"
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.POD_AFFINITY
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.POD_AFFINITY
    args: InterPodAffinityArgs = attrs.field(
        default=None, converter=lambda a: a if a is not None else InterPodAffinityArgs())

    def _filter_state(self, cycle: Cycle) -> FilterCounts | Status:
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

    def filter_counts(self, cycle: Cycle) -> FilterCounts | Status:
        """This cycle's PreFilter counts (:class:`FilterCounts`, made now when PreFilter did
        not keep them), or the rejection of a pod whose terms do not parse."""
        found = cycle.data.get(self.NAME)
        return found if found is not None else self._filter_state(cycle)

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        s = cycle.data.get(self.NAME)
        if s is None:
            s = self._filter_state(cycle)
            if isinstance(s, Status):
                return FilterResult.from_mask(np.zeros(len(nodes), np.bool_), s)
            cycle.data[self.NAME] = s
        state = cycle.state
        rows, affinity, anti, existing = s.kernel_rows(len(state.vocab) + 1)
        codes = kernels.pod_affinity_codes(nodes, affinity, anti, existing,
                                           s.affinity_empty and s.self_match, state.labels,
                                           rows)
        return FilterResult.from_codes(codes, _filter_status)

    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status | None:
        s = self.score_counts(cycle)
        if isinstance(s, Status):
            return s
        return SKIP if s is None else None

    def may_score(self, pod: Pod) -> bool:
        """Whether PreScore can score ``pod`` at all: not when the args ignore the running
        pods' preferred terms and the pod has none of its own."""
        return not (self.args.ignore_preferred_terms_of_existing_pods
                    and not has_preferred_terms(pod))

    def score_counts(self, cycle: Cycle) -> ScoreCounts | Status | None:
        """PreScore's sums per topology domain (:class:`ScoreCounts`; ``None``: nothing to
        score, PreScore skips), or the Error status of terms that do not parse."""
        key = self.NAME + "/score"
        if key in cycle.data:
            return cycle.data[key]
        pod = cycle.pod
        if not self.may_score(pod):
            s = None
        else:
            terms, error = parse_pod_terms(pod)
            if error is not None:
                return Status(Code.ERROR, (f"failed to parse pod: {error}",))
            s = _pre_score_state(cycle.state, pod, terms, self.args, has_preferred_terms(pod))
        cycle.data[key] = s
        return s

    def score(self, cycle: Cycle, nodes: NodeIndices) -> npt.NDArray[np.int64]:
        s = self.score_counts(cycle)
        if not isinstance(s, ScoreCounts):
            return np.zeros(len(nodes), dtype=np.int64)
        rows, entries = s.kernel_rows(len(cycle.state.vocab) + 1)
        return kernels.pod_affinity_scores(nodes, entries, cycle.state.labels, rows)

    def normalize_score(self, cycle: Cycle, scores: npt.NDArray[np.int64]) -> None:
        s = cycle.data.get(self.NAME + "/score")
        if isinstance(s, ScoreCounts) and s.tables:
            kernels.normalize_pod_affinity_scores(scores)

    # ------------------------------------------------------------------ AddPod

    def filter_increments(self, target: Pod, placed: Pod, state: ClusterState
                          ) -> tuple[bool, tuple[bool, ...], tuple[int, ...]]:
        """``preFilterState.updateWithPod`` for ``placed`` joining the cluster, as ``target``'s
        counts see it: whether it matches all of ``target``'s required affinity terms, which
        of ``target``'s required anti-affinity terms it matches, and the label columns of its
        own required anti-affinity terms that match ``target``."""
        mine = existing_pod_terms(target).merged(state.namespaces)
        affinity = bool(mine.required_affinity) and all(
            term.matches(placed, None) for term in mine.required_affinity)
        anti = tuple(term.matches(placed, None) for term in mine.required_anti_affinity)
        columns: list[int] = []
        if placed.has_pod_affinity and has_required_anti_affinity(placed):
            ns_labels = namespace_labels(state, target.namespace)
            columns = [state.label_column(term.topology_key)
                       for term in existing_pod_terms(placed).required_anti_affinity
                       if term.matches(target, ns_labels)]
        return affinity, anti, tuple(columns)

    def score_increments(self, target: Pod, placed: Pod, state: ClusterState
                         ) -> list[tuple[int, int]]:
        """What ``placed`` adds to ``target``'s PreScore sums (``processExistingPod``): per
        matching term, (label column, weight), from ``target``'s preferred terms and from
        ``placed``'s required (``hardPodAffinityWeight``) and preferred terms."""
        mine = existing_pod_terms(target).merged(state.namespaces)
        weighted = [(w.term, w.weight) for w in mine.preferred_affinity]
        weighted += [(w.term, -w.weight) for w in mine.preferred_anti_affinity]
        out = [(state.label_column(term.topology_key), wrap_int32(amount))
               for term, amount in weighted if term.matches(placed, None)]
        if placed.has_pod_affinity:
            theirs = existing_pod_terms(placed)
            hard = self.args.hard_pod_affinity_weight
            others = [(term, hard) for term in theirs.required_affinity] if hard > 0 else []
            others += [(w.term, w.weight) for w in theirs.preferred_affinity]
            others += [(w.term, -w.weight) for w in theirs.preferred_anti_affinity]
            ns_labels = namespace_labels(state, target.namespace)
            out += [(state.label_column(term.topology_key), wrap_int32(amount))
                    for term, amount in others if term.matches(target, ns_labels)]
        return out

    # ------------------------------------------------------------------ queueing hints

    def schedulable_after_pod_added(self, target: Pod, added: Pod, state: ClusterState) -> bool:
        """``isSchedulableAfterPodChange`` for an added pod (registered for Pod/Add): Queue
        when ``added`` is bound and matches all of ``target``'s required affinity terms
        (``podMatchesAllAffinityTerms``: namespace selectors against no labels); Queue too
        when a required term of ``target`` does not parse (the hint's error)."""
        if not added.node_name:
            return False
        terms = existing_pod_terms(target)  # a list that does not parse is left empty
        required = terms.required_affinity
        if _unparsed(target.pod_anti_affinity, terms.required_anti_affinity):
            return True
        if not required:
            return _unparsed(target.pod_affinity, required)
        for term in required:
            if not term.matches(added, None):
                return False
        return True

    #: The assigned-pod updates it registers for (``EventsToRegister``: Pod/UpdatePodLabel).
    POD_UPDATE_ACTIONS: ClassVar[tuple[str, ...]] = ("UpdatePodLabel",)

    def schedulable_after_pod_updated(self, target: Pod, old: Pod, new: Pod,
                                      state: ClusterState) -> bool:
        """``isSchedulableAfterPodChange`` for an updated bound pod: Queue when it now matches
        all of ``target``'s required affinity terms and did not before, or matched all its
        required anti-affinity terms and no longer does (``podMatchesAllAffinityTerms``: no
        terms match nothing); Queue too when a required term does not parse."""
        if not new.node_name or not old.node_name:
            return False
        terms = existing_pod_terms(target)
        affinity, anti = terms.required_affinity, terms.required_anti_affinity
        if _unparsed(target.pod_affinity, affinity) \
                or _unparsed(target.pod_anti_affinity, anti):
            return True
        if _matches_all(affinity, new) and not _matches_all(affinity, old):
            return True
        return _matches_all(anti, old) and not _matches_all(anti, new)


def _matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """``podMatchesAllAffinityTerms``: some terms, each matching ``pod``."""
    return bool(terms) and all(term.matches(pod, None) for term in terms)


def _unparsed(affinity: PodAffinity | None, parsed: tuple[AffinityTerm, ...]) -> bool:
    """Whether ``affinity`` has required terms and ``parsed`` none: they did not parse."""
    return affinity is not None and not parsed and len(affinity.required) > 0


def _filter_status(code: int) -> Status:
    if code == kernels.AFFINITY:
        return unresolvable(REASON_AFFINITY)
    if code == kernels.ANTI_AFFINITY:
        return unschedulable(REASON_ANTI_AFFINITY)
    return unschedulable(REASON_EXISTING_ANTI_AFFINITY)

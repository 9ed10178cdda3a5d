"""Pods per topology domain, as the fused loop keeps them from one pod to the next.

Topology spreading and inter-pod affinity judge a node by the pods matching a selector or a term
in its topology domain. For each pod class, the compiled loop (:mod:`ksched.fused_loop`) keeps those
counts in arrays: spread *counters* (one per constraint, in the layout of
:mod:`ksched.kernels.pod_topology_spread`) and inter-pod affinity *rows* (one per term or label
column, :mod:`ksched.kernels.inter_pod_affinity`). They are seeded from the bound pods by the
plugins' own PreFilter / PreScore counts (their public ``filter_counts``, ``soft_constraints``
and ``score_counts``), then updated as pods are placed: by the loop itself, with what
:meth:`DomainCounts.affinity_updates` says each placement adds, or by
:meth:`DomainCounts.note_placement` for pods placed by the framework.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.constants import LABEL_HOSTNAME
from ksched.kernels.pod_topology_spread import BY_LABEL_OR_EMPTY, BY_NODE, counter_slot
from ksched.plugins.inter_pod_affinity import parse_pod_terms
from ksched.plugins.pod_topology_spread import counts_pod
from ksched.state import ClusterState


@attrs.frozen
class SpreadCounter:
    """Pods matching one class's spread constraint, per domain of its topology key, counted
    over the nodes that constraint includes (``TpValueToMatchNum``)."""

    namespace: str
    selector: Any
    key_column: int
    included: np.ndarray  # bool[n_nodes]
    domains: np.ndarray  # the domain ids of the included nodes
    #: ``BY_LABEL`` (hard constraints), ``BY_LABEL_OR_EMPTY`` (soft: a missing label is the
    #: domain ""), ``BY_NODE`` (soft hostname constraints count each node's own pods).
    kind: int = 0


@attrs.define
class AffinityEntries:
    """One class's InterPodAffinity rows as (row, label column) pairs: its required affinity
    terms, its anti-affinity terms, the running pods' anti-affinity (per label column) and
    its scores; whether it matches its own affinity terms (the first pod of a group)."""

    affinity: list = attrs.field(factory=list)
    anti: list = attrs.field(factory=list)
    existing: list = attrs.field(factory=list)
    score: list = attrs.field(factory=list)
    self_match: bool = False


def affinity_key_columns(state: ClusterState, pods: Sequence[Pod]) -> tuple[list[int], list[int]]:
    """The label columns that running or pending pods' terms can file InterPodAffinity
    counts under: required anti-affinity keys, and every affinity key (for scores)."""
    anti_keys, scored_keys = set(), set()
    distinct = {(id(p.pod_affinity), id(p.pod_anti_affinity)): (p.pod_affinity, p.pod_anti_affinity)
                for p in pods if p.has_pod_affinity}  # by identity: replicas share theirs
    for affinity, anti in distinct.values():
        if anti is not None:
            anti_keys |= {t.topology_key for t in anti.required}
            scored_keys |= {w.term.topology_key for w in anti.preferred}
        if affinity is not None:
            scored_keys |= {t.topology_key for t in affinity.required}
            scored_keys |= {w.term.topology_key for w in affinity.preferred}
    columns = lambda keys: sorted({state.label_column(k) for k in keys} - {-1})  # noqa: E731
    return columns(anti_keys), columns(scored_keys)


class DomainCounts:
    """The spread counters and pod-affinity rows of one fused loop, and their pod classes'
    entries (``pods[c]``, ``affinity[c]``)."""

    def __init__(self, state: ClusterState, pending: Sequence[Pod], pod_affinity: Any,
                 count_pods: bool = True) -> None:
        #: The InterPodAffinity plugin (``None``: none in the profile).
        self.pod_affinity = pod_affinity
        #: Whether placements count in the counters and rows (else they are read only where
        #: the bound pods seed them: the simulator's loop runs no class that reads them).
        self.count_pods = count_pods
        self.domain_space = max(len(state.vocab), state.num_nodes) + 1
        self.empty_id = state.vocab.get("")
        self.counters: list[SpreadCounter] = []
        self.counter_counts = np.zeros((0, self.domain_space), dtype=np.int64)
        self.anti_columns, self.score_columns = affinity_key_columns(
            state, [state.pods[i] for i in state.affinity_pods] + list(pending))
        self.rows = np.zeros((0, self.domain_space), dtype=np.int64)
        self.affinity_empty = np.zeros(0, dtype=np.bool_)  # a view of the room below
        self._empty_room = np.zeros(16, dtype=np.bool_)
        self.pods: list[Pod] = []
        self.affinity: list[AffinityEntries] = []

    # ------------------------------------------------------------------ topology spread

    def _add_counter(self, counter: SpreadCounter, row: np.ndarray) -> int:
        self.counters.append(counter)
        self.counter_counts = np.vstack([self.counter_counts, row[None, :]])
        return len(self.counters) - 1

    def hard_spread(self, pod: Pod, counts: Any) -> list[tuple[int, int, int, int]]:
        """The class's hard constraints (a plugin's ``FilterCounts``; ``None``: none), each
        with a new counter seeded from the bound pods: (counter, maxSkew, self match,
        minDomains) entries."""
        if counts is None:
            return []
        entries = []
        for i, c in enumerate(counts.constraints):
            row = np.zeros(self.domain_space, dtype=np.int64)
            row[:counts.counts.shape[1]] = counts.counts[i]
            k = self._add_counter(SpreadCounter(pod.namespace, c.selector,
                                                int(counts.columns[i]), counts.included[i],
                                                counts.domains[i]), row)
            entries.append((k, *map(int, counts.entries[i, 1:])))
        return entries

    def soft_spread(self, pod: Pod, soft: Any, state: ClusterState) -> list[tuple[int, int, int]]:
        """The class's soft constraints (a plugin's ``SoftConstraints``; ``None``: not
        scored), each with a counter seeded from the bound pods (``initPreScoreState``):
        (counter, maxSkew, per-node counter flag) entries."""
        if soft is None:
            return []
        entries = []
        for c, included, matching in zip(soft.constraints, soft.included, soft.matching):
            column = state.label_column(c.topology_key)
            row = np.zeros(self.domain_space, dtype=np.int64)
            if c.topology_key == LABEL_HOSTNAME:
                kind, included = BY_NODE, np.ones(state.num_nodes, dtype=np.bool_)
                row[:state.num_nodes] = matching
            else:
                kind = BY_LABEL_OR_EMPTY
                slots = self._slots(state, column)
                row[:] = np.bincount(slots[included], weights=matching[included],
                                     minlength=self.domain_space).astype(np.int64)
            k = self._add_counter(SpreadCounter(pod.namespace, c.selector, column, included,
                                                np.zeros(0, np.int64), kind), row)
            entries.append((k, c.max_skew, kind == BY_NODE))
        return entries

    def _slots(self, state: ClusterState, column: int) -> np.ndarray:
        """Each node's slot in a ``BY_LABEL_OR_EMPTY`` counter row (:func:`counter_slot`)."""
        values = (state.labels[:, column].astype(np.int64) if column >= 0
                  else np.full(state.num_nodes, -1, dtype=np.int64))
        return np.where((values < 0) | (values == self.empty_id), self.domain_space - 1, values)

    # ------------------------------------------------------------------ inter-pod affinity

    def _new_rows(self, count: int) -> list[int]:
        first = len(self.rows)
        self.rows = np.vstack([self.rows, np.zeros((count, self.rows.shape[1]), np.int64)])
        return list(range(first, first + count))

    def add_class(self, pod: Pod, filter_counts: Any, score_counts: Any,
                  state: ClusterState) -> AffinityEntries:
        """A new class of ``pod`` with its InterPodAffinity rows seeded from the plugin's
        PreFilter counts (``None``: its Filter does not run) and PreScore sums (``None``: its
        Score never scores the class; ``False``: nothing summed yet)."""
        entries = AffinityEntries()
        empty = True
        if filter_counts is not None:
            for row, (column, values) in zip(self._new_rows(len(filter_counts.affinity)),
                                             filter_counts.affinity):
                self.rows[row, values] = 1
                entries.affinity.append((row, column))
            for row, (column, values) in zip(self._new_rows(len(filter_counts.anti_affinity)),
                                             filter_counts.anti_affinity):
                self.rows[row, values] = 1
                entries.anti.append((row, column))
            existing = filter_counts.existing_anti_affinity
            for row, column in zip(self._new_rows(len(self.anti_columns)), self.anti_columns):
                self.rows[row, existing.get(column, [])] = 1
                entries.existing.append((row, column))
            entries.self_match, empty = filter_counts.self_match, filter_counts.affinity_empty
        if score_counts is not None:
            tables = {c: (d, v) for c, d, v in (score_counts.tables if score_counts else ())}
            terms = parse_pod_terms(pod)[0]
            columns = sorted((set(self.score_columns) | set(tables)
                              | {state.label_column(w.term.topology_key)
                                 for w in terms.preferred_affinity
                                 + terms.preferred_anti_affinity}) - {-1})
            for row, column in zip(self._new_rows(len(columns)), columns):
                if column in tables:
                    self.rows[row, tables[column][0]] = tables[column][1]
                entries.score.append((row, column))
        self.pods.append(pod)
        self.affinity.append(entries)
        self._append_empty(empty)
        return entries

    def add_like(self, pod: Pod, c: int) -> AffinityEntries:
        """A new class of ``pod`` whose InterPodAffinity verdicts are class ``c``'s, which
        has no rows (its pods differ only in what they request)."""
        like = self.affinity[c]
        if like.affinity or like.anti or like.existing or like.score:
            raise ValueError(f"class {c} has InterPodAffinity rows of its own")
        entries = AffinityEntries(self_match=like.self_match)
        self.pods.append(pod)
        self.affinity.append(entries)
        self._append_empty(self.affinity_empty[c])
        return entries

    def _append_empty(self, empty: bool) -> None:
        """A new class's ``affinity_empty`` flag (the room doubles when full: classes come
        one at a time, by the thousand in a real snapshot)."""
        n = len(self.affinity_empty)
        if n == len(self._empty_room):
            room = np.zeros(2 * n, dtype=np.bool_)
            room[:n] = self.affinity_empty
            self._empty_room = room
        self._empty_room[n] = empty
        self.affinity_empty = self._empty_room[:n + 1]

    def affinity_updates(self, placed: Pod, c: int, state: ClusterState) -> list[tuple]:
        """What placing ``placed`` adds to class ``c``'s InterPodAffinity rows: (row, amount,
        label column, marks-affinity) entries, filed under the node's value of the column
        (the plugin's ``filter_increments`` and ``score_increments``). Terms on a key no node
        has add nothing (``topologyToMatchedTermCount.update`` skips nodes without the
        label), so their entries are left out."""
        e, plugin = self.affinity[c], self.pod_affinity
        if not (e.affinity or e.anti or e.existing or e.score):
            return []
        out = []
        target = self.pods[c]
        if e.affinity or e.anti or e.existing:
            affinity, anti, columns = plugin.filter_increments(target, placed, state)
            if e.affinity and affinity:
                out += [(row, 1, column, True) for row, column in e.affinity]
            out += [(row, 1, column, False) for (row, column), hit in zip(e.anti, anti) if hit]
            rows = {column: row for row, column in e.existing}
            out += [(rows[column], 1, column, False) for column in columns if column in rows]
        if e.score:
            rows = {column: row for row, column in e.score}
            out += [(rows[column], amount, column, False)
                    for column, amount in plugin.score_increments(target, placed, state)
                    if column in rows]
        return [entry for entry in out if entry[2] >= 0]

    # ------------------------------------------------------------------ placements

    def note_placement(self, pod: Pod, node: int, state: ClusterState) -> None:
        """A pod was placed outside the loop: count it where it matches (``AddPod``)."""
        for c in range(len(self.pods)):
            for row, amount, column, marks in self.affinity_updates(pod, c, state):
                value = state.labels[node, column]
                if value >= 0:
                    self.rows[row, value] += amount
                    if marks:
                        self.affinity_empty[c] = False
        for k, counter in enumerate(self.counters):
            if counter.included[node] and counts_pod(counter.selector, counter.namespace,
                                                     pod.namespace, pod.labels, pod.deleting):
                self.counter_counts[k, counter_slot(
                    counter.kind, node, state.labels, counter.key_column, self.empty_id,
                    self.domain_space - 1)] += 1

    def counter_arrays(self, identities: Sequence[tuple], num_nodes: int) -> dict[str, Any]:
        """The counters' arrays for the loop; ``identities[c]`` is class ``c``'s (namespace,
        labels, terminating), to match it against the counters."""
        counters = self.counters
        shape = (len(identities), len(counters))
        match = np.array([[counts_pod(k.selector, k.namespace, namespace, labels, deleting)
                           for k in counters] for namespace, labels, deleting in identities],
                         dtype=np.bool_).reshape(shape) if self.count_pods \
            else np.zeros(shape, dtype=np.bool_)
        indptr = np.zeros(len(counters) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(k.domains) for k in counters])
        domains = (np.concatenate([k.domains for k in counters]).astype(np.int64) if counters
                   else np.zeros(0, np.int64))
        return dict(
            counter_column=np.array([k.key_column for k in counters], dtype=np.int64),
            counter_kind=np.array([k.kind for k in counters], dtype=np.int64),
            counter_included=np.array([k.included for k in counters], dtype=np.bool_).reshape(
                len(counters), num_nodes),
            counter_domain_indptr=indptr, counter_domains=domains, counter_match=match,
            empty_id=self.empty_id, empty_slot=self.domain_space - 1)

    def update_arrays(self, state: ClusterState) -> tuple[np.ndarray, np.ndarray]:
        """What each class's placement adds to the rows: (indptr by placed class, int64[U, 4]
        (row, amount, column, class whose affinity it marks or -1))."""
        if not self.count_pods:
            return np.zeros(len(self.pods) + 1, dtype=np.int64), np.zeros((0, 4), np.int64)
        rowed = [c for c, e in enumerate(self.affinity)
                 if e.affinity or e.anti or e.existing or e.score]
        updates = [[(row, amount, column, c if marks else -1)
                    for c in rowed
                    for row, amount, column, marks in self.affinity_updates(placed, c, state)]
                   for placed in self.pods]
        indptr = np.zeros(len(updates) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(u) for u in updates])
        return indptr, np.array([e for entries in updates for e in entries],
                                dtype=np.int64).reshape(-1, 4)

"""The per-class tables of the fused loop (:mod:`ksched.fused_loop`), which
:mod:`ksched.class_stacks` stacks into the arrays of the compiled loop
(:func:`ksched.kernels.schedule_loop.schedule_loop`, whose docstring says what each holds).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ksched.constants import PODS
from ksched.device_classes import DeviceClasses
from ksched.domain_counts import DomainCounts
from ksched.framework.interfaces import Cycle
from ksched.kernels import loop_steps as loop_kernels
from ksched.pods import Hashed, request_signature
from ksched.resources import cycle_requests, node_info_non_zero, request_vector
from ksched.state import ClusterState

__all__ = ["ClassTables", "MAX_WALK_LIST", "RequestTables", "node_unique", "request_tables"]

#: The most walk positions the classes' lists hold in all (:meth:`ClassTables.walk_lists`).
MAX_WALK_LIST = 1 << 23
_NO_COLUMNS = np.zeros(0, dtype=np.int64)


def node_unique(labels: np.ndarray) -> np.ndarray:
    """Per label column, whether no two nodes share a value (as hostnames name one node)."""
    unique = np.ones(labels.shape[1], dtype=np.bool_)
    for column in range(labels.shape[1]):
        values = labels[:, column]
        values = values[values >= 0]
        unique[column] = values.size == 0 or np.bincount(values).max() <= 1
    return unique


def request_tables(cycle: Cycle, fit: Any, fit_scorer: Any, balanced: Any
                   ) -> dict[str, Any] | None:
    """A class's requests, fit check and resource scores' inputs, by table (``fit``,
    ``fit_scorer``, ``balanced``: the profile's NodeResourcesFit filter and its
    resource-allocation and balanced-allocation scorers, or ``None``); ``None`` when the
    pod requests a resource no node has (the framework words that)."""
    state, pod = cycle.state, cycle.pod
    requests = cycle_requests(cycle.data, pod)
    if fit is not None:  # as its PreFilter keeps them (a sibling's cycle ran none)
        cycle.data.setdefault(fit.NAME, requests)
    check = fit.request_check(cycle) if fit is not None else None
    if check is not None and check.missing:
        return None
    empty = (np.zeros(0, np.int64),) * 4
    ba = balanced.score_inputs(cycle) if balanced is not None else empty
    return dict(
        request=check.request if check is not None
        else request_vector(requests, state.resource_names, pod_count=0),
        fit_check_cols=check.checked if check is not None else np.zeros(0, np.int64),
        count_only=check.count_only if check is not None
        else not any(v for r, v in requests.items() if r != PODS),
        nonzero_add=np.array(node_info_non_zero(
            pod, requests, cycle_requests(cycle.data, pod, non_zero=True)), dtype=np.int64),
        fit_inputs=fit_scorer.score_inputs(cycle) if fit_scorer is not None else empty,
        ba_inputs=ba, ba_skip=not ba[2].any())


class RequestTables:
    """:func:`request_tables` of a cycle's pod, computed once per distinct requests
    (:func:`~ksched.pods.request_signature`) for one profile and state layout: classes of
    one workload's many specs often request alike. The tables are read, never written."""

    def __init__(self, fit: Any, fit_scorer: Any, balanced: Any) -> None:
        self.plugins = (fit, fit_scorer, balanced)
        self.found: dict[Hashed, dict[str, Any] | None] = {}

    def __call__(self, cycle: Cycle) -> dict[str, Any] | None:
        key = Hashed(request_signature(cycle.pod))
        found = self.found.get(key, self)  # (self: not found; a value may be None)
        if found is self:
            found = self.found[key] = request_tables(cycle, *self.plugins)
        return found


@attrs.define
class ClassTables:
    """The per-class arrays of the loop (see :mod:`ksched.kernels.schedule_loop`)."""

    static_ok: list = attrs.field(factory=list)
    norm_raw: list = attrs.field(factory=list)
    static_score: list = attrs.field(factory=list)
    request: list = attrs.field(factory=list)
    fit_check_cols: list = attrs.field(factory=list)
    count_only: list = attrs.field(factory=list)
    nonzero_add: list = attrs.field(factory=list)
    port_check: list = attrs.field(factory=list)
    port_add: list = attrs.field(factory=list)
    subset: list = attrs.field(factory=list)
    has_subset: list = attrs.field(factory=list)
    fit_inputs: list = attrs.field(factory=list)
    ba_inputs: list = attrs.field(factory=list)
    ba_skip: list = attrs.field(factory=list)
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
    #: affinity matches (self match).
    ipa_affinity: list = attrs.field(factory=list)
    ipa_anti: list = attrs.field(factory=list)
    ipa_existing: list = attrs.field(factory=list)
    ipa_score: list = attrs.field(factory=list)
    ipa_self_match: list = attrs.field(factory=list)
    #: Per class: what a pod adds per node group and limited driver, and whether it attaches
    #: anything per node group (``AttachCounts``; ``None``: its volumes are not counted).
    attach: list = attrs.field(factory=list)
    #: Per class: a Reserve plugin reserves something for its pods.
    binds: list = attrs.field(factory=list)
    #: The classes that count devices, and what their pods take (checked after the attach
    #: columns, :mod:`ksched.device_classes`).
    device_classes: DeviceClasses = attrs.field(factory=DeviceClasses)
    #: Per class: its node-static verdicts as the loop words its failures
    #: (:class:`ksched.fused_loop.StaticStatuses`; ``None``: the framework words them).
    wording: list = attrs.field(factory=list)

    #: The tables a class shares with a class whose pods differ only in their requests.
    SHARED = ("static_ok", "norm_raw", "static_score", "port_check", "port_add", "spread",
              "soft_spread", "require_all", "identity", "attach", "has_subset", "subset",
              "wording")

    def add_like(self, s: int, pod: Any, resources: dict[str, Any], entries: Any,
                 binds: bool) -> int:
        """Append a class of ``pod`` like class ``s`` (the :data:`SHARED` tables) but for its
        ``resources`` tables, its InterPodAffinity ``entries`` (empty, as class ``s``'s) and
        ``binds``; returns its index."""
        for name, value in resources.items():
            getattr(self, name).append(value)
        for name in self.SHARED:
            table = getattr(self, name)
            table.append(table[s])
        self.add_affinity(entries)
        self.binds.append(binds)
        self.pods.append(pod)
        return len(self.static_ok) - 1

    def one(self, c: int) -> ClassTables | None:
        """Class ``c``'s tables alone, as class 0 (the other fields fresh); ``None`` where its
        pods count volumes or devices against per-node limits (the limits' columns are the
        whole tables')."""
        if self.attach[c] is not None or c in self.device_classes.needs:
            return None
        return ClassTables(**{f.name: [getattr(self, f.name)[c]] if f.type == "list"
                              else f.default.factory() for f in attrs.fields(ClassTables)})

    def add_affinity(self, entries: Any) -> None:
        """A new class's inter-pod affinity rows (``DomainCounts.add_class``'s entries)."""
        self.ipa_affinity.append(entries.affinity)
        self.ipa_anti.append(entries.anti)
        self.ipa_existing.append(entries.existing)
        self.ipa_score.append(entries.score)
        self.ipa_self_match.append(entries.self_match)

    def walk_lists(self, layout: ClusterState, fit_enabled: bool, classes: range,
                   total: int = 0) -> list[np.ndarray | None]:
        """Per class of ``classes``, the walk positions (ascending) of the nodes its window
        walk needs to visit, or ``None``: every node. Those are the nodes passing its
        node-static filters and, where NodeResourcesFit runs, whose allocatable holds the
        class's requests and a pod (elsewhere it fails whatever is placed). Listed only
        where that leaves out a quarter of the nodes or more, within :data:`MAX_WALK_LIST`
        positions in all (``total``: listed for the classes before). One compiled pass for
        all the classes (:func:`~ksched.kernels.loop_steps.walk_lists`)."""
        if not len(classes):
            return []
        rows: dict[int, int] = {}  # per node-static row (siblings share theirs)
        ok_rows: list[np.ndarray] = []
        ok_row_of = np.empty(len(classes), dtype=np.int64)
        checked: list[np.ndarray] = []
        for k, c in enumerate(classes):
            row = self.static_ok[c]
            if id(row) not in rows:
                rows[id(row)] = len(ok_rows)
                ok_rows.append(row)
            ok_row_of[k] = rows[id(row)]
            checked.append(_NO_COLUMNS if not fit_enabled or self.count_only[c]
                           else self.fit_check_cols[c])
        indptr = np.zeros(len(classes) + 1, dtype=np.int64)
        np.cumsum([len(cols) for cols in checked], out=indptr[1:])
        n = len(layout.tree_order)
        listed, at, positions = loop_kernels.walk_lists(
            layout.tree_order, np.stack(ok_rows), ok_row_of, layout.allocatable,
            layout.resource_column(PODS), np.stack([self.request[c] for c in classes]), indptr,
            np.concatenate(checked), bool(fit_enabled), 3 * n // 4, MAX_WALK_LIST - total)
        return [positions[at[k]:at[k + 1]] if listed[k] else None for k in range(len(classes))]

    def attach_arrays(self) -> dict[str, Any]:
        """The classes' attach counts (zeros for classes whose volumes are not counted), then
        what they take of each device column (the same in every node group)."""
        t = self
        counted = [a for a in t.attach if a is not None]
        groups, drivers = counted[0].adds.shape if counted else (1, 0)
        count, needs = len(t.attach), t.device_classes.needs
        adds = np.zeros((count, groups, drivers + t.device_classes.width()), dtype=np.int64)
        attaches = np.zeros((count, groups), dtype=np.bool_)
        for c, a in enumerate(t.attach):
            if a is not None:
                adds[c, :, :drivers] = a.adds
                attaches[c] = a.attaches
        for c, need in needs.items():
            adds[c, :, drivers + need.column] = need.need
            attaches[c] = True
        return dict(has_attach=np.array([a is not None or c in needs
                                         for c, a in enumerate(t.attach)], dtype=np.bool_),
                    attach_adds=adds, attach_any=attaches)

    def counter_arrays(self, counts: DomainCounts, layout: ClusterState) -> dict[str, Any]:
        """The spread counters' arrays and what each placement adds to the inter-pod
        affinity rows (:mod:`ksched.domain_counts`)."""
        update_indptr, updates = counts.update_arrays(layout)
        return dict(**counts.counter_arrays(self.identity, layout.num_nodes),
                    ipa_update_indptr=update_indptr, ipa_updates=updates)

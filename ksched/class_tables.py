"""The per-class tables of the fused loop (:mod:`ksched.fused_loop`), and the arrays they
stack into for the compiled loop (:func:`ksched.kernels.schedule_loop.schedule_loop`, whose
docstring says what each array holds).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from ksched.domain_counts import DomainCounts
from ksched.state import ClusterState

__all__ = ["ClassTables"]


def _row_indptr(rows: Sequence[Sequence]) -> np.ndarray:
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    return indptr


def _norm_arrays(per_class: list[list[np.ndarray | None]], k: int, n: int) -> dict[str, Any]:
    """The normalised node-static scores that vary: ``norm_raw`` int64[R, N] their rows,
    ``norm_row`` int64[C, K] each class's row per score (-1: 0 on every node, left out),
    ``norm_varies`` bool[C, K] (``norm_row >= 0``)."""
    rows = [raw for raws in per_class for raw in raws if raw is not None]
    norm_row = np.full((len(per_class), k), -1, dtype=np.int64)
    at = 0
    for c, raws in enumerate(per_class):
        for j, raw in enumerate(raws):
            if raw is not None:
                norm_row[c, j], at = at, at + 1
    return dict(norm_raw=np.array(rows, dtype=np.int64).reshape(len(rows), n),
                norm_row=norm_row, norm_varies=norm_row >= 0)


def _static_arrays(per_class: list[np.ndarray | None], n: int) -> dict[str, Any]:
    """The weighted sums of the node-static scores that need no normalisation:
    ``static_score`` int64[R, N] (row 0: zeros, the row of every class whose sum is 0 on every
    node) and ``static_row`` int64[C], each class's row."""
    rows = [np.zeros(n, dtype=np.int64)]
    static_row = np.zeros(len(per_class), dtype=np.int64)
    for c, row in enumerate(per_class):
        if row is not None:
            static_row[c] = len(rows)
            rows.append(row)
    return dict(static_score=np.array(rows, dtype=np.int64).reshape(len(rows), n),
                static_row=static_row)


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

    def stacked(self, layout: ClusterState, normalized: int) -> dict[str, Any]:
        """The tables stacked over the classes, for a state of ``layout``'s nodes and
        resources and ``normalized`` normalised node-static scores."""
        t = self

        def csr(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
            return _row_indptr(parts), (np.concatenate(parts).astype(np.int64) if parts
                                        else np.zeros(0, np.int64))

        def stack(parts: list, width: int, dtype: Any) -> np.ndarray:
            return np.array(parts, dtype=dtype).reshape(len(parts), width)

        n, r = layout.num_nodes, len(layout.resource_names)
        port_check_indptr, port_check = csr(t.port_check)
        fit_check_indptr, fit_check_cols = csr(t.fit_check_cols)
        port_add_indptr, port_add = csr(t.port_add)
        subset_indptr, subset = csr(t.subset)
        fit_width = len(t.fit_inputs[0][0]) if t.fit_inputs else 0
        ba_width = len(t.ba_inputs[0][0]) if t.ba_inputs else 0
        k = normalized
        return dict(
            spread_indptr=_row_indptr(t.spread),
            spread_entries=np.array([e for entries in t.spread for e in entries],
                                    dtype=np.int64).reshape(-1, 4),
            soft_indptr=_row_indptr(t.soft_spread),
            soft_entries=np.array([e for entries in t.soft_spread for e in entries],
                                  dtype=np.int64).reshape(-1, 3),
            require_all=np.array(t.require_all, dtype=np.bool_),
            static_ok=stack(t.static_ok, n, np.bool_),
            **_norm_arrays(t.norm_raw, k, n),
            **_static_arrays(t.static_score, n),
            request=stack(t.request, r, np.int64), fit_check_indptr=fit_check_indptr,
            fit_check_cols=fit_check_cols, count_only=np.array(t.count_only, dtype=np.bool_),
            nonzero_add=stack(t.nonzero_add, 2, np.int64),
            port_check_indptr=port_check_indptr, port_check=port_check,
            port_add_indptr=port_add_indptr, port_add=port_add,
            subset_indptr=subset_indptr, subset=subset,
            has_subset=np.array(t.has_subset, dtype=np.bool_),
            fit_cols=stack([f[0] for f in t.fit_inputs], fit_width, np.int64),
            fit_src=stack([f[1] for f in t.fit_inputs], fit_width, np.int64),
            fit_req=stack([f[2] for f in t.fit_inputs], fit_width, np.int64),
            ba_cols=stack([b[0] for b in t.ba_inputs], ba_width, np.int64),
            ba_req=stack([b[2] for b in t.ba_inputs], ba_width, np.int64),
            ba_skip=np.array(t.ba_skip, dtype=np.bool_),
        )

    def attach_arrays(self) -> dict[str, Any]:
        """The classes' attach counts (zeros for classes whose volumes are not counted)."""
        t = self
        counted = [a for a in t.attach if a is not None]
        shape = counted[0].adds.shape if counted else (1, 0)
        count = len(t.attach)
        return dict(
            has_attach=np.array([a is not None for a in t.attach], dtype=np.bool_),
            attach_adds=np.array([a.adds if a is not None else np.zeros(shape, np.int64)
                                  for a in t.attach], dtype=np.int64).reshape(count, *shape),
            attach_any=np.array([a.attaches if a is not None else np.zeros(shape[0], np.bool_)
                                 for a in t.attach], dtype=np.bool_).reshape(count, shape[0]))

    def counter_arrays(self, counts: DomainCounts, layout: ClusterState) -> dict[str, Any]:
        """The spread counters' and inter-pod affinity rows' arrays
        (:mod:`ksched.domain_counts`)."""
        t = self
        flat = lambda lists: np.array([e for entries in lists for e in entries],  # noqa: E731
                                      dtype=np.int64).reshape(-1, 2)
        update_indptr, updates = counts.update_arrays(layout)
        return dict(
            **counts.counter_arrays(t.identity, layout.num_nodes),
            ipa_affinity_indptr=_row_indptr(t.ipa_affinity), ipa_affinity=flat(t.ipa_affinity),
            ipa_anti_indptr=_row_indptr(t.ipa_anti), ipa_anti=flat(t.ipa_anti),
            ipa_existing_indptr=_row_indptr(t.ipa_existing), ipa_existing=flat(t.ipa_existing),
            ipa_score_indptr=_row_indptr(t.ipa_score), ipa_score=flat(t.ipa_score),
            ipa_self_match=np.array(t.ipa_self_match, dtype=np.bool_),
            ipa_update_indptr=update_indptr, ipa_updates=updates)

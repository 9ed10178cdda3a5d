"""Preemption kernels: the dry run and the choice of a candidate node.

Mirrors ``DryRunPreemption`` (``framework/preemption/preemption.go``) with DefaultPreemption's
``SelectVictimsOnNode`` (``plugins/defaultpreemption/default_preemption.go``) for a pod whose
filters only NodeResourcesFit makes depend on a node's pods, no PodDisruptionBudget counted:
a node's verdict once pods are removed (and its nominated pods added) is the fit check
(``fitsRequest``) on its changed requests. And ``pickOneNodeForPreemption``'s five criteria.

Arrays (``N`` nodes, ``R`` resources, ``B`` bound pods by row):

allocatable, requested : int64[N, R]; pod_request : int64[R]; checked : int64[m] the columns
the fit check looks at; missing : int64, fit-code bits of requested resources no node has.
nominated_slot : int64[N], the row of ``nominated_extra`` (int64[k, R]) summing the requests
of the node's pods nominated before the pod (-1: none). slots : int64[N, W], each node's pod
rows in ``NodeInfo.Pods`` order, ``counts[node]`` of them; row_priority : int64[B],
row_start : float64[B] (``GetPodStartTime``, +inf when unset), row_request : int64[B, R].
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .node_resources_fit import TOO_MANY_PODS, UNRESOLVABLE

#: What the dry run found on a node.
CANDIDATE, NO_VICTIMS, FIT_FAILURE, NO_VICTIM_LEFT = 0, 1, 2, 3


@jit(inline="always")
def _fit_code(allocatable, requested, node, delta, extra, nominated, pod_request, checked,
              pods_column, count_only, missing):
    """``fit_codes`` of one node whose requests changed by ``delta`` (and ``extra`` when
    ``nominated``): 0 when the pod fits."""
    code = missing
    used = requested[node, pods_column] + delta[pods_column]
    if nominated:
        used += extra[pods_column]
    if used + 1 > allocatable[node, pods_column]:
        code |= TOO_MANY_PODS
    if not count_only:
        for j in range(checked.shape[0]):
            col = checked[j]
            want = pod_request[col]
            used = requested[node, col] + delta[col]
            if nominated:
                used += extra[col]
            if want > 0 and want > allocatable[node, col] - used:
                code |= np.int64(1) << np.int64(1 + j)
                if want > allocatable[node, col]:
                    code |= UNRESOLVABLE
    return code


@jit(inline="always")
def _filter_code(allocatable, requested, node, delta, extra, nominated, pod_request, checked,
                 pods_column, count_only, missing, fit_enabled):
    """``RunFilterPluginsWithNominatedPods`` on the changed node: with the nominated pods,
    then (if that passed) without."""
    if not fit_enabled:
        return np.int64(0)
    if nominated:
        code = _fit_code(allocatable, requested, node, delta, extra, True, pod_request, checked,
                         pods_column, count_only, missing)
        if code != 0:
            return code
    return _fit_code(allocatable, requested, node, delta, extra, False, pod_request, checked,
                     pods_column, count_only, missing)


@jit
def dry_run(walk, offset, wanted, priority, allocatable, requested, pods_column, pod_request,
            checked, count_only, missing, fit_enabled, nominated_slot, nominated_extra, slots,
            counts, row_priority, row_start, row_request, out_node, out_kind, out_code,
            out_indptr, out_victims):
    """Dry-run the nodes ``walk[(offset + i) % len(walk)]`` in turn until ``max(wanted, 1)``
    candidates are found; returns how many nodes were tried.

    Per node tried (``out_*[i]``): the node, its kind (``CANDIDATE``, ``NO_VICTIMS``,
    ``FIT_FAILURE`` with the fit code in ``out_code``, or ``NO_VICTIM_LEFT``: the pod fits
    with every pod back); a candidate's victims are ``out_victims[out_indptr[i]:out_indptr[i
    + 1]]``, most important first. ``out_victims`` must hold every bound pod's row.
    """
    m = walk.shape[0]
    r = allocatable.shape[1]
    delta = np.zeros(r, dtype=np.int64)
    empty = np.zeros(r, dtype=np.int64)
    pending = np.empty(slots.shape[1], dtype=np.int64)
    found = 0
    end = 0
    out_indptr[0] = 0
    for i in range(m):
        node = walk[(offset + i) % m]
        out_node[i] = node
        out_code[i] = 0
        slot = nominated_slot[node]
        nominated = slot >= 0
        extra = nominated_extra[slot] if nominated else empty
        # Every lower-priority pod removed, in NodeInfo order.
        delta[:] = 0
        count = 0
        for s in range(counts[node]):
            row = slots[node, s]
            if row_priority[row] < priority:
                pending[count] = row
                count += 1
                for col in range(r):
                    delta[col] -= row_request[row, col]
        out_indptr[i + 1] = end
        if count == 0:
            out_kind[i] = NO_VICTIMS
            continue
        code = _filter_code(allocatable, requested, node, delta, extra, nominated, pod_request,
                            checked, pods_column, count_only, missing, fit_enabled)
        if code != 0:
            out_kind[i] = FIT_FAILURE
            out_code[i] = code
            continue
        _sort_by_importance(pending[:count], row_priority, row_start)
        # Reprieve, most important first: a pod without which the pod no longer fits stays out.
        for k in range(count):
            row = pending[k]
            for col in range(r):
                delta[col] += row_request[row, col]
            if _filter_code(allocatable, requested, node, delta, extra, nominated, pod_request,
                            checked, pods_column, count_only, missing, fit_enabled) != 0:
                for col in range(r):
                    delta[col] -= row_request[row, col]
                out_victims[end] = row
                end += 1
        out_indptr[i + 1] = end
        if end == out_indptr[i]:
            out_kind[i] = NO_VICTIM_LEFT
            continue
        out_kind[i] = CANDIDATE
        found += 1
        if found >= wanted:
            return i + 1
    return m


@jit(inline="always")
def _sort_by_importance(rows, row_priority, row_start):
    """``MoreImportantPod`` order, stable (Go's insertion sort of short slices)."""
    for i in range(1, rows.shape[0]):
        row = rows[i]
        j = i
        while j > 0 and (row_priority[rows[j - 1]] < row_priority[row]
                         or (row_priority[rows[j - 1]] == row_priority[row]
                             and row_start[rows[j - 1]] > row_start[row])):
            rows[j] = rows[j - 1]
            j -= 1
        rows[j] = row


@jit
def pick_candidate(starts, ends, victims, violations, row_priority, row_start, name_rank):
    """``pickOneNodeForPreemption`` over candidates ``c`` with victims
    ``victims[starts[c]:ends[c]]`` (most important first) and ``violations[c]`` PDB
    violations: fewest violations, lowest top victim priority, lowest sum of priorities
    (each shifted by 2**31), fewest victims, latest earliest start among the top-priority
    victims. Returns whether each candidate is still tied after the five criteria, and the
    tied candidate with the smallest ``name_rank``."""
    n = starts.shape[0]
    keys = np.empty((n, 5), dtype=np.float64)
    exact = np.empty((n, 4), dtype=np.int64)
    for c in range(n):
        top = row_priority[victims[starts[c]]]
        total = np.int64(0)
        high = row_priority[victims[starts[c]]]
        for k in range(starts[c], ends[c]):
            total += row_priority[victims[k]] + np.int64(2147483648)
            high = max(high, row_priority[victims[k]])
        earliest = np.inf
        for k in range(starts[c], ends[c]):
            if row_priority[victims[k]] == high:
                earliest = min(earliest, row_start[victims[k]])
        exact[c, 0] = -violations[c]
        exact[c, 1] = -top
        exact[c, 2] = -total
        exact[c, 3] = -(ends[c] - starts[c])
        keys[c, 4] = earliest
    tied = np.ones(n, dtype=np.bool_)
    for criterion in range(5):
        remaining = 0
        for c in range(n):
            remaining += tied[c]
        if remaining <= 1:
            break
        first = True
        best_int = np.int64(0)
        best_float = 0.0
        for c in range(n):
            if not tied[c]:
                continue
            if criterion < 4:
                if first or exact[c, criterion] > best_int:
                    best_int = exact[c, criterion]
            elif first or keys[c, 4] > best_float:
                best_float = keys[c, 4]
            first = False
        for c in range(n):
            if tied[c]:
                if criterion < 4:
                    tied[c] = exact[c, criterion] == best_int
                else:
                    tied[c] = keys[c, 4] == best_float
    best = -1
    for c in range(n):
        if tied[c] and (best < 0 or name_rank[c] < name_rank[best]):
            best = c
    return tied, best

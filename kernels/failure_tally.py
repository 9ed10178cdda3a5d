"""The fused loop's diagnosis of a pod that fits nowhere, as a tally of each node's first
failing filter (``FitError``'s ``NodeToStatus``, ``pkg/scheduler/schedule_one.go``), counted
once per class and brought up to date after that.

A node's *key* is the class's node-static status id ``sid >= 0`` where a node-static filter
fails before NodeResourcesFit runs (or where the pod fits but a later one fails), else
``-code``, NodeResourcesFit's fit code (:func:`~ksched.kernels.node_resources_fit.fit_code`,
every failing resource). Within one loop call placements only take room, so between two
tallies of a class only the keys of the nodes placed on in between can change: the class's
keys per node are kept (:func:`new_kept`, rows for as many classes as fit a budget) and its
next tally recounts those nodes alone.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .node_resources_fit import fit_code

#: The most distinct fit codes one failure's tally holds (more: the caller words it).
MAX_TALLY_CODES = 64
#: The most node keys the loop keeps per call (int64 each, 16 MiB), over the classes' rows.
KEPT_KEYS = 1 << 21
#: The key of a node where the class fits (then the pod did not fail there).
FITS = np.iinfo(np.int64).min


@jit(inner=True)
def new_kept(num_classes, num_nodes, sid_offset, records):
    """The kept tallies of one loop call: (row per class (-1: none), keys int64[R, N] per
    row and node, the pod each row was last brought up to, the rows' tallies (keys and
    counts, int64[R, K]) and sizes, rows used, and a scratch tally int64[2, K] for classes
    without a row). No rows where the call records no failure (``records`` 0); ``K``: the
    most node-static statuses of a class (``sid_offset``'s rows) and fit codes."""
    rows = min(num_classes, KEPT_KEYS // max(num_nodes, 1)) if records > 0 else 0
    width = MAX_TALLY_CODES
    for r in range(sid_offset.shape[0] - 1):
        width = max(width, sid_offset[r + 1] - sid_offset[r] + MAX_TALLY_CODES)
    return (np.full(num_classes, -1, dtype=np.int64),
            np.empty((rows, num_nodes), dtype=np.int64), np.zeros(rows, dtype=np.int64),
            np.empty((rows, width), dtype=np.int64), np.empty((rows, width), dtype=np.int64),
            np.zeros(rows, dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.empty((2, width), dtype=np.int64))


@jit(inline="always")
def _node_key(node, sids, first_sid, sid_late, fit_enabled, allocatable, requested, pods_col,
              request_row, checked, count_only):
    """A node's key for the class (see the module), :data:`FITS` where every filter passes."""
    sid = sids[node]
    if fit_enabled and (sid < 0 or sid_late[first_sid + sid]):
        code = fit_code(allocatable, requested, node, request_row, checked, pods_col,
                        count_only, 0, False, request_row, False, requested, False)
        if code != 0:
            return -code
    return sid if sid >= 0 else FITS


@jit(_nrt=False, inner=True)
def _count_key(key, step, keys, counts, size):
    """Add ``step`` (int64, not a literal: numba compiles a callee once per literal) to
    ``key``'s count in the tally ``keys[:size]``/``counts``, dropping a key whose count reaches
    0; returns the new size, -1 when a new fit code would make more than
    :data:`MAX_TALLY_CODES` of them."""
    at = 0
    while at < size and keys[at] != key:
        at += 1
    if at == size:
        if key < 0:
            codes = 0
            for k in range(size):
                codes += keys[k] < 0
            if codes == MAX_TALLY_CODES:
                return -1
        keys[at], counts[at] = key, 0
        size += 1
    counts[at] += step
    if counts[at] == 0:
        size -= 1
        keys[at], counts[at] = keys[size], counts[size]
    return size


@jit(_nrt=False, inner=True)
def _sort_tally(keys, counts, size):
    """The tally in its record order: node-static ids ascending, then fit codes ascending."""
    for i in range(1, size):
        key, count = keys[i], counts[i]
        j = i - 1
        while j >= 0 and _after(keys[j], key):
            keys[j + 1], counts[j + 1] = keys[j], counts[j]
            j -= 1
        keys[j + 1], counts[j + 1] = key, count


@jit(inline="always")
def _after(a, b):
    """Whether key ``a`` comes after key ``b`` in a record."""
    if (a >= 0) != (b >= 0):
        return a < 0
    return a > b if a >= 0 else a < b


@jit(_nrt=False, inner=True)
def _fresh(c, walk_order, key_args, keys, counts, node_keys, keep):
    """Every node's key, counted into ``keys``/``counts`` (and kept in ``node_keys`` with
    ``keep``); returns the tally's size, -1 where the class fits a node or has too many fit
    codes."""
    sids, first_sid, sid_late, fit_enabled, allocatable, requested, pods_col, request_row, \
        checked, count_only = key_args
    size, last, last_at = np.int64(0), FITS, -1
    for i in range(walk_order.shape[0]):
        node = walk_order[i]
        key = _node_key(node, sids, first_sid, sid_late, fit_enabled, allocatable, requested,
                        pods_col, request_row, checked, count_only)
        if key == FITS:
            return -1
        if keep:
            node_keys[node] = key
        if key == last:  # most nodes have the key of the node before
            counts[last_at] += 1
            continue
        size = _count_key(key, np.int64(1), keys, counts, size)
        if size < 0:
            return -1
        last, last_at = key, 0
        while keys[last_at] != key:
            last_at += 1
    return size


@jit(_nrt=False, inner=True)
def _since(r, p, key_args, kept, out_node):
    """Row ``r``'s tally brought up to pod ``p``: the keys of the nodes placed on since it
    was last; returns its size, -1 as :func:`_fresh` does."""
    sids, first_sid, sid_late, fit_enabled, allocatable, requested, pods_col, request_row, \
        checked, count_only = key_args
    node_keys, at, keys, counts, sizes = kept[1][r], kept[2], kept[3][r], kept[4][r], kept[5]
    size = sizes[r]
    for q in range(at[r], p):
        node = out_node[q]
        if node < 0:
            continue
        key = _node_key(node, sids, first_sid, sid_late, fit_enabled, allocatable, requested,
                        pods_col, request_row, checked, count_only)
        old = node_keys[node]
        if key == old:
            continue
        if key == FITS:
            return -1
        size = _count_key(old, np.int64(-1), keys, counts, size)
        size = _count_key(key, np.int64(1), keys, counts, size)
        if size < 0:
            return -1
        node_keys[node] = key
    return size


@jit(_nrt=False, inner=True)
def tally_failure(p, c, walk_order, fit_enabled, allocatable, requested, pods_col, request,
                  fit_check_indptr, fit_check_cols, count_only, diag):
    """The diagnosis of pod ``p`` of class ``c``, which fits on no node, as a tally of the
    first failing filter's status per node (see the module), as the framework's compiled walk
    judges a class whose only filter that looks at pods is NodeResourcesFit. Appended as
    failure record ``f`` (entries: each key and the nodes having it, node-static ids
    ascending, then fit codes ascending) and ``p``'s ``out_fail``. Returns whether it was
    recorded: not for a class the loop does not word (``diag_row[c] < 0``), nor when the
    buffers are full or the codes too many (the caller then leaves the wording to the
    framework).

    ``diag``: (diag_row int64[C]: the class's row of ``static_sid`` int32[R, N] (-1: passes
    every node-static filter), sid_offset int64[R]: where the row's statuses begin in
    ``sid_late`` bool (the status comes from a filter after NodeResourcesFit); fit_position;
    kept: :func:`new_kept`'s tallies; out_node: the pods' nodes so far; run_last int64[C]:
    the class's latest record in this run (-1: none); out_fail int64[P]; rec_class
    int64[F]; rec_indptr int64[F + 1]; rec_keys, rec_counts int64[E]; used int64[2]:
    records and entries used)."""
    (diag_row, static_sid, sid_offset, sid_late, _, kept, out_node, run_last, out_fail,
     rec_class, rec_indptr, rec_keys, rec_counts, used) = diag
    row = diag_row[c]
    f, e = used[0], used[1]
    if row < 0 or f + 1 >= rec_indptr.shape[0]:
        return False
    key_args = (static_sid[row], sid_offset[row], sid_late, fit_enabled, allocatable, requested,
                pods_col, request[c], fit_check_cols[fit_check_indptr[c]:fit_check_indptr[c + 1]],
                count_only[c])
    kept_row, next_row, sizes = kept[0], kept[6], kept[5]
    r = kept_row[c]
    if r < 0 and next_row[0] < kept[1].shape[0]:
        r = kept_row[c] = next_row[0]
        next_row[0] += 1
        sizes[r] = -1
    if r >= 0:  # brought up to date; counted afresh when new or when that fails
        if sizes[r] >= 0:
            sizes[r] = _since(r, p, key_args, kept, out_node)
        if sizes[r] < 0:
            sizes[r] = _fresh(c, walk_order, key_args, kept[3][r], kept[4][r], kept[1][r],
                              np.bool_(True))  # not a literal: one compile for both calls
        kept[2][r] = p
        size, keys, counts = kept[5][r], kept[3][r], kept[4][r]
    else:
        keys, counts = kept[7][0], kept[7][1]
        size = _fresh(c, walk_order, key_args, keys, counts, keys, np.bool_(False))
    if size < 0 or e + size > rec_keys.shape[0]:
        return False
    for k in range(size):
        rec_keys[e + k], rec_counts[e + k] = keys[k], counts[k]
    _sort_tally(rec_keys[e:e + size], rec_counts[e:e + size], size)
    rec_class[f] = c
    rec_indptr[f + 1] = e + size
    used[0], used[1] = f + 1, e + size
    run_last[c] = f
    out_fail[p] = f
    return True

"""Preemption kernels: the failing walk, the dry run and the choice of a candidate node.

Mirrors ``DryRunPreemption`` (``framework/preemption/preemption.go``) with DefaultPreemption's
``SelectVictimsOnNode`` (``plugins/defaultpreemption/default_preemption.go``) for a pod whose
filters only NodeResourcesFit makes depend on a node's pods, no PodDisruptionBudget counted:
a node's verdict once pods are removed (and its nominated pods added) is the fit check
(``fitsRequest``) on its changed requests. And ``pickOneNodeForPreemption``'s five criteria;
the walk over every node that precedes PostFilter with its diagnosis
(``findNodesThatPassFilters``, ``nodesWherePreemptionMightHelp``); the bound pods' table kept
as pods leave.

Arrays (``N`` nodes, ``R`` resources):

allocatable, requested : int64[N, R]; pod_request : int64[R]; checked : int64[m] the columns
the fit check looks at; missing : int64, fit-code bits of requested resources no node has.
nominated : bool[N], the nodes with pods nominated before the pod, and nominated_extra :
int64[N, R] the sum of their requests. slots : int64[N, W], each node's pods
(by serial) in ``NodeInfo.Pods`` order, ``counts[node]`` of them, with slot_priority :
int64[N, W], slot_start : float64[N, W] (``GetPodStartTime``, +inf when unset) and
slot_request : int64[N, W, R].
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .node_resources_fit import UNRESOLVABLE, count_code, fit_code

#: What the dry run found on a node.
CANDIDATE, NO_VICTIMS, FIT_FAILURE, NO_VICTIM_LEFT = 0, 1, 2, 3


@jit(inline="always")
def _fit_code(allocatable, requested, node, delta, extra, nominated, pod_request, checked,
              pods_column, count_only, missing):
    """:func:`~ksched.kernels.node_resources_fit.fit_code` of one node whose requests changed
    by ``delta`` (and by ``extra[node]``, its nominated pods' requests, when ``nominated``):
    0 when the pod fits. ``extra`` is the 2-d array, indexed there: row views in the walk's
    inner loop cost."""
    return fit_code(allocatable, requested, node, pod_request, checked, pods_column, count_only,
                    missing, False, delta, True, extra, nominated)


@jit(inline="always")
def _filter_code(allocatable, requested, node, delta, extra, nominated, pod_request, checked,
                 pods_column, count_only, missing, fit_enabled):
    """``RunFilterPluginsWithNominatedPods`` on the changed node: with the nominated pods
    (``extra[node]``, when ``nominated``), then (if that passed) without."""
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
            checked, count_only, missing, fit_enabled, nominated, nominated_extra, slots,
            counts, slot_priority, slot_start, slot_request, node_stamp, nominated_stamp,
            bypass, cache_stamp, cache_kind, cache_code, cache_count, cache_victims,
            cache_priority, cache_start, out_node, out_kind, out_code, out_indptr, out_victims,
            out_priority, out_start):
    """Dry-run the nodes ``walk[(offset + i) % len(walk)]`` in turn until ``max(wanted, 1)``
    candidates are found; returns how many nodes were tried.

    Per node tried (``out_*[i]``): the node, its kind (``CANDIDATE``, ``NO_VICTIMS``,
    ``FIT_FAILURE`` with the fit code in ``out_code``, or ``NO_VICTIM_LEFT``: the pod fits
    with every pod back); a candidate's victims are ``out_victims[out_indptr[i]:out_indptr[i
    + 1]]`` (their ``slots`` entries, most important first, with their priorities and start
    times in ``out_priority`` / ``out_start``). The ``out_victims`` arrays must hold every
    bound pod.

    A node's outcome is kept in the ``cache_*`` arrays with its stamp, ``node_stamp`` (bumped
    whenever its pods change) plus ``nominated_stamp`` (whenever its nominated pods do), and
    reused while the stamp stands, except on the nodes ``bypass`` marks (where the pod's own
    nomination is left out). The cache belongs to one pod class: the priority and what the
    fit check reads of the pod.
    """
    m = walk.shape[0]
    r = allocatable.shape[1]
    delta = np.zeros(r, dtype=np.int64)
    pending = np.empty(slots.shape[1], dtype=np.int64)
    found = 0
    end = 0
    out_indptr[0] = 0
    position = offset % m if m > 0 else 0
    for i in range(m):
        node = walk[position]
        position += 1
        if position == m:
            position = 0
        out_node[i] = node
        stamp = node_stamp[node] + nominated_stamp[node]
        if not bypass[node] and cache_stamp[node] == stamp:
            kind = cache_kind[node]
            out_kind[i] = kind
            out_code[i] = cache_code[node]
            for k in range(cache_count[node]):
                out_victims[end] = cache_victims[node, k]
                out_priority[end] = cache_priority[node, k]
                out_start[end] = cache_start[node, k]
                end += 1
            out_indptr[i + 1] = end
        else:
            first = end
            kind, code, end = _select_victims(
                node, priority, allocatable, requested, pods_column, pod_request, checked,
                count_only, missing, fit_enabled, nominated, nominated_extra, slots, counts,
                slot_priority, slot_start, slot_request, delta, pending, out_victims,
                out_priority, out_start, end)
            out_kind[i] = kind
            out_code[i] = code
            out_indptr[i + 1] = end
            if not bypass[node]:
                cache_stamp[node] = stamp
                cache_kind[node] = kind
                cache_code[node] = code
                cache_count[node] = end - first
                for k in range(end - first):
                    cache_victims[node, k] = out_victims[first + k]
                    cache_priority[node, k] = out_priority[first + k]
                    cache_start[node, k] = out_start[first + k]
        if kind == CANDIDATE:
            found += 1
            if found >= wanted:
                return i + 1
    return m


@jit(inline="always")
def _select_victims(node, priority, allocatable, requested, pods_column, pod_request, checked,
                    count_only, missing, fit_enabled, nominated_mask, nominated_extra, slots,
                    counts, slot_priority, slot_start, slot_request, delta, pending,
                    out_victims, out_priority, out_start, end):
    """``SelectVictimsOnNode`` on one node: (kind, fit code, end of the victims written)."""
    r = allocatable.shape[1]
    nominated = nominated_mask[node]
    # Every lower-priority pod removed, in NodeInfo order.
    delta[:] = 0
    count = 0
    for s in range(counts[node]):
        if slot_priority[node, s] < priority:
            pending[count] = s
            count += 1
            for col in range(r):
                delta[col] -= slot_request[node, s, col]
    if count == 0:
        return NO_VICTIMS, np.int64(0), end
    code = _filter_code(allocatable, requested, node, delta, nominated_extra, nominated,
                        pod_request, checked, pods_column, count_only, missing, fit_enabled)
    if code != 0:
        return FIT_FAILURE, code, end
    _sort_by_importance(pending[:count], slot_priority[node], slot_start[node])
    # Reprieve, most important first: a pod without which the pod no longer fits stays out.
    first = end
    for k in range(count):
        s = pending[k]
        for col in range(r):
            delta[col] += slot_request[node, s, col]
        if _filter_code(allocatable, requested, node, delta, nominated_extra, nominated,
                        pod_request, checked, pods_column, count_only, missing,
                        fit_enabled) != 0:
            for col in range(r):
                delta[col] -= slot_request[node, s, col]
            out_victims[end] = slots[node, s]
            out_priority[end] = slot_priority[node, s]
            out_start[end] = slot_start[node, s]
            end += 1
    if end == first:
        return NO_VICTIM_LEFT, np.int64(0), end
    return CANDIDATE, np.int64(0), end


@jit(inline="always")
def _sort_by_importance(order, priority, start):
    """``MoreImportantPod`` order of the slots ``order``, stable (Go's insertion sort of
    short slices)."""
    for i in range(1, order.shape[0]):
        s = order[i]
        j = i
        while j > 0 and (priority[order[j - 1]] < priority[s]
                         or (priority[order[j - 1]] == priority[s]
                             and start[order[j - 1]] > start[s])):
            order[j] = order[j - 1]
            j -= 1
        order[j] = s


#: ``MaxInt32 + 1``: shifts every priority to a non-negative number before summing.
_PRIORITY_SHIFT = np.int64(2147483648)
#: A key before any candidate was seen.
_NO_KEY = (np.int64(0), np.int64(0), np.int64(0), np.int64(0), 0.0)


@jit(inline="always")
def _candidate_key(start, end, violations, victim_priority, victim_start):
    """``pickOneNodeForPreemption``'s criteria of one candidate, each smaller-is-better:
    PDB violations, the top victim's priority, the sum of the victims' shifted priorities,
    the number of victims, and minus the earliest start among the top-priority victims."""
    first = victim_priority[start]
    total = np.int64(0)
    high = first
    for k in range(start, end):
        total += victim_priority[k] + _PRIORITY_SHIFT
        high = max(high, victim_priority[k])
    earliest = np.inf
    for k in range(start, end):
        if victim_priority[k] == high:
            earliest = min(earliest, victim_start[k])
    return np.int64(violations), first, total, np.int64(end - start), -earliest


@jit(inline="always")
def _compare_keys(a, b):
    """-1, 0 or 1 as candidate key ``a`` is better than, as good as, or worse than ``b``
    (the criteria in order: the first that differs decides)."""
    for x, y in ((a[0], b[0]), (a[1], b[1]), (a[2], b[2]), (a[3], b[3])):
        if x != y:
            return -1 if x < y else 1
    if a[4] != b[4]:
        return -1 if a[4] < b[4] else 1
    return 0


@jit
def pick_candidate(starts, ends, violations, victim_priority, victim_start, name_rank):
    """``pickOneNodeForPreemption`` over candidates ``c`` with victims ``starts[c]:ends[c]``
    of ``victim_priority`` / ``victim_start`` (most important first) and ``violations[c]``
    PDB violations: fewest violations, lowest top victim priority, lowest sum of priorities
    (each shifted by 2**31), fewest victims, latest earliest start among the top-priority
    victims. Returns whether each candidate is still tied after the five criteria, and the
    tied candidate with the smallest ``name_rank``."""
    n = starts.shape[0]
    best, best_key = -1, _NO_KEY
    for c in range(n):
        key = _candidate_key(starts[c], ends[c], violations[c], victim_priority, victim_start)
        order = _compare_keys(key, best_key)
        if best < 0 or order < 0 or (order == 0 and name_rank[c] < name_rank[best]):
            best, best_key = c, key
    tied = np.zeros(n, dtype=np.bool_)
    for c in range(n):
        key = _candidate_key(starts[c], ends[c], violations[c], victim_priority, victim_start)
        tied[c] = _compare_keys(key, best_key) == 0
    return tied, best


@jit
def discard_slot(slots, priority, start, request, counts, stamp, node, serial):
    """A pod left ``node`` in the bound pods' table (see :class:`ksched.cache.PodTable`):
    the node's last pod takes its slot (``NodeInfo.RemovePod``'s order)."""
    last = counts[node] - 1
    at = 0
    while at <= last and slots[node, at] != serial:
        at += 1
    if at > last:
        raise ValueError("the pod is not in the table")
    slots[node, at] = slots[node, last]
    priority[node, at] = priority[node, last]
    start[node, at] = start[node, last]
    request[node, at, :] = request[node, last, :]
    slots[node, last] = -1
    counts[node] = last
    stamp[node] += 1


@jit
def best_candidate(tried, kinds, nodes, indptr, victim_priority, victim_start, name_rank):
    """:func:`pick_candidate` over the candidates among the first ``tried`` outcomes of
    :func:`dry_run` (none with PDB violations; ``name_rank`` per node row), in one pass.
    Returns the position of the one picked, -1 when there is none."""
    best, best_key = -1, _NO_KEY
    for i in range(tried):
        if kinds[i] != CANDIDATE:
            continue
        key = _candidate_key(indptr[i], indptr[i + 1], 0, victim_priority, victim_start)
        if best >= 0:
            order = _compare_keys(key, best_key)
            if order > 0 or (order == 0 and name_rank[nodes[i]] >= name_rank[nodes[best]]):
                continue
        best, best_key = i, key
    return best


@jit
def group_codes(codes):
    """``np.unique(codes, return_inverse=True)`` for arrays with few distinct values (status
    codes): one pass, no sort of the whole array. Returns (distinct ascending, inverse), or
    an empty ``distinct`` when there are more than 64 values (use ``np.unique``)."""
    n = codes.shape[0]
    found = np.empty(64, dtype=np.int64)
    slot = np.empty(n, dtype=np.int64)
    d = 0
    last = -1
    for i in range(n):
        code = codes[i]
        if last >= 0 and found[last] == code:
            slot[i] = last
            continue
        k = 0
        while k < d and found[k] != code:
            k += 1
        if k == d:
            if d == 64:
                return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int32)
            found[d] = code
            d += 1
        slot[i] = k
        last = k
    order = np.argsort(found[:d])
    rank = np.empty(d, dtype=np.int64)
    for k in range(d):
        rank[order[k]] = k
    inverse = np.empty(n, dtype=np.int32)
    for i in range(n):
        inverse[i] = rank[slot[i]]
    return found[:d][order], inverse


@jit
def nominated_fit_failures(walk, passed, mask, allocatable, requested, added, pod_request,
                           checked, pods_column, count_only, missing, out_at, out_code):
    """``fit_codes`` of the nodes ``walk[i]`` that ``passed`` and that ``mask`` marks, with
    ``added[node]`` more requested (their nominated pods): writes the positions ``i`` where
    the pod does not fit, and the codes, and returns how many."""
    count = 0
    for i in range(walk.shape[0]):
        node = walk[i]
        if not (passed[i] and mask[node]):
            continue
        code = fit_code(allocatable, requested, node, pod_request, checked, pods_column,
                        count_only, missing, False, pod_request, False, added, True)
        if code != 0:
            out_at[count] = i
            out_code[count] = code
            count += 1
    return count


@jit
def walk_filters(walk, static_first, fit_position, allocatable, requested, pods_column,
                 pod_request, checked, count_only, missing, nominated, nominated_extra,
                 out_kind, out_code):
    """``RunFilterPluginsWithNominatedPods`` on each walked node when, of the filters that
    run, only NodeResourcesFit (at ``fit_position`` in the filter list, -1: it does not run)
    looks at pods: the first failing filter is the first node-static one
    (``static_first[node]``, -1: none) or NodeResourcesFit, whichever comes first, judged with
    the node's nominated pods added where it has some (the first pass decides: the second,
    without them, cannot fail where the first passed). Per node: ``out_kind`` 0 (passed),
    1 (a node-static filter), 2 (NodeResourcesFit, fit code in ``out_code``) or 3
    (NodeResourcesFit with the nominated pods)."""
    empty = np.zeros(allocatable.shape[1], dtype=np.int64)
    for i in range(walk.shape[0]):
        node = walk[i]
        first = static_first[node]
        out_code[i] = 0
        if first >= 0 and (fit_position < 0 or first < fit_position):
            out_kind[i] = 1
            continue
        if fit_position >= 0:
            # The first pass runs with the nominated pods; it is the one that fails first,
            # and where it passes the second (fewer pods) passes too.
            code = _fit_code(allocatable, requested, node, empty, empty, False, pod_request,
                             checked, pods_column, count_only, missing)
            kind = 2
            if nominated[node]:
                code = _fit_code(allocatable, requested, node, empty, nominated_extra, True,
                                 pod_request, checked, pods_column, count_only, missing)
                kind = 3
            if code != 0:
                out_kind[i] = kind
                out_code[i] = code
                continue
        if first >= 0:
            out_kind[i] = 1
            continue
        out_kind[i] = 0


@jit
def fit_code_with(node, allocatable, requested, pods_column, pod_request, checked, count_only,
                  missing, added):
    """NodeResourcesFit's fit code on one node with ``added`` more requested (the pods
    nominated there, for ``RunFilterPluginsWithNominatedPods``' first pass): 0 when the pod
    fits."""
    return _fit_code(allocatable, requested, node, added, requested, False, pod_request,
                     checked, pods_column, count_only, missing)  # (no 2-d extra read)


@jit
def failing_walk(order, static_first, static_ids, static_resolvable, fit_position,
                 allocatable, requested, pods_column, pod_request, checked, count_only,
                 missing, nominated, nominated_extra, cached, node_stamp, nominated_stamp,
                 cache_stamp, cache_code, base_static_counts, out_static_counts, out_codes,
                 out_code_counts, out_potential):
    """``findNodesThatPassFilters`` over the nodes in tree ``order``, judged as
    :func:`walk_filters` does, for a pod expected to fit nowhere; with the diagnosis it
    leaves: per node-static status id the nodes failing with it (``out_static_counts``,
    counted on from ``base_static_counts``, those of the nodes ``order`` leaves out: see
    :func:`static_split`), the distinct fit codes met (``out_codes``, with
    ``out_code_counts``), and the nodes whose
    status is Unschedulable, not UnschedulableAndUnresolvable (``nodesWherePreemptionMightHelp``,
    ``out_potential`` in tree order; ``static_resolvable`` tells the static statuses apart).

    When ``cached``, a node's fit code is kept in ``cache_code`` with its stamp,
    ``node_stamp`` (bumped whenever its requests change) plus ``nominated_stamp`` (whenever
    its nominated pods do), and reused while the stamp stands. The cache belongs to one pod
    class (its requests and priority) and nominations index.

    Returns (distinct fit codes, potential nodes); (-1, -1) as soon as a node passes (the pod
    is schedulable after all); (-2, -2) when a node where preemption might help also fails a
    node-static filter, or more fit codes than ``out_codes`` holds are met (the caller then
    takes the general path)."""
    out_static_counts[:] = base_static_counts
    delta = np.zeros(allocatable.shape[1], dtype=np.int64)
    distinct = 0
    potential = 0
    last, last_k = np.int64(0), 0
    for i in range(order.shape[0]):
        node = order[i]
        first = static_first[node]
        code = np.int64(0)
        if fit_position >= 0 and (first < 0 or first > fit_position):
            stamp = node_stamp[node] + nominated_stamp[node]
            if cached and cache_stamp[node] == stamp:
                code = cache_code[node]
            else:
                code = _fit_code(allocatable, requested, node, delta, nominated_extra,
                                 nominated[node], pod_request, checked, pods_column,
                                 count_only, missing)
                if cached:
                    cache_stamp[node], cache_code[node] = stamp, code
        if code != 0:
            last, last_k, distinct = count_code(code, last, last_k, distinct, out_codes,
                                                out_code_counts)
            if last_k < 0:
                return -2, -2
            resolvable = (code & UNRESOLVABLE) == 0
        elif first >= 0:
            sid = static_ids[node]
            out_static_counts[sid] += 1
            resolvable = static_resolvable[sid]
        else:
            return -1, -1
        if resolvable:
            if first >= 0:
                return -2, -2
            out_potential[potential] = node
            potential += 1
    return distinct, potential


def static_split(order, static_first, static_ids, static_resolvable, fit_position,
                 num_static):
    """The nodes of tree ``order`` whose verdict for a class can change, and the
    node-static status counts of the others (each failing a node-static filter that runs
    before NodeResourcesFit, at ``fit_position``, or with none running), for
    :func:`failing_walk`: (int64 nodes, int64[num_static] counts). Where preemption might
    help on a node left out (its status is resolvable), every node and zero counts: the walk
    then meets it in order, as upstream would."""
    first = static_first[order]
    fixed = (first >= 0) & ((fit_position < 0) | (first < fit_position))
    ids = static_ids[order[fixed]]
    if static_resolvable[ids].any():
        return order, np.zeros(num_static, dtype=np.int64)
    return order[~fixed], np.bincount(ids, minlength=num_static).astype(np.int64)


@jit
def walk_failures(walk, kinds, codes, cut, static_ids, base, out_at, out_ids, out_kinds,
                  out_codes):
    """The failing nodes among the first ``cut`` of :func:`walk_filters`' walk: their
    positions and status ids, a node-static one's from ``static_ids``, a fit code's
    ``base + k`` for the ``k``-th distinct (kind, code) pair met (listed in ``out_kinds`` /
    ``out_codes``). Returns (failing nodes, pairs)."""
    count = 0
    pairs = 0
    for i in range(cut):
        kind = kinds[i]
        if kind == 0:
            continue
        out_at[count] = i
        if kind == 1:
            out_ids[count] = static_ids[walk[i]]
        else:
            k = 0
            while k < pairs and not (out_kinds[k] == kind and out_codes[k] == codes[i]):
                k += 1
            if k == pairs:
                out_kinds[k] = kind
                out_codes[k] = codes[i]
                pairs += 1
            out_ids[count] = base + k
        count += 1
    return count, pairs

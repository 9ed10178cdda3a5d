"""Window walks read a block of nodes at a time: the fused loop's path for the pods of a class
that recurs in a run, whose filters and scores are node-local and need no normalisation over
the window (:func:`block_classes`).

``findNodesThatPassFilters`` visits nodes from ``nextStartNodeIndex`` until it has found
``numFeasibleNodesToFind`` feasible ones, and ``selectHost`` takes the top score among them
(``pkg/scheduler/schedule_one.go``). Here the walk positions are cut into blocks of
``2**shift`` (:func:`block_shift`), and per class and block the loop keeps how many of its
nodes are feasible, their top score and how many have it. A window reads every block it
covers whole from that summary, and visits node by node only its ends; a pick among tied
nodes counts whole blocks' ties the same way. A placement or a removal changes the node it
lands on only, so a summary stays valid but where a node of its block changed since it was
made. The run's changes (its ``out_node`` entries) are logged once per block, as the next
block window comes (:func:`log_changes`): the last change and the node it changed, and the
last change to another node. A window brings the summaries it covers up to date: a block
where one node changed by the changed node's score alone (:func:`_update_summary`), the
others summarised anew. The
nodes, counts, top and tie index are the walk's own (``tests/framework/test_tree_selection``
checks them pod for pod). Compiled without reference counting, as
:mod:`ksched.kernels.loop_steps` explains.

``blocks`` is (block_slot: per class its row of summaries, -1: the walk; logged: int64[1],
the run entries logged so far; made: int64[S, B], per summary the run entry it was made at
(what it counts: the changes before), -1: to be made; feasible, best, ties: int64[S, B] the
summaries; position_of: int64[N], each node's walk position; shift; and per block, int64[B]:
last_at, the run entry of its last change (-1: none), last_node, the node that changed then,
and other_at, the last change to another node).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .loop_steps import (
    FAILS,
    NEXT_START_AT,
    NOT_SCORED,
    W_POD_AFFINITY,
    W_SPREAD,
    conclude,
    known_failure,
    local_checks,
    node_score,
    node_score_here,
    norm_varies_for,
    store_total,
)
from .select import HEAP, tie_index

#: The most block summaries one loop call keeps (their rows take 32 bytes each: 256 MiB).
MAX_BLOCK_ENTRIES = 1 << 23


@jit(inner=True)
def block_shift(window):
    """The block size's log2 for windows of ``window`` nodes: blocks of between half its
    square root and its square root, and at least 4 nodes (measured best on 5,000 nodes and
    on the Alibaba trace's 1,523)."""
    shift = 2
    while (1 << (2 * shift + 2)) <= window:
        shift += 1
    return shift


@jit(inner=True)
def block_classes(pods, num_nodes, to_find, use_tree, tie_mode, tree_slot, has_subset,
                  spread_indptr, soft_indptr, ipa_affinity_indptr, ipa_anti_indptr,
                  ipa_existing_indptr, ipa_score_indptr, weights, norm_varies, norm_weight,
                  walk_listed):
    """Per class, its row of block summaries (-1: the plain window walk), and the block
    shift. A class gets one when it has several pods in the run (``pods``, as
    :func:`~ksched.kernels.tree_run.class_pods` counts them), on average at most as many
    pods apart as there are blocks, and no tree, walks every
    node (no PreFilter subset) in a cluster of at least four blocks, reads nothing counted per
    topology domain (no spreading that filters or scores, no pod (anti-)affinity), needs
    no normalisation over the window, and is not listed (``walk_listed``: its walk visits
    only the nodes it may fit, fewer than a block summary reads); the heap's tie order is
    not kept per block. (Pods further apart change more of the blocks between two windows of
    the class, summarised anew.)"""
    num_classes = has_subset.shape[0]
    window = to_find if to_find < num_nodes else num_nodes
    shift = block_shift(window)
    width = ((num_nodes - 1) >> shift) + 1 if num_nodes > 0 else 1
    room = MAX_BLOCK_ENTRIES // width
    slot = np.full(num_classes, -1, dtype=np.int64)
    if not use_tree or tie_mode == HEAP or num_nodes < (4 << shift):
        return slot, shift
    used = 0
    for c in range(num_classes):
        if used < room and pods[c, 0] >= 2 and pods[c, 1] <= width \
                and tree_slot[c] < 0 and not has_subset[c] \
                and not walk_listed[c] \
                and spread_indptr[c] == spread_indptr[c + 1] \
                and (soft_indptr[c] == soft_indptr[c + 1] or weights[W_SPREAD] == 0) \
                and ipa_affinity_indptr[c] == ipa_affinity_indptr[c + 1] \
                and ipa_anti_indptr[c] == ipa_anti_indptr[c + 1] \
                and ipa_existing_indptr[c] == ipa_existing_indptr[c + 1] \
                and (ipa_score_indptr[c] == ipa_score_indptr[c + 1]
                     or weights[W_POD_AFFINITY] == 0) \
                and not norm_varies_for(c, norm_varies, norm_weight):
            slot[c] = used
            used += 1
    return slot, shift


@jit(inner=True)
def walk_positions_of(walk_order):
    """Each node's position in ``walk_order``."""
    position_of = np.empty(walk_order.shape[0], dtype=np.int64)
    for i in range(walk_order.shape[0]):
        position_of[walk_order[i]] = i
    return position_of


@jit(inner=True)
def new_blocks(block_slot, shift, walk_order):
    """The ``blocks`` group (see the module) for :func:`block_classes`' slots, every summary
    to be made (empty arrays when no class has a row)."""
    rows = 0
    for c in range(block_slot.shape[0]):
        rows = max(rows, block_slot[c] + 1)
    n = walk_order.shape[0] if rows > 0 else 0
    width = ((n - 1) >> shift) + 1 if n > 0 else 0
    position_of = walk_positions_of(walk_order[:n])
    return (block_slot, np.zeros(1, dtype=np.int64), np.full((rows, width), -1, dtype=np.int64),
            np.zeros((rows, width), dtype=np.int64),
            np.zeros((rows, width), dtype=np.int64), np.zeros((rows, width), dtype=np.int64),
            position_of, shift, np.full(width, -1, dtype=np.int64),
            np.full(width, -1, dtype=np.int64), np.full(width, -1, dtype=np.int64))


@jit(_nrt=False, inner=True)
def log_changes(p, blocks, out_node):
    """Log the run's changes before entry ``p`` (each entry's ``out_node``: the node a pod
    was placed on or left) in their blocks' ``last_at``, ``last_node`` and ``other_at``."""
    logged, position_of, shift = blocks[1], blocks[6], blocks[7]
    last_at, last_node, other_at = blocks[8], blocks[9], blocks[10]
    for q in range(logged[0], p):
        node = out_node[q]
        if node >= 0:
            b = position_of[node] >> shift
            if last_node[b] != node:
                other_at[b], last_node[b] = last_at[b], node
            last_at[b] = q
    logged[0] = max(logged[0], p)


@jit(_nrt=False, inline="always")
def _current(s, b, blocks):
    """Whether summary ``b`` of row ``s`` counts every change logged."""
    made = blocks[2][s, b]
    return made >= 0 and blocks[8][b] < made


def _class_total(score_here):
    """Class ``c``'s cached total of ``node`` at walk position ``at`` (whose version moved)
    computed anew, its rows of ``local`` and ``scoring`` taken here: its score where the node
    passes the node-local filters, else :data:`~ksched.kernels.loop_steps.FAILS`
    (:func:`~ksched.kernels.loop_steps.store_total`); ``score_here``: the score written in
    (:func:`~ksched.kernels.loop_steps.node_score_here`), else called."""

    def class_total(node, at, c, local, scoring):
        (static_ok, port_check_indptr, port_check, fit_enabled, allocatable, requested,
         pods_col, request, fit_check_indptr, fit_check_cols, count_only, port_count,
         has_attach, attach) = local
        (nonzero, fit_strategy, fit_weights, shape_x, shape_y, weights, fractions,
         node_version, fit_cols, fit_src, fit_req, ba_cols, ba_req, ba_skip, static_score,
         static_row, cached_version, cached_score) = scoring
        checks = port_check[port_check_indptr[c]:port_check_indptr[c + 1]]
        fit_cols_c = fit_check_cols[fit_check_indptr[c]:fit_check_indptr[c + 1]]
        total = FAILS
        if local_checks(node, static_ok[c], checks, fit_enabled, allocatable, requested,
                        pods_col, request[c], fit_cols_c, count_only[c], port_count, c,
                        has_attach[c], attach):
            score = node_score_here if score_here else node_score
            total = score(node, allocatable, requested, nonzero, fit_strategy, fit_weights,
                          shape_x, shape_y, weights, fractions, fit_cols[c], fit_src[c],
                          fit_req[c], ba_cols[c], ba_req[c], ba_skip[c],
                          static_score[static_row[c]])
        store_total(node, at, total, node_version, cached_version[c], cached_score[c])

    return class_total


#: Called by :func:`_scan`, where a node's requests changed since the class last scored it:
#: written into the scan (score included, or as a separate pass over the block's changed
#: nodes), it made 50 interleaved shapes on 5,000 nodes 8% slower.
_refresh = jit(_nrt=False, inner=True)(_class_total(False))
#: Written into a block summary's update by its one changed node, score included: 15% less
#: time on the same shapes than through the call.
_rescore = jit(_nrt=False, inline="always")(_class_total(True))


@jit(_nrt=False, inner=True)
def _scan(lo, hi, room, c, walk_order, local, scoring):
    """Walk positions ``lo..hi`` node by node for class ``c``, each node's cached score
    brought up to date: returns (feasible nodes met, at most ``room``; their top score; how
    many have it; where the scan stopped: ``hi``, or the position of a feasible node beyond
    ``room``)."""
    node_version, version_row, score_row = scoring[7], scoring[16][c], scoring[17][c]
    count, top, tied = 0, FAILS, 0
    for i in range(lo, hi):
        node = walk_order[i]
        if version_row[i] != node_version[node]:
            _refresh(node, i, c, local, scoring)
        score = score_row[i]
        if score != FAILS:
            if count == room:
                return count, top, tied, i
            count += 1
            if score > top:
                top, tied = score, 1
            elif score == top:
                tied += 1
    return count, top, tied, hi


@jit(_nrt=False, inline="always")
def _merge(count, top, tied, more, more_top, more_tied):
    """A window's (feasible count, top score, tie count) with another stretch's added."""
    if more == 0:
        return count, top, tied
    if more_top > top:
        return count + more, more_top, more_tied
    return count + more, top, tied + (more_tied if more_top == top else 0)


# Inlined, as _bring_up: a call copies the tuples of arrays it is given.
@jit(_nrt=False, inline="always")
def _update_summary(node, c, s, b, blocks, local, scoring):
    """Bring block ``b``'s summary of class ``s``'s row up to date where ``node`` alone
    changed since it was made: its score then (still cached) taken out, its score now put
    in. Returns ``False``, the summary untouched, where that leaves the top unknown (the
    node held the block's only top score and now scores less)."""
    feasible, best, ties, position_of = blocks[3], blocks[4], blocks[5], blocks[6]
    node_version, version_row, score_row = scoring[7], scoring[16][c], scoring[17][c]
    at = position_of[node]
    old = score_row[at]
    if version_row[at] != node_version[node]:
        _rescore(node, at, c, local, scoring)
    new = score_row[at]
    count, top, tied = feasible[s, b], best[s, b], ties[s, b]
    if old != FAILS:
        count -= 1
        if old == top:
            tied -= 1
            if tied == 0 and count > 0 and new < top:
                return False
    if count == 0:
        top, tied = FAILS, 0
    if new != FAILS:
        if count == 0 or new > top:
            top, tied = new, 1
        elif new == top:
            tied += 1
        count += 1
    feasible[s, b], best[s, b], ties[s, b] = count, top, tied
    return True


@jit(_nrt=False, inline="always")
def _bring_up(p, c, s, b, lo, hi, blocks, walk_order, local, scoring):
    """Bring block ``b`` (walk positions ``lo..hi``) of class ``c``'s summaries (row ``s``)
    up to run entry ``p``: by its one changed node where only one changed since the summary
    was made, and it can, else summarised anew."""
    made, feasible, best, ties = blocks[2], blocks[3], blocks[4], blocks[5]
    if made[s, b] < 0 or blocks[10][b] >= made[s, b] or \
            not _update_summary(blocks[9][b], c, s, b, blocks, local, scoring):
        feasible[s, b], best[s, b], ties[s, b], _ = _scan(lo, hi, hi - lo, c, walk_order,
                                                          local, scoring)
    made[s, b] = p


@jit(_nrt=False, inner=True)
def block_window(p, c, start, to_find, tie_mode, draws, state, blocks, walk_order, local,
                 scoring):
    """The window walk of class ``c``'s pod at run entry ``p`` from ``start``, and
    ``selectHost`` over it (the run's changes before it logged, :func:`log_changes`): the
    summaries it covers whole are brought up to date and read, the rest walked node by node.
    Returns (the chosen node, -1 when none is feasible; feasible nodes found; nodes
    processed; top total, ``NOT_SCORED`` below two feasible nodes; how many have it), as the
    window walk and ``select_top`` give them (the tie index advanced only where several
    nodes are feasible)."""
    block_slot, made, feasible, best, ties, shift = (blocks[0], blocks[2], blocks[3], blocks[4],
                                                     blocks[5], blocks[7])
    s, n_all, size = block_slot[c], walk_order.shape[0], 1 << shift
    begin = start % n_all
    count, top, tied, processed = 0, FAILS, 0, n_all
    i, visited = begin, 0
    while visited < n_all and processed == n_all:
        b = i >> shift
        hi = min((b << shift) + size, n_all)
        if i == b << shift and visited + hi - i <= n_all:  # a whole block in the walk
            if not _current(s, b, blocks):
                _bring_up(p, c, s, b, i, hi, blocks, walk_order, local, scoring)
            if count + feasible[s, b] <= to_find:
                count, top, tied = _merge(count, top, tied, feasible[s, b], best[s, b],
                                          ties[s, b])
                visited += hi - i
                i = hi if hi < n_all else 0
                continue
        end = min(hi, i + n_all - visited)
        more, more_top, more_tied, stop = _scan(i, end, to_find - count, c, walk_order, local,
                                                scoring)
        if not _current(s, b, blocks):  # the scan may have rescored a changed node
            made[s, b] = -1
        count, top, tied = _merge(count, top, tied, more, more_top, more_tied)
        if stop < end:  # a feasible node beyond the window: the nodes before it were processed
            processed = visited + stop - i
        visited += end - i
        i = end if end < n_all else 0
    if count == 0:
        return -1, 0, processed, NOT_SCORED, 0
    pick = tie_index(tied, tie_mode, draws, state) if count > 1 else 0
    chosen = _nth_top(begin, processed, top, pick, s, blocks, walk_order, scoring[17][c])
    return chosen, count, processed, (top if count > 1 else NOT_SCORED), \
        (tied if count > 1 else 1)


@jit(_nrt=False, inner=True)
def _nth_top(begin, processed, top, pick, s, blocks, walk_order, score_row):
    """The node with total ``top`` that comes ``pick``-th (from 0) in walk order among the
    ``processed`` positions from ``begin``: whole up-to-date blocks counted by their ties."""
    feasible, best, ties, shift = blocks[3], blocks[4], blocks[5], blocks[7]
    n_all, size = walk_order.shape[0], 1 << shift
    i, visited = begin, 0
    while visited < processed:
        b = i >> shift
        hi = min((b << shift) + size, n_all)
        if i == b << shift and visited + hi - i <= processed and _current(s, b, blocks):
            here = ties[s, b] if feasible[s, b] > 0 and best[s, b] == top else 0
            if pick >= here:
                pick -= here
                visited += hi - i
                i = hi if hi < n_all else 0
                continue
        end = min(hi, i + processed - visited)
        for j in range(i, end):
            if score_row[j] == top:
                if pick == 0:
                    return walk_order[j]
                pick -= 1
        visited += end - i
        i = end if end < n_all else 0
    return -1


@jit(_nrt=False, inner=True)
def block_run(p, pod_class, walk_order, to_find, tie_mode, draws, state, fail_epoch, out_node,
              out_start, out_walk, blocks, local, scoring, placement, diag):
    """Schedule pods ``p..`` while their classes have block summaries, each by
    :func:`block_window`: returns (the next pod, whether the run stopped at a new failure,
    recorded as ``NEW_FAILURE``, that :func:`~ksched.kernels.failure_tally.tally_failure`
    does not word; ``diag`` its arguments). Compiled without reference counting, as
    :func:`~ksched.kernels.tree_run.tree_run` is: the window walk's loop makes a dozen array
    views per pod, each counted. ``local``, ``scoring``, ``placement``: the loop's groups."""
    block_slot, num_nodes = blocks[0], walk_order.shape[0]
    while p < pod_class.shape[0]:
        c = pod_class[p]
        if c < 0 or block_slot[c] < 0:  # (a removal, or a pod of another class: the loop's)
            return p, False
        start = state[NEXT_START_AT]
        out_start[p] = start
        if known_failure(p, c, start, num_nodes, num_nodes, fail_epoch, state, out_node,
                         out_walk, diag):
            p += 1
            continue
        chosen, found, processed, top, ties = -1, 0, num_nodes, NOT_SCORED, 0
        # A class that failed earlier in this run fails again: placing pods only takes room
        # (its filters are node-local).
        if diag[7][c] < 0:
            log_changes(p, blocks, out_node)
            chosen, found, processed, top, ties = block_window(
                p, c, start, to_find, tie_mode, draws, state, blocks, walk_order, local, scoring)
        if not conclude(p, c, chosen, start, processed, found, top, ties, walk_order, state,
                        fail_epoch, out_node, out_walk, local, placement, diag):
            return p + 1, True
        p += 1
    return p, False

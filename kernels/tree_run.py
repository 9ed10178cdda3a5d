"""Runs of pods selected by a tree per class (:mod:`ksched.kernels.selection_tree`) instead of
the window walk: the fused loop's fast path for pods whose verdicts and scores are node-local.

A placement changes the node-local filters and scores on the chosen node only, so each class's
tree is brought up to date by the leaves of the nodes placed on since its last pod (the
``out_node`` entries since then), or rebuilt when there were more of those than nodes. A run
goes on, pod after pod, while the pods belong to classes with a tree; the walk's pods go back
to :func:`ksched.kernels.schedule_loop.schedule_loop`. Everything here is compiled without
reference counting (see :mod:`ksched.kernels.loop_steps`).

Arguments are grouped as the loop builds them once per call: ``trees`` (tree_slot,
tree_count, tree_best, tree_ties, tree_synced, segments, leaf_of, leaf_ok, leaf_score),
``local`` (static_ok, port_check_indptr, port_check, fit_enabled, allocatable, requested,
pods_col, request, fit_check_indptr, fit_check_cols, count_only, port_count, has_attach,
attach), ``anti_terms`` (ipa_anti_indptr, ipa_anti, ipa_existing_indptr, ipa_existing, labels,
ipa_rows), ``scoring`` (nonzero, fit_strategy, fit_weights, shape_x, shape_y, weights,
fractions, node_version, fit_cols, fit_src, fit_req, ba_cols, ba_req, ba_skip,
static_score, cached_version, cached_score) and ``placement`` (:func:`place`'s).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .inter_pod_affinity import pod_affinity_code
from .loop_steps import (
    EVALUATED_AT,
    NEW_FAILURE,
    NEXT_START_AT,
    PLACED_AT,
    W_POD_AFFINITY,
    W_SPREAD,
    known_failure,
    local_ok,
    norm_varies_for,
    place,
    rescore,
)
from .selection_tree import SEGMENTS, build, select_in_tree, set_leaf, tree_width

#: Tree slots (``2 * L`` entries per tree) one loop call may allocate (256 MiB of trees).
MAX_TREE_SLOTS = 1 << 24


@jit
def tree_classes(begin, pod_class, num_nodes, to_find, use_tree, has_subset, spread_indptr,
                 soft_indptr, ipa_affinity_indptr, ipa_anti_indptr, ipa_anti,
                 ipa_existing_indptr, ipa_existing, ipa_score_indptr, weights, norm_varies,
                 norm_weight, node_unique, ipa_rows, ipa_update_indptr, ipa_updates):
    """Per class, its tree's slot (-1: the window walk). A class gets a tree when its
    verdicts and scores are node-local and need no normalisation over the window (no node
    subset, no spreading, no required pod affinity, no pod-affinity score, no varying
    normalised score, anti-affinity only as :func:`_node_local_terms` allows) and its pods in
    ``pod_class[begin:]`` would walk all the nodes at least once, within ``MAX_TREE_SLOTS``."""
    num_classes = has_subset.shape[0]
    slot = np.empty(num_classes, dtype=np.int64)
    for c in range(num_classes):
        slot[c] = -1
    if not use_tree or num_nodes == 0:
        return slot
    pods = np.zeros(num_classes, dtype=np.int64)
    for p in range(begin, pod_class.shape[0]):
        pods[pod_class[p]] += 1
    updated = np.zeros(ipa_rows.shape[0], dtype=np.bool_)
    for c in range(num_classes):
        if pods[c] > 0:
            for u in range(ipa_update_indptr[c], ipa_update_indptr[c + 1]):
                updated[ipa_updates[u, 0]] = True
    room = MAX_TREE_SLOTS // (2 * tree_width(num_nodes))
    used = 0
    for c in range(num_classes):
        window = to_find if to_find < num_nodes else num_nodes
        if used == room or pods[c] < 2 or pods[c] * window < num_nodes:
            continue
        anti = ipa_anti[ipa_anti_indptr[c]:ipa_anti_indptr[c + 1]]
        existing = ipa_existing[ipa_existing_indptr[c]:ipa_existing_indptr[c + 1]]
        if not has_subset[c] and spread_indptr[c] == spread_indptr[c + 1] \
                and (soft_indptr[c] == soft_indptr[c + 1] or weights[W_SPREAD] == 0) \
                and ipa_affinity_indptr[c] == ipa_affinity_indptr[c + 1] \
                and (ipa_score_indptr[c] == ipa_score_indptr[c + 1]
                     or weights[W_POD_AFFINITY] == 0) \
                and not norm_varies_for(c, norm_varies, norm_weight) \
                and _node_local_terms(anti, node_unique, ipa_rows, updated) \
                and _node_local_terms(existing, node_unique, ipa_rows, updated):
            slot[c] = used
            used += 1
    return slot


@jit(inline="always")
def _node_local_terms(terms, node_unique, ipa_rows, updated):
    """Whether (anti-)affinity rows ``terms`` change a node's verdict only when a pod lands
    on that node: each term's key names one node per value (hostnames), or its row counts
    no pod and no pod of this call adds to it (``updated``)."""
    for e in range(terms.shape[0]):
        row, column = terms[e, 0], terms[e, 1]
        if column < 0 or node_unique[column]:
            continue
        if updated[row]:
            return False
        for value in range(ipa_rows.shape[1]):
            if ipa_rows[row, value] != 0:
                return False
    return True


@jit
def new_trees(tree_slot, walk_order):
    """The ``trees`` group for :func:`tree_run` (empty arrays when no class has a tree)."""
    trees = 0
    for c in range(tree_slot.shape[0]):
        trees = max(trees, tree_slot[c] + 1)
    n = walk_order.shape[0] if trees > 0 else 0
    width = tree_width(n)
    leaf_of = np.empty(n, dtype=np.int64)
    for i in range(n):
        leaf_of[walk_order[i]] = i
    synced = np.empty(trees, dtype=np.int64)
    for t in range(trees):
        synced[t] = -1
    return (tree_slot, np.zeros((trees, 2 * width), dtype=np.int32),
            np.zeros((trees, 2 * width), dtype=np.int64),
            np.zeros((trees, 2 * width), dtype=np.int32), synced,
            np.empty(SEGMENTS, dtype=np.int64), leaf_of, np.empty(n, dtype=np.bool_),
            np.empty(n, dtype=np.int64))


@jit(_nrt=False)
def tree_run(p, pod_class, walk_order, to_find, tie_mode, draws, state, fail_epoch, out_node,
             out_start, trees, local, anti_terms, scoring, placement):
    """Schedule pods ``p..`` while their classes have trees: returns (the next pod, whether
    the run stopped at a new failure, recorded as ``NEW_FAILURE``)."""
    tree_slot = trees[0]
    num_nodes = walk_order.shape[0]
    while p < pod_class.shape[0]:
        c = pod_class[p]
        slot = tree_slot[c]
        if slot < 0:
            return p, False
        start = state[NEXT_START_AT]
        out_start[p] = start
        if known_failure(p, c, start, num_nodes, num_nodes, fail_epoch, state, out_node):
            p += 1
            continue
        _sync(p, c, slot, out_node, walk_order, trees, local, anti_terms, scoring)
        leaf, processed = select_in_tree(trees[1][slot], trees[2][slot], trees[3][slot],
                                         num_nodes, start % num_nodes, to_find, tie_mode, draws,
                                         state, trees[5])
        state[NEXT_START_AT] = (start + processed) % num_nodes
        state[EVALUATED_AT] += processed
        if leaf < 0:
            out_node[p] = NEW_FAILURE
            fail_epoch[c] = state[PLACED_AT]
            return p + 1, True
        place(p, walk_order[leaf], c, out_node, state, placement)
        p += 1
    return p, False


@jit(_nrt=False, inline="always")
def _sync(p, c, slot, out_node, walk, trees, local, anti_terms, scoring):
    """Bring class ``c``'s tree up to pod ``p``: rebuilt when it has none yet or more pods
    were placed since its last pod than there are nodes, else the leaves of the nodes placed
    on since (``out_node[since:p]``) updated."""
    _, tree_count, tree_best, tree_ties, tree_synced, _, leaf_of, leaf_ok, leaf_score = trees
    count, best, ties = tree_count[slot], tree_best[slot], tree_ties[slot]
    n = walk.shape[0]
    since = tree_synced[slot]
    tree_synced[slot] = p
    if since < 0 or p - since > n:
        for i in range(n):
            leaf_ok[i] = _leaf(walk[i], c, leaf_score, i, local, anti_terms, scoring)
        build(count, best, ties, leaf_ok[:n], leaf_score[:n])
        return
    for q in range(since, p):
        node = out_node[q]
        if node >= 0:
            position = leaf_of[node]
            ok = _leaf(node, c, leaf_score, position, local, anti_terms, scoring)
            set_leaf(count, best, ties, position, ok, leaf_score[position])


@jit(_nrt=False, inline="always")
def _leaf(node, c, leaf_score, position, local, anti_terms, scoring):
    """Whether ``node`` passes class ``c``'s node-local filters (its anti-affinity included)
    and, when it does, its score into ``leaf_score[position]`` (rescored when its requests
    changed since)."""
    (static_ok, port_check_indptr, port_check, fit_enabled, allocatable, requested, pods_col,
     request, fit_check_indptr, fit_check_cols, count_only, port_count, has_attach,
     attach) = local
    ok = local_ok(node, static_ok[c], port_check[port_check_indptr[c]:port_check_indptr[c + 1]],
                  fit_enabled, allocatable, requested, pods_col, request[c],
                  fit_check_cols[fit_check_indptr[c]:fit_check_indptr[c + 1]], count_only[c],
                  port_count, c, has_attach[c], attach)
    if not ok:
        return False
    ipa_anti_indptr, ipa_anti, ipa_existing_indptr, ipa_existing, labels, ipa_rows = anti_terms
    if pod_affinity_code(node, ipa_anti[:0], ipa_anti[ipa_anti_indptr[c]:ipa_anti_indptr[c + 1]],
                         ipa_existing[ipa_existing_indptr[c]:ipa_existing_indptr[c + 1]], False,
                         labels, ipa_rows) != 0:
        return False
    (nonzero, fit_strategy, fit_weights, shape_x, shape_y, weights, fractions, node_version,
     fit_cols, fit_src, fit_req, ba_cols, ba_req, ba_skip, static_score, cached_version,
     cached_score) = scoring
    if cached_version[c, node] != node_version[node]:
        rescore(node, allocatable, requested, nonzero, fit_strategy, fit_weights, shape_x,
                shape_y, weights, fractions, node_version, fit_cols[c], fit_src[c], fit_req[c],
                ba_cols[c], ba_req[c], ba_skip[c], static_score[c], cached_version[c],
                cached_score[c])
    leaf_score[position] = cached_score[c, node]
    return True

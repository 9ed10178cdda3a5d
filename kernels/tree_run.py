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
static_score, static_row, cached_version, cached_score) and ``placement`` (:func:`place`'s).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._jit import jit
from .inter_pod_affinity import pod_affinity_code
from .loop_steps import (
    NEXT_START_AT,
    NOT_SCORED,
    W_POD_AFFINITY,
    W_SPREAD,
    conclude,
    known_failure,
    local_ok,
    node_score,
    norm_varies_for,
)
from .pod_topology_spread import spread_minimum
from .selection_tree import NONE, SEGMENTS, build, select_in_tree, set_leaf, tree_width

#: Tree slots (``2 * L`` entries per tree) one loop call may allocate (256 MiB of trees).
MAX_TREE_SLOTS = 1 << 24
#: The most domains a hard spread constraint of a class with trees may have (a tree each).
MAX_DOMAINS = 16
#: What bringing one leaf of a class's tree up to date costs, in nodes a window walk visits
#: (measured: ~0.4 us against ~14 ns). A class's tree is brought up to date by the leaves of
#: the nodes placed on since its last pod: with many classes interleaved, the walk is cheaper.
LEAF_COST = 28


@jit(inner=True)
def tree_classes(pods, num_nodes, to_find, use_tree, has_subset, spread_indptr, domains,
                 soft_indptr, ipa_affinity_indptr, ipa_anti_indptr, ipa_anti, ipa_existing_indptr,
                 ipa_existing, ipa_score_indptr, weights, norm_varies, norm_weight, node_unique,
                 ipa_rows, ipa_update_indptr, ipa_updates):
    """Per class, its first tree slot (-1: the window walk); ``domains`` per class: how many
    values its one hard spread constraint's key takes (:func:`spread_domains`), 1 without.
    A class gets trees when its verdicts and scores are node-local but for one hard spread
    constraint over at most ``MAX_DOMAINS`` domains, and need no normalisation over the window
    (no node subset, no soft spreading, no required pod affinity, no pod-affinity score, no
    varying normalised score, anti-affinity only as :func:`_node_local_terms` allows), and it
    is a candidate (:func:`_candidate`), within ``MAX_TREE_SLOTS``. ``pods``: per class, its
    pods in the run and their mean gap (:func:`class_pods`)."""
    num_classes = has_subset.shape[0]
    slot = np.empty(num_classes, dtype=np.int64)
    for c in range(num_classes):
        slot[c] = -1
    if num_nodes == 0:
        return slot
    updated = np.zeros(ipa_rows.shape[0], dtype=np.bool_)
    for c in range(num_classes):
        if pods[c, 0] > 0:
            for u in range(ipa_update_indptr[c], ipa_update_indptr[c + 1]):
                updated[ipa_updates[u, 0]] = True
    room = MAX_TREE_SLOTS // (2 * tree_width(num_nodes))
    used = 0
    for c in range(num_classes):
        if not _candidate(pods[c], num_nodes, to_find, use_tree):
            continue
        hard = spread_indptr[c + 1] - spread_indptr[c]
        anti = ipa_anti[ipa_anti_indptr[c]:ipa_anti_indptr[c + 1]]
        existing = ipa_existing[ipa_existing_indptr[c]:ipa_existing_indptr[c + 1]]
        if used + domains[c] <= room and not has_subset[c] \
                and (hard == 0 or (hard == 1 and domains[c] <= MAX_DOMAINS)) \
                and (soft_indptr[c] == soft_indptr[c + 1] or weights[W_SPREAD] == 0) \
                and ipa_affinity_indptr[c] == ipa_affinity_indptr[c + 1] \
                and (ipa_score_indptr[c] == ipa_score_indptr[c + 1]
                     or weights[W_POD_AFFINITY] == 0) \
                and not norm_varies_for(c, norm_varies, norm_weight) \
                and _node_local_terms(anti, node_unique, ipa_rows, updated) \
                and _node_local_terms(existing, node_unique, ipa_rows, updated):
            slot[c] = used
            used += domains[c]
    return slot


@jit(inner=True)
def class_pods(begin, pod_class, num_classes):
    """Per class, int64[C, 2]: how many of ``pod_class[begin:]`` belong to it, and the mean
    distance from one of them to the next (0 for one pod)."""
    pods = np.zeros((num_classes, 2), dtype=np.int64)
    first = np.full(num_classes, -1, dtype=np.int64)
    last = np.zeros(num_classes, dtype=np.int64)
    for p in range(begin, pod_class.shape[0]):
        c = pod_class[p]
        if c < 0:  # a removal (see schedule_loop's ``remove_node``)
            continue
        pods[c, 0] += 1
        if first[c] < 0:
            first[c] = p
        last[c] = p
    for c in range(num_classes):
        if pods[c, 0] > 1:
            pods[c, 1] = (last[c] - first[c]) // (pods[c, 0] - 1)
    return pods


@jit(inline="always")
def _candidate(pods, num_nodes, to_find, use_tree):
    """Whether a class with ``pods`` (count, mean gap) in the run may get trees: several,
    whose window walks would cover all the nodes at least once (a tree costs a pass over
    them), and whose pods come close enough together that bringing the tree up to date
    (a leaf per pod placed between two of them, :data:`LEAF_COST`) costs less than a walk."""
    window = to_find if to_find < num_nodes else num_nodes
    gap = pods[1] if pods[1] < num_nodes else num_nodes
    return use_tree and pods[0] >= 2 and pods[0] * window >= num_nodes \
        and gap * LEAF_COST < window


@jit(inner=True)
def spread_domains(pods, num_nodes, to_find, use_tree, spread_indptr, spread_entries,
                   counter_column, labels):
    """Per candidate class (:func:`_candidate`) with exactly one hard spread constraint, the
    values its key takes over the nodes (``values[c, :domains[c]]``; ``domains[c]`` is
    ``MAX_DOMAINS + 1`` when it takes more), 1 domain for the others."""
    num_classes = spread_indptr.shape[0] - 1
    domains = np.ones(num_classes, dtype=np.int64)
    values = np.zeros((num_classes, MAX_DOMAINS), dtype=np.int64)
    for c in range(num_classes):
        if spread_indptr[c + 1] - spread_indptr[c] != 1 or \
                not _candidate(pods[c], num_nodes, to_find, use_tree):
            continue
        column = counter_column[spread_entries[spread_indptr[c], 0]]
        found = 0
        for node in range(labels.shape[0]):
            value = labels[node, column] if column >= 0 else -1
            if value < 0 or _domain_of(value, values[c, :found]) >= 0:
                continue
            if found == MAX_DOMAINS:
                found += 1
                break
            values[c, found] = value
            found += 1
        domains[c] = max(found, 1)
    return domains, values


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


@jit(inner=True)
def new_trees(tree_slot, domains, values, walk_order):
    """The ``trees`` group for :func:`tree_run` (empty arrays when no class has a tree):
    (tree_slot, domains, synced: per class the pod its trees were last brought up to (-1:
    never), slot_value: per slot the label value of its domain, count, best and ties: the
    trees, segments: scratch room, then per leaf (leaf_of: per node) leaf_ok, leaf_in,
    leaf_score and leaf_domain, and allowed: per domain)."""
    slots = 0
    for c in range(tree_slot.shape[0]):
        if tree_slot[c] >= 0:
            slots = max(slots, tree_slot[c] + domains[c])
    n = walk_order.shape[0] if slots > 0 else 0
    width = tree_width(n)
    leaf_of = np.empty(n, dtype=np.int64)
    for i in range(n):
        leaf_of[walk_order[i]] = i
    slot_value = np.empty(slots, dtype=np.int64)
    synced = np.empty(tree_slot.shape[0], dtype=np.int64)
    for c in range(tree_slot.shape[0]):
        synced[c] = -1
        for d in range(domains[c] if tree_slot[c] >= 0 else 0):
            slot_value[tree_slot[c] + d] = values[c, d] if values.shape[0] > 0 else -1
    return (tree_slot, domains, synced, slot_value,
            np.zeros((slots, 2 * width), dtype=np.int32),
            np.zeros((slots, 2 * width), dtype=np.int64),
            np.zeros((slots, 2 * width), dtype=np.int32), np.empty(SEGMENTS, dtype=np.int64),
            leaf_of, np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_),
            np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
            np.empty(MAX_DOMAINS, dtype=np.bool_))


@jit(_nrt=False, inner=True)
def _domain_column(c, spreading):
    """The label column of class ``c``'s hard spread constraint (-1: none)."""
    spread_indptr, spread_entries, counter_column = spreading[0], spreading[1], spreading[2]
    if spread_indptr[c + 1] == spread_indptr[c]:
        return -1
    return counter_column[spread_entries[spread_indptr[c], 0]]


@jit(_nrt=False, inner=True)
def _domain_of(value, values):
    """Where label ``value`` is in ``values`` (-1: not there)."""
    for d in range(values.shape[0]):
        if values[d] == value:
            return d
    return -1


def _make_tree_run(domain_trees: bool) -> Any:
    """:func:`tree_run` compiled with or without what reads pod counts per domain (a closure
    constant): per-domain trees and anti-affinity. The plain variant reads one tree per
    class, 1-D, and compiles no domain code."""

    def tree_run(p, pod_class, walk_order, to_find, tie_mode, draws, state, fail_epoch,
                 out_node, out_start, out_walk, trees, local, anti_terms, scoring, placement,
                 spreading, diag):
        """Schedule pods ``p..`` while their classes have trees: returns (the next pod,
        whether the run stopped at a new failure, recorded as ``NEW_FAILURE``, that
        :func:`~ksched.kernels.failure_tally.tally_failure` does not word; ``diag`` its
        arguments).
        ``spreading``: (spread_indptr, spread_entries, counter_column, counter_domain_indptr,
        counter_domains, counter_counts)."""
        (tree_slot, domains, synced, slot_value, tree_count, tree_best, tree_ties, segments,
         leaf_of, leaf_ok, leaf_in, leaf_score, leaf_domain, allowed) = trees
        num_nodes, labels = walk_order.shape[0], anti_terms[4]
        while p < pod_class.shape[0]:
            c = pod_class[p]
            slot = tree_slot[c] if c >= 0 else -1  # (a removal: the main loop's)
            if slot < 0:
                return p, False
            start = state[NEXT_START_AT]
            out_start[p] = start
            if known_failure(p, c, start, num_nodes, num_nodes, fail_epoch, state, out_node,
                             out_walk, diag):
                p += 1
                continue
            # Bring the class's trees up to this pod: rebuilt when never built or when more
            # pods were placed since its last pod than there are nodes, else the leaves of
            # the nodes placed on since (a node's leaf is in its domain's tree).
            last = slot + domains[c]
            column = _domain_column(c, spreading) if domain_trees else -1
            since = synced[c]
            synced[c] = p
            if since < 0 or p - since > num_nodes:
                _fill_leaves(c, leaf_of, leaf_ok, leaf_score, local, scoring)
                for i in range(num_nodes if domain_trees else 0):
                    leaf_ok[i] = leaf_ok[i] and _anti_ok(walk_order[i], c, anti_terms)
                if not domain_trees or column < 0:
                    build(tree_count[slot], tree_best[slot], tree_ties[slot],
                          leaf_ok[:num_nodes], leaf_score[:num_nodes])
                else:
                    for i in range(num_nodes):
                        leaf_domain[i] = _domain_of(labels[walk_order[i], column],
                                                    slot_value[slot:last])
                    for d in range(domains[c]):
                        for i in range(num_nodes):
                            leaf_in[i] = leaf_ok[i] and leaf_domain[i] == d
                        build(tree_count[slot + d], tree_best[slot + d], tree_ties[slot + d],
                              leaf_in[:num_nodes], leaf_score[:num_nodes])
            else:
                for q in range(since, p):
                    node = out_node[q]
                    if node >= 0:
                        at = leaf_of[node]
                        ok = _leaf(node, c, leaf_score, at, local, scoring) and \
                            (not domain_trees or _anti_ok(node, c, anti_terms))
                        d = slot
                        if domain_trees and column >= 0:
                            here = _domain_of(labels[node, column], slot_value[slot:last])
                            if here < 0:  # in no domain's tree
                                continue
                            d += here
                        set_leaf(tree_count[d], tree_best[d], tree_ties[d], at, ok,
                                 leaf_score[at])
            if domain_trees:
                _allowed(c, slot_value[slot:last], allowed, spreading)
                leaf, processed, found, top, ties = select_in_tree(
                    tree_count[slot:last], tree_best[slot:last], tree_ties[slot:last],
                    allowed[:domains[c]], num_nodes, start % num_nodes, to_find, tie_mode, draws,
                    state, segments)
            else:
                leaf, processed, found, top, ties = select_in_tree(
                    tree_count[slot], tree_best[slot], tree_ties[slot], None, num_nodes,
                    start % num_nodes, to_find, tie_mode, draws, state, segments)
            chosen = walk_order[leaf] if leaf >= 0 else -1
            scored = NOT_SCORED if top == NONE else top
            if not conclude(p, c, chosen, start, processed, found, scored, ties, walk_order,
                            state, fail_epoch, out_node, out_walk, local, placement, diag):
                return p + 1, True
            p += 1
        return p, False

    return jit(_nrt=False, inner=True)(tree_run)


#: :func:`tree_run` for loops whose classes count no pods per domain (one tree per class),
#: and for the others (a class with one hard spread constraint has a tree per domain).
tree_run_plain = _make_tree_run(False)
tree_run_domains = _make_tree_run(True)


@jit(_nrt=False, inline="always")
def _allowed(c, values, allowed, spreading):
    """Which of class ``c``'s domain trees a pod may use: PodTopologySpread's Filter on each
    domain (:func:`~ksched.kernels.pod_topology_spread.spread_filter_code`, whose answer is
    the same on every node of a domain); its one tree without spreading."""
    spread_indptr, spread_entries = spreading[0], spreading[1]
    if spread_indptr[c + 1] == spread_indptr[c]:
        allowed[0] = True
        return
    counter_domain_indptr, counter_domains, counter_counts = spreading[3:]
    entry = spread_entries[spread_indptr[c]]
    minimum = spread_minimum(entry, counter_domain_indptr, counter_domains, counter_counts)
    for d in range(values.shape[0]):
        allowed[d] = counter_counts[entry[0], values[d]] + entry[2] - minimum <= entry[1]


# Not inlined: each inlined copy is typed anew (a second of cold start).
@jit(_nrt=False, inner=True)
def _leaf(node, c, leaf_score, position, local, scoring):
    """Whether ``node`` passes class ``c``'s node-local filters but anti-affinity
    (:func:`_anti_ok`) and, when it does, its score into ``leaf_score[position]`` (computed
    afresh: a leaf is only made anew for a node whose requests changed, or at a rebuild, so
    the window walk's score cache would not save work, only memory traffic)."""
    (static_ok, port_check_indptr, port_check, fit_enabled, allocatable, requested, pods_col,
     request, fit_check_indptr, fit_check_cols, count_only, port_count, has_attach,
     attach) = local
    ok = local_ok(node, static_ok[c], port_check[port_check_indptr[c]:port_check_indptr[c + 1]],
                  fit_enabled, allocatable, requested, pods_col, request[c],
                  fit_check_cols[fit_check_indptr[c]:fit_check_indptr[c + 1]], count_only[c],
                  port_count, c, has_attach[c], attach)
    if not ok:
        return False
    (nonzero, fit_strategy, fit_weights, shape_x, shape_y, weights, fractions, _, fit_cols,
     fit_src, fit_req, ba_cols, ba_req, ba_skip, static_score, static_row, _, _) = scoring
    leaf_score[position] = node_score(node, allocatable, requested, nonzero, fit_strategy,
                                      fit_weights, shape_x, shape_y, weights, fractions,
                                      fit_cols[c], fit_src[c], fit_req[c], ba_cols[c], ba_req[c],
                                      ba_skip[c], static_score[static_row[c]])
    return True


@jit(_nrt=False, inner=True)
def _fill_leaves(c, leaf_of, leaf_ok, leaf_score, local, scoring):
    """Every node's leaf (:func:`_leaf`) of class ``c``, at ``leaf_of[node]``. Nodes are taken
    in row order, and a node whose inputs equal those of the last node computed
    (:func:`_same_inputs`) takes its leaf: rows from one node template are computed once."""
    known = np.int64(-1)  # not the literal -1: numba compiles a callee once per literal
    known_ok, known_score = False, np.int64(0)
    for node in range(leaf_of.shape[0]):
        at = leaf_of[node]
        if known < 0 or not _same_inputs(node, known, c, local, scoring):
            known = node
            known_ok = _leaf(node, c, leaf_score, at, local, scoring)
            known_score = leaf_score[at]
        leaf_ok[at], leaf_score[at] = known_ok, known_score


@jit(_nrt=False, inner=True)
def _same_inputs(node, other, c, local, scoring):
    """Whether :func:`_leaf` reads the same on ``node`` as on ``other`` for class ``c``: the
    same static verdict and score, resource rows and host-port verdict (a class counting
    attach limits is never taken as the same)."""
    (static_ok, port_check_indptr, port_check, _, allocatable, requested, _, _, _, _, _,
     port_count, has_attach, _) = local
    nonzero, static_score, static_row = scoring[0], scoring[14], scoring[15]
    ok_row, score_row = static_ok[c], static_score[static_row[c]]
    if has_attach[c] or ok_row[node] != ok_row[other] or score_row[node] != score_row[other]:
        return False
    for k in range(port_check_indptr[c], port_check_indptr[c + 1]):
        column = port_check[k]
        if (port_count[node, column] > 0) != (port_count[other, column] > 0):
            return False
    for j in range(allocatable.shape[1]):
        if allocatable[node, j] != allocatable[other, j] or \
                requested[node, j] != requested[other, j]:
            return False
    return nonzero[node, 0] == nonzero[other, 0] and nonzero[node, 1] == nonzero[other, 1]


@jit(_nrt=False, inline="always")
def _anti_ok(node, c, anti_terms):
    """InterPodAffinity's Filter on ``node`` for a class whose only terms are node-local
    anti-affinity ones (:func:`tree_classes`)."""
    ipa_anti_indptr, ipa_anti, ipa_existing_indptr, ipa_existing, labels, ipa_rows = anti_terms
    anti = ipa_anti[ipa_anti_indptr[c]:ipa_anti_indptr[c + 1]]
    existing = ipa_existing[ipa_existing_indptr[c]:ipa_existing_indptr[c + 1]]
    return pod_affinity_code(node, ipa_anti[:0], anti, existing, False, labels, ipa_rows) == 0

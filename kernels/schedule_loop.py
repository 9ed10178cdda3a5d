"""The fused scheduling loop: many pods, one compiled function, no Python between two pods.

Each pending pod belongs to a *pod class* (pods with identical scheduling specs). Everything about
a class that does not change as pods are placed is evaluated once, before the loop, per node:
the node-static filters as a pass flag, the node-static scores (raw, normalised over the
feasible nodes here, or weighted and summed when they need no normalisation). The loop then
does, per pod, what ``findNodesThatFitPod`` / ``prioritizeNodes`` / ``selectHost`` / ``assume``
do (``pkg/scheduler/schedule_one.go``), checking the filters that depend on the placed pods
(host ports, resource fit, topology spread, inter-pod affinity) and computing the scores that
do, on the nodes it visits, with the kernels the plugins use.

Arrays (``N`` nodes, ``R`` resources, ``P`` host-port keys, ``C`` pod classes, ``K`` normalised
node-static scores, ``S`` scored resources):

allocatable : int64[N, R]; requested : int64[N, R] and nonzero : int64[N, 2], updated in place;
port_count : int32[N, P], updated in place; walk_order : int64[N], the node tree order.
static_ok : bool[C, N]; norm_raw : int64[R, N] raw node-static scores normalised with
``DefaultNormalizeScore`` (``norm_reverse`` : bool[K]) and weighted by ``norm_weight`` :
int64[K], class ``c``'s score ``k`` in row ``norm_row[c, k]``, -1 (and ``norm_varies[c, k]``
false) when it is 0 on every node (the normalised score is then the same everywhere and left
out); static_score : int64[R, N] (class ``c``'s row ``static_row[c]``, row 0 zeros) the
weighted sum of the node-static scores that need no normalisation. request : int64[C, R] the
class's requests (pod count 0), added on placement; fit_check_indptr / fit_check_cols : CSR
of the resource columns the fit filter checks; count_only : bool[C]. nonzero_add : int64[C, 2];
port_check_indptr / port_check : CSR of the host-port columns that conflict with the class's
ports; port_add_indptr / port_add : CSR of the columns it occupies. subset_indptr / subset :
CSR of a PreFilter node subset (in walk order); has_subset : bool[C]. fit_cols, fit_src,
fit_req : int64[C, S]; fit_weights : int64[S]; ba_cols, ba_req : int64[C, S2]; ba_skip :
bool[C]; shape_x, shape_y : the RequestedToCapacityRatio shape. weights : int64[4], the
weights of the resource-allocation, balanced-allocation, topology-spread and inter-pod affinity
scores (``W_*``; 0 when not scored). Attach limits (``D`` limited drivers, ``G`` node groups,
:class:`~ksched.framework.capabilities.AttachTable`): attach_group : int64[N]; attach_limits :
int64[N, D]; attached : int64[N, D], updated in place; has_attach : bool[C] the class's volumes
are counted; attach_adds : int64[C, G, D] what a pod of the class adds per driver, per node
group; attach_any : bool[C, G] it attaches anything there.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from ksched.constants import MAX_NODE_SCORE

from ._jit import jit
from .failure_tally import new_kept
from .inter_pod_affinity import (
    normalize_pod_affinity_scores,
    pod_affinity_code,
    pod_affinity_scores,
)
from .loop_steps import (
    EVALUATED_AT,
    FAILS,
    KNOWN_FAILURE,
    NEW_FAILURE,
    NEXT_START_AT,
    NOT_SCORED,
    PLACED_AT,
    W_BALANCED,
    W_FIT,
    W_POD_AFFINITY,
    W_SPREAD,
    conclude,
    known_failure,
    local_checks,
    local_ok,
    node_score_here,
    norm_varies_for,
    rescore,
    store_total,
    unplace,
)
from .normalize import default_normalize_score
from .pod_topology_spread import spread_filter_code, spread_minimums, spread_scores
from .select import num_feasible_nodes_to_find, select_top
from .tree_run import (
    class_pods,
    new_trees,
    spread_domains,
    tree_classes,
    tree_run_domains,
    tree_run_plain,
)
from .window_blocks import block_classes, block_run, new_blocks, walk_positions_of

__all__ = ["schedule_loop", "loop_for", "PARAMETERS", "EVALUATED_AT", "KNOWN_FAILURE",
           "NEW_FAILURE", "NEXT_START_AT", "PLACED_AT", "W_BALANCED", "W_FIT", "W_POD_AFFINITY",
           "W_SPREAD"]


def _make_loop(full: bool) -> Any:
    """:func:`schedule_loop` compiled with or without (``full``) the code that counts pods per
    topology domain (spreading and pod affinity, filter and score) and normalises node-static
    scores over the window: a closure constant, so numba compiles only what a run uses (each
    variant is cached apart)."""

    def schedule_loop(begin, pod_class, allocatable, requested, nonzero, port_count, walk_order,
                      pods_col, static_ok, norm_raw, norm_row, norm_varies, norm_reverse,
                      norm_weight, static_score, static_row, request, fit_check_indptr,
                      fit_check_cols, count_only, nonzero_add, port_check_indptr, port_check,
                      port_add_indptr, port_add, subset_indptr, subset, has_subset, fit_strategy,
                      fit_cols, fit_src, fit_req, fit_weights, ba_cols, ba_req, ba_skip, shape_x,
                      shape_y, weights, has_scoring, fit_enabled, percentage, tie_mode, draws,
                      state, fail_epoch, node_version, cached_version, cached_score, labels,
                      spread_indptr, spread_entries, counter_column, counter_included,
                      counter_domain_indptr, counter_domains, counter_match, counter_counts,
                      counter_kind, soft_indptr, soft_entries, require_all, empty_id, empty_slot,
                      ipa_affinity_indptr, ipa_affinity, ipa_anti_indptr, ipa_anti,
                      ipa_existing_indptr, ipa_existing, ipa_score_indptr, ipa_score,
                      ipa_self_match, ipa_update_indptr, ipa_updates, ipa_rows, ipa_affinity_empty,
                      attach_group, attach_limits, attached, has_attach, attach_adds, attach_any,
                      use_tree, node_unique, diag_row, static_sid, sid_offset, sid_late,
                      fit_position, out_fail, rec_class, rec_indptr, rec_keys, rec_counts,
                      rec_used, walk_listed, walk_indptr, walk_pos, remove_node, out_node,
                      out_start, out_walk):
        """Schedule pods ``begin..`` of ``pod_class`` in order; returns where it stopped.

        fit_enabled : whether the NodeResourcesFit filter runs (pod count included).
        tie_mode : 0 round-robin, 1 random from ``draws`` (int64, one per tied selection),
            2 the top of v1.35's score heap (:func:`~ksched.kernels.select.heap_precedes`).
        state : int64[5] counters (``*_AT``), updated in place.
        fail_epoch : int64[C], the placement count when each class last failed (-1: never).
        node_version : int64[N], bumped whenever a node's requests change; ``cached_score`` :
            int32[C, N] holds, per walk position, each class's weighted resource and static
            score of the node there (or, for a class whose filters are all node-local,
            :data:`FAILS` where it fails them), valid while ``cached_version`` (int32[C, N])
            equals the node's version (only the node that received the last pod needs
            rescoring; a version past int32 never equals a stamp, so the node is rescored).
            Half-width rows (profiles whose totals pass int32 run without the loop): the
            classes' caches are read at random, and 50 classes' int64 rows of 5,000 nodes
            outgrow the cache.
        labels : int32[N, K] label value ids. Topology spreading
            (:mod:`ksched.kernels.pod_topology_spread`): a class's hard constraints are
            ``spread_entries[spread_indptr[c]:spread_indptr[c + 1]]``, its soft ones
            ``soft_entries[soft_indptr[c]:soft_indptr[c + 1]]``; counter ``k`` counts matching
            pods in ``counter_counts[k]`` (updated in place) over the nodes
            ``counter_included[k]``, whose domains are listed in the ``counter_domain_indptr`` /
            ``counter_domains`` CSR, filing nodes by ``counter_kind[k]`` over label column
            ``counter_column[k]``; ``counter_match[c, k]``: a pod of class ``c`` counts there;
            ``require_all[c]``: soft scoring ignores nodes lacking a key. InterPodAffinity
            (:mod:`ksched.kernels.inter_pod_affinity`): ``ipa_rows`` int64[R, V] count pods (or
            sum weights) per domain value; a class's ``ipa_affinity``, ``ipa_anti``,
            ``ipa_existing`` and ``ipa_score`` entries are (row, label column) pairs (CSR by
            class); ``ipa_self_match[c]`` and ``ipa_affinity_empty[c]`` decide the
            first-pod-of-a-group rule; ``ipa_updates`` (row, amount, column, class whose
            affinity it marks or -1), CSR by the placed pod's class, say what a placement adds.
        attached : the attach-limit counts, updated in place (see the module's arrays).
        use_tree : select by :mod:`ksched.kernels.selection_tree` for the classes it serves
            (:func:`~ksched.kernels.tree_run.tree_classes`), and read the windows of others
            per block (:mod:`ksched.kernels.window_blocks`); ``False``: the plain walk for
            every pod (same placements). node_unique : bool[K], per label column, no two
            nodes share a value (hostnames).
        diag_row ... rec_used : the failures the loop words itself (their tallies, see
            :func:`~ksched.kernels.failure_tally.tally_failure`): per class its row of
            node-static statuses (-1: the caller words its failures), and the failure records
            (``out_fail`` int64[n_pods]: each failed pod's record, -1: none), filled in place.
        remove_node : for a run entry ``p`` with ``pod_class[p] < 0``, a removal instead of a pod:
            a pod of class ``-1 - pod_class[p]`` (one that counts no pods per domain and
            attaches nothing) leaves node row ``remove_node[p]``, or, when that is negative, the
            node entry ``-1 - remove_node[p]`` of this run was placed on (see
            :func:`~ksched.kernels.loop_steps.unplace`); it may be empty for runs of pods only.
        walk_listed, walk_indptr, walk_pos : per class, whether its window walk visits only
            the walk positions ``walk_pos[walk_indptr[c]:walk_indptr[c + 1]]`` (ascending):
            the other nodes fail it whatever is placed (a node-static filter, or a request
            beyond the node's allocatable).
        out_node : int64[n_pods], the chosen node row, or ``KNOWN_FAILURE`` / ``NEW_FAILURE``.
        out_start : int64[n_pods], the nextStartNodeIndex each pod started from.
        out_walk : int64[n_pods, 4], each pod's nodes evaluated, feasible nodes, top total
            and top-total node count (:data:`~ksched.kernels.loop_steps.WALK_EVALUATED`).
        A pod that fails while the cluster has changed since its class last failed is tallied
        (:func:`~ksched.kernels.failure_tally.tally_failure`) and the loop goes on; where it
        cannot be, the loop returns right after recording it: the caller then words the
        diagnosis. A pod whose class failed and nothing was placed since fails the same way
        without being evaluated.
        """
        num_nodes = walk_order.shape[0]
        feasible = np.empty(num_nodes, dtype=np.int64)
        totals = np.empty(num_nodes, dtype=np.int64)
        normalized = np.empty(num_nodes, dtype=np.int64)
        fractions = np.empty(max(ba_cols.shape[1], 1), dtype=np.float64)
        seen = np.zeros(counter_counts.shape[1], dtype=np.bool_)
        raw = np.empty(num_nodes, dtype=np.int64)
        no_minimum = np.zeros(0, dtype=np.int64)
        no_values = np.zeros((0, 0), dtype=np.int64)
        # The last pod's full walk, kept for the next pod of the same class (see the reuse below).
        last_class, last_position, count = -1, -1, 0
        to_find_all = num_feasible_nodes_to_find(percentage, num_nodes) if has_scoring else 1
        spreading = (spread_indptr, spread_entries, counter_column, counter_domain_indptr,
                     counter_domains, counter_counts)
        pods = class_pods(begin, pod_class, has_subset.shape[0])
        if full:
            domains, values = spread_domains(pods, num_nodes, to_find_all, use_tree,
                                             spread_indptr, spread_entries, counter_column,
                                             labels)
        else:
            domains, values = np.ones(has_subset.shape[0], dtype=np.int64), no_values
        tree_slot = tree_classes(pods, num_nodes, to_find_all, use_tree, has_subset,
                                 spread_indptr, domains, soft_indptr, ipa_affinity_indptr,
                                 ipa_anti_indptr, ipa_anti, ipa_existing_indptr, ipa_existing,
                                 ipa_score_indptr, weights, norm_varies, norm_weight,
                                 node_unique, ipa_rows, ipa_update_indptr, ipa_updates)
        trees = new_trees(tree_slot, domains, values, walk_order)
        block_slot, shift = block_classes(
            pods, num_nodes, to_find_all, use_tree, tie_mode, tree_slot, has_subset,
            spread_indptr, soft_indptr, ipa_affinity_indptr, ipa_anti_indptr,
            ipa_existing_indptr, ipa_score_indptr, weights, norm_varies, norm_weight,
            walk_listed)
        blocks = new_blocks(block_slot, shift, walk_order)
        position_of = blocks[6] if blocks[6].shape[0] > 0 else walk_positions_of(walk_order)
        attach = (attach_group, attach_limits, attached, attach_adds, attach_any)
        local = (static_ok, port_check_indptr, port_check, fit_enabled, allocatable, requested,
                 pods_col, request, fit_check_indptr, fit_check_cols, count_only, port_count,
                 has_attach, attach)
        anti_terms = (ipa_anti_indptr, ipa_anti, ipa_existing_indptr, ipa_existing, labels,
                      ipa_rows)
        scoring = (nonzero, fit_strategy, fit_weights, shape_x, shape_y, weights, fractions,
                   node_version, fit_cols, fit_src, fit_req, ba_cols, ba_req, ba_skip, static_score,
                   static_row, cached_version, cached_score)
        diag = (diag_row, static_sid, sid_offset, sid_late, fit_position,
                new_kept(has_subset.shape[0], num_nodes, sid_offset, rec_class.shape[0]),
                out_node, np.full(has_subset.shape[0], -1, dtype=np.int64), out_fail,
                rec_class, rec_indptr, rec_keys, rec_counts, rec_used)
        placement = (request, requested, pods_col, nonzero, nonzero_add, port_add_indptr, port_add,
                     port_count, node_version, has_attach, attach_group, attached, attach_adds,
                     counter_match, counter_included, counter_counts, counter_kind, labels,
                     counter_column, empty_id, empty_slot, ipa_update_indptr, ipa_updates, ipa_rows,
                     ipa_affinity_empty)
        p = begin
        while p < pod_class.shape[0]:
            c = pod_class[p]
            if c < 0:  # a pod of class -1 - c leaves its node: every failure may pass now
                node = remove_node[p]
                unplace(p, -1 - c, node if node >= 0 else out_node[-1 - node], out_node,
                        placement)
                for k in range(fail_epoch.shape[0]):
                    fail_epoch[k] = -1
                last_class, last_position = -1, -1
                p += 1
                continue
            if trees[0][c] >= 0:
                last_class, last_position = -1, -1
                if full:
                    p, stopped = tree_run_domains(
                        p, pod_class, walk_order, to_find_all, tie_mode, draws, state,
                        fail_epoch, out_node, out_start, out_walk, trees, local, anti_terms,
                        scoring, placement, spreading, diag)
                else:
                    p, stopped = tree_run_plain(
                        p, pod_class, walk_order, to_find_all, tie_mode, draws, state,
                        fail_epoch, out_node, out_start, out_walk, trees, local, anti_terms,
                        scoring, placement, spreading, diag)
                if stopped:
                    return p
                continue
            if block_slot[c] >= 0:
                last_class, last_position = -1, -1
                p, stopped = block_run(p, pod_class, walk_order, to_find_all, tie_mode, draws,
                                       state, fail_epoch, out_node, out_start, out_walk, blocks,
                                       local, scoring, placement, diag)
                if stopped:
                    return p
                continue
            start = state[NEXT_START_AT]
            out_start[p] = start
            n_all = subset_indptr[c + 1] - subset_indptr[c] if has_subset[c] else num_nodes
            if known_failure(p, c, start, n_all, num_nodes, fail_epoch, state, out_node,
                             out_walk, diag):
                p += 1
                continue
            walk = subset[subset_indptr[c]:subset_indptr[c + 1]] if has_subset[c] else walk_order
            listed = walk_listed[c] and not has_subset[c]
            checks = port_check[port_check_indptr[c]:port_check_indptr[c + 1]]
            fit_cols_c = fit_check_cols[fit_check_indptr[c]:fit_check_indptr[c + 1]]
            request_row, ok_row = request[c], static_ok[c]
            count_only_c, attach_c = count_only[c], has_attach[c]
            fit_cols_row, fit_src_row, fit_req_row = fit_cols[c], fit_src[c], fit_req[c]
            ba_cols_row, ba_req_row, ba_skip_c = ba_cols[c], ba_req[c], ba_skip[c]
            static_c = static_score[static_row[c]]
            version_row, score_row = cached_version[c], cached_score[c]
            chosen, processed = -1, n_all
            entries = spread_entries[spread_indptr[c]:spread_indptr[c + 1]]
            soft = soft_entries[soft_indptr[c]:soft_indptr[c + 1]]
            affinity = ipa_affinity[ipa_affinity_indptr[c]:ipa_affinity_indptr[c + 1]]
            anti = ipa_anti[ipa_anti_indptr[c]:ipa_anti_indptr[c + 1]]
            existing = ipa_existing[ipa_existing_indptr[c]:ipa_existing_indptr[c + 1]]
            pod_scores = ipa_score[ipa_score_indptr[c]:ipa_score_indptr[c + 1]]
            first_of_group = ipa_affinity_empty[c] and ipa_self_match[c]
            pod_affinity = affinity.shape[0] + anti.shape[0] + existing.shape[0] > 0
            minimum = spread_minimums(entries, counter_domain_indptr, counter_domains,
                                      counter_counts) if full else no_minimum
            reused, varies = False, norm_varies_for(c, norm_varies, norm_weight)
            scored = False  # whether the walk left the feasible nodes' scores in ``totals``
            if c == last_class and last_position >= 0:
                node = feasible[last_position]
                if local_ok(node, ok_row, checks, fit_enabled, allocatable, requested, pods_col,
                            request_row, fit_cols_c, count_only_c, port_count, c, attach_c, attach):
                    at = position_of[node]
                    rescore(node, at, allocatable, requested, nonzero, fit_strategy, fit_weights,
                            shape_x, shape_y, weights, fractions, node_version, fit_cols_row,
                            fit_src_row, fit_req_row, ba_cols_row, ba_req_row, ba_skip_c,
                            static_c, version_row, score_row)
                    totals[last_position] = score_row[at] + (normalized[last_position] if varies
                                                              else 0)
                    reused = True
                elif not varies:
                    count -= 1
                    for j in range(last_position, count):  # a loop: slices cost compile time
                        feasible[j], totals[j] = feasible[j + 1], totals[j + 1]
                    reused = True
            last_class, last_position = -1, -1
            to_find = num_feasible_nodes_to_find(percentage, n_all) if has_scoring else 1
            if not reused and diag[7][c] >= 0 and entries.shape[0] == 0 and not pod_affinity:
                # It failed earlier in this run, and placing pods only takes room and adds
                # host ports and volumes, which fail no fewer nodes: it fails again.
                count, processed = 0, n_all
            elif not reused:
                positions = walk_pos[walk_indptr[c]:walk_indptr[c + 1]]
                # With node-local filters only, verdicts and scores come from the class's cache.
                scored = not full or (entries.shape[0] == 0 and not pod_affinity)
                if scored:
                    count, processed = _scan_local(
                        walk, not has_subset[c], position_of, start, to_find, listed, positions,
                        feasible, totals, c, ok_row,
                        checks, fit_enabled, allocatable, requested, pods_col, request_row,
                        fit_cols_c, count_only_c, port_count, attach_c, attach, nonzero,
                        fit_strategy, fit_weights, shape_x, shape_y, weights, fractions,
                        node_version, fit_cols_row, fit_src_row, fit_req_row, ba_cols_row,
                        ba_req_row, ba_skip_c, static_c, version_row, score_row)
                elif full:  # a closure constant: the plain variant leaves this out
                    count, processed = _walk_counting(
                        walk, start, to_find, ok_row, checks, fit_enabled, allocatable,
                        requested, pods_col, request_row, fit_cols_c, count_only_c, port_count,
                        feasible, entries, minimum, labels, counter_column, counter_counts,
                        pod_affinity, affinity, anti, existing, first_of_group, ipa_rows, c,
                        attach_c, attach, listed, positions)
            if count > 1 and not reused:
                for j in range(0 if scored else count):
                    node = feasible[j]
                    at = position_of[node]
                    if version_row[at] != node_version[node]:  # checked here: calls cost
                        rescore(node, at, allocatable, requested, nonzero, fit_strategy,
                                fit_weights, shape_x, shape_y, weights, fractions, node_version,
                                fit_cols_row, fit_src_row, fit_req_row, ba_cols_row, ba_req_row,
                                ba_skip_c, static_c, version_row, score_row)
                    totals[j] = score_row[at]
                if full and varies:  # else the normalised scores are the same everywhere
                    _normalized_scores(feasible[:count], c, norm_raw, norm_row, norm_reverse,
                                       norm_weight, normalized, raw)
                    for j in range(count):
                        totals[j] += normalized[j]
                if full and pod_scores.shape[0] > 0 and weights[W_POD_AFFINITY] != 0:
                    scores = pod_affinity_scores(feasible[:count], pod_scores, labels, ipa_rows)
                    normalize_pod_affinity_scores(scores)
                    for j in range(count):
                        totals[j] += weights[W_POD_AFFINITY] * scores[j]
                if full and soft.shape[0] > 0 and weights[W_SPREAD] != 0:
                    scores = spread_scores(feasible[:count], soft, require_all[c], labels,
                                           counter_column, counter_kind, counter_counts, empty_id,
                                           empty_slot, seen)
                    for j in range(count):
                        totals[j] += weights[W_SPREAD] * scores[j]
            top, ties = NOT_SCORED, count
            if count > 0:
                position = 0
                if count > 1:
                    position, ties = select_top(totals[:count], tie_mode, draws, state)
                    top = totals[position]
                chosen = feasible[position]
                if (processed == n_all and n_all == num_nodes and count > 1
                        and entries.shape[0] == 0 and soft.shape[0] == 0 and not pod_affinity
                        and pod_scores.shape[0] == 0):
                    last_class, last_position = c, position
            if not conclude(p, c, chosen, start, processed, count, top, ties, walk_order, state,
                            fail_epoch, out_node, out_walk, local, placement, diag):
                return p + 1
            p += 1
        return pod_class.shape[0]

    return jit(schedule_loop)


#: The loop for runs whose classes count no pods per domain and normalise nothing over the
#: window, and for the others.
_LOOPS = (_make_loop(False), _make_loop(True))


#: The loop's parameters in order (a caller passing them all by position skips the folding of
#: ~100 keywords at each call).
PARAMETERS = tuple(inspect.signature(getattr(_LOOPS[0], "py_func", _LOOPS[0])).parameters)


def schedule_loop(*args: Any, full: bool = True, **kwargs: Any) -> int:
    """The compiled loop (see its docstring in :func:`_make_loop`): the plain variant when
    ``full`` is false (no class spreads, has pod affinity or a varying normalised score)."""
    return _LOOPS[bool(full)](*args, **kwargs)


def loop_for(full: bool) -> Any:
    """The compiled variant :func:`schedule_loop` runs for ``full``."""
    return _LOOPS[bool(full)]


@jit(_nrt=False, inner=True)
def _walk_counting(walk, start, to_find, ok_row, checks, fit_enabled, allocatable, requested,
                   pods_col, request_row, fit_cols, count_only, port_count, out_feasible, entries,
                   minimum, labels, counter_column, counter_counts, pod_affinity, affinity, anti,
                   existing, first_of_group, ipa_rows, c, attach_c, attach, listed, positions):
    """``findNodesThatPassFilters`` as a sequential scan from ``start``, for a class whose
    filters read counts per topology domain (spreading, pod affinity): returns (feasible
    count, nodes processed). The scan stops at the first feasible node beyond ``to_find``.
    With ``listed`` it visits only the walk positions ``positions`` (ascending): the others
    fail whatever is placed (:func:`~ksched.class_tables.ClassTables` lists them), and the
    nodes processed are counted from the positions."""
    n_all, m, begin, k = _window_start(walk, start, listed, positions)
    count = 0
    for _ in range(m):
        at, k = _window_step(k, m, listed, positions)
        node = walk[at]
        ok = local_checks(node, ok_row, checks, fit_enabled, allocatable, requested, pods_col,
                          request_row, fit_cols, count_only, port_count, c, attach_c, attach)
        if ok and entries.shape[0] > 0:
            ok = spread_filter_code(node, entries, minimum, labels, counter_column,
                                    counter_counts) == 0
        if ok and pod_affinity:
            ok = pod_affinity_code(node, affinity, anti, existing, first_of_group, labels,
                                   ipa_rows) == 0
        if ok:
            if count == to_find:  # the nodes before this one were processed
                return count, (at - begin + n_all) % n_all
            out_feasible[count] = node
            count += 1
    return count, n_all


@jit(inline="always")
def _window_start(walk, start, listed, positions):
    """Where a walk from ``start`` begins: (nodes in the walk, positions it visits, the
    start's walk position, the index of the first position visited). With ``listed`` it
    visits only the walk positions ``positions`` (ascending)."""
    n_all = walk.shape[0]
    begin = start % n_all if n_all > 0 else 0
    if listed:
        return n_all, positions.shape[0], begin, _first_at_or_after(positions, begin)
    return n_all, n_all, begin, begin


@jit(inline="always")
def _window_step(k, m, listed, positions):
    """The walk position of visit ``k`` (of ``m``, wrapping round), and the next visit's."""
    if k == m:
        k = 0
    return (positions[k] if listed else k), k + 1


@jit(_nrt=False, inner=True)
def _first_at_or_after(positions, value):
    """The first index of ascending ``positions`` whose entry is at least ``value`` (its
    length when none is)."""
    lo, hi = 0, positions.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if positions[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit(_nrt=False, inner=True)
def _scan_local(walk, in_order, position_of, start, to_find, listed, positions, out_feasible,
                out_totals, c, ok_row,
                checks, fit_enabled, allocatable, requested, pods_col, request_row, fit_cols,
                count_only, port_count, attach_c, attach, nonzero, fit_strategy, fit_weights,
                shape_x, shape_y, weights, fractions, node_version, fit_cols_row, fit_src_row,
                fit_req_row, ba_cols_row, ba_req_row, ba_skip_c, static_c, version_row,
                score_row):
    """The window walk of a class whose filters are all node-local, with each node's verdict
    and score read from the class's cache (``score_row``, :data:`FAILS` where it fails),
    refreshed where the node's version moved: returns (feasible count, nodes processed), the
    feasible nodes and their scores in ``out_feasible`` / ``out_totals``. The cache is kept by
    walk position: a walk in the node order (``in_order``) reads it in order, another (a
    PreFilter subset) through ``position_of``."""
    n_all, m, begin, k = _window_start(walk, start, listed, positions)
    count = 0
    for _ in range(m):
        at, k = _window_step(k, m, listed, positions)
        node = walk[at]
        cached = at if in_order else position_of[node]
        if version_row[cached] != node_version[node]:  # the class's total, written in
            store_total(node, cached, node_score_here(
                node, allocatable, requested, nonzero, fit_strategy, fit_weights, shape_x,
                shape_y, weights, fractions, fit_cols_row, fit_src_row, fit_req_row, ba_cols_row,
                ba_req_row, ba_skip_c, static_c)
                if local_checks(node, ok_row, checks, fit_enabled, allocatable, requested,
                                pods_col, request_row, fit_cols, count_only, port_count, c,
                                attach_c, attach)
                else FAILS, node_version, version_row, score_row)
        score = score_row[cached]
        if score != FAILS:
            if count == to_find:
                return count, (at - begin + n_all) % n_all
            out_feasible[count] = node
            out_totals[count] = score
            count += 1
    return count, n_all


@jit(inner=True)
def _normalized_scores(feasible, c, norm_raw, norm_row, norm_reverse, norm_weight, out, raw):
    """The weighted, normalised node-static scores of the feasible nodes, into ``out``
    (``raw``: scratch room, as long).

    A score whose raw value is 0 on every node normalises to the same value everywhere,
    which changes no ranking, so it is left out.
    """
    n = feasible.shape[0]
    for i in range(n):
        out[i] = 0
    for k in range(norm_weight.shape[0]):
        row = norm_row[c, k]
        if norm_weight[k] != 0 and row >= 0:
            for i in range(n):
                raw[i] = norm_raw[row, feasible[i]]
            default_normalize_score(raw[:n], MAX_NODE_SCORE, norm_reverse[k])
            for i in range(n):
                out[i] += norm_weight[k] * raw[i]

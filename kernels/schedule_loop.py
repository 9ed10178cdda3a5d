"""The fused scheduling loop: many pods, one compiled function, no Python between two pods.

Each pending pod belongs to a *pod class* (pods with identical scheduling specs). Everything about
a class that does not change as pods are placed is evaluated once, before the loop, per node:
the static filters (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity) as a pass flag,
and the raw TaintToleration, NodeAffinity and ImageLocality scores. The loop then does, per pod,
what ``findNodesThatFitPod`` / ``prioritizeNodes`` / ``selectHost`` / ``assume`` do, checking
the dynamic filters (NodePorts, NodeResourcesFit) and computing the resource scores on the
nodes it visits.

Arrays (``N`` nodes, ``R`` resources, ``P`` host-port keys, ``C`` pod classes, ``S`` scored
resources):

allocatable : int64[N, R]; requested : int64[N, R] and nonzero : int64[N, 2], updated in place;
port_count : int32[N, P], updated in place; walk_order : int64[N], the node tree order.
static_ok : bool[C, N]; taint_raw, affinity_raw, image_score : int64[C, N]; taint_varies : bool[C]
some node has an untolerated PreferNoSchedule taint; affinity_skip : bool[C] NodeAffinity's
PreScore skipped. request : int64[C, R] added on placement; fit_check_indptr / fit_check_cols /
fit_check_want : CSR of the resources the fit filter checks and the amounts; count_only : bool[C].
nonzero_add : int64[C, 2]; port_check_indptr / port_check : CSR of the host-port columns that
conflict with the class's ports; port_add_indptr / port_add : CSR of the columns it occupies.
subset_indptr / subset : CSR of a PreFilter node subset (in walk order); has_subset : bool[C].
fit_cols, fit_src, fit_req : int64[C, S]; fit_weights : int64[S]; ba_cols, ba_req : int64[C, S2];
ba_skip : bool[C]; shape_x, shape_y : the RequestedToCapacityRatio shape.
weights : int64[5], the weights of TaintToleration, NodeAffinity, NodeResourcesFit,
NodeResourcesBalancedAllocation and ImageLocality (0 when the plugin is disabled).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .balanced_allocation import balanced_allocation_score
from .node_resources_fit import resource_allocation_score

W_TAINT, W_AFFINITY, W_FIT, W_BALANCED, W_IMAGE, W_SPREAD, W_POD_AFFINITY = range(7)
#: How a spread counter files a node: by its label value (hard constraints), by its label
#: value with a missing label read as "" (soft constraints), or by the node itself (soft
#: hostname constraints count each node's own pods).
BY_LABEL, BY_LABEL_OR_EMPTY, BY_NODE = 0, 1, 2
#: ``out_node`` of a pod that failed where its class already failed with nothing placed since.
KNOWN_FAILURE = -1
#: ``out_node`` of a pod that failed afresh: the loop returns right after it.
NEW_FAILURE = -2


@jit
def num_feasible_nodes_to_find(percentage, num_all_nodes):
    """``numFeasibleNodesToFind`` (see :func:`ksched.profile.num_feasible_nodes_to_find`)."""
    if num_all_nodes < 100:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < 5:
            percentage = 5
    found = num_all_nodes * percentage // 100
    return found if found > 100 else 100


@jit(inline="always")
def _fits(allocatable, requested, node, pods_col, fit_cols, fit_want, count_only):
    if requested[node, pods_col] + 1 > allocatable[node, pods_col]:
        return False
    if count_only:
        return True
    for j in range(fit_cols.shape[0]):
        col = fit_cols[j]
        if fit_want[j] > allocatable[node, col] - requested[node, col]:
            return False
    return True


@jit(inline="always")
def _ports_free(port_count, node, columns):
    for col in columns:
        if port_count[node, col] > 0:
            return False
    return True


@jit
def _normalized(raw, reverse):
    """``DefaultNormalizeScore(100, reverse)`` into a fresh array."""
    out = raw.copy()
    high = np.int64(0)
    for v in raw:
        if v > high:
            high = v
    for i in range(out.shape[0]):
        if high == 0:
            out[i] = 100 if reverse else 0
        else:
            value = 100 * raw[i] // high
            out[i] = 100 - value if reverse else value
    return out


@jit
def schedule_loop(begin, pod_class, allocatable, requested, nonzero, port_count, walk_order,
                  pods_col, static_ok, taint_raw, taint_varies, affinity_raw, affinity_skip,
                  image_score, request, fit_check_indptr, fit_check_cols, fit_check_want,
                  count_only, nonzero_add, port_check_indptr, port_check, port_add_indptr,
                  port_add, subset_indptr, subset, has_subset, fit_strategy, fit_cols, fit_src,
                  fit_req, fit_weights, ba_cols, ba_req, ba_skip, shape_x, shape_y, weights,
                  has_scoring, fit_enabled, percentage, tie_mode, draws, state, fail_epoch,
                  node_version, cached_version, cached_score, labels, spread_indptr,
                  spread_entries, counter_column, counter_included, counter_domain_indptr,
                  counter_domains, counter_match, counter_counts, counter_kind, soft_indptr,
                  soft_entries, require_all, empty_id, empty_slot, ipa_affinity_indptr,
                  ipa_affinity, ipa_anti_indptr, ipa_anti, ipa_existing_indptr, ipa_existing,
                  ipa_score_indptr, ipa_score, ipa_self_match, ipa_update_indptr, ipa_updates,
                  ipa_rows, ipa_affinity_empty, out_node, out_start):
    """Schedule pods ``begin..`` of ``pod_class`` in order; returns where it stopped.

    fit_enabled : whether the NodeResourcesFit filter runs (pod count included).
    tie_mode : 0 round-robin, 1 random from ``draws`` (int64, one per tied selection).
    state : int64[5] = (nextStartNodeIndex, round-robin index, placements so far, next draw,
        nodes evaluated so far), updated in place.
    fail_epoch : int64[C], the placement count when each class last failed (-1: never).
    node_version : int64[N], bumped whenever a node's requests change; ``cached_score`` :
        int64[C, N] holds each class's weighted resource and image score of a node, valid
        while ``cached_version`` equals the node's version (only the node that received the
        last pod needs rescoring).
    labels : int32[N, K] label value ids. Hard topology spread constraints: ``spread_entries``
        int64[E, 4] (counter, maxSkew, self match, minDomains), the class's rows
        ``spread_indptr[c]:spread_indptr[c + 1]``; counter ``k`` counts matching pods per
        domain of label column ``counter_column[k]`` in ``counter_counts[k]`` (updated in
        place), over the nodes ``counter_included[k]``, whose domains are listed in the
        ``counter_domain_indptr`` / ``counter_domains`` CSR; ``counter_match[c, k]``: a pod of
        class ``c`` counts there. Soft constraints (PodTopologySpread's Score):
        ``soft_entries`` int64[S, 3] (counter, maxSkew, per-node flag), the class's rows
        ``soft_indptr[c]:soft_indptr[c + 1]``; ``require_all[c]``: nodes lacking a key are
        ignored; ``counter_kind[k]`` says how counter ``k`` files nodes (``BY_*``), with
        ``empty_id`` / ``empty_slot`` for the "" domain. InterPodAffinity: ``ipa_rows``
        int64[R, V] count pods (or sum weights) per domain value; a class's ``ipa_affinity``,
        ``ipa_anti``, ``ipa_existing`` and ``ipa_score`` entries are (row, label column) pairs
        (CSR by class); ``ipa_self_match[c]`` and ``ipa_affinity_empty[c]`` decide the
        first-pod-of-a-group rule; ``ipa_updates`` (row, amount, column, class whose affinity
        it marks or -1), CSR by the placed pod's class, say what a placement adds.
    out_node : int64[n_pods], the chosen node row, or ``KNOWN_FAILURE`` / ``NEW_FAILURE``.
    out_start : int64[n_pods], the nextStartNodeIndex each pod started from.
    The loop returns early, after recording it, at a pod that fails while the cluster has
    changed since its class last failed: the caller then words the diagnosis. A pod whose class
    failed and nothing was placed since fails the same way without being evaluated.
    """
    num_nodes = walk_order.shape[0]
    feasible = np.empty(num_nodes, dtype=np.int64)
    totals = np.empty(num_nodes, dtype=np.int64)
    normalized = np.empty(num_nodes, dtype=np.int64)
    fractions = np.empty(max(ba_cols.shape[1], 1), dtype=np.float64)
    seen = np.zeros(counter_counts.shape[1], dtype=np.bool_)
    # The last pod's full walk, kept for the next pod of the same class (see _rewalk).
    last_class, last_position, count = -1, -1, 0
    for p in range(begin, pod_class.shape[0]):
        c = pod_class[p]
        start = state[0]
        out_start[p] = start
        walk = subset[subset_indptr[c]:subset_indptr[c + 1]] if has_subset[c] else walk_order
        n_all = walk.shape[0]
        if fail_epoch[c] == state[2]:
            out_node[p] = KNOWN_FAILURE
            state[0] = (start + n_all) % num_nodes
            continue
        checks = port_check[port_check_indptr[c]:port_check_indptr[c + 1]]
        fit_cols_c = fit_check_cols[fit_check_indptr[c]:fit_check_indptr[c + 1]]
        fit_want_c = fit_check_want[fit_check_indptr[c]:fit_check_indptr[c + 1]]
        fit_cols_row, fit_src_row, fit_req_row = fit_cols[c], fit_src[c], fit_req[c]
        ba_cols_row, ba_req_row, ba_skip_c = ba_cols[c], ba_req[c], ba_skip[c]
        image_row, version_row, score_row = image_score[c], cached_version[c], cached_score[c]
        entries = spread_entries[spread_indptr[c]:spread_indptr[c + 1]]
        soft = soft_entries[soft_indptr[c]:soft_indptr[c + 1]]
        affinity = ipa_affinity[ipa_affinity_indptr[c]:ipa_affinity_indptr[c + 1]]
        anti = ipa_anti[ipa_anti_indptr[c]:ipa_anti_indptr[c + 1]]
        existing = ipa_existing[ipa_existing_indptr[c]:ipa_existing_indptr[c + 1]]
        pod_scores = ipa_score[ipa_score_indptr[c]:ipa_score_indptr[c + 1]]
        first_of_group = ipa_affinity_empty[c] and ipa_self_match[c]
        pod_affinity = affinity.shape[0] + anti.shape[0] + existing.shape[0] > 0
        minimum = _spread_minimums(entries, counter_domain_indptr, counter_domains,
                                   counter_counts)
        reused = False
        if c == last_class and last_position >= 0:
            node = feasible[last_position]
            still = ((checks.shape[0] == 0 or _ports_free(port_count, node, checks))
                     and (not fit_enabled or _fits(allocatable, requested, node, pods_col,
                                                   fit_cols_c, fit_want_c, count_only[c])))
            if still:
                _rescore(node, allocatable, requested, nonzero, fit_strategy, fit_weights,
                         shape_x, shape_y, weights, fractions, node_version, fit_cols_row,
                         fit_src_row, fit_req_row, ba_cols_row, ba_req_row, ba_skip_c, image_row,
                         version_row, score_row)
                totals[last_position] = normalized[last_position] + score_row[node]
                reused = True
            elif not ((weights[W_TAINT] != 0 and taint_varies[c])
                      or (weights[W_AFFINITY] != 0 and not affinity_skip[c])):
                count -= 1
                feasible[last_position:count] = feasible[last_position + 1:count + 1]
                totals[last_position:count] = totals[last_position + 1:count + 1]
                normalized[last_position:count] = normalized[last_position + 1:count + 1]
                reused = True
        last_class, last_position = -1, -1
        if reused:
            processed = n_all
        else:
            to_find = num_feasible_nodes_to_find(percentage, n_all) if has_scoring else 1
            count, processed = _walk(walk, start, to_find, static_ok[c], checks, fit_enabled,
                                     allocatable, requested, pods_col, fit_cols_c, fit_want_c,
                                     count_only[c], port_count, feasible, entries, minimum,
                                     labels, counter_column, counter_counts, pod_affinity,
                                     affinity, anti, existing, first_of_group, ipa_rows)
        state[0] = (start + processed) % num_nodes
        state[4] += processed
        if count == 0:
            out_node[p] = NEW_FAILURE
            fail_epoch[c] = state[2]
            return p + 1
        if count == 1:
            position = 0
        else:
            if not reused:
                for j in range(count):
                    node = feasible[j]
                    if version_row[node] != node_version[node]:  # checked here: calls cost
                        _rescore(node, allocatable, requested, nonzero, fit_strategy,
                                 fit_weights, shape_x, shape_y, weights, fractions, node_version,
                                 fit_cols_row, fit_src_row, fit_req_row, ba_cols_row, ba_req_row,
                                 ba_skip_c, image_row, version_row, score_row)
                    totals[j] = score_row[node]
                _normalized_scores(feasible[:count], c, taint_raw, taint_varies, affinity_raw,
                                   affinity_skip, weights, normalized)
                totals[:count] += normalized[:count]
                if pod_scores.shape[0] > 0 and weights[W_POD_AFFINITY] != 0:
                    totals[:count] += weights[W_POD_AFFINITY] * _pod_affinity_scores(
                        feasible[:count], pod_scores, labels, ipa_rows)
                if soft.shape[0] > 0 and weights[W_SPREAD] != 0:
                    totals[:count] += weights[W_SPREAD] * _spread_scores(
                        feasible[:count], soft, require_all[c], labels, counter_column,
                        counter_kind, counter_counts, empty_id, empty_slot, seen)
            position = _pick(totals[:count], tie_mode, draws, state)
        chosen = feasible[position]
        if (processed == n_all and n_all == num_nodes and count > 1 and entries.shape[0] == 0
                and soft.shape[0] == 0 and not pod_affinity and pod_scores.shape[0] == 0):
            last_class, last_position = c, position
        out_node[p] = chosen
        for col in range(request.shape[1]):
            requested[chosen, col] += request[c, col]
        requested[chosen, pods_col] += 1
        nonzero[chosen, 0] += nonzero_add[c, 0]
        nonzero[chosen, 1] += nonzero_add[c, 1]
        for k in range(port_add_indptr[c], port_add_indptr[c + 1]):
            port_count[chosen, port_add[k]] += 1
        node_version[chosen] += 1
        for k in range(counter_match.shape[1]):
            if counter_match[c, k] and counter_included[k, chosen]:
                counter_counts[k, counter_slot(counter_kind[k], chosen, labels, counter_column[k],
                                               empty_id, empty_slot)] += 1
        for u in range(ipa_update_indptr[c], ipa_update_indptr[c + 1]):
            value = labels[chosen, ipa_updates[u, 2]]
            if value >= 0:
                ipa_rows[ipa_updates[u, 0], value] += ipa_updates[u, 1]
                if ipa_updates[u, 3] >= 0:
                    ipa_affinity_empty[ipa_updates[u, 3]] = False
        state[2] += 1
    return pod_class.shape[0]


@jit
def _pod_affinity_ok(node, affinity, anti, existing, first_of_group, labels, rows):
    """InterPodAffinity's Filter: the pod's required affinity (every key present, a matching
    pod in each domain, or the first pod of its group), its anti-affinity, and the running
    pods' anti-affinity."""
    if affinity.shape[0] > 0:
        found = True
        for e in range(affinity.shape[0]):
            column = affinity[e, 1]
            if column < 0 or labels[node, column] < 0:
                return False
            if rows[affinity[e, 0], labels[node, column]] <= 0:
                found = False
        if not found and not first_of_group:
            return False
    for table in (anti, existing):
        for e in range(table.shape[0]):
            column = table[e, 1]
            if column >= 0 and labels[node, column] >= 0 and rows[table[e, 0],
                                                                  labels[node, column]] > 0:
                return False
    return True


@jit
def _pod_affinity_scores(feasible, entries, labels, rows):
    """InterPodAffinity's Score (the summed weights of the node's domains) and NormalizeScore
    (``int64(100 * (s - min) / (max - min))`` in float, 0 when all are equal)."""
    n = feasible.shape[0]
    raw = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for e in range(entries.shape[0]):
            value = labels[feasible[i], entries[e, 1]]
            if value >= 0:
                raw[i] += rows[entries[e, 0], value]
    low, high = raw.min(), raw.max()
    out = np.zeros(n, dtype=np.int64)
    if high > low:
        for i in range(n):
            out[i] = np.int64(100.0 * (np.float64(raw[i] - low) / np.float64(high - low)))
    return out


@jit
def counter_slot(kind, node, labels, column, empty_id, empty_slot):
    """Where a spread counter files ``node`` (see ``BY_*``)."""
    if kind == BY_NODE:
        return node
    value = labels[node, column] if column >= 0 else -1
    if kind == BY_LABEL_OR_EMPTY and (value < 0 or value == empty_id):
        return empty_slot
    return value


@jit
def _spread_scores(feasible, soft, require_all, labels, counter_column, counter_kind,
                   counter_counts, empty_id, empty_slot, seen):
    """PodTopologySpread's PreScore, Score and NormalizeScore over the feasible nodes.

    Nodes lacking a key are ignored when ``require_all``; each constraint is weighted by
    ``ln(domains among the scored nodes + 2)``; a node scores the matching pods of its domains
    (weighted) plus ``maxSkew - 1`` per constraint whose key it has, rounded half up; the
    fewest pods then get 100 (``100 * (max + min - s) // max``), ignored nodes 0.
    """
    n = feasible.shape[0]
    ignored = np.zeros(n, dtype=np.bool_)
    if require_all:
        for i in range(n):
            for e in range(soft.shape[0]):
                column = counter_column[soft[e, 0]]
                if column < 0 or labels[feasible[i], column] < 0:
                    ignored[i] = True
                    break
    scored = n - ignored.sum()
    weight = np.empty(soft.shape[0], dtype=np.float64)
    for e in range(soft.shape[0]):
        k = soft[e, 0]
        if soft[e, 2]:
            size = scored
        else:
            size = 0
            for i in range(n):
                if not ignored[i]:
                    slot = counter_slot(counter_kind[k], feasible[i], labels, counter_column[k],
                                        empty_id, empty_slot)
                    if not seen[slot]:
                        seen[slot] = True
                        size += 1
            for i in range(n):
                seen[counter_slot(counter_kind[k], feasible[i], labels, counter_column[k],
                                  empty_id, empty_slot)] = False
        weight[e] = np.log(np.float64(size + 2))
    out = np.zeros(n, dtype=np.int64)
    low, high = np.int64(9223372036854775807), np.int64(0)
    for i in range(n):
        if ignored[i]:
            continue
        node = feasible[i]
        total = 0.0
        for e in range(soft.shape[0]):
            k = soft[e, 0]
            column = counter_column[k]
            if column < 0 or labels[node, column] < 0:
                continue
            count = counter_counts[k, counter_slot(counter_kind[k], node, labels, column,
                                                   empty_id, empty_slot)]
            total += np.float64(count) * weight[e] + np.float64(soft[e, 1] - 1)
        whole = np.floor(total)
        value = np.int64(whole + 1.0 if total - whole >= 0.5 else whole)
        out[i] = value
        low = min(low, value)
        high = max(high, value)
    for i in range(n):
        if ignored[i]:
            out[i] = 0
        elif high == 0:
            out[i] = 100
        else:
            out[i] = 100 * (high + low - out[i]) // high
    return out


@jit
def _spread_minimums(entries, counter_domain_indptr, counter_domains, counter_counts):
    """Per hard spread constraint, the global minimum of matching pods over its domains
    (``minMatchNum``: 0 while there are fewer domains than ``minDomains``)."""
    out = np.zeros(entries.shape[0], dtype=np.int64)
    for e in range(entries.shape[0]):
        k = entries[e, 0]
        first, last = counter_domain_indptr[k], counter_domain_indptr[k + 1]
        if last - first < entries[e, 3] or last == first:
            continue
        low = counter_counts[k, counter_domains[first]]
        for j in range(first + 1, last):
            low = min(low, counter_counts[k, counter_domains[j]])
        out[e] = low
    return out


@jit
def _spread_ok(node, entries, minimum, labels, counter_column, counter_counts):
    """PodTopologySpread's Filter: the node has every key, and placing the pod in its domain
    keeps ``matching + self - minimum <= maxSkew``."""
    for e in range(entries.shape[0]):
        k = entries[e, 0]
        domain = labels[node, counter_column[k]]
        if domain < 0:
            return False
        if counter_counts[k, domain] + entries[e, 2] - minimum[e] > entries[e, 1]:
            return False
    return True


@jit(inline="always")
def _walk(walk, start, to_find, ok_row, checks, fit_enabled, allocatable, requested, pods_col,
          fit_cols, fit_want, count_only, port_count, out_feasible, entries, minimum, labels,
          counter_column, counter_counts, pod_affinity, affinity, anti, existing,
          first_of_group, ipa_rows):
    """``findNodesThatPassFilters`` as a sequential scan from ``start``: returns (feasible
    count, nodes processed). The scan stops at the first feasible node beyond ``to_find``."""
    n_all = walk.shape[0]
    count = 0
    processed = 0
    index = start % n_all if n_all > 0 else 0
    for _ in range(n_all):
        node = walk[index]
        index += 1
        if index == n_all:
            index = 0
        ok = ok_row[node]
        if ok and checks.shape[0] > 0:
            ok = _ports_free(port_count, node, checks)
        if ok and fit_enabled:
            ok = _fits(allocatable, requested, node, pods_col, fit_cols, fit_want, count_only)
        if ok and entries.shape[0] > 0:
            ok = _spread_ok(node, entries, minimum, labels, counter_column, counter_counts)
        if ok and pod_affinity:
            ok = _pod_affinity_ok(node, affinity, anti, existing, first_of_group, labels,
                                  ipa_rows)
        if ok:
            if count == to_find:
                break
            out_feasible[count] = node
            count += 1
        processed += 1
    return count, processed


@jit
def _rescore(node, allocatable, requested, nonzero, fit_strategy, fit_weights, shape_x, shape_y,
             weights, fractions, node_version, fit_cols, fit_src, fit_req, ba_cols, ba_req,
             ba_skip, image_score, cached_version, cached_score):
    """Recompute one class's weighted resource and image score of ``node`` into its cache
    row (the class's rows of the tables are passed). These scores need no normalisation, so
    they only change when the node's requests do."""
    score = np.int64(0)
    if weights[W_FIT] != 0:
        score += weights[W_FIT] * resource_allocation_score(
            fit_strategy, allocatable, requested, nonzero, node, fit_cols, fit_src, fit_req,
            fit_weights, shape_x, shape_y)
    if weights[W_BALANCED] != 0 and not ba_skip:
        score += weights[W_BALANCED] * balanced_allocation_score(
            allocatable, requested, node, ba_cols, ba_req, fractions)
    cached_score[node] = score + weights[W_IMAGE] * image_score[node]
    cached_version[node] = node_version[node]


@jit
def _normalized_scores(feasible, c, taint_raw, taint_varies, affinity_raw, affinity_skip, weights,
                       out):
    """The weighted, normalised TaintToleration and NodeAffinity scores of the feasible nodes.

    A class whose nodes all have no untolerated PreferNoSchedule taint gets 100 everywhere
    from TaintToleration, which changes no ranking, so it is left out.
    """
    n = feasible.shape[0]
    out[:n] = 0
    if weights[W_TAINT] != 0 and taint_varies[c]:
        raw = np.empty(n, dtype=np.int64)
        for i in range(n):
            raw[i] = taint_raw[c, feasible[i]]
        out[:n] += weights[W_TAINT] * _normalized(raw, True)
    if weights[W_AFFINITY] != 0 and not affinity_skip[c]:
        raw = np.empty(n, dtype=np.int64)
        for i in range(n):
            raw[i] = affinity_raw[c, feasible[i]]
        out[:n] += weights[W_AFFINITY] * _normalized(raw, False)


@jit
def _pick(totals, tie_mode, draws, state):
    """The position of the chosen top-score node: ties round-robin or from the random draws."""
    best = totals.max()
    ties = 0
    for i in range(totals.shape[0]):
        if totals[i] == best:
            ties += 1
    if tie_mode == 0:
        pick = state[1] % ties
        state[1] += 1
    elif ties > 1:
        pick = draws[state[3]] % ties
        state[3] += 1
    else:
        pick = 0
    for i in range(totals.shape[0]):
        if totals[i] == best:
            if pick == 0:
                return i
            pick -= 1
    return 0

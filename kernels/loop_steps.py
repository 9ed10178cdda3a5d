"""The steps of one pod's cycle that the fused loop's two selections share
(:mod:`ksched.kernels.schedule_loop`'s window walk and :mod:`ksched.kernels.tree_run`'s tree):
the node-local filters, the node-local scores, and ``assume``.

They are compiled without reference counting (``_nrt=False``): they allocate nothing, and a
call that passes arrays to a reference-counted function pays an atomic increment and decrement
per array, which costs more than the checks themselves.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .balanced_allocation import balanced_allocation_score
from .failure_tally import tally_failure
from .node_ports import ports_conflict
from .node_resources_fit import fit_code, resource_allocation_score
from .node_volume_limits import exceeds_limit
from .pod_topology_spread import counter_slot

W_FIT, W_BALANCED, W_SPREAD, W_POD_AFFINITY = range(4)
#: Slots of the ``state`` counters: nextStartNodeIndex, placements so far, nodes evaluated so
#: far; the round-robin index and the next random draw are :mod:`ksched.kernels.select`'s
#: (``ROUND_ROBIN_AT``, ``NEXT_DRAW_AT``).
NEXT_START_AT, PLACED_AT, EVALUATED_AT = 0, 2, 4
#: ``out_node`` of a pod that failed where its class already failed with nothing placed since.
KNOWN_FAILURE = -1
#: ``out_node`` of a pod that failed afresh: unless the loop words it
#: (:func:`~ksched.kernels.failure_tally.tally_failure`), it returns right after it.
NEW_FAILURE = -2
#: Columns of ``out_walk`` (int64[n_pods, 4]), each pod's cycle as the loop ran it: nodes
#: evaluated, feasible nodes (in the window), their top total and how many have it
#: (``NOT_SCORED`` and 1 for a lone feasible node, which upstream does not score; -1 and 0
#: without one).
WALK_EVALUATED, WALK_FEASIBLE, WALK_TOP, WALK_TIES = 0, 1, 2, 3
NOT_SCORED = -1
#: A cached score that says the node fails the class's node-local filters (within int32, as
#: the caches are; totals are never negative).
FAILS = np.iinfo(np.int32).min


@jit(inline="always")
def fits(allocatable, requested, node, pods_col, request_row, fit_cols, count_only):
    """NodeResourcesFit's Filter on one node (:func:`fit_code`, stopping at a failure)."""
    return fit_code(allocatable, requested, node, request_row, fit_cols, pods_col, count_only,
                    0, True, request_row, False, requested, False) == 0


@jit(_nrt=False, inner=True)
def attach_ok(node, c, attach):
    """NodeVolumeLimits' Filter on one node for a pod of class ``c`` whose volumes are
    attached nowhere yet (:func:`exceeds_limit`); ``attach``: (attach_group, attach_limits,
    attached, attach_adds, attach_any)."""
    attach_group, attach_limits, attached, attach_adds, attach_any = attach
    group = attach_group[node]
    if not attach_any[c, group]:
        return True
    return not exceeds_limit(node, attach_limits, attached, attach_adds[c, group])


@jit(_nrt=False, inner=True)
def local_ok(node, ok_row, checks, fit_enabled, allocatable, requested, pods_col, request_row,
             fit_cols, count_only, port_count, c, attach_c, attach):
    """The node-local filters on one node: the node-static verdict, host ports, resource fit
    and attach limits (a placement changes them on its node only)."""
    return local_checks(node, ok_row, checks, fit_enabled, allocatable, requested, pods_col,
                        request_row, fit_cols, count_only, port_count, c, attach_c, attach)


@jit(inline="always")
def local_checks(node, ok_row, checks, fit_enabled, allocatable, requested, pods_col,
                 request_row, fit_cols, count_only, port_count, c, attach_c, attach):
    """:func:`local_ok` written into its caller (a walk's loop, where a call per node costs
    more than the checks)."""
    ok = ok_row[node]
    if ok and checks.shape[0] > 0:
        ok = not ports_conflict(port_count, node, checks)
    if ok and fit_enabled:
        ok = fits(allocatable, requested, node, pods_col, request_row, fit_cols, count_only)
    if ok and attach_c:
        ok = attach_ok(node, c, attach)
    return ok


def _node_score(node, allocatable, requested, nonzero, fit_strategy, fit_weights, shape_x,
                shape_y, weights, fractions, fit_cols, fit_src, fit_req, ba_cols, ba_req, ba_skip,
                static_score):
    """One class's weighted resource and static score of ``node`` (the class's rows of the
    tables are passed). These scores need no normalisation, so they only change when the
    node's requests do."""
    score = np.int64(0)
    if weights[W_FIT] != 0:
        score += weights[W_FIT] * resource_allocation_score(
            fit_strategy, allocatable, requested, nonzero, node, fit_cols, fit_src, fit_req,
            fit_weights, shape_x, shape_y)
    if weights[W_BALANCED] != 0 and not ba_skip:
        score += weights[W_BALANCED] * balanced_allocation_score(
            allocatable, requested, node, ba_cols, ba_req, fractions)
    return score + static_score[node]


#: :func:`_node_score` compiled on its own, and written into its caller: the window walk,
#: where a node whose requests changed comes once in a few visits and a call with its ~30
#: arrays cost more than the score (the Alibaba trace's batch: 10% less time), and a block
#: summary's update by its one changed node (:mod:`ksched.kernels.window_blocks`). Written
#: into the scan that summarises a block anew, it made the 50-shape batch 8-15% slower.
node_score = jit(_nrt=False, inner=True)(_node_score)
node_score_here = jit(inline="always")(_node_score)


@jit(inline="always")
def store_total(node, at, total, node_version, version_row, score_row):
    """A class's cached total of ``node``, at its walk position ``at``: its score, or
    :data:`FAILS` where it fails the node-local filters, stamped with the node's version (the
    window walks read it while the version stands). Kept by walk position, a walk reads its
    cache in order, as it reads the walk."""
    score_row[at] = total
    version_row[at] = node_version[node]


@jit(_nrt=False, inner=True)
def rescore(node, at, allocatable, requested, nonzero, fit_strategy, fit_weights, shape_x,
            shape_y, weights, fractions, node_version, fit_cols, fit_src, fit_req, ba_cols,
            ba_req, ba_skip, static_score, cached_version, cached_score):
    """:func:`node_score` into the class's score cache row at the node's walk position
    ``at``, valid while the node's version stands."""
    cached_score[at] = node_score(node, allocatable, requested, nonzero, fit_strategy,
                                    fit_weights, shape_x, shape_y, weights, fractions, fit_cols,
                                    fit_src, fit_req, ba_cols, ba_req, ba_skip, static_score)
    cached_version[at] = node_version[node]


@jit(inline="always")
def norm_varies_for(c, norm_varies, norm_weight):
    """Whether some normalised node-static score of class ``c`` differs between nodes."""
    for k in range(norm_weight.shape[0]):
        if norm_weight[k] != 0 and norm_varies[c, k]:
            return True
    return False


@jit(_nrt=False, inner=True)
def known_failure(p, c, start, n_all, num_nodes, fail_epoch, state, out_node, out_walk, diag):
    """Whether pod ``p`` of class ``c`` fails as its class last did, nothing having been placed
    since: then it is recorded so, without a walk, with its class's latest failure record of
    the run as its ``out_fail`` (-1: none, the failure came before; see
    :func:`~ksched.kernels.failure_tally.tally_failure`), and the start index moves past
    every node (as a failed walk leaves it)."""
    if fail_epoch[c] != state[PLACED_AT]:
        return False
    out_node[p] = KNOWN_FAILURE
    diag[8][p] = diag[7][c]
    record_walk(out_walk, p, n_all, 0, NOT_SCORED, 0)
    state[NEXT_START_AT] = (start + n_all) % num_nodes
    return True


@jit(_nrt=False, inline="always")
def record_walk(out_walk, p, evaluated, feasible, top, ties):
    """Pod ``p``'s row of ``out_walk`` (see ``WALK_EVALUATED``)."""
    out_walk[p, WALK_EVALUATED] = evaluated
    out_walk[p, WALK_FEASIBLE] = feasible
    out_walk[p, WALK_TOP] = top
    out_walk[p, WALK_TIES] = ties


@jit(_nrt=False, inner=True)
def unplace(p, c, node, out_node, placement):
    """``NodeInfo.RemovePod``: a pod of class ``c`` leaves ``node`` (run entry ``p``, whose
    ``out_node`` becomes the node): what :func:`place` added there taken off, for a class
    that counts no pods per domain and attaches no volumes (the caller's to ensure: the
    devices a class holds are its own, given back)."""
    (request, requested, pods_col, nonzero, nonzero_add, port_add_indptr, port_add, port_count,
     node_version, has_attach, attach_group, attached, attach_adds) = placement[:13]
    out_node[p] = node
    for col in range(request.shape[1]):
        requested[node, col] -= request[c, col]
    requested[node, pods_col] -= 1
    nonzero[node, 0] -= nonzero_add[c, 0]
    nonzero[node, 1] -= nonzero_add[c, 1]
    for k in range(port_add_indptr[c], port_add_indptr[c + 1]):
        port_count[node, port_add[k]] -= 1
    if has_attach[c]:
        group = attach_group[node]
        for col in range(attached.shape[1]):
            attached[node, col] -= attach_adds[c, group, col]
    node_version[node] += 1


@jit(_nrt=False, inner=True)
def place(p, chosen, c, out_node, state, placement):
    """``assume``: pod ``p`` of class ``c`` onto node ``chosen``, everything it adds counted
    there. ``placement``: (request, requested, pods column, nonzero, nonzero_add,
    port_add_indptr, port_add, port_count, node_version, has_attach, attach_group, attached,
    attach_adds, counter_match, counter_included, counter_counts, counter_kind, labels,
    counter_column, empty_id, empty_slot, ipa_update_indptr, ipa_updates, ipa_rows,
    ipa_affinity_empty), as :func:`ksched.kernels.schedule_loop.schedule_loop` takes them."""
    (request, requested, pods_col, nonzero, nonzero_add, port_add_indptr, port_add, port_count,
     node_version, has_attach, attach_group, attached, attach_adds, counter_match,
     counter_included, counter_counts, counter_kind, labels, counter_column, empty_id,
     empty_slot, ipa_update_indptr, ipa_updates, ipa_rows, ipa_affinity_empty) = placement
    out_node[p] = chosen
    for col in range(request.shape[1]):
        requested[chosen, col] += request[c, col]
    requested[chosen, pods_col] += 1
    nonzero[chosen, 0] += nonzero_add[c, 0]
    nonzero[chosen, 1] += nonzero_add[c, 1]
    for k in range(port_add_indptr[c], port_add_indptr[c + 1]):
        port_count[chosen, port_add[k]] += 1
    node_version[chosen] += 1
    if has_attach[c]:
        group = attach_group[chosen]
        for col in range(attached.shape[1]):
            attached[chosen, col] += attach_adds[c, group, col]
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
    state[PLACED_AT] += 1


# Written into its callers: a call would copy the three groups of arrays it is given.
@jit(inline="always")
def conclude(p, c, chosen, start, processed, found, top, ties, walk_order, state, fail_epoch,
             out_node, out_walk, local, placement, diag):
    """The end of pod ``p``'s cycle (class ``c``, its walk from ``start``): the next start
    index past the ``processed`` nodes, the walk recorded (``found`` feasible nodes, ``ties``
    of them at the ``top`` total), then ``assume`` on node ``chosen``, or, where none was
    (-1), the pod recorded as a new failure and tallied
    (:func:`~ksched.kernels.failure_tally.tally_failure`). Returns ``False`` where the run
    must stop there: a failure the loop does not word. ``local``, ``placement`` and
    ``diag``: the loop's groups."""
    state[NEXT_START_AT] = (start + processed) % walk_order.shape[0]
    state[EVALUATED_AT] += processed
    record_walk(out_walk, p, processed, found, top, ties)
    if chosen < 0:
        out_node[p] = NEW_FAILURE
        fail_epoch[c] = state[PLACED_AT]
        (_, _, _, fit_enabled, allocatable, requested, pods_col, request, fit_check_indptr,
         fit_check_cols, count_only, _, _, _) = local
        return tally_failure(p, c, walk_order, fit_enabled, allocatable, requested, pods_col,
                             request, fit_check_indptr, fit_check_cols, count_only, diag)
    place(p, chosen, c, out_node, state, placement)
    return True


@jit
def walk_lists(walk_order, ok_rows, ok_row_of, allocatable, pods_col, requests, checked_indptr,
               checked, fit_enabled, most, room):
    """Per class ``k`` (``requests[k]``, node-static verdicts ``ok_rows[ok_row_of[k]]``, the
    fit columns it checks ``checked[checked_indptr[k]:checked_indptr[k + 1]]``), the walk
    positions (ascending) of the nodes it may ever fit on: passing its node-static filters
    and, with ``fit_enabled``, with room for a pod and allocatable at least its request on
    each checked column (a node short of that fails NodeResourcesFit whatever is placed).
    A class is listed where at most ``most`` nodes qualify and the lists so far leave room
    (``room`` positions in all). Returns (listed: bool[K], indptr: int64[K + 1], positions),
    a CSR of the listed classes' positions (empty for the others).

    Each row of verdicts is walked once (:func:`_row_walks`); a class whose requests every
    node of its row holds takes its row's positions whole, the others check those only."""
    n, classes = walk_order.shape[0], requests.shape[0]
    row_indptr, row_positions, row_least = _row_walks(walk_order, ok_rows, allocatable)
    listed = np.zeros(classes, dtype=np.bool_)
    indptr = np.zeros(classes + 1, dtype=np.int64)
    out = np.empty(4 * n, dtype=np.int64)
    total = 0
    for k in range(classes):
        r, request = ok_row_of[k], requests[k]
        cols = checked[checked_indptr[k]:checked_indptr[k + 1]]
        positions = row_positions[row_indptr[r]:row_indptr[r + 1]]
        cap = min(most, room - total)
        every = not fit_enabled or _holds(row_least[r], pods_col, request, cols)
        if every and positions.shape[0] > cap:
            indptr[k + 1] = total
            continue
        if total + cap > out.shape[0]:  # room for this class's list: doubled
            grown = np.empty(max(2 * out.shape[0], total + cap), dtype=np.int64)
            grown[:total] = out[:total]
            out = grown
        found = 0
        for i in positions:
            if every or _holds(allocatable[walk_order[i]], pods_col, request, cols):
                if found == cap:
                    found = -1
                    break
                out[total + found] = i
                found += 1
        if found >= 0:
            listed[k] = True
            total += found
        indptr[k + 1] = total
    return listed, indptr, out[:total].copy()


@jit(inline="always")
def _holds(allocatable, pods_col, request, cols):
    """Whether ``allocatable`` (a node's, or the least of several) has room for a pod and
    at least ``request`` on each of ``cols``."""
    if allocatable[pods_col] < 1:
        return False
    for col in cols:
        if allocatable[col] < request[col]:
            return False
    return True


@jit(inner=True)
def _row_walks(walk_order, ok_rows, allocatable):
    """Per row of node-static verdicts, the walk positions of the nodes passing (a CSR:
    indptr, positions) and, per resource column, the least allocatable among them (the
    largest int64 where none passes)."""
    n, rows, columns = walk_order.shape[0], ok_rows.shape[0], allocatable.shape[1]
    indptr = np.zeros(rows + 1, dtype=np.int64)
    for r in range(rows):
        indptr[r + 1] = indptr[r] + ok_rows[r].sum()
    positions = np.empty(indptr[rows], dtype=np.int64)
    least = np.full((rows, columns), np.iinfo(np.int64).max, dtype=np.int64)
    total = 0
    for r in range(rows):
        for i in range(n):
            node = walk_order[i]
            if ok_rows[r, node]:
                positions[total] = i
                total += 1
                for col in range(columns):
                    least[r, col] = min(least[r, col], allocatable[node, col])
    return indptr, positions, least

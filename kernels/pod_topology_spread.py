"""PodTopologySpread kernels (``plugins/podtopologyspread/{filtering,scoring}.go``).

Matching pods are counted per topology domain in *counter* rows: ``counter_counts[k, slot]``
for counter ``k``, whose domains are the values of label column ``counter_column[k]``; a node's
slot in a row is :func:`counter_slot` of the counter's kind. Constraints refer to counters:

- hard (``DoNotSchedule``) entries, int64[E, 4]: (counter, maxSkew, self match, minDomains);
- soft (``ScheduleAnyway``) entries, int64[S, 3]: (counter, maxSkew, per-node counter flag).

``labels`` : int32[n_nodes, n_keys] label value ids, -1 where absent. The plugin and the fused
loop (:mod:`ksched.kernels.schedule_loop`) both judge and score with these functions.
"""

from __future__ import annotations

import numpy as np

from ._intmath import go_round
from ._jit import jit

#: How a counter files a node: by its label value (hard constraints), by its label value
#: with a missing label read as "" (soft constraints), or by the node itself (soft hostname
#: constraints count each node's own pods).
BY_LABEL, BY_LABEL_OR_EMPTY, BY_NODE = 0, 1, 2
#: Filter codes: the node lacks a constraint's topology key; placing the pod there skews.
MISSING_LABEL, SKEWED = 1, 2
#: ``MaxNodeScore``.
MAX_SCORE = 100


@jit(_nrt=False)
def counter_slot(kind, node, labels, column, empty_id, empty_slot):
    """Where a counter of kind ``kind`` (``BY_*``) over label ``column`` files ``node``:
    ``empty_id`` is the value id of "" (-1 when unused), ``empty_slot`` the slot of the ""
    domain."""
    if kind == BY_NODE:
        return node
    value = labels[node, column] if column >= 0 else -1
    if kind == BY_LABEL_OR_EMPTY and (value < 0 or value == empty_id):
        return empty_slot
    return value


@jit
def spread_minimums(entries, counter_domain_indptr, counter_domains, counter_counts):
    """Per hard constraint, ``minMatchNum``: the fewest matching pods over its counter's
    domains (``counter_domains[counter_domain_indptr[k]:counter_domain_indptr[k + 1]]``), 0
    while there are fewer domains than ``minDomains``. Returns int64[E]."""
    out = np.zeros(entries.shape[0], dtype=np.int64)
    for e in range(entries.shape[0]):
        out[e] = spread_minimum(entries[e], counter_domain_indptr, counter_domains,
                                counter_counts)
    return out


@jit(_nrt=False, inner=True)
def spread_minimum(entry, counter_domain_indptr, counter_domains, counter_counts):
    """``minMatchNum`` of one hard constraint (see :func:`spread_minimums`)."""
    k = entry[0]
    first, last = counter_domain_indptr[k], counter_domain_indptr[k + 1]
    if last - first < entry[3] or last == first:
        return 0
    low = counter_counts[k, counter_domains[first]]
    for j in range(first + 1, last):
        low = min(low, counter_counts[k, counter_domains[j]])
    return low


@jit(inline="always")
def spread_filter_code(node, entries, minimum, labels, counter_column, counter_counts):
    """``Filter`` on one node: 0 when it passes, ``MISSING_LABEL`` when it lacks a
    constraint's key, ``SKEWED`` when ``matching + self match - minimum > maxSkew`` in its
    domain (constraints in order, the first failing one decides). ``minimum`` : int64[E]
    from :func:`spread_minimums`."""
    for e in range(entries.shape[0]):
        k = entries[e, 0]
        column = counter_column[k]
        domain = labels[node, column] if column >= 0 else -1
        if domain < 0:
            return MISSING_LABEL
        if counter_counts[k, domain] + entries[e, 2] - minimum[e] > entries[e, 1]:
            return SKEWED
    return 0


@jit
def spread_filter_codes(nodes, entries, minimum, labels, counter_column, counter_counts):
    """int64[n]: :func:`spread_filter_code` of each node in ``nodes``."""
    out = np.zeros(nodes.shape[0], dtype=np.int64)
    for i in range(nodes.shape[0]):
        out[i] = spread_filter_code(nodes[i], entries, minimum, labels, counter_column,
                                    counter_counts)
    return out


@jit
def round_scores(totals):
    """``Score``'s last step: each node's summed float score rounded by ``math.Round``."""
    out = np.empty(totals.shape[0], dtype=np.int64)
    for i in range(totals.shape[0]):
        out[i] = go_round(totals[i])
    return out


@jit
def normalize_spread_scores(scores, ignored):
    """``NormalizeScore``, in place: the fewest matching pods get ``MAX_SCORE``
    (``MAX_SCORE * (max + min - s) // max``), all ``MAX_SCORE`` when the highest is 0;
    ``ignored`` nodes (bool[n]) get 0 and take no part in min and max. Scores are >= 0."""
    low, high = np.int64(9223372036854775807), np.int64(0)
    for i in range(scores.shape[0]):
        if not ignored[i]:
            low = min(low, scores[i])
            high = max(high, scores[i])
    for i in range(scores.shape[0]):
        if ignored[i]:
            scores[i] = 0
        elif high == 0:
            scores[i] = MAX_SCORE
        else:
            scores[i] = MAX_SCORE * (high + low - scores[i]) // high


@jit
def spread_scores(feasible, soft, require_all, labels, counter_column, counter_kind,
                  counter_counts, empty_id, empty_slot, seen):
    """``PreScore``, ``Score`` and ``NormalizeScore`` over the feasible nodes (int64[n]).

    Nodes lacking a key are ignored when ``require_all``; each constraint is weighted by
    ``ln(domains among the scored nodes + 2)`` (``seen`` : bool[n_slots] scratch, all False,
    left so); a node scores the matching pods of its domains (weighted) plus ``maxSkew - 1``
    per constraint whose key it has, rounded (:func:`round_scores`), then
    :func:`normalize_spread_scores`. Returns int64[n].
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
    scored = n
    for i in range(n):
        scored -= ignored[i]
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
    totals = np.zeros(n, dtype=np.float64)
    for i in range(n):
        if ignored[i]:
            continue
        node = feasible[i]
        for e in range(soft.shape[0]):
            k = soft[e, 0]
            column = counter_column[k]
            if column < 0 or labels[node, column] < 0:
                continue
            count = counter_counts[k, counter_slot(counter_kind[k], node, labels, column,
                                                   empty_id, empty_slot)]
            totals[i] += np.float64(count) * weight[e] + np.float64(soft[e, 1] - 1)
    out = round_scores(totals)
    normalize_spread_scores(out, ignored)
    return out

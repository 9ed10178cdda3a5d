"""NodeResourcesFit kernels: the fit check and the three scoring strategies.

Mirrors ``plugins/noderesources/fit.go`` (``fitsRequest``), ``least_allocated.go``,
``most_allocated.go`` and ``requested_to_capacity_ratio.go`` with ``helper/shape_score.go``.
All arithmetic is int64 on non-negative operands, so ``//`` equals Go's truncating division.
"""

from __future__ import annotations

import numpy as np

from ._intmath import go_round
from ._jit import jit

#: Bit of a fit code: the node already runs ``allocatable[pods]`` pods.
TOO_MANY_PODS = np.int64(1)
#: Bit of a fit code: some insufficient resource exceeds even the empty node.
UNRESOLVABLE = np.int64(1) << np.int64(62)

LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO = 0, 1, 2
#: How a scoring column reads the node side: plain ``requested`` or the non-zero aggregates.
FROM_REQUESTED, FROM_NONZERO_CPU, FROM_NONZERO_MEMORY = 0, 1, 2


@jit(inline="always")
def fit_code(allocatable, requested, node, pod_request, checked, pods_column, count_only,
             missing, first_only, delta, with_delta, extra, with_extra):
    """``fitsRequest`` on one node: 0 when the pod fits, else why not (a fit code).

    The node's requests are ``requested[node]``, plus ``delta`` when ``with_delta`` (pods
    removed or added on a copy of its NodeInfo) and plus ``extra[node]`` when ``with_extra``
    (its nominated pods). ``pod_request`` : int64[n_resources] the pod's effective requests;
    ``checked`` : int64[m] the columns to check (requested, not ignored, not the pod count);
    ``pods_column`` : the column of pod counts; ``count_only`` : the pod requests nothing, so
    only the pod count matters; ``missing`` : the bits of requested resources no node has.
    Code bits: 0 too many pods, ``1 + j`` column ``checked[j]`` insufficient, 62 some
    insufficient resource exceeds even the empty node. With ``first_only`` the code is
    returned at the first failure (callers that only ask whether the pod fits).
    Callers pass ``first_only``, ``with_delta`` and ``with_extra`` as constants, which the
    compiler folds away with this function inlined.
    """
    code = np.int64(missing)
    if first_only and code != 0:
        return code
    used = requested[node, pods_column]
    if with_delta:
        used += delta[pods_column]
    if with_extra:
        used += extra[node, pods_column]
    if used + 1 > allocatable[node, pods_column]:
        code |= TOO_MANY_PODS
        if first_only:
            return code
    if not count_only:
        for j in range(checked.shape[0]):
            col = checked[j]
            want = pod_request[col]
            used = requested[node, col]
            if with_delta:
                used += delta[col]
            if with_extra:
                used += extra[node, col]
            if want > 0 and want > allocatable[node, col] - used:
                code |= np.int64(1) << np.int64(1 + j)
                if want > allocatable[node, col]:
                    code |= UNRESOLVABLE
                if first_only:
                    return code
    return code


@jit(_nrt=False, inner=True)  # inlined, the arrays' reference counts cost 20 ns a call
def count_code(code, last, last_k, distinct, codes, counts):
    """Counts the non-zero fit code ``code`` in a tally of the distinct codes met
    (``codes[:distinct]``, each with its count in ``counts``), for a diagnosis worded per code
    (``Insufficient cpu`` on so many nodes): returns (``last``, ``last_k``, ``distinct``), the
    code just counted and its slot, ``last_k`` -1 when the tally is full (``code`` then not
    counted). Most nodes share the code of the node before: that one is counted without a
    search."""
    if code != last:
        last_k = 0
        while last_k < distinct and codes[last_k] != code:
            last_k += 1
        if last_k == distinct:
            if distinct == codes.shape[0]:
                return last, -1, distinct
            codes[last_k] = code
            counts[last_k] = 0
            distinct += 1
        last = code
    counts[last_k] += 1
    return last, last_k, distinct


@jit
def fit_codes(allocatable, requested, nodes, pod_request, checked, pods_column, pod_count_only):
    """:func:`fit_code` of each node in ``nodes`` (int64[n]): int64[n], 0 where the pod fits.

    allocatable, requested : int64[n_nodes, n_resources]; see :func:`fit_code` for the rest.
    """
    out = np.zeros(nodes.shape[0], dtype=np.int64)
    for i in range(nodes.shape[0]):
        out[i] = fit_code(allocatable, requested, nodes[i], pod_request, checked, pods_column,
                          pod_count_only, 0, False, pod_request, False, requested, False)
    return out


@jit(inner=True)
def _broken_linear(shape_x, shape_y, p):
    """``helper.BuildBrokenLinearFunction`` evaluated at ``p``."""
    for k in range(shape_x.shape[0]):
        if p <= shape_x[k]:
            if k == 0:
                return shape_y[0]
            num = (shape_y[k] - shape_y[k - 1]) * (p - shape_x[k - 1])
            den = shape_x[k] - shape_x[k - 1]
            q = abs(num) // den
            return shape_y[k - 1] + (q if num >= 0 else -q)
    return shape_y[shape_y.shape[0] - 1]


# Written into its callers (node_score rescores a node per call): the call, with its ~10
# arrays, cost more than the score (the 50-shape batch's loop: 14.1 ms, 11.4 ms inlined).
@jit(inline="always")
def resource_allocation_score(strategy, allocatable, requested, nonzero, node, columns, sources,
                              pod_request, weights, shape_x, shape_y):
    """One node's score (see :func:`resource_allocation_scores`)."""
    total = np.int64(0)
    weight_sum = np.int64(0)
    for j in range(columns.shape[0]):
        col = columns[j]
        if col < 0:
            continue
        alloc = allocatable[node, col]
        if alloc == 0:
            continue
        if sources[j] == FROM_NONZERO_CPU:
            req = nonzero[node, 0] + pod_request[j]
        elif sources[j] == FROM_NONZERO_MEMORY:
            req = nonzero[node, 1] + pod_request[j]
        else:
            req = requested[node, col] + pod_request[j]
        if strategy == LEAST_ALLOCATED:
            s = np.int64(0) if req > alloc else (alloc - req) * 100 // alloc
        elif strategy == MOST_ALLOCATED:
            s = min(req, alloc) * 100 // alloc
        else:
            s = _broken_linear(shape_x, shape_y, 100 if req > alloc else req * 100 // alloc)
            if s <= 0:
                continue
        total += s * weights[j]
        weight_sum += weights[j]
    if weight_sum == 0:
        return np.int64(0)
    if strategy == REQUESTED_TO_CAPACITY_RATIO:
        return go_round(np.float64(total) / np.float64(weight_sum))
    return total // weight_sum


@jit
def resource_allocation_scores(strategy, allocatable, requested, nonzero, nodes, columns,
                               sources, pod_request, weights, shape_x, shape_y):
    """Scores of one strategy (``resourceAllocationScorer.score``) for each node in ``nodes``.

    columns : int64[s] resource column per scored resource, -1 when the resource is skipped
        (an unrequested scalar); sources : int64[s] ``FROM_*`` per resource.
    pod_request : int64[s] the pod's request per scored resource (with non-zero defaults).
    weights : int64[s]; shape_x, shape_y : int64[k] the RTCR shape (scores already x10).
    Resources whose node allocatable is 0 are left out, weight included.
    """
    out = np.zeros(nodes.shape[0], dtype=np.int64)
    for i in range(nodes.shape[0]):
        out[i] = resource_allocation_score(strategy, allocatable, requested, nonzero, nodes[i],
                                           columns, sources, pod_request, weights, shape_x,
                                           shape_y)
    return out

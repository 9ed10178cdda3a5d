"""NodeResourcesBalancedAllocation kernel (``noderesources/balanced_allocation.go``)."""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit


# Written into its callers (node_score rescores a node per call): the call, with its ~10
# arrays, cost more than the score (the 50-shape batch's loop: 14.1 ms, 11.4 ms inlined).
@jit(inline="always")
def balanced_allocation_score(allocatable, requested, node, columns, pod_request, fractions):
    """One node's score (see :func:`balanced_allocation_scores`); ``fractions`` is scratch."""
    n = 0
    total = 0.0
    for j in range(columns.shape[0]):
        col = columns[j]
        if col < 0 or allocatable[node, col] == 0:
            continue
        f = np.float64(requested[node, col] + pod_request[j]) / np.float64(allocatable[node, col])
        if f > 1.0:
            f = 1.0
        fractions[n] = f
        total += f
        n += 1
    std = 0.0
    if n == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        mean = total / n
        variance = 0.0
        for j in range(n):
            variance += (fractions[j] - mean) * (fractions[j] - mean)
        std = math.sqrt(variance / n)
    return np.int64((1.0 - std) * 100)


@jit
def balanced_allocation_scores(allocatable, requested, nodes, columns, pod_request):
    """int64[n]: ``int64((1 - std) * 100)`` of the requested fractions.

    columns : int64[s] resource column per configured resource, -1 when skipped (a scalar the
    pod does not request); pod_request : int64[s] plain requests (no non-zero defaults).
    Fractions are capped at 1; resources with zero allocatable are left out; the spread is
    ``|f0 - f1| / 2`` for two fractions and the population standard deviation for more.
    """
    out = np.zeros(nodes.shape[0], dtype=np.int64)
    fractions = np.zeros(columns.shape[0], dtype=np.float64)
    for i in range(nodes.shape[0]):
        out[i] = balanced_allocation_score(allocatable, requested, nodes[i], columns,
                                           pod_request, fractions)
    return out

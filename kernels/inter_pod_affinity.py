"""InterPodAffinity kernels (``plugins/interpodaffinity/{filtering,scoring}.go``).

Pods (or term weights) are summed per topology domain in *rows*: ``rows[r, value]`` for the
label value ids of one label column. A pod's terms refer to rows as (row, label column) pairs,
int64[T, 2]; ``labels`` : int32[n_nodes, n_keys] label value ids, -1 where absent. The plugin
and the fused loop (:mod:`ksched.kernels.schedule_loop`) both judge and score with these.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

#: Filter codes: the pod's required affinity, its required anti-affinity, the running pods'
#: required anti-affinity.
AFFINITY, ANTI_AFFINITY, EXISTING_ANTI_AFFINITY = 1, 2, 3
#: ``MaxNodeScore``.
MAX_SCORE = 100


@jit(_nrt=False, inner=True)
def _in_domain(node, terms, labels, rows):
    """Whether some term's row counts a pod in the node's domain of the term's key."""
    for e in range(terms.shape[0]):
        column = terms[e, 1]
        if column >= 0 and labels[node, column] >= 0 and rows[terms[e, 0],
                                                             labels[node, column]] > 0:
            return True
    return False


@jit(_nrt=False, inner=True)
def pod_affinity_code(node, affinity, anti, existing, first_of_group, labels, rows):
    """``Filter`` on one node: 0 when it passes; ``AFFINITY`` when a required affinity term's
    key is missing, or some term's domain holds no matching pod and the pod is not the first
    of its group (``first_of_group``: no pod matches yet and the pod matches its own terms);
    ``ANTI_AFFINITY`` when a pod matching one of its anti-affinity terms is in the domain;
    ``EXISTING_ANTI_AFFINITY`` when a running pod's anti-affinity (rows ``existing``) is."""
    if affinity.shape[0] > 0:
        found = True
        for e in range(affinity.shape[0]):
            column = affinity[e, 1]
            if column < 0 or labels[node, column] < 0:
                return AFFINITY
            if rows[affinity[e, 0], labels[node, column]] <= 0:
                found = False
        if not found and not first_of_group:
            return AFFINITY
    if _in_domain(node, anti, labels, rows):
        return ANTI_AFFINITY
    if _in_domain(node, existing, labels, rows):
        return EXISTING_ANTI_AFFINITY
    return 0


@jit
def pod_affinity_codes(nodes, affinity, anti, existing, first_of_group, labels, rows):
    """int64[n]: :func:`pod_affinity_code` of each node in ``nodes``."""
    out = np.zeros(nodes.shape[0], dtype=np.int64)
    for i in range(nodes.shape[0]):
        out[i] = pod_affinity_code(nodes[i], affinity, anti, existing, first_of_group, labels,
                                   rows)
    return out


@jit
def pod_affinity_scores(nodes, terms, labels, rows):
    """``Score``: per node, the summed weights of its domains over the ``terms`` rows."""
    out = np.zeros(nodes.shape[0], dtype=np.int64)
    for i in range(nodes.shape[0]):
        for e in range(terms.shape[0]):
            value = labels[nodes[i], terms[e, 1]]
            if value >= 0:
                out[i] += rows[terms[e, 0], value]
    return out


@jit
def normalize_pod_affinity_scores(scores):
    """``NormalizeScore``, in place: ``int64(MAX_SCORE * (s - min) / (max - min))`` in float
    arithmetic, 0 everywhere when all scores are equal."""
    if scores.shape[0] == 0:
        return
    low, high = scores[0], scores[0]
    for i in range(1, scores.shape[0]):  # loops: ``min()`` / ``max()`` cost compile time
        low, high = min(low, scores[i]), max(high, scores[i])
    for i in range(scores.shape[0]):
        if high > low:
            scores[i] = np.int64(np.float64(MAX_SCORE)
                                 * (np.float64(scores[i] - low) / np.float64(high - low)))
        else:
            scores[i] = 0

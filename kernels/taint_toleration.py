"""TaintToleration kernels (``plugins/tainttoleration/taint_toleration.go``).

Taints come as CSR rows per node; a pod's tolerations as parallel arrays. Strings are ids:
an empty toleration key is -1 (matches every key), an empty effect -1 (every effect).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE = 0, 1, 2


@jit(inner=True)
def _tolerated(key, value, effect, tol_keys, tol_exists, tol_values, tol_effects):
    """``ToleratesTaint`` by any of the tolerations."""
    for t in range(tol_keys.shape[0]):
        if tol_effects[t] >= 0 and tol_effects[t] != effect:
            continue
        if tol_keys[t] >= 0 and tol_keys[t] != key:
            continue
        if tol_keys[t] < -1:  # a key no node taint carries
            continue
        if tol_exists[t] or tol_values[t] == value:
            return True
    return False


@jit
def untolerated_mask(taint_indptr, taint_keys, taint_values, taint_effects, nodes,
                     tol_keys, tol_exists, tol_values, tol_effects):
    """bool[n]: the node has a NoSchedule or NoExecute taint no toleration tolerates."""
    out = np.zeros(nodes.shape[0], dtype=np.bool_)
    for i in range(nodes.shape[0]):
        node = nodes[i]
        for t in range(taint_indptr[node], taint_indptr[node + 1]):
            effect = taint_effects[t]
            if effect == PREFER_NO_SCHEDULE:
                continue
            if not _tolerated(taint_keys[t], taint_values[t], effect,
                              tol_keys, tol_exists, tol_values, tol_effects):
                out[i] = True
                break
    return out


@jit
def intolerable_prefer_no_schedule_counts(taint_indptr, taint_keys, taint_values, taint_effects,
                                          nodes, tol_keys, tol_exists, tol_values, tol_effects):
    """int64[n]: PreferNoSchedule taints per node that the given tolerations do not tolerate."""
    out = np.zeros(nodes.shape[0], dtype=np.int64)
    for i in range(nodes.shape[0]):
        node = nodes[i]
        for t in range(taint_indptr[node], taint_indptr[node + 1]):
            if taint_effects[t] != PREFER_NO_SCHEDULE:
                continue
            if not _tolerated(taint_keys[t], taint_values[t], taint_effects[t],
                              tol_keys, tol_exists, tol_values, tol_effects):
                out[i] += 1
    return out

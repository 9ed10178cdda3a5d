"""NodeVolumeLimits kernel (``plugins/nodevolumelimits/csi.go``: ``Filter``'s count check).

limits : int64[n_nodes, n_drivers] each limited driver's ``allocatable.count`` (-1: no limit)
attached : int64[n_nodes, n_drivers] distinct volumes of each driver the node's pods attach
new_drivers : int64[n_new] the driver column of each of the pod's distinct volumes (-1: a
    driver no node limits)
seen_indptr : int64[n_new + 1], seen_nodes : int64[...] per new volume, the sorted node rows
    that already attach it (it adds nothing there)
"""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit
def exceeds_limit(node, limits, attached, adding):
    """Whether some limited driver's volumes on ``node``, with ``adding`` (int64[n_drivers],
    the pod's volumes not attached there yet) more, exceed its limit
    (``attachedVolumeCount[driver] + newCount > maxVolumeLimit``)."""
    for column in range(limits.shape[1]):
        if adding[column] > 0 and limits[node, column] >= 0 \
                and attached[node, column] + adding[column] > limits[node, column]:
            return True
    return False


@jit
def volume_limit_exceeded(nodes, limits, attached, new_drivers, seen_indptr, seen_nodes):
    """bool[n]: whether, on each node of ``nodes`` (int64[n]), some limited driver's attached
    volumes plus the pod's volumes not attached there yet exceed its limit."""
    out = np.zeros(nodes.shape[0], dtype=np.bool_)
    adding = np.zeros(limits.shape[1], dtype=np.int64)
    for i in range(nodes.shape[0]):
        node = nodes[i]
        adding[:] = 0
        for k in range(new_drivers.shape[0]):
            column = new_drivers[k]
            if column < 0:
                continue
            start, stop = seen_indptr[k], seen_indptr[k + 1]
            at = start + np.searchsorted(seen_nodes[start:stop], node)
            if at < stop and seen_nodes[at] == node:
                continue
            adding[column] += 1
        out[i] = exceeds_limit(node, limits, attached, adding)
    return out

"""VolumeZone kernel (``plugins/volumezone/volume_zone.go``: ``Filter``).

The pod's bound volumes' topologies are compiled into arrays:

any_columns : int64[4] label columns of the four topology keys (-1: no node has the key)
keys : int64[n_topologies] label column of each topology's key (-1: no node has it)
ga_keys : int64[n_topologies] label column of the key's GA name (the key itself for GA keys)
value_indptr : int64[n_topologies + 1], values : int64[...] value ids each topology allows
"""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit
def zone_conflict_mask(labels, nodes, any_columns, keys, ga_keys, value_indptr, values):
    """bool[n]: whether each node of ``nodes`` (int64[n]) has a topology label but not a
    value a volume topology allows (``labels``: int32[n_nodes, n_label_keys] value ids,
    negative when absent).

    A node with none of the four topology labels fits; otherwise, for each topology, the
    node's value of its key (or, when absent, of its GA name) must be one of its values.
    """
    out = np.zeros(nodes.shape[0], dtype=np.bool_)
    for i in range(nodes.shape[0]):
        node = nodes[i]
        constrained = False
        for column in any_columns:
            if column >= 0 and labels[node, column] >= 0:
                constrained = True
        if not constrained:
            continue
        for t in range(keys.shape[0]):
            value = labels[node, keys[t]] if keys[t] >= 0 else -1
            if value < 0 and ga_keys[t] >= 0:
                value = labels[node, ga_keys[t]]
            allowed = False
            if value >= 0:
                for j in range(value_indptr[t], value_indptr[t + 1]):
                    if values[j] == value:
                        allowed = True
            if not allowed:
                out[i] = True
                break
    return out

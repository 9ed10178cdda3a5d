"""NodePorts kernel (``HostPortInfo.CheckConflict``)."""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit
def port_conflict_mask(port_count, nodes, conflicting_columns):
    """bool[n]: some bound pod on the node uses a host-port column that conflicts.

    port_count : int32[n_nodes, n_port_keys] pods per (ip, protocol, port) key
    conflicting_columns : int64[m] every key that conflicts with one of the pod's wanted ports
    """
    out = np.zeros(nodes.shape[0], dtype=np.bool_)
    for i in range(nodes.shape[0]):
        for col in conflicting_columns:
            if port_count[nodes[i], col] > 0:
                out[i] = True
                break
    return out

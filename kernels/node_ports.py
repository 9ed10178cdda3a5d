"""NodePorts kernels (``HostPortInfo.CheckConflict``, ``plugins/nodeports/node_ports.go``)."""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit(inline="always")
def ports_conflict(port_count, node, conflicting_columns):
    """Whether some pod on ``node`` uses a host-port column that conflicts with the pod's.

    port_count : int32[n_nodes, n_port_keys] pods per (ip, protocol, port) key
    conflicting_columns : int64[m] every key that conflicts with one of the pod's wanted ports
    """
    for col in conflicting_columns:
        if port_count[node, col] > 0:
            return True
    return False


@jit
def port_conflict_mask(port_count, nodes, conflicting_columns):
    """bool[n]: :func:`ports_conflict` on each node of ``nodes`` (int64[n])."""
    out = np.zeros(nodes.shape[0], dtype=np.bool_)
    for i in range(nodes.shape[0]):
        out[i] = ports_conflict(port_count, nodes[i], conflicting_columns)
    return out

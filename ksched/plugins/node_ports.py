"""NodePorts (``plugins/nodeports/node_ports.go``, ``HostPortInfo.CheckConflict``).

A wanted host port on ``0.0.0.0`` conflicts with the same protocol and port on any IP; a
specific IP conflicts with ``0.0.0.0`` and with itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.api import Pod
from ksched.framework.capabilities import FilterKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.framework.node_info import NodeInfo
from ksched.kernels import node_ports as kernels
from ksched.plugins._helpers import cycle_data
from ksched.state import WILDCARD_IP, host_ports
from ksched.status import SKIP, SUCCESS, Status, unschedulable

REASON = "node(s) didn't have free ports for the requested pod ports"


def conflicts(wanted: tuple[str, str, int], used: tuple[str, str, int]) -> bool:
    ip, protocol, port = wanted
    if (protocol, port) != used[1:]:
        return False
    return ip == WILDCARD_IP or used[0] in (WILDCARD_IP, ip)


def conflicting_columns(wanted: Sequence[tuple[str, str, int]],
                        port_keys: Iterable[tuple[str, str, int]]) -> np.ndarray:
    """The host-port columns whose use on a node blocks one of the wanted ports."""
    return np.array([col for col, used in enumerate(port_keys)
                     if any(conflicts(w, used) for w in wanted)], dtype=np.int64)


@attrs.frozen
class NodePorts:
    NAME: ClassVar[str] = "NodePorts"
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.HOST_PORTS
    args: Any = None

    def pre_filter(self, cycle: Cycle) -> Status | None:
        wanted = host_ports(cycle.pod)
        if not wanted:
            return SKIP
        cycle.data[self.NAME] = wanted
        return None

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        blocked = kernels.port_conflict_mask(cycle.state.port_count, nodes,
                                             self.blocking_columns(cycle))
        return FilterResult.from_mask(~blocked, unschedulable(REASON))

    def blocking_columns(self, cycle: Cycle) -> np.ndarray:
        """The host-port columns (of ``state.port_keys``) whose use on a node blocks one of
        the pod's wanted ports."""
        wanted = cycle_data(cycle, self.NAME, lambda: host_ports(cycle.pod))
        return conflicting_columns(wanted, cycle.state.port_keys)


def reference_filter(pod: Pod, node_info: NodeInfo) -> Status:
    for wanted in host_ports(pod):
        if any(conflicts(wanted, used) for used in node_info.used_ports):
            return unschedulable(REASON)
    return SUCCESS

"""NodeName (``plugins/nodename/node_name.go``)."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from ksched.api import Node, Pod
from ksched.framework.capabilities import FilterKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.status import SUCCESS, Status, unresolvable

REASON = "node(s) didn't match the requested node name"


@attrs.frozen
class NodeName:
    """A pod that names its node (``spec.nodeName``) fits only there."""

    NAME: ClassVar[str] = "NodeName"
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    args: Any = None

    def judged_by_node_class(self, pod: Pod) -> bool:
        """Node names set nodes of a class apart: only a pod naming no node is judged by
        class."""
        return not pod.node_name

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        wanted = cycle.pod.node_name
        if not wanted:
            return FilterResult.from_mask(nodes >= 0, unresolvable(REASON))
        return FilterResult.from_mask(nodes == cycle.state.node_index.get(wanted, -1),
                                      unresolvable(REASON))


def reference_filter(pod: Pod, node: Node) -> Status:
    if pod.node_name and pod.node_name != node.name:
        return unresolvable(REASON)
    return SUCCESS

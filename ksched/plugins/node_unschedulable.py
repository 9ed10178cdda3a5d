"""NodeUnschedulable (``plugins/nodeunschedulable/node_unschedulable.go``)."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.api import Node, Pod, Taint
from ksched.constants import TAINT_NODE_UNSCHEDULABLE
from ksched.framework.capabilities import FilterKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.status import SUCCESS, Status, unresolvable

REASON = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", "NoSchedule")


def tolerates_unschedulable(pod: Pod) -> bool:
    return any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.tolerations)


@attrs.frozen
class NodeUnschedulable:
    """Rejects cordoned nodes unless the pod tolerates ``node.kubernetes.io/unschedulable``."""

    NAME: ClassVar[str] = "NodeUnschedulable"
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    args: Any = None

    def judged_by_node_class(self, pod: Pod) -> bool:
        """The cordon is part of a node's class."""
        return True

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        passed = ~cycle.state.unschedulable[nodes]
        if tolerates_unschedulable(cycle.pod):
            passed = np.ones(len(nodes), dtype=np.bool_)
        return FilterResult.from_mask(passed, unresolvable(REASON))


def reference_filter(pod: Pod, node: Node) -> Status:
    if node.unschedulable and not tolerates_unschedulable(pod):
        return unresolvable(REASON)
    return SUCCESS

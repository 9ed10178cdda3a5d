"""VolumeRestrictions (``plugins/volumerestrictions``): pods without such volumes skip it."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from ksched.framework.capabilities import FilterKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.plugins._volumes import CLAIMS, IN_TREE_DISKS, filter_all, skip_unless_used
from ksched.status import Status

KINDS = IN_TREE_DISKS + CLAIMS


@attrs.frozen
class VolumeRestrictions:
    NAME: ClassVar[str] = "VolumeRestrictions"
    #: Without the volume objects ksched does not model, every node passes.
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    args: Any = None

    def judged_by_node_class(self, pod: object) -> bool:
        return True

    def pre_filter(self, cycle: Cycle) -> Status:
        return skip_unless_used(self.NAME, cycle.pod, KINDS)

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        return filter_all(self.NAME, cycle, nodes, KINDS)

"""VolumeRestrictions (``plugins/volumerestrictions``): pods without such volumes skip it."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.plugins import _volumes
from ksched.plugins._volumes import CLAIMS, IN_TREE_DISKS
from ksched.status import Status

KINDS = IN_TREE_DISKS + CLAIMS


@attrs.frozen
class VolumeRestrictions:
    NAME: ClassVar[str] = "VolumeRestrictions"
    args: Any = None

    def pre_filter(self, cycle: Cycle) -> Status:
        return _volumes.pre_filter(self.NAME, cycle.pod, KINDS)

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        return _volumes.filter_all(self.NAME, cycle, nodes, KINDS)

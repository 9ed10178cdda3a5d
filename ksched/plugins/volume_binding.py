"""VolumeBinding (``plugins/volumebinding``): pods without the volumes it checks skip it."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.plugins import _volumes
from ksched.plugins._volumes import CLAIMS
from ksched.status import SKIP, SUCCESS, Status

KINDS = CLAIMS


@attrs.frozen
class VolumeBinding:
    NAME: ClassVar[str] = "VolumeBinding"
    args: Any = None

    def pre_filter(self, cycle: Cycle) -> Status:
        return _volumes.pre_filter(self.NAME, cycle.pod, KINDS)

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        return _volumes.filter_all(self.NAME, cycle, nodes, KINDS)

    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status:
        """Scoring needs StorageCapacityScoring, off by default: always Skip."""
        return SKIP

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        return np.zeros(len(nodes), dtype=np.int64)

    def reserve(self, cycle: Cycle, node: str) -> Status:
        """``Reserve``: assumes the pod's PV bindings; pods with claims are not supported, so
        there is nothing to assume."""
        return SUCCESS

    def unreserve(self, cycle: Cycle, node: str) -> None:
        """Nothing was assumed."""

    def pre_bind(self, cycle: Cycle, node: str) -> Status:
        """``PreBind``: no PV or PVC to bind."""
        return SUCCESS

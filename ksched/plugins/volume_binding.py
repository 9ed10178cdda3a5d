"""VolumeBinding (``plugins/volumebinding``): pods without the volumes it checks skip it."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.framework.capabilities import FilterKind, Normalization, ScoreKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.plugins._volumes import CLAIMS, filter_all, skip_unless_used
from ksched.status import SKIP, SUCCESS, Status

KINDS = CLAIMS


@attrs.frozen
class VolumeBinding:
    NAME: ClassVar[str] = "VolumeBinding"
    #: Without the volume objects ksched does not model, every node passes.
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.NODE_STATIC
    NORMALIZATION: ClassVar[Normalization] = Normalization.NONE
    args: Any = None

    def judged_by_node_class(self, pod: object) -> bool:
        return True

    def pre_filter(self, cycle: Cycle) -> Status:
        return skip_unless_used(self.NAME, cycle.pod, KINDS)

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        return filter_all(self.NAME, cycle, nodes, KINDS)

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

"""DynamicResources (``plugins/dynamicresources/dynamicresources.go``).

A pod without ``spec.resourceClaims`` skips its PreFilter (so its Filter does not run); it has
no PreScore, so its Score runs and, with no allocated claims, gives every node 0.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.errors import UnsupportedFeatureError
from ksched.framework.capabilities import FilterKind, Normalization, ScoreKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.status import SKIP, SUCCESS, Status, unschedulable


def _require_no_claims(cycle: Cycle) -> None:
    if cycle.pod.resource_claims:
        raise UnsupportedFeatureError(
            f"pod {cycle.pod.key}: spec.resourceClaims: dynamic resource allocation is not "
            "supported yet")


@attrs.frozen
class DynamicResources:
    NAME: ClassVar[str] = "DynamicResources"
    #: Without claims (the only pods ksched models), every node passes and scores 0.
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.NODE_STATIC
    NORMALIZATION: ClassVar[Normalization] = Normalization.DEFAULT
    args: Any = None

    def judged_by_node_class(self, pod: Any) -> bool:
        return True

    def pre_filter(self, cycle: Cycle) -> Status:
        _require_no_claims(cycle)
        return SKIP

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        _require_no_claims(cycle)
        return FilterResult.from_mask(np.ones(len(nodes), dtype=np.bool_), Status())

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        """Sum over allocated claims; with none, 0 everywhere."""
        _require_no_claims(cycle)
        return np.zeros(len(nodes), dtype=np.int64)

    def normalize_score(self, cycle: Cycle, scores: np.ndarray) -> None:
        """``DefaultNormalizeScore(100, false)`` leaves all-zero scores at zero."""

    def pre_enqueue(self, pod: Any) -> Status:
        """Pods without claims are never held back."""
        return SUCCESS

    def post_filter(self, cycle: Cycle, diagnosis: Any, handle: Any) -> tuple[None, Status]:
        """``PostFilter``: with no claims allocated there is nothing to deallocate."""
        _require_no_claims(cycle)
        return None, unschedulable("no new claims to deallocate")

    def reserve(self, cycle: Cycle, node: str) -> Status:
        """No claims to reserve."""
        return SUCCESS

    def unreserve(self, cycle: Cycle, node: str) -> None:
        """Nothing was reserved."""

    def pre_bind(self, cycle: Cycle, node: str) -> Status:
        """No claim allocations to write."""
        return SUCCESS

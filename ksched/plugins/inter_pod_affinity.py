"""InterPodAffinity (``plugins/interpodaffinity``).

With no pod affinity anywhere (neither in the incoming pod nor in any bound pod) upstream's
PreFilter and PreScore both return Skip, which is what this plugin does. Pod affinity and
anti-affinity terms themselves are not supported yet: they raise
:class:`~ksched.errors.UnsupportedFeatureError`.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from ksched.api import Pod
from ksched.errors import UnsupportedFeatureError
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.state import ClusterState
from ksched.status import SKIP, Status


@attrs.frozen
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


def _require_no_affinity(pod: Pod, state: ClusterState) -> None:
    if pod.has_pod_affinity:
        raise UnsupportedFeatureError(
            f"pod {pod.key}: spec.affinity: pod affinity and anti-affinity are not supported yet")
    if state.affinity_pods:
        bound = state.pods[state.affinity_pods[0]]
        raise UnsupportedFeatureError(
            f"pod {bound.key}: spec.affinity: pod affinity and anti-affinity of running pods "
            "are not supported yet")


@attrs.frozen
class InterPodAffinity:
    NAME: ClassVar[str] = "InterPodAffinity"
    args: InterPodAffinityArgs = attrs.field(
        default=None, converter=lambda a: a if a is not None else InterPodAffinityArgs())

    def pre_filter(self, cycle: Cycle) -> Status:
        _require_no_affinity(cycle.pod, cycle.state)
        return SKIP

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        _require_no_affinity(cycle.pod, cycle.state)
        return FilterResult.from_mask(np.ones(len(nodes), dtype=np.bool_), Status())

    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status:
        _require_no_affinity(cycle.pod, cycle.state)
        return SKIP

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        _require_no_affinity(cycle.pod, cycle.state)
        return np.zeros(len(nodes), dtype=np.int64)

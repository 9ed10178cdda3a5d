"""NodeResourcesBalancedAllocation (``plugins/noderesources/balanced_allocation.go``).

Favours nodes whose requested fractions of the configured resources are close to each other.
Requests are plain (no non-zero defaults) on both the pod and node side; a pod requesting none
of the resources is skipped at PreScore (kubernetes issue 129138).
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

from ksched.api import Pod
from ksched.constants import CPU, MAX_NODE_SCORE, MEMORY
from ksched.framework.capabilities import ScoreKind
from ksched.framework.interfaces import Cycle, NodeIndices
from ksched.framework.node_info import NodeInfo
from ksched.kernels import balanced_allocation as kernels
from ksched.plugins._helpers import cycle_data
from ksched.plugins.node_resources_fit import allocatable_request, resource_score_inputs
from ksched.resources import cycle_requests, pod_requests
from ksched.status import SKIP, Status


@attrs.frozen
class BalancedAllocationArgs:
    resources: tuple[tuple[str, int], ...] = ((CPU, 1), (MEMORY, 1))


@attrs.frozen
class NodeResourcesBalancedAllocation:
    NAME: ClassVar[str] = "NodeResourcesBalancedAllocation"
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.BALANCED_ALLOCATION
    args: BalancedAllocationArgs = attrs.field(
        default=None, converter=lambda a: a if a is not None else BalancedAllocationArgs())

    def score_inputs(self, cycle: Cycle) -> tuple[np.ndarray, ...]:
        """Per configured resource: (column or -1, source, the pod's plain request, weight)
        (see :func:`~ksched.plugins.node_resources_fit.resource_score_inputs`)."""
        return resource_score_inputs(cycle.state, self.args.resources,
                                     cycle_requests(cycle.data, cycle.pod), False)

    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status | None:
        inputs = self.score_inputs(cycle)
        if not inputs[2].any():
            return SKIP
        cycle.data[self.NAME] = inputs
        return None

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        columns, _, amounts, _ = cycle_data(cycle, self.NAME, lambda: self.score_inputs(cycle))
        return kernels.balanced_allocation_scores(cycle.state.allocatable, cycle.state.requested,
                                                  nodes, columns, amounts)


def reference_skips(pod: Pod, args: BalancedAllocationArgs = BalancedAllocationArgs()) -> bool:
    want = pod_requests(pod)
    return not any(want.get(name, 0) for name, _ in args.resources)


def reference_score(pod: Pod, node_info: NodeInfo,
                    args: BalancedAllocationArgs = BalancedAllocationArgs()) -> int:
    want = pod_requests(pod)
    fractions = []
    for name, _ in args.resources:
        alloc, req = allocatable_request(node_info, name, want.get(name, 0), nonzero=False)
        if alloc:
            fractions.append(min(req / alloc, 1.0))
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)

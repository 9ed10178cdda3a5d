"""NodeResourcesFit (``plugins/noderesources/fit.go`` and the scoring strategies).

Filter: the pod count and every requested resource must fit in what the node has left
(equality fits). Score: LeastAllocated (default), MostAllocated or RequestedToCapacityRatio
over the configured resources, from the pod's requests with the non-zero defaults for cpu and
memory and the node's non-zero aggregates.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import ClassVar

import attrs
import numpy as np

from ksched.api import Pod
from ksched.constants import CPU, EPHEMERAL_STORAGE, MAX_NODE_SCORE, MEMORY, PODS
from ksched.framework.capabilities import FilterKind, RequestCheck, ScoreKind
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.framework.node_info import NodeInfo
from ksched.kernels import node_resources_fit as kernels
from ksched.kernels.preemption import group_codes, nominated_fit_failures
from ksched.plugins._helpers import cycle_data
from ksched.resources import (
    NON_ZERO_DEFAULTS,
    cycle_requests,
    is_extended_resource,
    is_scalar_resource,
    pod_requests,
    request_vector,
)
from ksched.state import ClusterState
from ksched.status import SUCCESS, Status, unresolvable, unschedulable

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
#: Each scoring strategy's kernel code.
STRATEGY_CODES = {LEAST_ALLOCATED: kernels.LEAST_ALLOCATED, MOST_ALLOCATED: kernels.MOST_ALLOCATED,
                  REQUESTED_TO_CAPACITY_RATIO: kernels.REQUESTED_TO_CAPACITY_RATIO}
DEFAULT_RESOURCES = ((CPU, 1), (MEMORY, 1))
#: ``config.MaxCustomPriorityScore``: shape scores run 0..10 and are scaled by 10.
MAX_CUSTOM_PRIORITY_SCORE = 10


@attrs.frozen
class NodeResourcesFitArgs:
    """``NodeResourcesFitArgs`` (defaults as ``apis/config/v1/defaults.go``)."""

    strategy: str = LEAST_ALLOCATED
    resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES
    #: RequestedToCapacityRatio shape: (utilization 0..100, score 0..10) points.
    shape: tuple[tuple[int, int], ...] = ()
    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()


def is_ignored(name: str, args: NodeResourcesFitArgs) -> bool:
    """Extended resources the profile tells the filter to leave alone."""
    return is_extended_resource(name) and (
        name in args.ignored_resources or name.split("/", 1)[0] in args.ignored_resource_groups)


def resource_score_inputs(state: ClusterState, resources: Sequence[tuple[str, int]],
                          requests: Mapping[str, int],
                          nonzero_sources: bool) -> tuple[np.ndarray, ...]:
    """Per scored resource: (column or -1, node-side source, pod request, weight).

    A scalar the pod does not request is skipped (``calculateResourceAllocatableRequest``).
    With ``nonzero_sources`` cpu and memory read the node's non-zero aggregates. The columns,
    sources and weights are the same for every pod requesting the same resources
    (:func:`_score_layout`, shared: read, never written).
    """
    resources = tuple((name, weight) for name, weight in resources)
    amounts = [requests.get(name, 0) for name, _ in resources]
    unrequested = frozenset(name for (name, _), amount in zip(resources, amounts) if not amount)
    columns, sources, weights = _score_layout(state.resource_names, resources, unrequested,
                                              nonzero_sources)
    return columns, sources, np.array(amounts, dtype=np.int64), weights


@functools.lru_cache(maxsize=1024)
def _score_layout(resource_names: tuple[str, ...], resources: tuple[tuple[str, int], ...],
                  unrequested: frozenset[str], nonzero_sources: bool
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`resource_score_inputs`' columns, sources and weights, for a layout's resource
    columns and the scored resources a pod does not request."""
    columns, sources, weights = [], [], []
    for name, weight in resources:
        column = resource_names.index(name) if name in resource_names else -1
        if (name in unrequested and is_scalar_resource(name)) or not (
                name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource(name)):
            column = -1
        source = kernels.FROM_REQUESTED
        if nonzero_sources and name == CPU:
            source = kernels.FROM_NONZERO_CPU
        elif nonzero_sources and name == MEMORY:
            source = kernels.FROM_NONZERO_MEMORY
        columns.append(column)
        sources.append(source)
        weights.append(weight)
    return tuple(np.array(a, dtype=np.int64) for a in (columns, sources, weights))


@functools.lru_cache(maxsize=1024)
def _check_layout(resource_names: tuple[str, ...], requested: frozenset[str],
                  ignored: frozenset[str], ignored_groups: frozenset[str]
                  ) -> tuple[np.ndarray, tuple[str, ...], int]:
    """What ``fitsRequest`` checks of a pod requesting (more than 0 of) ``requested`` on a
    layout of ``resource_names``, with the profile's ignored resources and groups: the
    columns checked, the names a fit code's bits stand for, and the bits of requested scalars
    no node has (see :class:`RequestCheck`; shared: read, never written)."""
    args = NodeResourcesFitArgs(ignored_resources=ignored, ignored_resource_groups=ignored_groups)
    checked = [col for col, name in enumerate(resource_names)
               if name != PODS and name in requested and not is_ignored(name, args)]
    names = [resource_names[c] for c in checked]
    missing = 0
    for name in sorted(requested):
        if is_scalar_resource(name) and not is_ignored(name, args) \
                and name not in resource_names:
            missing |= (1 << (1 + len(names))) | int(kernels.UNRESOLVABLE)
            names.append(name)
    return np.array(checked, dtype=np.int64), tuple(names), missing


@attrs.frozen
class NodeResourcesFit:
    NAME: ClassVar[str] = "NodeResourcesFit"
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.REQUEST_DELTA
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.RESOURCE_ALLOCATION
    args: NodeResourcesFitArgs = attrs.field(
        default=None, converter=lambda a: a if a is not None else NodeResourcesFitArgs())

    def pre_filter(self, cycle: Cycle) -> Status | None:
        cycle.data[self.NAME] = cycle_requests(cycle.data, cycle.pod)
        return None

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        state, check = cycle.state, self.request_check(cycle)
        codes = kernels.fit_codes(state.allocatable, state.requested, nodes, check.request,
                                  check.checked, state.resource_column(PODS),
                                  check.count_only) | check.missing
        return fit_result(codes, check.names)

    def filter_changed(self, cycle: Cycle, node: int, delta: np.ndarray) -> Status:
        """``Filter`` on one node whose requests changed by ``delta`` (per resource column,
        the pod count included): pods added to or removed from a copy of its NodeInfo."""
        state, check = cycle.state, self.request_check(cycle)
        requested = (state.requested[node] + delta)[None, :]
        codes = kernels.fit_codes(state.allocatable[node][None, :], requested,
                                  np.zeros(1, dtype=np.int64), check.request, check.checked,
                                  state.resource_column(PODS), check.count_only) | check.missing
        return _fit_status(int(codes[0]), check.names) if codes[0] else SUCCESS

    def filter_nominated(self, cycle: Cycle, walk: NodeIndices, passed: np.ndarray,
                         mask: np.ndarray, added: np.ndarray) -> tuple[np.ndarray, FilterResult]:
        """``Filter`` on the nodes ``walk[i]`` that ``passed`` and that ``mask`` marks, with
        ``added[node]`` more requested (their nominated pods added to copies of their
        NodeInfos): the positions ``i`` where it fails, and the result there."""
        state, check = cycle.state, self.request_check(cycle)
        at = np.empty(len(walk), dtype=np.int64)
        codes = np.empty(len(walk), dtype=np.int64)
        count = nominated_fit_failures(walk, passed, mask, state.allocatable, state.requested,
                                       added, check.request, check.checked,
                                       state.resource_column(PODS), check.count_only,
                                       np.int64(check.missing), at, codes)
        return at[:count], fit_result(codes[:count], check.names)

    def status_of_code(self, cycle: Cycle, code: int) -> Status:
        """The status of a fit code of this cycle's pod (0: success)."""
        return _fit_status(code, self.request_check(cycle).names) if code else SUCCESS

    def request_check(self, cycle: Cycle) -> RequestCheck:
        """What ``fitsRequest`` checks of the cycle's pod (kept in the cycle): its requests
        per column, the columns checked and their names, whether only the pod count matters,
        and the codes of requested scalars no node has (allocatable 0 everywhere, so never
        enough)."""
        found = cycle.data.get(self.NAME + "/check")
        if found is not None:
            return found
        state = cycle.state
        requests = cycle_data(cycle, self.NAME, lambda: cycle_requests(cycle.data, cycle.pod))
        vector = request_vector(requests, state.resource_names, pod_count=0)
        requested = frozenset(name for name, amount in requests.items() if amount > 0)
        checked, names, missing = _check_layout(state.resource_names, requested,
                                                frozenset(self.args.ignored_resources),
                                                frozenset(self.args.ignored_resource_groups))
        count_only = not any(v for n, v in requests.items() if n != PODS)
        found = RequestCheck(vector, checked, names, count_only, missing)
        cycle.data[self.NAME + "/check"] = found
        return found

    def pre_score(self, cycle: Cycle, nodes: NodeIndices) -> Status | None:
        cycle.data[self.NAME + "/score"] = self.score_inputs(cycle)
        return None

    def score_inputs(self, cycle: Cycle) -> tuple[np.ndarray, ...]:
        """Per scored resource: (column or -1, node-side source, pod request with the
        non-zero defaults, weight) (see :func:`resource_score_inputs`)."""
        requests = cycle_requests(cycle.data, cycle.pod, non_zero=True)
        return resource_score_inputs(cycle.state, self.args.resources, requests, True)

    @property
    def strategy_code(self) -> int:
        """The scoring strategy's kernel code (``kernels.LEAST_ALLOCATED``...)."""
        return STRATEGY_CODES[self.args.strategy]

    #: The assigned-pod updates it registers for (``EventsToRegister`` with
    #: InPlacePodVerticalScaling, v1.35's default: Pod/UpdatePodScaleDown).
    POD_UPDATE_ACTIONS: ClassVar[tuple[str, ...]] = ("UpdatePodScaleDown",)

    def schedulable_after_pod_updated(self, target: Pod, old: Pod, new: Pod,
                                      state: ClusterState) -> bool:
        """``isSchedulableAfterPodEvent`` for an updated pod (``isResourceScaleDown``): Queue
        when the pod is bound and its request of cpu, memory, ephemeral storage or a scalar
        resource that ``target`` requests (non-zero) went down."""
        if not new.node_name:
            return False
        before, after = pod_requests(old), pod_requests(new)
        return any(amount and (name in (CPU, MEMORY, EPHEMERAL_STORAGE)
                               or is_scalar_resource(name))
                   and before.get(name, 0) > after.get(name, 0)
                   for name, amount in pod_requests(target).items())

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        columns, sources, amounts, weights = cycle_data(cycle, self.NAME + "/score",
                                                        lambda: self.score_inputs(cycle))
        shape_x, shape_y = shape_arrays(self.args.shape)
        state = cycle.state
        return kernels.resource_allocation_scores(
            self.strategy_code, state.allocatable, state.requested,
            state.nonzero_requested, nodes, columns, sources, amounts, weights, shape_x, shape_y)


def shape_arrays(shape: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The RTCR shape as kernel arrays, scores scaled to 0..100."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return (np.array([u for u, _ in shape], dtype=np.int64),
            np.array([s * scale for _, s in shape], dtype=np.int64))


def fit_result(codes: np.ndarray, names: Sequence[str]) -> FilterResult:
    """``FilterResult.from_codes`` of fit codes, grouped without sorting every node."""
    distinct, inverse = group_codes(codes)
    if not len(distinct) and len(codes):
        distinct, inverse = np.unique(codes, return_inverse=True)
    statuses = tuple(_fit_status(int(c), names) if c else SUCCESS for c in distinct.tolist())
    return FilterResult(codes == 0, inverse.astype(np.int32).reshape(-1), statuses)


_STATUSES: dict[tuple[int, tuple[str, ...]], Status] = {}


def _fit_status(code: int, names: Sequence[str]) -> Status:
    """The status of a fit code (kept: statuses are immutable)."""
    key = (code, tuple(names))
    found = _STATUSES.get(key)
    if found is None:
        if len(_STATUSES) > 4096:
            _STATUSES.clear()
        found = _STATUSES[key] = _word_fit_status(code, names)
    return found


def _word_fit_status(code: int, names: Sequence[str]) -> Status:
    reasons = ["Too many pods"] if code & int(kernels.TOO_MANY_PODS) else []
    reasons += [f"Insufficient {name}" for j, name in enumerate(names) if code >> (1 + j) & 1]
    return (unresolvable if code & int(kernels.UNRESOLVABLE) else unschedulable)(*reasons)


# ----------------------------------------------------------------------- reference


def reference_filter(pod: Pod, node_info: NodeInfo,
                     args: NodeResourcesFitArgs = NodeResourcesFitArgs()) -> Status:
    """``fitsRequest``."""
    allocatable, requested = node_info.node.allocatable, node_info.requested
    reasons, unresolvable_seen = [], False
    if len(node_info.pods) + 1 > allocatable.get(PODS, 0):
        reasons.append("Too many pods")
    want = pod_requests(pod)
    ordered = [CPU, MEMORY, EPHEMERAL_STORAGE] + sorted(
        n for n in want
        if n not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) and is_scalar_resource(n))
    for name in ordered:
        amount = want.get(name, 0)
        if amount <= 0 or is_ignored(name, args):
            continue
        alloc = allocatable.get(name, 0)
        if amount > alloc - requested.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable_seen |= amount > alloc
    if not reasons:
        return SUCCESS
    return (unresolvable if unresolvable_seen else unschedulable)(*reasons)


def reference_score(pod: Pod, node_info: NodeInfo,
                    args: NodeResourcesFitArgs = NodeResourcesFitArgs()) -> int:
    """``resourceAllocationScorer.score`` with the configured strategy."""
    want = pod_requests(pod, NON_ZERO_DEFAULTS)
    total = weight_sum = 0
    for name, weight in args.resources:
        alloc, req = allocatable_request(node_info, name, want.get(name, 0), nonzero=True)
        if alloc == 0:
            continue
        if args.strategy == LEAST_ALLOCATED:
            s = 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc
        elif args.strategy == MOST_ALLOCATED:
            s = min(req, alloc) * MAX_NODE_SCORE // alloc
        else:
            s = _shape_value(args.shape, 100 if req > alloc else req * 100 // alloc)
            if s <= 0:
                continue
        total += s * weight
        weight_sum += weight
    if weight_sum == 0:
        return 0
    if args.strategy == REQUESTED_TO_CAPACITY_RATIO:
        from fractions import Fraction
        exact = Fraction(total, weight_sum)
        return int(exact) + (1 if exact - int(exact) >= Fraction(1, 2) else 0)
    return total // weight_sum


def allocatable_request(node_info: NodeInfo, name: str, pod_amount: int,
                        nonzero: bool) -> tuple[int, int]:
    """``calculateResourceAllocatableRequest``."""
    if (pod_amount == 0 and is_scalar_resource(name)) or not (
            name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource(name)):
        return 0, 0
    alloc = node_info.node.allocatable.get(name, 0)
    if nonzero and name in (CPU, MEMORY):
        base = node_info.non_zero_requested[0 if name == CPU else 1]
    else:
        base = node_info.requested.get(name, 0)
    if name not in (CPU, MEMORY, EPHEMERAL_STORAGE) and name not in node_info.node.allocatable:
        return 0, 0
    return alloc, base + pod_amount


def _shape_value(shape: Sequence[tuple[int, int]], p: int) -> int:
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    for k, (u, s) in enumerate(shape):
        if p <= u:
            if k == 0:
                return s * scale
            (u0, s0) = shape[k - 1]
            num = (s - s0) * scale * (p - u0)
            q = abs(num) // (u - u0)
            return s0 * scale + (q if num >= 0 else -q)
    return shape[-1][1] * scale

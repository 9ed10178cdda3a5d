"""NodeResourcesFit: the kernel path (plugin over a Cycle) against ``reference_*`` per node.

Filter, and Score with each strategy (LeastAllocated, MostAllocated, RequestedToCapacityRatio)
over random valid ``NodeResourcesFitArgs``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import Container, Node, Pod
from ksched.constants import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from ksched.plugins.node_resources_fit import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFit,
    NodeResourcesFitArgs,
    reference_filter,
    reference_score,
)
from ksched.status import Code, unresolvable, unschedulable
from tests.strategies import (
    FOO,
    GI,
    GPU,
    HUGEPAGES,
    MI,
    UNTRACKED,
    Scenario,
    assert_filter_equal,
    build_scenario,
    scenarios,
)

SETTINGS = settings(max_examples=60, deadline=None)
_BASE_REASONS = ("Too many pods", "Insufficient cpu", "Insufficient memory",
                 "Insufficient ephemeral-storage")
SCORED_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE, GPU, FOO, HUGEPAGES)


def canonical_reasons(reasons: tuple[str, ...]) -> tuple[str, ...]:
    """Go walks the pod's scalar resources in map order (random): compare those as a set."""
    base = tuple(r for r in reasons if r in _BASE_REASONS)
    return base + tuple(sorted(r for r in reasons if r not in _BASE_REASONS))


@st.composite
def shapes(draw: st.DrawFn) -> tuple[tuple[int, int], ...]:
    """A valid RTCR shape: 1-5 points, utilisation strictly increasing in 0..100,
    scores in 0..10 (rising, falling or both)."""
    utilisations = sorted(draw(st.sets(st.integers(0, 100), min_size=1, max_size=5)))
    return tuple((u, draw(st.integers(0, 10))) for u in utilisations)


@st.composite
def fit_args(draw: st.DrawFn, strategy: str | None = None) -> NodeResourcesFitArgs:
    strategy = strategy or draw(st.sampled_from(
        (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)))
    resources = draw(st.lists(st.tuples(st.sampled_from(SCORED_RESOURCES), st.integers(1, 100)),
                              min_size=1, max_size=4, unique_by=lambda r: r[0]))
    return NodeResourcesFitArgs(
        strategy=strategy,
        resources=tuple(resources),
        shape=draw(shapes()) if strategy == REQUESTED_TO_CAPACITY_RATIO else (),
        ignored_resources=frozenset(draw(st.sets(st.sampled_from((GPU, FOO, HUGEPAGES))))),
        ignored_resource_groups=frozenset(draw(st.sets(st.sampled_from(
            ("example.com", "nvidia.com"))))),
    )


def check_filter(s: Scenario, args: NodeResourcesFitArgs = NodeResourcesFitArgs()
                 ) -> np.ndarray:
    plugin = NodeResourcesFit(args)
    cycle = s.cycle()
    assert plugin.pre_filter(cycle) is None
    result = plugin.filter(cycle, s.indices)
    assert_filter_equal(result, [reference_filter(s.pod, info, args) for info in s.infos],
                        s.nodes, canonical_reasons)
    return result.passed


def check_score(s: Scenario, args: NodeResourcesFitArgs = NodeResourcesFitArgs()
                ) -> list[int]:
    plugin = NodeResourcesFit(args)
    cycle = s.cycle()
    assert plugin.pre_score(cycle, s.indices) is None
    raw = plugin.score(cycle, s.indices)
    assert raw.dtype == np.int64
    expected = [reference_score(s.pod, info, args) for info in s.infos]
    assert raw.tolist() == expected
    assert all(0 <= v <= 100 for v in expected)
    # Score without PreScore (a profile may disable it) recomputes the same inputs.
    assert plugin.score(s.cycle(), s.indices).tolist() == expected
    return expected


@SETTINGS
@given(scenarios(spread=False))
def test_filter_matches_reference(s: Scenario) -> None:
    check_filter(s)


@SETTINGS
@given(scenarios(spread=False), fit_args())
def test_filter_with_ignored_resources(s: Scenario, args: NodeResourcesFitArgs) -> None:
    check_filter(s, args)


@SETTINGS
@given(scenarios(spread=False), fit_args(LEAST_ALLOCATED))
def test_least_allocated(s: Scenario, args: NodeResourcesFitArgs) -> None:
    check_score(s, args)


@SETTINGS
@given(scenarios(spread=False), fit_args(MOST_ALLOCATED))
def test_most_allocated(s: Scenario, args: NodeResourcesFitArgs) -> None:
    check_score(s, args)


@SETTINGS
@given(scenarios(spread=False), fit_args(REQUESTED_TO_CAPACITY_RATIO))
def test_requested_to_capacity_ratio(s: Scenario, args: NodeResourcesFitArgs) -> None:
    check_score(s, args)


# --------------------------------------------------------------------------- edge cases


def _pod(name: str = "p", node: str = "", **requests: int) -> Pod:
    return Pod(name, node_name=node, containers=[Container("c", requests=requests)])


def _node(name: str, cpu: int = 4000, memory: int = 8 * GI, pods: int = 10, **extra: int) -> Node:
    return Node(name, allocatable={CPU: cpu, MEMORY: memory, PODS: pods, **extra})


def test_zero_allocatable_is_unresolvable() -> None:
    s = build_scenario([Node("empty"), _node("ok")], [], _pod(cpu=100, memory=MI))
    result = NodeResourcesFit().filter(s.cycle(), s.indices)
    assert check_filter(s).tolist() == [False, True]
    assert result.status_at(0) == unresolvable("Too many pods", "Insufficient cpu",
                                               "Insufficient memory")
    assert check_score(s) == [0, 98]


def test_request_above_capacity_is_unresolvable_else_unschedulable() -> None:
    nodes = [_node("small", cpu=1000), _node("busy", cpu=4000), _node("free", cpu=4000)]
    bound = [_pod("b", "busy", cpu=3500)]
    s = build_scenario(nodes, bound, _pod(cpu=2000))
    result = NodeResourcesFit().filter(s.cycle(), s.indices)
    assert check_filter(s).tolist() == [False, False, True]
    assert result.status_at(0) == unresolvable("Insufficient cpu")
    assert result.status_at(1) == unschedulable("Insufficient cpu")


def test_exactly_full_fits_and_pod_count() -> None:
    nodes = [_node("a", cpu=1000, pods=2), _node("b", cpu=1000, pods=1)]
    s = build_scenario(nodes, [_pod("b1", "a", cpu=500), _pod("b2", "b")], _pod(cpu=500))
    result = NodeResourcesFit().filter(s.cycle(), s.indices)
    assert check_filter(s).tolist() == [True, False]
    assert result.status_at(1) == unschedulable("Too many pods")   # never unresolvable


def test_best_effort_pod_checks_only_the_pod_count() -> None:
    s = build_scenario([Node("a", allocatable={PODS: 1}), Node("b")], [], _pod())
    assert check_filter(s).tolist() == [True, False]


def test_scalar_resources_and_ignored_groups() -> None:
    nodes = [_node("gpu", **{GPU: 1}), _node("plain")]
    pod = _pod(**{GPU: 2, FOO: 1, "cpu": 100})
    s = build_scenario(nodes, [], pod)
    result = NodeResourcesFit().filter(s.cycle(), s.indices)
    assert check_filter(s).tolist() == [False, False]
    assert canonical_reasons(result.status_at(0).reasons) == (
        "Insufficient example.com/foo", "Insufficient nvidia.com/gpu")
    assert result.status_at(0).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    args = NodeResourcesFitArgs(ignored_resources=frozenset({GPU}),
                                ignored_resource_groups=frozenset({"example.com"}))
    assert check_filter(s, args).tolist() == [True, True]
    # Lists (as a user writes them, not only frozensets) are accepted the same way.
    listed = NodeResourcesFitArgs(ignored_resources=[GPU], ignored_resource_groups=["example.com"])
    assert check_filter(s, listed).tolist() == [True, True]


def test_all_nodes_infeasible() -> None:
    s = build_scenario([_node(f"n{i}", cpu=500) for i in range(4)], [], _pod(cpu=600))
    assert not check_filter(s).any()


def test_least_and_most_allocated_ties() -> None:
    nodes = [_node("a"), _node("b"), _node("c", cpu=8000, memory=16 * GI)]
    s = build_scenario(nodes, [], _pod(cpu=1000, memory=2 * GI))
    assert check_score(s) == [75, 75, 87]
    assert check_score(s, NodeResourcesFitArgs(strategy=MOST_ALLOCATED)) == [25, 25, 12]


def test_non_zero_defaults_for_missing_requests() -> None:
    # No requests: scored as 100m cpu and 200Mi memory; an explicit 0 stays 0.
    nodes = [_node("a", cpu=1000, memory=1000 * MI)]
    assert check_score(build_scenario(nodes, [], _pod())) == [85]
    assert check_score(build_scenario(nodes, [], _pod(cpu=0, memory=0))) == [100]


def test_requested_to_capacity_ratio_rounding_and_falling_shape() -> None:
    args = NodeResourcesFitArgs(strategy=REQUESTED_TO_CAPACITY_RATIO,
                                resources=((CPU, 1), (MEMORY, 2)), shape=((0, 10), (100, 0)))
    nodes = [_node("a", cpu=1000, memory=1000 * MI), _node("b", cpu=0, memory=0)]
    scores = check_score(build_scenario(nodes, [], _pod(cpu=250, memory=500 * MI)), args)
    # cpu 25% -> 75, memory 50% -> 50: (75 + 2 * 50) / 3 = 58.33 -> 58; node b has nothing.
    assert scores == [58, 0]


def test_requested_to_capacity_ratio_skips_zero_scores_with_their_weight() -> None:
    args = NodeResourcesFitArgs(strategy=REQUESTED_TO_CAPACITY_RATIO,
                                resources=((CPU, 1), (MEMORY, 1)), shape=((0, 0), (100, 10)))
    nodes = [_node("a", cpu=1000, memory=1000 * MI)]
    # cpu 0% -> 0 (left out, weight too); memory 45% -> 45.
    assert check_score(build_scenario(nodes, [], _pod(cpu=0, memory=450 * MI)), args) == [45]


def test_unrequested_scalar_is_left_out_of_the_score() -> None:
    args = NodeResourcesFitArgs(resources=((CPU, 1), (GPU, 5)))
    nodes = [_node("a", cpu=1000, **{GPU: 4})]
    assert check_score(build_scenario(nodes, [], _pod(cpu=500)), args) == [50]
    assert check_score(build_scenario(nodes, [], _pod(cpu=500, **{GPU: 1})), args) == [70]


@pytest.mark.parametrize("name", [PODS, UNTRACKED])
def test_non_scalar_scored_resource_is_left_out(name: str) -> None:
    # Go's calculateResourceAllocatableRequest returns (0, 0) for a name that is neither cpu,
    # memory, ephemeral-storage nor a scalar resource ("pods", an unprefixed unknown name).
    args = NodeResourcesFitArgs(resources=((CPU, 1), (name, 1)))
    node = Node("a", allocatable={CPU: 1000, MEMORY: 8 * GI, PODS: 4, UNTRACKED: 4})
    s = build_scenario([node], [_pod("b", "a")], _pod(cpu=500, **{UNTRACKED: 1}))
    # Only cpu counts: (1000 - 500 - 100) * 100 / 1000 = 40.
    assert check_score(s, args) == [40]

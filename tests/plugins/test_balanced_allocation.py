"""NodeResourcesBalancedAllocation: the kernel path against ``reference_*`` per node."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import Container, Node, Pod
from ksched.constants import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from ksched.plugins.balanced_allocation import (
    BalancedAllocationArgs,
    NodeResourcesBalancedAllocation,
    reference_score,
    reference_skips,
)
from tests.strategies import FOO, GI, GPU, HUGEPAGES, MI, Scenario, build_scenario, scenarios

SETTINGS = settings(max_examples=60, deadline=None)

#: Validation: unique names, every weight 1.
balanced_args = st.one_of(
    st.just(BalancedAllocationArgs()),
    st.lists(st.sampled_from((CPU, MEMORY, EPHEMERAL_STORAGE, GPU, FOO, HUGEPAGES)),
             min_size=1, max_size=4, unique=True).map(
        lambda names: BalancedAllocationArgs(tuple((n, 1) for n in names))),
)


def check(s: Scenario, args: BalancedAllocationArgs = BalancedAllocationArgs()) -> list[int] | None:
    """Compare PreScore's Skip and the raw scores; ``None`` when skipped."""
    plugin = NodeResourcesBalancedAllocation(args)
    cycle = s.cycle()
    status = plugin.pre_score(cycle, s.indices)
    if reference_skips(s.pod, args):
        assert status is not None and status.is_skip
        return None
    assert status is None
    raw = plugin.score(cycle, s.indices)
    assert raw.dtype == np.int64
    expected = [reference_score(s.pod, info, args) for info in s.infos]
    assert raw.tolist() == expected
    assert all(0 <= v <= 100 for v in expected)
    return expected


@SETTINGS
@given(scenarios(spread=False), balanced_args)
def test_kernel_matches_reference(s: Scenario, args: BalancedAllocationArgs) -> None:
    check(s, args)


@SETTINGS
@given(scenarios(spread=False))
def test_three_resources(s: Scenario) -> None:
    check(s, BalancedAllocationArgs(((CPU, 1), (MEMORY, 1), (EPHEMERAL_STORAGE, 1))))


# --------------------------------------------------------------------------- edge cases


def _pod(name: str = "p", node: str = "", **requests: int) -> Pod:
    return Pod(name, node_name=node, containers=[Container("c", requests=requests)])


def _node(name: str, cpu: int = 1000, memory: int = 1000 * MI, **extra: int) -> Node:
    return Node(name, allocatable={CPU: cpu, MEMORY: memory, PODS: 10, **extra})


def test_best_effort_pod_is_skipped() -> None:
    s = build_scenario([_node("a")], [_pod("b", "a", cpu=500)], _pod())
    assert check(s) is None
    # Explicit zeros are still best effort; the non-zero defaults do not apply here.
    assert check(build_scenario([_node("a")], [], _pod(cpu=0, memory=0))) is None


def test_balanced_and_unbalanced_nodes() -> None:
    nodes = [_node("a"), _node("b", cpu=4000), _node("c", cpu=0, memory=0)]
    scores = check(build_scenario(nodes, [], _pod(cpu=500, memory=500 * MI)))
    # a: 0.5 / 0.5 -> 100; b: 0.125 / 0.5 -> 1 - 0.1875 -> 81; c: nothing allocatable -> 100.
    assert scores == [100, 81, 100]


def test_zero_allocatable_resource_is_left_out() -> None:
    # Only memory remains: one fraction, no spread.
    assert check(build_scenario([_node("a", cpu=0)], [], _pod(cpu=900, memory=100 * MI))) == [100]


def test_fraction_capped_at_one() -> None:
    nodes = [_node("a")]
    bound = [_pod("b", "a", cpu=3000)]
    assert check(build_scenario(nodes, bound, _pod(cpu=100, memory=0))) == [50]


def test_three_resources_use_the_standard_deviation() -> None:
    args = BalancedAllocationArgs(((CPU, 1), (MEMORY, 1), (EPHEMERAL_STORAGE, 1)))
    nodes = [_node("a", **{EPHEMERAL_STORAGE: 4 * GI}), _node("b")]
    pod = _pod(cpu=500, memory=250 * MI, **{EPHEMERAL_STORAGE: GI})
    # a: fractions 0.5, 0.25, 0.25 -> std 0.1179 -> 88; b has no storage: |0.5 - 0.25| / 2 -> 87.
    assert check(build_scenario(nodes, [], pod), args) == [88, 87]


def test_unrequested_scalar_is_left_out() -> None:
    args = BalancedAllocationArgs(((CPU, 1), (MEMORY, 1), (GPU, 1)))
    nodes = [_node("a", **{GPU: 2})]
    assert check(build_scenario(nodes, [], _pod(cpu=500, memory=500 * MI)), args) == [100]
    assert check(build_scenario(nodes, [], _pod(cpu=500, memory=500 * MI, **{GPU: 2})),
                 args) == [76]


def test_ties() -> None:
    nodes = [_node(f"n{i}") for i in range(3)]
    assert check(build_scenario(nodes, [], _pod(cpu=100, memory=300 * MI))) == [90, 90, 90]


def test_non_scalar_configured_resource_is_left_out() -> None:
    # "pods" is neither cpu, memory, ephemeral-storage nor a scalar: Go leaves it out, so only
    # cpu (0.5) and memory (0.25) remain: 1 - 0.125 -> 87.
    args = BalancedAllocationArgs(((CPU, 1), (MEMORY, 1), (PODS, 1)))
    node = Node("a", allocatable={CPU: 1000, MEMORY: 1000 * MI, PODS: 4})
    s = build_scenario([node], [_pod("b", "a")], _pod(cpu=500, memory=250 * MI))
    assert check(s, args) == [87]

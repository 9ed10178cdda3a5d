"""NodeUnschedulable: the plugin over a Cycle against ``reference_filter`` per node."""

from __future__ import annotations

from hypothesis import given, settings

from ksched.api import Container, Node, Pod, Toleration
from ksched.constants import TAINT_NODE_UNSCHEDULABLE
from ksched.plugins.node_unschedulable import REASON, NodeUnschedulable, reference_filter
from ksched.status import unresolvable
from tests.strategies import Scenario, assert_filter_equal, build_scenario, scenarios

SETTINGS = settings(max_examples=60, deadline=None)
PLUGIN = NodeUnschedulable()


def check(s: Scenario) -> list[bool]:
    result = PLUGIN.filter(s.cycle(), s.indices)
    assert_filter_equal(result, [reference_filter(s.pod, n) for n in s.nodes], s.nodes)
    return result.passed.tolist()


@SETTINGS
@given(scenarios(spread=False))
def test_kernel_matches_reference(s: Scenario) -> None:
    check(s)


NODES = [Node("a", unschedulable=True), Node("b"), Node("c", unschedulable=True)]


def _pod(*tolerations: Toleration) -> Pod:
    return Pod("p", containers=[Container("c")], tolerations=tolerations)


def test_cordoned_nodes_fail_unresolvable() -> None:
    s = build_scenario(NODES, [], _pod())
    assert check(s) == [False, True, False]
    assert PLUGIN.filter(s.cycle(), s.indices).status_at(0) == unresolvable(REASON)


def test_all_nodes_infeasible() -> None:
    assert check(build_scenario([NODES[0], NODES[2]], [], _pod())) == [False, False]


def test_tolerations_of_the_unschedulable_taint() -> None:
    tolerated = [Toleration(TAINT_NODE_UNSCHEDULABLE, "Exists"),
                 Toleration(TAINT_NODE_UNSCHEDULABLE, "Exists", effect="NoSchedule"),
                 Toleration(TAINT_NODE_UNSCHEDULABLE, "Equal", ""),
                 Toleration("", "Exists")]
    for t in tolerated:
        assert check(build_scenario(NODES, [], _pod(t))) == [True, True, True], t
    refused = [Toleration(TAINT_NODE_UNSCHEDULABLE, "Exists", effect="NoExecute"),
               Toleration(TAINT_NODE_UNSCHEDULABLE, "Equal", "x"),
               Toleration("other", "Exists")]
    for t in refused:
        assert check(build_scenario(NODES, [], _pod(t))) == [False, True, False], t

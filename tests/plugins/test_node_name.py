"""NodeName: the plugin over a Cycle against ``reference_filter`` per node."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import Container, Node, Pod
from ksched.plugins.node_name import REASON, NodeName, reference_filter
from ksched.status import unresolvable
from tests.strategies import Scenario, assert_filter_equal, build_scenario, scenarios

SETTINGS = settings(max_examples=60, deadline=None)
NAMES = tuple(f"n{i}" for i in range(12))
PLUGIN = NodeName()


def check(s: Scenario) -> list[bool]:
    result = PLUGIN.filter(s.cycle(), s.indices)
    assert_filter_equal(result, [reference_filter(s.pod, n) for n in s.nodes], s.nodes)
    return result.passed.tolist()


@SETTINGS
@given(scenarios(spread=False, max_pods=3), st.sampled_from(("", "nope", *NAMES)))
def test_kernel_matches_reference(s: Scenario, wanted: str) -> None:
    check(attrs.evolve(s, pod=attrs.evolve(s.pod, node_name=wanted)))


NODES = [Node("a"), Node("b"), Node("c")]


@pytest.mark.parametrize("wanted, passed", [
    ("", [True, True, True]),
    ("b", [False, True, False]),
    ("missing", [False, False, False]),   # all nodes infeasible
])
def test_named_node(wanted: str, passed: list[bool]) -> None:
    s = build_scenario(NODES, [], Pod("p", containers=[Container("c")], node_name=wanted))
    assert check(s) == passed
    result = PLUGIN.filter(s.cycle(), s.indices)
    for i in range(3):
        if not passed[i]:
            assert result.status_at(i) == unresolvable(REASON)

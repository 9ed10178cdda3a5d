"""NodePorts: the kernel path (plugin over a Cycle) against ``reference_filter`` per node."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from ksched.api import Container, ContainerPort, Node, Pod
from ksched.plugins.node_ports import REASON, NodePorts, reference_filter
from ksched.state import host_ports
from ksched.status import unschedulable
from tests.strategies import Scenario, assert_filter_equal, build_scenario, scenarios

SETTINGS = settings(max_examples=60, deadline=None)
PLUGIN = NodePorts()


def check(s: Scenario) -> list[bool]:
    cycle = s.cycle()
    expected = [reference_filter(s.pod, info) for info in s.infos]
    pre = PLUGIN.pre_filter(cycle)
    if not host_ports(s.pod):
        assert pre is not None and pre.is_skip
        assert all(e.is_success for e in expected)
        return [True] * len(expected)
    assert pre is None
    result = PLUGIN.filter(cycle, s.indices)
    assert_filter_equal(result, expected, s.nodes)
    return result.passed.tolist()


@SETTINGS
@given(scenarios(spread=False))
def test_kernel_matches_reference(s: Scenario) -> None:
    check(s)


def _pod(name: str, *ports: ContainerPort, node: str = "", sidecar: bool = False,
         init: bool = False) -> Pod:
    c = Container("c", ports=ports, restart_policy="Always" if sidecar else "")
    if sidecar or init:
        return Pod(name, node_name=node, containers=[Container("app")], init_containers=[c])
    return Pod(name, node_name=node, containers=[c])


def _port(host_port: int, ip: str = "", protocol: str = "TCP") -> ContainerPort:
    return ContainerPort(8000, host_port, protocol, ip)


NODES = [Node("a"), Node("b"), Node("c"), Node("d")]
BOUND = [_pod("x", _port(80), node="a"),                       # 0.0.0.0:80/TCP
         _pod("y", _port(80, "10.0.0.1"), node="b"),           # 10.0.0.1:80/TCP
         _pod("z", _port(80, "10.0.0.2", "UDP"), node="c"),    # 10.0.0.2:80/UDP
         _pod("w", _port(443), node="d", init=True)]           # a plain init container's port


@pytest.mark.parametrize("wanted, passed", [
    (_port(80), [False, False, True, True]),                 # wildcard hits any IP, same proto
    (_port(80, "0.0.0.0"), [False, False, True, True]),
    (_port(80, "10.0.0.1"), [False, False, True, True]),     # own IP and the wildcard
    (_port(80, "10.0.0.3"), [False, True, True, True]),
    (_port(80, "", "UDP"), [True, True, False, True]),
    (_port(80, "10.0.0.1", "UDP"), [True, True, True, True]),
    (_port(443), [True, True, True, True]),                  # init container ports are unused
    (_port(0), [True, True, True, True]),                    # no host port: PreFilter skips
])
def test_host_port_conflicts(wanted: ContainerPort, passed: list[bool]) -> None:
    s = build_scenario(NODES, BOUND, _pod("p", wanted))
    assert check(s) == passed
    result = PLUGIN.filter(s.cycle(), s.indices)
    for i, ok in enumerate(passed):
        if not ok:
            assert result.status_at(i) == unschedulable(REASON)


def test_sidecar_ports_count_on_both_sides() -> None:
    bound = [_pod("x", _port(8080), node="a", sidecar=True)]
    s = build_scenario(NODES[:2], bound, _pod("p", _port(8080, "10.0.0.1"), sidecar=True))
    assert check(s) == [False, True]


def test_all_nodes_infeasible() -> None:
    bound = [_pod(f"x{i}", _port(80), node=n.name) for i, n in enumerate(NODES)]
    assert check(build_scenario(NODES, bound, _pod("p", _port(80, "10.0.0.9")))) == [False] * 4

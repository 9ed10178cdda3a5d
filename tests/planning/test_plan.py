"""plan(): the integer program's lower bound, verified and adjusted by exact scheduling."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched import Container, Node, Pod, schedule_batch
from ksched.errors import ArgumentError
from ksched.planning.plan import plan
from ksched.state import ClusterState

EMPTY = ClusterState.from_records([])


def _node(name: str, cpu: str, memory: str = "64Gi", **extra: str) -> Node:
    return Node(name, labels={"pool": name}, allocatable={"cpu": cpu, "memory": memory,
                                                          "pods": 110, **extra})


def _pods(n: int, cpu: str = "1", memory: str = "0", prefix: str = "p", **kw) -> list[Pod]:
    requests = {"cpu": cpu, "memory": memory, **kw.pop("extra", {})}
    return [Pod(f"{prefix}{i}", containers=[Container("c", requests=requests)], **kw)
            for i in range(n)]


def _fleet(types: list[Node], counts: dict[str, int]) -> ClusterState:
    """The new nodes ``plan`` names (``<type>-plan-<k>``), alone."""
    return ClusterState.from_records([
        Node(f"{t.name}-plan-{k}", labels={**t.labels, "kubernetes.io/hostname":
                                           f"{t.name}-plan-{k}"},
             taints=t.taints, allocatable=t.allocatable)
        for t in types for k in range(counts.get(t.name, 0))])


def _all_fit(types: list[Node], counts: dict[str, int], pods: list[Pod]) -> bool:
    return not schedule_batch(_fleet(types, counts), pods).unschedulable


def test_cpu_bound_three_nodes_and_two_fail() -> None:
    m = _node("m", "4")
    pods = _pods(10)
    report = plan(EMPTY, pods, [m])
    assert report.bound == {"m": 3}
    assert report.nodes == {"m": 3}
    assert report.complete and report.unschedulable == () and report.cost == 3.0
    assert {p.node for p in report.placements} == {"m-plan-0", "m-plan-1", "m-plan-2"}
    assert _all_fit([m], {"m": 3}, pods)
    assert not _all_fit([m], {"m": 2}, pods)


def test_progress_is_told_each_verifying_schedule() -> None:
    told: list[int] = []
    report = plan(EMPTY, _pods(10, cpu="100m", memory="3Gi"), [_node("m", "16", memory="8Gi")],
                  progress=told.append)
    assert told == [1] * report.schedules and report.schedules >= 2


def test_memory_bound() -> None:
    m = _node("m", "16", memory="8Gi")
    pods = _pods(10, cpu="100m", memory="3Gi")
    report = plan(EMPTY, pods, [m])
    assert report.bound == {"m": 4}  # 30Gi over 8Gi nodes: the bound ignores fragmentation
    assert report.nodes == {"m": 5}  # 2 pods of 3Gi per 8Gi node
    assert report.gap == 1.0 and report.fewer["m"][0] == 2
    assert "Insufficient memory" in report.fewer["m"][1][0][1]
    assert not _all_fit([m], {"m": 4}, pods)


def test_existing_free_capacity_counts() -> None:
    m = _node("m", "4")
    existing = ClusterState.from_records([_node("old", "4")], _pods(1, prefix="run",
                                                                    node_name="old"))
    report = plan(existing, _pods(11), [m])
    assert report.bound == {"m": 2}  # 11 cpu - 3 free
    assert report.nodes == {"m": 2}
    assert sum(p.node == "old" for p in report.placements) == 3


def test_prices_choose_the_cheaper_mix() -> None:
    small, big = _node("small", "2"), _node("big", "8")
    pods = _pods(18)
    report = plan(EMPTY, pods, [small, big], prices={"small": 1, "big": 3})
    assert report.bound == {"small": 1, "big": 2}
    assert report.nodes == {"small": 1, "big": 2}
    assert report.cost == 7.0 and report.bound_cost == 7.0 and report.gap == 0.0
    assert "cost 7.00" in str(report)
    assert not _all_fit([small, big], {"small": 0, "big": 2}, pods)
    assert not _all_fit([small, big], {"small": 1, "big": 1}, pods)


def test_extended_resource_adds_the_gpu_type() -> None:
    cpu, gpu = _node("cpu", "4"), _node("gpu", "4", **{"nvidia.com/gpu": "1"})
    pods = _pods(1, prefix="train", extra={"nvidia.com/gpu": "1"}) + _pods(4)
    report = plan(EMPTY, pods, [cpu, gpu], prices={"cpu": 1, "gpu": 5})
    assert report.bound == {"cpu": 1, "gpu": 1}
    assert report.nodes == {"cpu": 1, "gpu": 1}
    assert report.result.node_of("default/train0") == "gpu-plan-0"


def test_the_bound_respects_node_selectors() -> None:
    cpu, gpu = _node("cpu", "4"), _node("gpu", "4")
    pods = _pods(1, cpu="3", prefix="sel", node_selector={"pool": "gpu"}) + _pods(3)
    report = plan(EMPTY, pods, [cpu, gpu], prices={"cpu": 1, "gpu": 5})
    # a selector-blind bound would be 2 cpu nodes (6 cpu); the selector pod needs a gpu one
    assert report.bound == {"cpu": 1, "gpu": 1} and report.bound_cost == 6.0
    assert report.nodes == {"cpu": 1, "gpu": 1}
    assert report.result.node_of("default/sel0") == "gpu-plan-0"
    assert report.complete


def test_pod_fitting_no_type_is_reported() -> None:
    m = _node("m", "4")
    pods = _pods(1, cpu="10", prefix="huge") + _pods(4)
    report = plan(EMPTY, pods, [m])
    assert report.nodes == {"m": 1}
    assert [u.pod.key for u in report.unschedulable] == ["default/huge0"]
    assert report.unschedulable[0].reasons == {"m": "0/1 nodes are available: 1 Insufficient cpu."}
    assert report.bound == {"m": 1}  # a pod larger than every type leaves the demand
    assert report.bound_cost <= report.cost
    assert report.to_dict()["unschedulable"][0]["pod"] == "default/huge0"
    assert not report.complete and report.status == "some pods fit no type"
    assert report.failed == () and report.message == ""
    assert "1 fit no node type" in str(report)


def _deployment(replicas: int, cpu: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                         "containers": [{"name": "c", "resources": {"requests": {
                             "cpu": cpu}}}]}}}}


def _daemon_set(cpu: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {
                         "containers": [{"name": "c", "resources": {"requests": {
                             "cpu": cpu}}}]}}}}


def test_daemon_set_takes_part_of_each_new_node() -> None:
    m = _node("m", "4")
    without = plan(EMPTY, [_deployment(8, "1")], [m])
    assert without.nodes == {"m": 2}
    report = plan(EMPTY, [_deployment(8, "1"), _daemon_set("1")], [m])
    assert report.bound == {"m": 3}  # 3 cpu left per node for the Deployment
    assert report.nodes == {"m": 3}
    state = report.result.state
    agents = sorted(state.node_names[int(state.pod_node[i])]
                    for i, p in enumerate(state.pods) if p.name.startswith("agent-"))
    assert agents == ["m-plan-0", "m-plan-1", "m-plan-2"]
    assert len(report.placements) == 8  # the new nodes' agents are bound, not pending


def test_daemon_set_pod_of_an_existing_node_is_pending() -> None:
    m = _node("m", "4")
    existing = ClusterState.from_records([_node("old", "4")])
    report = plan(existing, [_deployment(8, "1"), _daemon_set("1")], [m])
    assert report.nodes == {"m": 2}  # old: agent + 3, each new: agent + 3
    assert report.placements[0].pod.name.startswith("agent-")
    assert report.placements[0].node == "old"
    assert report.complete


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(2, 8), min_size=1, max_size=2),
       st.lists(st.integers(1, 10), min_size=1, max_size=12))
def test_one_node_fewer_of_a_chosen_type_does_not_schedule(cpus: list[int],
                                                          sizes: list[int]) -> None:
    types = [_node(f"t{i}", str(c)) for i, c in enumerate(cpus)]
    pods = [Pod(f"p{i}", containers=[Container("c", requests={"cpu": f"{s * 500}m"})])
            for i, s in enumerate(sizes)]
    report = plan(EMPTY, pods, types)
    fit = [p for p in pods if any(p.containers[0].requests["cpu"] <= c * 1000 for c in cpus)]
    assert len(report.unschedulable) == len(pods) - len(fit)
    assert _all_fit(types, report.nodes, fit)
    assert report.bound_cost <= sum(report.nodes.values())
    for name, count in report.nodes.items():
        if count:
            assert not _all_fit(types, {**report.nodes, name: count - 1}, fit)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"node_types": []}, "node_types: empty"),
    ({"node_types": [Pod("x")]},
     "node_types[0]: expected a Node record or a v1 Node manifest, got Pod"),
    ({"node_types": [_node("m", "4"), _node("m", "2")]}, "node_types[1]: duplicate"),
    ({"prices": {"n2": 1}}, "prices['n2']: no such node type"),
    ({"prices": {"m": -1}}, "prices['m']: expected a finite number >= 0"),
    ({"prices": [1]}, "prices: expected a mapping"),
    ({"max_nodes": -1}, "max_nodes: expected an integer from 0 to 1,000,000, got -1"),
    ({"max_cost": -1}, "max_cost: expected a finite number >= 0, got -1"),
    ({"time_limit": 0}, "time_limit: expected a number of seconds > 0, got 0"),
    ({"priority_classes": "x"}, "priority_classes: expected a list"),
    ({"max_nodes": 10**7}, "max_nodes: expected an integer from 0 to 1,000,000, got 10000000"),
    ({"progress": 3}, "progress: must be a callable"),
])
def test_bad_arguments(kwargs: dict, message: str) -> None:
    args = {"node_types": [_node("m", "4")], **kwargs}
    with pytest.raises(ArgumentError) as info:
        plan(EMPTY, _pods(1), **args)
    assert message in str(info.value)


def test_inputs_not_mutated_and_manifest_types() -> None:
    manifest = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "m",
                                                                 "labels": {"a": "b"}},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    before = repr(manifest)
    report = plan(EMPTY, _pods(5), [manifest], max_nodes=1)
    assert repr(manifest) == before
    assert report.nodes == {"m": 1}
    assert report.message == "max_nodes (1) reached with 1 new nodes and 1 pods not scheduled"
    assert report.status == "out of budget" and not report.complete
    assert [p.pod.key for p in report.failed] == ["default/p4"]

"""A bound pod updated in place (``updatePodInCache``, ``pkg/scheduler/eventhandlers.go``,
v1.35.4): the cache sees the new pod on the same node, and each event of
``PodSchedulingPropertiesChange`` goes to ``MoveAllToActiveOrBackoffQueue`` with the hints of
the plugins registered for it: NodeResourcesFit for UpdatePodScaleDown
(``isSchedulableAfterPodEvent``), InterPodAffinity and PodTopologySpread for UpdatePodLabel
(``isSchedulableAfterPodChange``). A pod moves at the update, not at the 5-minute flush.
"""

from __future__ import annotations

import pytest

from ksched import ClusterState, Container, InvalidObjectError, Node, Pod
from ksched.api import LabelSelector, PodAffinity, PodAffinityTerm, TopologySpreadConstraint
from ksched.plugins.inter_pod_affinity import InterPodAffinity
from ksched.plugins.node_resources_fit import NodeResourcesFit
from ksched.plugins.pod_topology_spread import PodTopologySpread
from ksched.queue import pod_update_events
from ksched.simulator import Event, Simulator

HOST = "kubernetes.io/hostname"


def node(name: str, cpu: int = 4000) -> Node:
    return Node(name, labels={HOST: name},
                allocatable={"cpu": cpu, "memory": 2**36, "pods": 110})


def pod(name: str, cpu: int = 100, **extra) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu})], **extra)


def history(result, name: str) -> list[tuple[float, str, str | None]]:
    return [(d.time, d.outcome, d.node) for d in result.decisions if d.pod == f"default/{name}"]


def test_a_scale_down_frees_the_node_at_once_and_a_label_update_does_not_retry():
    filler = pod("filler", 3000)
    events = [Event(0, "create", pod=filler), Event(1, "create", pod=pod("big", 2000)),
              Event(5, "update", pod=pod("filler", 3000, labels={"x": "1"})),
              Event(20, "update", pod=pod("filler", 1000, labels={"x": "1"})),
              Event(30, "create", pod=pod("rest", 1000)),
              Event(40, "create", pod=pod("over", 100))]
    cluster = ClusterState.from_records([node("n1")])
    result = Simulator(cluster).run(events)
    assert history(result, "filler") == [(0, "bound", "n1")]  # no second cycle
    assert history(result, "big") == [(1, "unschedulable", None), (20, "bound", "n1")]
    # 1000 + 2000 + 1000 fill the 4000 millicores: the node counts the resized request.
    assert history(result, "rest") == [(30, "bound", "n1")]
    assert [outcome for _, outcome, _ in history(result, "over")] == ["unschedulable"]


def test_an_anti_affinity_pod_is_retried_when_the_bound_pod_loses_the_label():
    away = PodAffinityTerm(HOST, LabelSelector(match_labels={"color": "green"}))
    shy = pod("shy", pod_anti_affinity=PodAffinity(required=(away,)))
    events = [Event(0, "create", pod=pod("blocker", labels={"color": "green"})),
              Event(1, "create", pod=shy),
              Event(5, "update", pod=pod("blocker", labels={"color": "green", "x": "1"})),
              Event(20, "update", pod=pod("blocker", labels={"color": "blue"}))]
    result = Simulator(ClusterState.from_records([node("n1")])).run(events)
    assert history(result, "shy") == [(1, "unschedulable", None), (20, "bound", "n1")]


def test_a_spread_pod_is_retried_when_a_bound_pod_stops_matching_its_selector():
    spread = TopologySpreadConstraint(1, HOST, "DoNotSchedule",
                                      LabelSelector(match_labels={"app": "web"}), min_domains=2)
    web = {"labels": {"app": "web"}, "topology_spread_constraints": (spread,)}
    events = [Event(0, "create", pod=pod("old", labels={"app": "web"})),
              Event(1, "create", pod=pod("new", **web)),
              Event(5, "update", pod=pod("old", labels={"app": "web", "tier": "x"})),
              Event(20, "update", pod=pod("old", labels={"app": "retired"}))]
    result = Simulator(ClusterState.from_records([node("n1")])).run(events)
    # One domain of the two wanted: the global minimum is 0, skew 2 > 1 until "old" leaves.
    assert history(result, "new") == [(1, "unschedulable", None), (20, "bound", "n1")]


def test_assigned_pod_update_events():
    old = pod("p", 1000, node_name="n1", labels={"a": "1"})
    assert pod_update_events(old, pod("p", 500, node_name="n1", labels={"a": "2"})) == [
        "AssignedPodUpdatePodLabel", "AssignedPodUpdatePodScaleDown"]
    assert pod_update_events(old, pod("p", 2000, node_name="n1", labels={"a": "1"})) == [
        "AssignedPodUpdate"]


def test_fit_hint_queues_for_a_bound_scale_down_of_a_resource_the_pod_requests():
    fit, target = NodeResourcesFit(), pod("t", 100)
    old, new = pod("b", 1000, node_name="n1"), pod("b", 500, node_name="n1")
    assert fit.schedulable_after_pod_updated(target, old, new, None)
    assert not fit.schedulable_after_pod_updated(target, new, old, None)  # scaled up
    assert not fit.schedulable_after_pod_updated(  # not bound
        target, pod("b", 1000), pod("b", 500), None)
    memory_only = Pod("t", containers=[Container("c", requests={"memory": 2**20})])
    assert not fit.schedulable_after_pod_updated(memory_only, old, new, None)


def test_affinity_hint_queues_when_the_update_starts_matching_all_required_terms():
    plugin = InterPodAffinity()
    near = PodAffinityTerm(HOST, LabelSelector(match_labels={"app": "db"}))
    target = pod("t", pod_affinity=PodAffinity(required=(near,)))
    web, db = (pod("b", node_name="n1", labels={"app": a}) for a in ("web", "db"))
    assert plugin.schedulable_after_pod_updated(target, web, db, None)
    assert not plugin.schedulable_after_pod_updated(target, db, web, None)
    assert not plugin.schedulable_after_pod_updated(target, db, db, None)


def test_spread_hint_queues_when_a_label_change_flips_a_selector_in_the_namespace():
    plugin, state = PodTopologySpread(), ClusterState.from_records([node("n1")])
    spread = TopologySpreadConstraint(1, HOST, "DoNotSchedule",
                                      LabelSelector(match_labels={"app": "web"}))
    target = pod("t", topology_spread_constraints=(spread,))
    web, other = (pod("b", node_name="n1", labels={"app": a}) for a in ("web", "db"))
    web_x = pod("b", node_name="n1", labels={"app": "web", "x": "1"})
    assert plugin.schedulable_after_pod_updated(target, web, other, state)
    assert plugin.schedulable_after_pod_updated(target, other, web, state)
    assert not plugin.schedulable_after_pod_updated(target, web, web_x, state)
    elsewhere = [Pod("b", namespace="ns", node_name="n1", labels=p.labels) for p in (web, other)]
    assert not plugin.schedulable_after_pod_updated(target, *elsewhere, state)


def test_a_pod_bound_at_time_zero_can_be_resized():
    cluster = ClusterState.from_records([node("n1")], [pod("filler", 3000, node_name="n1")])
    result = Simulator(cluster).run([Event(1, "create", pod=pod("big", 2000)),
                                     Event(20, "update", pod=pod("filler", 1000))])
    assert history(result, "big") == [(1, "unschedulable", None), (20, "bound", "n1")]


def test_a_resize_beyond_the_nodes_allocatable_is_refused() -> None:
    """The kubelet marks it Infeasible (the scheduler keeps the old requests): not modelled,
    so refused by name, not counted as an overcommitted node."""
    node = Node("n1", allocatable={"cpu": "2", "memory": "4Gi", "pods": 10})
    small = Pod("a", containers=[Container("c", requests={"cpu": "1"})])
    big = Pod("a", containers=[Container("c", requests={"cpu": "5"})])
    with pytest.raises(InvalidObjectError) as raised:
        Simulator(ClusterState.from_records([node])).run(
            [Event(0, "create", pod=small), Event(5, "update", pod=big)])
    assert str(raised.value) == (
        "pod default/a: spec.containers[*].resources.requests: cpu 5000m is more than node "
        "n1's allocatable 2000m: the kubelet marks this in-place resize Infeasible, which "
        "ksched does not model")

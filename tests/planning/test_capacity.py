"""``ksched.planning.capacity``: max fit, in closed form and through the loop, checked against
one long ``schedule_batch`` list of copies."""

from __future__ import annotations

import collections
import json
import sys

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ksched import (
    ArgumentError,
    ClusterState,
    Container,
    ContainerPort,
    Node,
    Pod,
    Taint,
    default_profile,
    schedule_batch,
)
from ksched.api import LabelSelector, PodAffinity, PodAffinityTerm
from ksched.planning.capacity import LIMIT_REACHED, capacity, fail_counts
from tests.refusals import refused
from tests.strategies import pods, scenarios

GI = 2**30


def _full(diagnosis: str, nodes: int) -> str:
    """The condition message: ``diagnosis`` and what PostFilter adds when no node has a
    lower-priority pod."""
    return (f"{diagnosis} no new claims to deallocate, preemption: 0/{nodes} nodes are "
            f"available: {nodes} No preemption victims found for incoming pod.")


def _node(name: str, cpu: int = 4000, zone: str | None = None, **kw) -> Node:
    labels = {"kubernetes.io/hostname": name} | ({"zone": zone} if zone else {})
    return Node(name, labels=labels, allocatable={"cpu": cpu, "memory": 8 * GI, "pods": 110},
                **kw)


def _pod(name: str, cpu: int = 1000, **kw) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu})], **kw)


@pytest.fixture
def three() -> ClusterState:
    """3 nodes of 4 cpu (zones a, a, b); a 1-cpu pod runs on n0."""
    nodes = [_node("n0", zone="a"), _node("n1", zone="a"), _node("n2", zone="b")]
    return ClusterState.from_records(nodes, [attrs.evolve(_pod("run"), node_name="n0")])


def _long_list(cluster, pod, n, profile=None):
    copies = [attrs.evolve(pod, name=f"{pod.name}-{k}") for k in range(n)]
    return schedule_batch(cluster, copies, profile=profile)


# --------------------------------------------------------------------------- exact numbers


def test_three_nodes_of_four_cpu_minus_running(three):
    report = capacity(three, _pod("web"), by="zone")
    (result,) = report.results
    assert (result.replicas, result.method) == (11, "closed-form")
    assert result.replicas_on_nodes == {"n0": 3, "n1": 4, "n2": 4}
    assert result.by == {"a": 7, "b": 4}
    assert result.stop_reason == _full("0/3 nodes are available: 3 Insufficient cpu.", 3)
    assert result.fail_counts == {"Insufficient cpu": 3}
    assert report.resources()["cpu"] == {"allocatable": 12000, "requested": 12000}
    assert len(report.state.pods) == 12
    assert three.requested[:, three.resource_column("cpu")].sum() == 1000  # input unchanged


def test_stop_reason_is_the_next_copys_reason(three):
    pod = _pod("web", cpu=1500)
    report = capacity(three, pod)
    looped = capacity(three, pod, profile=default_profile())
    reference = _long_list(three, pod, report.results[0].replicas + 1)
    assert report.results[0].replicas == looped.results[0].replicas == 6
    assert report.results[0].stop_reason == _full(reference.placements[-1].reason, 3)
    assert looped.results[0].stop_reason == report.results[0].stop_reason


def test_max_limit_and_own_limit(three):
    report = capacity(three, [_pod("web"), (_pod("db", 500), 2)], max_limit=5)
    web, db = report.results
    assert (web.replicas, web.method, web.stop_reason) == (5, "loop", LIMIT_REACHED)
    assert (db.replicas, db.stop_reason, db.fail_counts) == (2, LIMIT_REACHED, {})
    assert report.replicas == 7
    assert capacity(three, _pod("web"), max_limit=0).results[0].replicas == 0


def test_limit_above_the_answer_stops_at_the_failure(three):
    result = capacity(three, _pod("web"), max_limit=50).results[0]
    assert (result.replicas, result.method) == (11, "loop")
    assert result.stop_reason == _full("0/3 nodes are available: 3 Insufficient cpu.", 3)


def test_fill_order(three):
    web, db = capacity(three, [_pod("web", 2000), _pod("db", 500)], order="fill").results
    assert (web.replicas, db.replicas) == (5, 2)  # n0 keeps 1 cpu after web: 2 db there
    assert db.replicas_on_nodes == {"n0": 2}


def test_interleave_alternates_and_drops_a_stopped_template(three):
    report = capacity(three, [_pod("web", 2000), _pod("db", 500)], order="interleave")
    web, db = report.results
    assert web.method == db.method == "loop"
    # the single list the report stands for: web-0, db-0, web-1, db-1, ...
    sequence = []
    for k in range(max(web.replicas, db.replicas) + 1):
        if k <= web.replicas:
            sequence.append(attrs.evolve(_pod("web", 2000), name=f"web-{k}"))
        if k <= db.replicas:
            sequence.append(attrs.evolve(_pod("db", 500), name=f"db-{k}"))
    reference = schedule_batch(three, sequence)
    placed = collections.Counter(p.pod.name.split("-")[0] for p in reference.placements
                                 if p.node)
    assert (web.replicas, db.replicas) == (placed["web"], placed["db"])
    assert sum(reference.state.requested[:, 0]) == sum(report.state.requested[:, 0])


def test_exclude_nodes(three):
    report = capacity(three, _pod("web"), exclude_nodes=["n0"])
    assert report.results[0].replicas == 8
    assert report.results[0].stop_reason == _full("0/2 nodes are available: 2 Insufficient "
                                                  "cpu.", 2)
    assert report.state.node_names == ("n1", "n2")
    assert report.displaced is None


def test_remove_nodes_re_places_their_pods_before_counting(three):
    """Losing zone a: the pod on n0 moves to n2 (the only node left), leaving 3 cpu there."""
    report = capacity(three, _pod("web"), remove_nodes="zone=a")
    assert report.state.node_names == ("n2",)
    assert [(d.pod, d.outcome, d.node) for d in report.displaced.pods] == \
        [("default/run", "placed", "n2")]
    assert report.results[0].replicas == 3
    assert report.results[0].stop_reason == _full("0/1 nodes are available: 1 Insufficient "
                                                  "cpu.", 1)
    assert capacity(three, _pod("web"), exclude_nodes=["n0", "n1"]).results[0].replicas == 4
    assert report.to_dict()["displaced"]["removed_nodes"] == ["n0", "n1"]


def test_remove_nodes_by_name_matches_the_selector(three):
    by_name = capacity(three, _pod("web"), remove_nodes=["n0", "n1"])
    assert by_name.results[0].replicas == 3
    assert by_name.results[0].replicas_on_nodes == {"n2": 3}


def test_static_filters_zero_a_node_and_host_ports_one_per_node():
    nodes = [_node("n0"), _node("n1", unschedulable=True),
             _node("n2", taints=[Taint("gpu", "yes", "NoSchedule")])]
    cluster = ClusterState.from_records(nodes)
    assert capacity(cluster, _pod("web")).results[0].replicas_on_nodes == {"n0": 4}
    ported = Pod("web", containers=[Container(
        "c", requests={"cpu": 100}, ports=[ContainerPort(8080, host_port=8080)])])
    both = ClusterState.from_records([_node("n0"), _node("n1")])
    result = capacity(both, ported).results[0]
    assert (result.replicas, result.method) == (2, "closed-form")
    assert result.replicas == capacity(both, ported, profile=default_profile()).results[0].replicas


def test_affinity_uses_the_loop(three):
    anti = PodAffinity(required=[PodAffinityTerm(
        "kubernetes.io/hostname", LabelSelector(match_labels={"app": "web"}))])
    pod = _pod("web", 100, labels={"app": "web"}, pod_anti_affinity=anti)
    result = capacity(three, pod).results[0]
    assert (result.replicas, result.method) == (3, "loop")
    assert result.fail_counts == {"node(s) didn't match pod anti-affinity rules": 3}


def test_reports_render(three):
    report = capacity(three, _pod("web"), by="zone")
    text = str(report)
    assert "default/web  11" in text and "closed-form" in text and "a     7" in text
    data = json.loads(json.dumps(report.to_dict()))
    assert data["templates"][0]["replicas_on_nodes"] == {"n0": 3, "n1": 4, "n2": 4}
    review = report.to_cluster_capacity()
    assert "kind" not in review  # cluster-capacity's TypeMeta is empty and omitted
    status = review["status"]
    assert status["replicas"] == 11
    assert status["failReason"] == {
        "failType": "Unschedulable",
        "failMessage": _full("0/3 nodes are available: 3 Insufficient cpu.", 3)}
    assert status["pods"][0]["replicasOnNodes"][0] == {"nodeName": "n0", "replicas": 3}
    assert status["pods"][0]["failSummary"] is None  # cluster-capacity never fills it
    assert review["spec"]["replicas"] == 0
    assert review["spec"]["podRequirements"] == [{
        "podName": "web", "nodeSelectors": None, "resources": {
            "primaryResources": {"cpu": "1", "memory": "0", "nvdia.com/gpu": "0"},
            "scalarResources": None}}]
    limited = capacity(three, _pod("web", cpu=1500), max_limit=2).to_cluster_capacity()
    assert limited["status"]["failReason"] == {
        "failType": "LimitReached", "failMessage": "Maximum number of pods simulated: 2"}
    assert limited["spec"]["podRequirements"][0]["resources"]["primaryResources"]["cpu"] == \
        "1500m"


def test_fail_counts_parses_several_reasons():
    message = ("0/5 nodes are available: 1 node(s) were unschedulable, 4 Insufficient cpu. "
               "preemption: 0/5 nodes are available: 5 No preemption victims found.")
    assert fail_counts(message) == {"node(s) were unschedulable": 1, "Insufficient cpu": 4}
    assert fail_counts(LIMIT_REACHED) == {}


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"max_limit": -1}, "max_limit"), ({"max_limit": 2.5}, "max_limit"),
    ({"max_limit": True}, "max_limit"), ({"order": "random"}, "order"),
    ({"exclude_nodes": ["nope"]}, "exclude_nodes"), ({"by": ""}, "by"), ({"by": 3}, "by"),
    ({"remove_nodes": ["nope"]}, "remove_nodes"), ({"remove_nodes": "zone=c"}, "remove_nodes"),
    ({"remove_nodes": "zone"}, "remove_nodes"), ({"remove_nodes": 3}, "remove_nodes"),
    ({"profile": "default"}, "profile")])
def test_bad_arguments(three, kwargs, named):
    with pytest.raises(ArgumentError, match=named):
        capacity(three, _pod("web"), **kwargs)


def test_limits_beyond_the_bound_are_refused(three):
    refused(capacity, three, _pod("web"), max_limit=10**12,
            match="max_limit: expected an integer from 0 to 10,000,000, got 1000000000000")
    refused(capacity, three, [(_pod("web"), 10_000_001)],
            match="templates[0] limit: expected an integer from 0 to 10,000,000, got 10000001")


def test_the_loop_without_a_limit_stops_at_the_pod_bound(three, monkeypatch):
    monkeypatch.setattr(sys.modules[capacity.__module__], "MAX_PODS", 5)
    result = capacity(three, _pod("web", 10), profile=default_profile()).results[0]
    assert (result.method, result.replicas, result.stop_reason) == ("loop", 5, LIMIT_REACHED)


def test_bad_templates(three):
    with pytest.raises(ArgumentError, match=r"templates\[0\] limit"):
        capacity(three, [(_pod("web"), -2)])
    with pytest.raises(ArgumentError, match=r"templates\[1\]"):
        capacity(three, [_pod("web"), 7])
    with pytest.raises(ArgumentError, match="templates"):
        capacity(three, [])
    with pytest.raises(ArgumentError, match="two templates named default/web"):
        capacity(three, [_pod("web"), _pod("web")])


# --------------------------------------------------------------------------- random clusters


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenarios(max_nodes=12, max_pods=12, spread=False,
                 pod_strategy=st.one_of(pods(), pods(scheduling=False))))
def test_closed_form_equals_loop_and_one_long_list(scenario):
    pod = attrs.evolve(scenario.pod, name="t", node_name="")
    cluster = ClusterState.from_records(scenario.nodes, scenario.bound)
    closed = capacity(cluster, pod).results[0]
    looped = capacity(cluster, pod, profile=default_profile()).results[0]
    assert looped.method == "loop"
    assert closed.replicas_on_nodes == looped.replicas_on_nodes
    if closed.method != "closed-form":  # the explained cycle ended in an error
        assert closed.replicas == 0
        return
    reference = _long_list(cluster, pod, closed.replicas + 5)
    placed = collections.Counter(p.node for p in reference.placements if p.node)
    assert dict(placed) == closed.replicas_on_nodes
    first_failure = reference.placements[closed.replicas]
    assert first_failure.node is None
    # the closed form words from arrays what the loop's simulator run says
    assert closed.stop_reason == looped.stop_reason
    assert closed.stop_reason.startswith(first_failure.reason)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenarios(max_nodes=8, max_pods=10, spread=True))
def test_loop_equals_one_long_list(scenario):
    pod = attrs.evolve(scenario.pod, name="t", node_name="")
    cluster = ClusterState.from_records(scenario.nodes, scenario.bound)
    result = capacity(cluster, pod, max_limit=300).results[0]
    reference = _long_list(cluster, pod, result.replicas + 5)
    nodes = [p.node for p in reference.placements]
    cut = nodes.index(None) if None in nodes else len(nodes)
    assert result.replicas == min(cut, 300)
    assert dict(collections.Counter(nodes[:result.replicas])) == result.replicas_on_nodes


def test_added_nodes_take_copies_as_nodes_of_the_cluster_would(three):
    extra = _node("big")
    report = capacity(three, _pod("web"), add_nodes=[(extra, 2)])
    direct = capacity(ClusterState.from_records(
        [*three.nodes, attrs.evolve(extra, name="big-0",
                                    labels={**extra.labels, "kubernetes.io/hostname": "big-0"}),
         attrs.evolve(extra, name="big-1",
                      labels={**extra.labels, "kubernetes.io/hostname": "big-1"})],
        list(three.pods)), _pod("web"))
    assert report.results[0].replicas == direct.results[0].replicas == 11 + 8
    assert report.results[0].replicas_on_nodes == direct.results[0].replicas_on_nodes
    assert report.results[0].replicas_on_nodes["big-1"] == 4
    manifest = {"metadata": {"name": "m"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}}
    assert capacity(three, _pod("web"), add_nodes=[(manifest, 1)]).results[0].replicas == 15


@pytest.mark.parametrize("add_nodes, match", [
    ("big", "add_nodes: expected (node, count) pairs, got str"),
    ([("big", 1)], "add_nodes[0]: expected a Node record or a v1 Node manifest, got str"),
    ([(Node("n"), -1)], "add_nodes[0]: count: expected an integer from 0 to 1,000,000, got -1"),
    ([(Node("n"), 10**9)],
     "add_nodes[0]: count: expected an integer from 0 to 1,000,000, got 1000000000"),
    ([(Node("n"), 600_000), (Node("m"), 600_000)],
     "add_nodes: nodes in all: expected an integer from 0 to 1,000,000, got 1200000"),
    ([Node("n")], "add_nodes[0]: expected a (node, count) pair, got Node"),
    ([(Node("n0"), 1)], "add_nodes: node 'n0-0' is in the cluster already"),
])
def test_bad_added_nodes(three, add_nodes, match):
    nodes = [*three.nodes, Node("n0-0")] if "n0-0" in match else three.nodes
    refused(capacity, ClusterState.from_records(nodes), _pod("web"), add_nodes=add_nodes,
            match=match)


def test_the_loop_reports_progress(three):
    told: list[int] = []
    report = capacity(three, _pod("web"), max_limit=5, progress=told.append)
    assert report.results[0].method == "loop"
    assert told and sum(told) >= report.results[0].replicas == 5
    refused(capacity, three, _pod("web"), progress=3, match="progress")

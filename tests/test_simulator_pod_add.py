"""The Simulator sends AssignedPodAdd for every pod it binds (``addAssignedPodToCache``,
``pkg/scheduler/eventhandlers.go``, v1.35.4): pods rejected by InterPodAffinity or
PodTopologySpread are retried as soon as a bound pod they may need arrives, not at the
5-minute leftover flush; pods rejected only by plugins registered for no Pod/Add event
(NodeResourcesFit) stay until an event of theirs or the flush.
"""

from __future__ import annotations

from ksched import ClusterState, Container, Node, Pod
from ksched.api import (
    LabelSelector,
    PodAffinity,
    PodAffinityTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from ksched.simulator import Event, Simulator

HOST = "kubernetes.io/hostname"


def node(name: str, cpu: int = 4000, **extra) -> Node:
    return Node(name, labels={HOST: name},
                allocatable={"cpu": cpu, "memory": 2**36, "pods": 110}, **extra)


def pod(name: str, cpu: int = 100, **extra) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu})], **extra)


def create(at: float, p: Pod, duration: float | None = None) -> Event:
    return Event(at, "create", pod=p, duration=duration)


def history(result, name: str) -> list[tuple[float, str, str | None]]:
    return [(d.time, d.outcome, d.node) for d in result.decisions if d.pod == f"default/{name}"]


def test_a_pod_needing_an_app_is_scheduled_when_its_first_pod_binds():
    term = PodAffinityTerm(HOST, LabelSelector(match_labels={"app": "db"}))
    client = pod("client", pod_affinity=PodAffinity(required=(term,)))
    cluster = ClusterState.from_records([node("n1"), node("n2")])
    result = Simulator(cluster).run([create(0, client),
                                     create(40, pod("web", labels={"app": "web"})),
                                     create(60, pod("db", labels={"app": "db"}))])
    db_node = history(result, "db")[0][2]
    assert history(result, "db") == [(60, "bound", db_node)]
    # web binding at 40 does not match the term: the client is not retried then.
    assert history(result, "client") == [(0, "unschedulable", None), (60, "bound", db_node)]


def test_a_pod_short_of_cpu_is_not_retried_by_a_pod_add_but_by_a_delete():
    cluster = ClusterState.from_records([node("n1")])
    result = Simulator(cluster).run([create(0, pod("filler", 2000)), create(1, pod("big", 3000)),
                                     create(10, pod("small", 100)),
                                     Event(50, "delete", name="default/filler")])
    assert history(result, "small") == [(10, "bound", "n1")]
    assert history(result, "big") == [(1, "unschedulable", None), (50, "bound", "n1")]
    assert "Insufficient cpu" in result.decisions[1].reason


def test_a_pod_short_of_cpu_waits_for_the_flush_when_only_pods_are_added():
    cluster = ClusterState.from_records([node("n1", cpu=1000)])
    result = Simulator(cluster).run([create(0, pod("big", 3000))]
                                    + [create(10 * k, pod(f"small-{k}")) for k in range(1, 6)]
                                    + [create(400, pod("late"))])
    times = [t for t, outcome, _ in history(result, "big") if outcome == "unschedulable"]
    assert times == [0, 330]


def test_a_spread_pod_is_retried_when_a_matching_pod_binds_in_its_namespace():
    # n2 is tainted (the web pods do not tolerate it) but counted (nodeTaintsPolicy Ignore):
    # web-2 is rejected by PodTopologySpread on n1 (skew 2 > 1) and TaintToleration on n2.
    spread = TopologySpreadConstraint(1, HOST, "DoNotSchedule",
                                      LabelSelector(match_labels={"app": "web"}))
    web = {"labels": {"app": "web"}, "topology_spread_constraints": (spread,)}
    cluster = ClusterState.from_records([node("n1"), node("n2", taints=(Taint("t"),))])
    tolerant = {"tolerations": (Toleration(key="t", operator="Exists"),), "node_name": "n2"}
    result = Simulator(cluster).run([
        create(0, pod("web-1", **web)), create(1, pod("web-2", **web)),
        create(5, pod("db", labels={"app": "db"}, **tolerant)),  # selected by no constraint
        create(7, Pod("web-x", namespace="other", labels={"app": "web"}, **tolerant)),
        create(10, pod("web-3", labels={"app": "web"}, **tolerant))])  # created bound
    assert history(result, "web-1") == [(0, "bound", "n1")]
    assert history(result, "web-3") == [(10, "bound", "n2")]
    assert history(result, "web-2") == [(1, "unschedulable", None), (10, "bound", "n1")]

"""The Simulator's compiled path on many pod classes arriving one at a time, against the
framework (``fast_path=False``) on random heterogeneous clusters.

With the fast path on, a pod of a class the loop models runs on its class's arrays alone
(``FusedLoop.arrays(c)``), pods with pod affinity or spreading take the framework's cycle
(their InterPodAffinity counts read the running pods' groups,
:mod:`ksched.plugins.inter_pod_affinity_index`), and failures go through the compiled
preemption cycles; the queue keeps its unschedulable pods by timestamp. The event logs must be
the same, decision by decision.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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

GI = 2**30
GPU = "nvidia.com/gpu"
HOST = "kubernetes.io/hostname"


@st.composite
def clusters(draw) -> ClusterState:
    nodes = []
    for i in range(draw(st.integers(1, 7))):
        gpus = draw(st.sampled_from([0, 0, 2, 8]))
        labels = {HOST: f"n{i}", "zone": draw(st.sampled_from("ab"))}
        if gpus:
            labels["gpu"] = draw(st.sampled_from(["t4", "a100"]))
        nodes.append(Node(
            f"n{i}", labels=labels,
            allocatable={"cpu": draw(st.sampled_from([2000, 4000, 8000])), "memory": 16 * GI,
                         "pods": draw(st.sampled_from([4, 110])), **({GPU: gpus} if gpus else {})},
            taints=(Taint("dedicated", "gpu", "NoSchedule"),) if draw(st.integers(0, 4)) == 0
            else (),
            unschedulable=draw(st.integers(0, 9)) == 0))
    return ClusterState.from_records(nodes, [])


@st.composite
def pod_specs(draw, i: int) -> Pod:
    requests = {"cpu": draw(st.sampled_from([100, 500, 1000, 1500, 3000, 9000])),
                "memory": draw(st.sampled_from([0, GI, 4 * GI]))}
    if draw(st.integers(0, 3)) == 0:
        requests[GPU] = draw(st.sampled_from([1, 2, 4]))
    app = draw(st.sampled_from(["web", "db", "batch"]))
    extra = {}
    kind = draw(st.integers(0, 9))
    selector = LabelSelector(match_labels={"app": app})
    if kind == 0:  # counts pods: the framework's cycle
        extra["pod_anti_affinity"] = PodAffinity(required=(PodAffinityTerm(HOST, selector),))
    elif kind == 1:
        extra["topology_spread_constraints"] = (TopologySpreadConstraint(
            1, "zone", "DoNotSchedule", selector),)
    return Pod(f"p{i}", labels={"app": app},
               containers=[Container("c", requests=requests)],
               priority=draw(st.sampled_from([0, 0, 10, 100])),
               node_selector={"zone": draw(st.sampled_from("ab"))}
               if draw(st.integers(0, 3)) == 0 else None,
               tolerations=(Toleration("dedicated", "Equal", "gpu", "NoSchedule"),)
               if draw(st.booleans()) else (),
               **extra)


@st.composite
def timelines(draw) -> tuple[ClusterState, list[Event]]:
    cluster = draw(clusters())
    events = []
    for i in range(draw(st.integers(1, 24))):
        at = draw(st.sampled_from([0.0, 0.0, 1.0, 7.0, 40.0, 400.0]))
        events.append(Event(at, "create", pod=draw(pod_specs(i)),
                            duration=draw(st.sampled_from([None, 3.0, 60.0, 900.0]))))
        if draw(st.integers(0, 7)) == 0:
            events.append(Event(at + draw(st.sampled_from([0.5, 30.0])), "delete",
                                name=f"default/p{i}"))
    return cluster, events


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timelines())
def test_compiled_classes_log_the_same_decisions_as_the_framework(timeline):
    cluster, events = timeline
    fast = Simulator(cluster).run(events)
    slow = Simulator(cluster, fast_path=False).run(events)
    assert [d.to_record() for d in fast.decisions] == [d.to_record() for d in slow.decisions]
    assert [s for s in fast.samples] == [s for s in slow.samples]
    assert fast.usage == slow.usage


def test_classes_arriving_one_by_one_bind_fail_and_retry_as_the_framework_does():
    """Many shapes, one at a time: each class compiled when its first pod comes; pods that fit
    nowhere fail and are retried as pods finish."""
    nodes = [Node(f"n{i}", labels={HOST: f"n{i}", "zone": "ab"[i % 2]},
                  allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110}) for i in range(4)]
    cluster = ClusterState.from_records(nodes, [])
    events = [Event(float(i), "create", pod=Pod(
        f"p{i}", containers=[Container("c", requests={"cpu": 700 + 100 * (i % 9)})],
        node_selector={"zone": "ab"[i % 2]} if i % 3 == 0 else None), duration=30.0)
        for i in range(60)]
    fast = Simulator(cluster).run(events)
    slow = Simulator(cluster, fast_path=False).run(events)
    assert [d.to_record() for d in fast.decisions] == [d.to_record() for d in slow.decisions]
    outcomes = {d.outcome for d in fast.decisions}
    assert {"bound", "unschedulable", "finished"} <= outcomes
    assert fast.summary()["pods_scheduled"] == 60


def test_a_running_pods_anti_affinity_keeps_a_plain_pod_off_its_node():
    """``satisfyExistingPodsAntiAffinity``: p0 keeps pods labelled app=db off its node. p1 has
    no affinity of its own; the loop, made before any such pod ran, has no rows for p0's
    terms, so p1's cycle is the framework's (the loop used to place it on n0)."""
    node = Node("n0", labels={HOST: "n0"}, allocatable={"cpu": 2000, "pods": 4})
    cluster = ClusterState.from_records([node], [])
    spec = dict(labels={"app": "db"}, containers=[Container("c", requests={"cpu": 100})])
    anti = PodAffinity(required=(PodAffinityTerm(HOST, LabelSelector(
        match_labels={"app": "db"})),))
    events = [Event(0.0, "create", pod=Pod("p0", pod_anti_affinity=anti, **spec)),
              Event(0.0, "create", pod=Pod("p1", **spec))]
    for fast_path in (True, False):
        result = Simulator(cluster, fast_path=fast_path).run(events)
        assert [(d.pod, d.outcome, d.node) for d in result.decisions] == [
            ("default/p0", "bound", "n0"), ("default/p1", "unschedulable", None)]
        assert "existing pods anti-affinity" in result.decisions[1].reason


def test_a_pod_created_again_after_its_preemption_takes_its_own_class():
    """p0 is preempted by p1, then created again asking for a zone no node is in: its cycle
    is its new spec's (its old class, cached under its name, used to place it on n0)."""
    node = Node("n0", labels={HOST: "n0", "zone": "a"}, allocatable={"cpu": 2000, "pods": 10})
    cluster = ClusterState.from_records([node], [])
    small = [Container("c", requests={"cpu": 1000})]
    events = [Event(0.0, "create", pod=Pod("p0", containers=small), duration=100.0),
              Event(1.0, "create", pod=Pod("p1", priority=100, containers=[
                  Container("c", requests={"cpu": 2000})]), duration=5.0),
              Event(10.0, "create", pod=Pod("p0", containers=small, node_selector={"zone": "b"}))]
    for fast_path in (True, False):
        result = Simulator(cluster, fast_path=fast_path).run(events)
        assert [(d.time, d.pod, d.outcome) for d in result.decisions] == [
            (0.0, "default/p0", "bound"), (1.0, "default/p1", "preempting"),
            (1.0, "default/p0", "preempted"), (1.0, "default/p1", "unschedulable"),
            (1.0, "default/p1", "bound"), (6.0, "default/p1", "finished"),
            (10.0, "default/p0", "unschedulable")], fast_path
        assert "didn't match Pod's node affinity/selector" in result.decisions[-1].reason

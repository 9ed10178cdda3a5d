"""The Simulator's stretches of arrivals and finishes run by the compiled loop at once
(:mod:`ksched.sim_lane`) against the same Simulator taking every event one at a time
(``batched=False``): the decisions, samples, utilisation, the final cluster (its pods in log
order and each node's pods in ``NodeInfo.Pods`` order) and the queue's counters must be the
same, on random timelines where stretches end at samples, ``until``, pods that fit nowhere
(and may preempt), deletions, updates, node changes, pods the loop does not model and equal
times, and go on while pods that fit nowhere whatever runs wait parked."""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ksched import ClusterState, Container, Node, Pod
from ksched.api import (
    ContainerPort,
    LabelSelector,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    Taint,
    TopologySpreadConstraint,
)
from ksched.errors import InvalidObjectError
from ksched.simulator import Event, Simulator
from ksched.timeline import day_of_churn

GI = 2**30
HOST = "kubernetes.io/hostname"


@st.composite
def clusters(draw) -> ClusterState:
    nodes = [Node(f"n{i}", labels={HOST: f"n{i}", "zone": "ab"[i % 2]},
                  allocatable={"cpu": draw(st.sampled_from([2000, 4000])), "memory": 16 * GI,
                               "pods": draw(st.sampled_from([3, 110]))},
                  taints=(Taint("spot", "yes", "PreferNoSchedule"),) if draw(st.booleans())
                  else ())
             for i in range(draw(st.integers(1, 6)))]
    return ClusterState.from_records(nodes, [])


@st.composite
def pods(draw, i: int) -> Pod:
    extra = {}
    kind = draw(st.integers(0, 9))
    if kind == 0:  # counts pods: never in a stretch
        extra["topology_spread_constraints"] = (TopologySpreadConstraint(
            1, "zone", "ScheduleAnyway", LabelSelector(match_labels={"app": "web"})),)
    elif kind == 1:  # a node-static score that varies: the loop's full variant
        extra["node_affinity"] = NodeAffinity(preferred=(PreferredSchedulingTerm(
            10, NodeSelectorTerm((NodeSelectorRequirement("zone", "In", ("a",)),))),))
    elif kind == 2:
        extra["node_selector"] = {"zone": "b"}
    elif kind == 3:  # fits nowhere, whatever runs: parked while stretches go on
        extra["node_selector"] = {"zone": "c"}
    elif kind == 4:  # with 9000m, as kind 3: zone a fails by its selector, zone b by cpu
        extra["node_selector"] = {"zone": "b"}
    ports = [ContainerPort(80, host_port=8080)] if draw(st.integers(0, 5)) == 0 else []
    return Pod(f"p{i}", labels={"app": "web"},
               containers=[Container("c", ports=ports, requests={
                   "cpu": draw(st.sampled_from([100, 500, 1000, 1500] + [9000] * (kind == 4))),
                   "memory": draw(st.sampled_from([0, GI]))})],
               priority=draw(st.sampled_from([0, 0, 0, 100])), **extra)


@st.composite
def timelines(draw) -> tuple[ClusterState, list[Event], dict]:
    cluster = draw(clusters())
    events, at = [], 0.0
    for i in range(draw(st.integers(1, 40))):
        at += draw(st.sampled_from([0.0, 0.25, 1.5, 7.0, 33.0, 400.0]))
        name = f"p{draw(st.integers(0, i))}" if draw(st.integers(0, 19)) == 0 else f"p{i}"
        pod = draw(pods(i))
        events.append(Event(at, "create", pod=pod.renamed(name),
                            duration=draw(st.sampled_from([None, 0.0, 2.0, 20.0, 300.0]))))
        other = draw(st.integers(0, 24))
        if other == 0:
            events.append(Event(at + 0.5, "delete", name=f"default/p{i}"))
        elif other == 2:  # relabelled or resized, pending or bound (a held finish goes stale)
            changed = attrs.evolve(pod.renamed(name), labels={"app": "web", "v": "2"}) \
                if draw(st.booleans()) else attrs.evolve(pod.renamed(name), containers=[
                    attrs.evolve(pod.containers[0], requests={"cpu": 100, "memory": GI})])
            events.append(Event(at + draw(st.sampled_from([0.5, 5.0, 50.0])), "update",
                                pod=changed))
        elif other == 1 and cluster.num_nodes > 1:
            events.append(Event(at + 3.0, "cordon", name="n0"))
            events.append(Event(at + 9.0, "uncordon", name="n0"))
    options = dict(sample_every=draw(st.sampled_from([5.0, 60.0])),
                   tie_break=draw(st.sampled_from(["round-robin", "heap"])))
    until = draw(st.sampled_from([None, None, at / 2 + 0.1]))
    return cluster, events, {"options": options, "until": until}


def _outcome(simulator: Simulator, result) -> dict:
    state = result.state
    return dict(decisions=[d.to_record() for d in result.decisions], samples=result.samples,
                usage=result.usage, created=result.created,
                pending=[p.key for p in result.pending],
                pods=[(p.key, p.node_name, p.start_time) for p in state.pods],
                pod_node=state.pod_node.tolist(), requested=state.requested.tolist(),
                nonzero=state.nonzero_requested.tolist(),
                node_pods=simulator.assumer.node_pods(),
                cycles=simulator.queue.scheduling_cycle, now=simulator.now,
                evaluated=simulator.driver.counters.nodes_evaluated,
                next_start=simulator.driver.counters.next_start_index)


def _both(cluster, events, until=None, **options) -> tuple[dict, dict]:
    one_by_one = Simulator(cluster, batched=False, **options)
    batched = Simulator(cluster, **options)
    return (_outcome(one_by_one, one_by_one.run(events, until=until)),
            _outcome(batched, batched.run(events, until=until)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timelines())
def test_stretches_leave_what_one_event_at_a_time_leaves(timeline):
    cluster, events, how = timeline
    try:
        expected, got = _both(cluster, events, how["until"], **how["options"])
    except InvalidObjectError:  # a pod created again while it may still run
        assume(False)
    assert got == expected


def test_a_day_of_churn_with_pods_that_fit_nowhere_and_preempt():
    """Fifteen nodes for a day's arrivals: the cluster fills, high-priority pods preempt,
    and stretches end before each pod that fits nowhere and start again once the queue is
    empty."""
    cluster, events = day_of_churn(nodes=15, arrivals=1500, seed=3, seconds=7200.0)
    expected, got = _both(cluster, events, until=5000.0)
    assert got == expected
    outcomes = {d["outcome"] for d in got["decisions"]}
    assert {"bound", "finished", "unschedulable", "preempted"} <= outcomes


def test_stretches_run_most_of_a_quiet_day(stretches):
    """Where every pod fits, the loop's runs take the arrivals and finishes: the queue never
    holds a pod, yet it counts every pop."""
    cluster, events = day_of_churn(nodes=60, arrivals=2000, seed=4)
    expected, got = _both(cluster, events)
    assert got == expected
    assert sum(map(len, stretches)) > 3900  # of the 4,000 arrivals and finishes
    assert got["cycles"] == 2000
    assert sum(d["outcome"] == "finished" for d in got["decisions"]) == 2000
    assert not np.any(got["requested"])


def test_runtimes_beyond_a_float_sample_step_end():
    """Pods running 1e300 s: past some virtual time ``sample_every`` is below a float's step,
    and the next sample is due at the next float (the sampling loop used to spin forever)."""
    cluster = ClusterState.from_records([Node("n0", allocatable={"cpu": 4000, "pods": 10})], [])
    events = [Event(float(i), "create", pod=Pod(f"p{i}", containers=[
        Container("c", requests={"cpu": 100})]), duration=1e300) for i in range(3)]
    expected, got = _both(cluster, events)
    assert got == expected
    assert [d["outcome"] for d in got["decisions"]].count("finished") == 3
    assert got["samples"][-1].time == 1e300  # (+ 2.0 is the same float)


def _burst(cpus: list[int], priorities: list[int], duration: float | None = None) -> list:
    """Pods created at once, at a time a sample is due (every 5 s)."""
    return [Event(5.0, "create", pod=Pod(f"p{i}", priority=priority, containers=[
        Container("c", requests={"cpu": cpu})]), duration=duration)
        for i, (cpu, priority) in enumerate(zip(cpus, priorities))]


def test_pods_created_at_one_time_run_in_one_stretch_by_priority(stretches):
    """A burst is one time of a stretch: the queue would pop its pods by priority,
    then as they came, and so does the loop; those running 0 s finish after every pod of the
    burst is bound."""
    cluster = ClusterState.from_records([Node(f"n{i}", allocatable={"cpu": 4000, "pods": 110})
                                         for i in range(3)], [])
    events = _burst([1000, 1000, 500, 2000], [0, 100, 0, 100], duration=0.0)
    expected, got = _both(cluster, events, sample_every=5.0)
    assert got == expected
    created_first = [("default/p1", True), ("default/p3", True), ("default/p0", True),
                     ("default/p2", True)]
    assert [[(s.key, s.pod is not None) for s in steps] for steps in stretches] == [
        created_first + [(key, False) for key, _ in created_first]]
    assert (got["samples"][1].time, got["samples"][1].running) == (5.0, 4)  # once bound


def test_a_burst_cut_short_by_a_pod_that_fits_nowhere_goes_on_in_the_queue():
    """The loop places the burst's pods up to the first that fits nowhere; that one and the
    rest of the burst are then in the queue, as the queue would hold them, and the sample at
    that time waits for them."""
    cluster = ClusterState.from_records([Node("n0", allocatable={"cpu": 4000, "pods": 110})],
                                        [])
    events = _burst([1000, 1000, 5000, 1000, 3000], [0] * 5) + [
        Event(10.0, "create", pod=Pod("late", containers=[Container("c", requests={
            "cpu": 500})]))]
    expected, got = _both(cluster, events, sample_every=5.0)
    assert got == expected
    bound = [d["pod"] for d in got["decisions"] if d["outcome"] == "bound"]
    assert bound == ["default/p0", "default/p1", "default/p3", "default/late"]
    assert [(s.time, s.running) for s in got["samples"][:3]] == [(0.0, 0), (5.0, 3), (10.0, 4)]


def test_stretches_go_on_while_a_pod_that_fits_nowhere_waits(stretches):
    """A pod asking more cpu than any node has waits in unschedulablePods from the start:
    every finish or deletion (AssignedPodDelete) and every leftover flush after five quiet
    minutes retries it, and the stretches carry those retries with the arrivals, finishes
    and deletions."""
    cluster = ClusterState.from_records(
        [Node(f"n{i}", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110})
         for i in range(3)], [])
    big = Pod("big", containers=[Container("c", requests={"cpu": 9000})])
    events = [Event(0.0, "create", pod=big)]
    events += [Event(1.0 + 10 * i + (900 if i >= 100 else 0), "create",
                     pod=Pod(f"p{i}", containers=[Container("c", requests={"cpu": 500})]),
                     duration=25.0) for i in range(200)]
    events += [Event(5.0, "create", pod=Pod("kept", containers=[Container("c")])),
               Event(505.0, "delete", name="default/kept"),
               Event(7.0, "create", pod=Pod("brief", containers=[Container("c")])),
               Event(9.0, "delete", name="default/brief")]
    expected, got = _both(cluster, events)
    assert got == expected
    retries = [d for d in got["decisions"] if d["pod"] == "default/big"]
    assert {d["outcome"] for d in retries} == {"unschedulable"}
    departures = {d["time"] for d in got["decisions"] if d["outcome"] in ("finished", "deleted")}
    flushes = [d["time"] for d in retries[1:] if d["time"] not in departures]
    assert len(retries) == 1 + 202 + len(flushes)  # its first cycle, each departure, flushes
    assert [(d["time"], d["outcome"]) for d in got["decisions"] if d["pod"] == "default/kept"] \
        == [(5.0, "bound"), (505.0, "deleted")]
    # the last finish of the first hundred is at 1016 s: more than 5 min later, on 30 s ticks
    assert flushes == [1320.0, 1650.0]
    assert retries[-1]["reason"] == ("0/3 nodes are available: 3 Insufficient cpu. no new "
                                     "claims to deallocate, preemption: 0/3 nodes are "
                                     "available: 3 Preemption is not helpful for scheduling.")
    assert sum(map(len, stretches)) >= 394  # of the 404 arrivals, finishes and deletions
    assert [(s.key, s.time) for stretch in stretches for s in stretch
            if s.key in ("default/kept", "default/brief") and s.pod is None] \
        == [("default/brief", 9.0), ("default/kept", 505.0)]


def test_pods_leaving_at_one_time_retry_a_parked_pod_once(stretches):
    """Pods finishing (or deleted) at one time while a pod that fits nowhere waits parked:
    the Simulator applies every event of the time, then pops the parked pod once; a stretch
    takes them all, then that one retry, and goes on."""
    cluster = ClusterState.from_records(
        [Node(f"n{i}", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110})
         for i in range(2)], [])
    pod = lambda name, cpu=500: Pod(name, containers=[Container("c", requests={"cpu": cpu})])  # noqa: E731
    events = [Event(0.0, "create", pod=pod("big", 9000))]
    # three pods leave at 40 s (two finishing, one deleted), two at 90 s, one alone at 120 s
    events += [Event(float(t), "create", pod=pod(f"p{k}"), duration=d)
               for k, (t, d) in enumerate([(10, 30), (20, 20), (30, 60), (35, 55), (60, 60)])]
    events += [Event(25.0, "create", pod=pod("gone")), Event(40.0, "delete", name="default/gone")]
    events += [Event(200.0 + k, "create", pod=pod(f"late{k}"), duration=5.0) for k in range(3)]
    expected, got = _both(cluster, events)
    assert got == expected
    retried = [d["time"] for d in got["decisions"]
               if d["pod"] == "default/big" and d["outcome"] == "unschedulable"]
    assert retried == [0.0, 40.0, 90.0, 120.0, 205.0, 206.0, 207.0]
    left_at = {}
    for stretch in stretches:
        for s in stretch:
            if s.pod is None:
                left_at.setdefault(s.time, []).append(s.key)
    # the deletion was on the timeline from the start; the finishes came as the pods bound
    assert left_at[40.0] == ["default/gone", "default/p0", "default/p1"]
    assert sorted(left_at[90.0]) == ["default/p2", "default/p3"]


def test_a_leftover_flush_at_a_time_pods_leave_retries_once(stretches):
    """A leftover flush due when a pod finishes: the queue's timer moves the parked pod first,
    the finish would move it again, and it is popped once, after the finish; a stretch takes
    that time (one retry), where it ends before a time a pod is created at a flush."""
    cluster = ClusterState.from_records(
        [Node("n0", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110})], [])
    pod = lambda name, cpu=500: Pod(name, containers=[Container("c", requests={"cpu": cpu})])  # noqa: E731
    events = [Event(0.0, "create", pod=pod("big", 9000)),
              Event(600.0, "create", pod=pod("a"), duration=60.0),  # leaves at the 660 s flush
              Event(990.0, "create", pod=pod("b")),  # created at the 990 s flush
              Event(1000.0, "create", pod=pod("c"), duration=5.0)]
    expected, got = _both(cluster, events)
    assert got == expected
    retried = [d["time"] for d in got["decisions"]
               if d["pod"] == "default/big" and d["outcome"] == "unschedulable"]
    assert retried == [0.0, 330.0, 660.0, 990.0, 1005.0]
    taken = [(s.key, s.time) for stretch in stretches for s in stretch]
    assert ("default/a", 660.0) in taken and ("default/b", 990.0) not in taken


def _at(decisions: list[dict], t: float) -> list[tuple[str, str]]:
    return [(d["pod"].split("/")[1], d["outcome"]) for d in decisions if d["time"] == t]


def test_a_parked_pod_moved_among_pods_created_pops_where_the_queue_puts_it(stretches):
    """A pod leaves while pods are created at the same time and a pod that fits nowhere
    waits parked: the queue pops that pod among those created by priority (older than them,
    it goes first among equals), or after them all while its backoff runs (backoffQ, popped
    once activeQ is empty); a stretch takes the time with its retry there."""
    cluster = ClusterState.from_records(
        [Node("n0", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110})], [])

    def pod(name: str, cpu: int = 500, priority: int = 0) -> Pod:
        return Pod(name, priority=priority, containers=[Container("c", requests={"cpu": cpu})])

    created = [Event(t, "create", pod=pod(f"{name}-{t:g}", priority=priority))
               for t in (30.0, 60.5) for name, priority in (("lo", 0), ("eq", 50), ("hi", 100))]
    events = [Event(0.0, "create", pod=pod("big", 9000, priority=50)),
              Event(10.0, "create", pod=pod("a"), duration=20.0),  # leaves at 30 s
              Event(59.0, "create", pod=pod("b"), duration=1.0),  # leaves at 60 s
              Event(59.5, "create", pod=pod("c"), duration=1.0),  # leaves at 60.5 s
              *created]
    expected, got = _both(cluster, events)
    assert got == expected
    assert _at(got["decisions"], 30.0) == [
        ("a", "finished"), ("hi-30", "bound"), ("big", "unschedulable"), ("eq-30", "bound"),
        ("lo-30", "bound")]
    # retried at 60 s (its third failure: 4 s of backoff), moved at 60.5 s to backoffQ
    assert _at(got["decisions"], 60.5) == [
        ("c", "finished"), ("hi-60.5", "bound"), ("eq-60.5", "bound"), ("lo-60.5", "bound"),
        ("big", "unschedulable")]
    taken = {(s.key, s.time) for stretch in stretches for s in stretch}
    assert {("default/hi-30", 30.0), ("default/eq-60.5", 60.5)} <= taken

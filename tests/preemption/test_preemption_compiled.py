"""The fast preemption paths against the object-level ones, on random small clusters.

The fast paths: the nominated pods of every node judged at once (``Framework._nominated_pass``),
failures held as arrays (``NodeStatuses``), the compiled dry run with its per-node outcome
cache and the compiled candidate choice (``compiled_preemption.CompiledDryRunner``), the
Assumer's pod table, and the simulator's nomination index. The reference: a framework that
copies the cluster for every changed node (``state.with_pods``) and runs
``select_victims_on_node`` node by node, and the simulator with its fast path off.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ksched import ClusterState, Container, Node, Pod
from ksched.api import Taint, Toleration
from ksched.cache import Assumer
from ksched.compiled_preemption import CompiledPreemption, preemption_handle
from ksched.framework.diagnosis import NodeStatuses
from ksched.framework.interfaces import Cycle
from ksched.framework.nominator import NominatedPods
from ksched.framework.runtime import Framework
from ksched.profile import default_profile
from ksched.simulator import Event, Simulator
from ksched.state import pod_specs
from ksched.status import Code, unresolvable, unschedulable

GI = 2**30
PRIORITIES = st.integers(-2, 3)
STARTS = st.one_of(st.none(), st.sampled_from([0.0, 1.0, 2.0]), st.floats(0, 5))


@st.composite
def a_pod(draw, name: str, on: str = "", nominated: bool = False) -> Pod:
    requests = {"cpu": draw(st.sampled_from([0, 100, 500, 900, 1000, 1500, 3000]))}
    if draw(st.booleans()):
        requests["memory"] = draw(st.sampled_from([0, GI, 3 * GI]))
    return Pod(name, node_name=on, priority=draw(PRIORITIES),
               start_time=draw(STARTS) if on else None,
               uid=draw(st.sampled_from(["", f"uid-{name}"])),
               containers=[Container("c", requests=requests)])


@st.composite
def clusters(draw):
    names = [f"n{i}" for i in range(draw(st.integers(1, 5)))]
    nodes = [Node(n, labels={"kubernetes.io/hostname": n},
                  allocatable={"cpu": draw(st.sampled_from([2000, 4000])),
                               "memory": draw(st.sampled_from([4 * GI, 8 * GI])),
                               "pods": draw(st.integers(1, 6))}) for n in names]
    bound = [draw(a_pod(f"b{i}", on=draw(st.sampled_from(names))))
             for i in range(draw(st.integers(0, 12)))]
    preemptor = draw(a_pod("incoming"))
    nominated: dict[str, list[Pod]] = {}
    for i in range(draw(st.integers(0, 4))):
        other = draw(a_pod(f"m{i}"))
        nominated.setdefault(draw(st.sampled_from(names)), []).append(other)
    if draw(st.booleans()):  # the preemptor itself nominated somewhere (left out)
        at = draw(st.sampled_from(names))
        preemptor = attrs.evolve(preemptor, nominated_node_name=at)
        nominated.setdefault(at, []).append(preemptor)
    return nodes, bound, preemptor, nominated


def frameworks() -> tuple[Framework, Framework]:
    fast, slow = Framework(default_profile()), Framework(default_profile())
    slow.request_arithmetic = slow.vectorized = False
    return fast, slow


def diagnosis_view(result) -> tuple:
    failures = sorted((n, s.code, s.reasons, s.plugin) for n, s in result.failures.items())
    return (result.node, list(result.feasible), list(result.evaluated), failures,
            result.message, sorted(result.unschedulable_plugins))


def post_filter_view(framework, result, status) -> tuple:
    if result is None:
        return None, status
    return (result.nominated_node, [v.key for v in result.victims], result.num_pdb_violations,
            list(result.potential_nodes),
            [(c.node, [v.key for v in c.victims], c.num_pdb_violations)
             for c in result.candidates],
            {n: (s.code, s.plugin, s.reasons) for n, s in result.dry_run_failures.items()},
            list(result.tie_nodes), status)


def attempt(framework, assumer, pod, nominated, seed):
    """One failed cycle's diagnosis and, when no node fits, its PostFilter."""
    state = assumer.state
    diagnosis = framework.schedule_one(state, pod, nominated=nominated)
    out = [diagnosis_view(diagnosis)]
    if diagnosis.node is None:
        handle = preemption_handle(framework, assumer, nominated=nominated,
                                   rng=np.random.default_rng(seed))
        result, status = framework.run_post_filter(Cycle(state, pod), diagnosis, handle)
        out.append(post_filter_view(framework, result, status))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.integers(0, 1000), st.data())
def test_fast_dry_run_matches_the_object_level_path(cluster, seed, data):
    nodes, bound, preemptor, nominated = cluster
    state = ClusterState.from_records(nodes, bound)
    pending = [preemptor] + [p for ps in nominated.values() for p in ps]
    fast_assumer, slow_assumer = Assumer(state, pending), Assumer(state, pending)
    rows = {fast_assumer.state.node_index[n]: ps for n, ps in nominated.items()}
    index = NominatedPods.of(fast_assumer.state, rows)
    fast, slow = frameworks()
    want = attempt(slow, slow_assumer, preemptor, rows, seed)
    assert attempt(fast, fast_assumer, preemptor, index, seed) == want
    # Again, from the dry run's cache, and with a plain dict of nominations.
    assert attempt(fast, fast_assumer, preemptor, index, seed) == want
    assert attempt(fast, fast_assumer, preemptor, rows, seed) == want
    # The cluster changes (pods go, nominations move): the cache must notice.
    keys = [p.key for p in bound]
    gone = data.draw(st.lists(st.sampled_from(keys), unique=True, max_size=3)) if keys else []
    fast_assumer.remove(gone)
    slow_assumer.remove(gone)
    fast_assumer.sync()
    slow_assumer.sync()
    moved = data.draw(st.sampled_from(sorted(rows))) if rows else None
    if moved is not None:
        index.set_node(moved, [])
        rows = {r: ps for r, ps in rows.items() if r != moved}
    want = attempt(slow, slow_assumer, preemptor, rows, seed)
    assert attempt(fast, fast_assumer, preemptor, index, seed) == want


def test_node_statuses_read_like_a_dict():
    statuses = NodeStatuses([3, 1, 2], [1, 0, 1], [unschedulable("a"), unresolvable("b")])
    assert dict(statuses) == {3: unresolvable("b"), 1: unschedulable("a"), 2: unresolvable("b")}
    assert list(statuses) == [3, 1, 2] and 2 in statuses and 0 not in statuses
    assert statuses.with_first(0, unschedulable("c"))[0] == unschedulable("c")
    codes = statuses.codes(4, unresolvable())
    assert list(codes) == [Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.UNSCHEDULABLE, 3, 3]
    assert statuses == NodeStatuses.of(dict(statuses))
    for _ in range(6):  # past the first few lookups, a dict answers
        assert statuses[1] == unschedulable("a") and 0 not in statuses and 3 in statuses


def node(name: str, cpu: int = 4000, pods: int = 110, **extra) -> Node:
    return Node(name, labels={"kubernetes.io/hostname": name},
                allocatable={"cpu": cpu, "memory": 64 * GI, "pods": pods}, **extra)


@st.composite
def workloads(draw):
    """Nodes full of low-priority pods and pods of mixed priorities arriving over time,
    some of them running for a while: preemptions, nominations, retries. Some nodes are
    tainted or cordoned (node-static failures), some hold few pods (Too many pods), some
    pods ask for more than any node has or may not preempt."""
    taint = Taint("dedicated", "batch", "NoSchedule")
    nodes = [node(f"n{i}", draw(st.sampled_from([2000, 4000])),
                  draw(st.sampled_from([3, 110, 110])),
                  taints=(taint,) if draw(st.integers(0, 5)) == 0 else (),
                  unschedulable=draw(st.integers(0, 7)) == 0)
             for i in range(draw(st.integers(1, 6)))]
    bound = [Pod(f"low-{i}", node_name=draw(st.sampled_from(nodes)).name,
                 priority=draw(st.integers(0, 2)), start_time=draw(STARTS),
                 containers=[Container("c", requests={"cpu": draw(st.sampled_from(
                     [300, 900, 1000]))})]) for i in range(draw(st.integers(0, 16)))]
    cluster = ClusterState.from_records(nodes, [])
    pods = ClusterState.from_records(nodes, bound)
    events = []
    for i in range(draw(st.integers(1, 14))):
        spec = Pod(f"p{i}", priority=draw(st.integers(0, 12)),
                   containers=[Container("c", requests={"cpu": draw(st.sampled_from(
                       [500, 1000, 2000, 3000, 5000]))})],
                   preemption_policy=draw(st.sampled_from(
                       ["PreemptLowerPriority"] * 5 + ["Never"])),
                   tolerations=(Toleration("dedicated", "Equal", "batch", "NoSchedule"),)
                   if draw(st.booleans()) else ())
        events.append(Event(draw(st.sampled_from([0.0, 0.0, 1.0, 30.0])), "create", pod=spec,
                            duration=draw(st.sampled_from([None, 5.0, 100.0]))))
    return pods if bound else cluster, events


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_simulator_places_the_same_with_the_fast_path_on_and_off(workload):
    cluster, events = workload
    fast = Simulator(cluster).run(events)
    slow = Simulator(cluster, fast_path=False).run(events)
    assert [d.to_record() for d in fast.decisions] == [d.to_record() for d in slow.decisions]


def compiled_only(monkeypatch) -> None:
    """Make any framework cycle fail the test: the compiled path must take every cycle."""
    def no_framework_cycle(*args, **kwargs):
        raise AssertionError("a framework cycle ran")

    monkeypatch.setattr(Framework, "schedule_one", no_framework_cycle)


def test_the_preemption_workload_never_needs_the_framework(monkeypatch):
    """Every cycle of the Preemption shape, failing or retrying, is compiled."""
    from ksched.timeline import arrivals_at_once
    from ksched.workloads import preemption_basic

    compiled_only(monkeypatch)
    cluster, pods = preemption_basic(40, 160, 40)
    summary = Simulator(cluster).run(arrivals_at_once(pods)).summary()
    assert (summary["pods_scheduled"], summary["preemptions"]) == (40, 40)


def test_preemption_basic_agrees_with_the_fast_path_off():
    from ksched.timeline import arrivals_at_once
    from ksched.workloads import preemption_basic

    cluster, pods = preemption_basic(30, 120, 30)
    fast = Simulator(cluster).run(arrivals_at_once(pods))
    slow = Simulator(cluster, fast_path=False).run(arrivals_at_once(pods))
    assert [d.to_record() for d in fast.decisions] == [d.to_record() for d in slow.decisions]
    assert fast.summary()["preemptions"] == 30


def test_states_keep_their_pods_while_the_assumer_drops_and_adds_pods():
    nodes = [node("n1"), node("n2")]
    bound = [Pod(f"b{i}", node_name=f"n{1 + i % 2}", containers=[Container("c", requests={
        "cpu": 10})]) for i in range(40)]
    assumer = Assumer(ClusterState.from_records(nodes, bound), [])
    states, alive = [], [p.key for p in bound]
    for step in range(30):
        states.append((assumer.state, [p.key for p in assumer.state.pods]))
        gone = alive[step % 3::7][:2]
        assumer.remove(gone)
        alive = [k for k in alive if k not in gone]
        fresh = Pod(f"new{step}", containers=[Container("c", requests={"cpu": 10})])
        assumer.assume(fresh, step % 2)
        alive.append(fresh.key)
        assert [p.key for p in assumer.state.pods] == alive
        assert all(assumer.state.pods[assumer.row_of(k)].key == k for k in alive)
    for state, keys in states:  # the earlier views still read what they had
        assert [p.key for p in state.pods] == keys
        assert [p.key for p in pod_specs(state.pods, 0, len(keys))] == keys
    table = assumer.pod_table()
    for n in range(2):
        rows = assumer.rows_of_serials(table.slots[n, :table.counts[n]])
        assert [assumer.state.pods[r].key for r in rows] == assumer.node_pods()[n]


def first_reason(cluster, spec: Pod) -> tuple[str, object]:
    result = Simulator(cluster).run([Event(0.0, "create", pod=spec)], until=0.0)
    decision = next(d for d in result.decisions if d.pod == spec.key)
    return decision.reason, result


def low(name: str, on: str, cpu: int, priority: int = 0) -> Pod:
    return Pod(name, node_name=on, priority=priority, start_time=0.0,
               containers=[Container("c", requests={"cpu": cpu})])


def high(cpu: int, **extra) -> Pod:
    return Pod("high", priority=10, containers=[Container("c", requests={"cpu": cpu})],
               **extra)


# The FitError and PostFilter messages of upstream's ``FitError.Error()``, with
# DynamicResources' PostFilter reason first (the default profile runs it before
# DefaultPreemption; see PREEMPTION.md).
def test_compiled_failure_preemption_policy_never(monkeypatch):
    """``PodEligibleToPreemptOthers``: preemptionPolicy Never."""
    compiled_only(monkeypatch)
    cluster = ClusterState.from_records([node("n1", 2000)], [low("a", "n1", 1500)])
    reason, _ = first_reason(cluster, high(1000, preemption_policy="Never"))
    assert reason == ("0/1 nodes are available: 1 Insufficient cpu. no new claims to "
                      "deallocate, preemption: not eligible due to preemptionPolicy=Never.")


def test_compiled_failure_no_node_where_preemption_might_help(monkeypatch):
    """``nodesWherePreemptionMightHelp``: a taint is unresolvable, and so is asking for more
    cpu than a node has; no node is tried, every one is "not helpful"."""
    compiled_only(monkeypatch)
    taint = Taint("dedicated", "batch", "NoSchedule")
    cluster = ClusterState.from_records([node("n1", taints=(taint,)), node("n2", 1000)], [])
    reason, _ = first_reason(cluster, high(2000))
    assert reason == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is "
        "not helpful for scheduling.")


def test_compiled_failure_no_victims_and_no_fit_without_them(monkeypatch):
    """``SelectVictimsOnNode``: n1 has no lower-priority pod; on n2 the pod does not fit
    even with its lower-priority pod gone."""
    compiled_only(monkeypatch)
    cluster = ClusterState.from_records(
        [node("n1", 2000), node("n2", 2000)],
        [low("a", "n1", 1500, priority=20), low("b", "n2", 300, priority=0),
         low("c", "n2", 1200, priority=30)])
    reason, _ = first_reason(cluster, high(1000))
    assert reason == (
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 No preemption victims "
        "found for incoming pod.")


def test_compiled_preemption_evicts_the_least_important_and_binds_on_retry(monkeypatch):
    """Each node keeps its more important pod (reprieve); ``pickOneNodeForPreemption``
    takes n2, whose victim has the lower priority; the retry lands on it
    (``evaluateNominatedNode``)."""
    compiled_only(monkeypatch)
    cluster = ClusterState.from_records(
        [node("n1", 2000), node("n2", 2000)],
        [low("a", "n1", 1000, priority=1), low("b", "n1", 1000, priority=1),
         low("c", "n2", 1000, priority=0), low("d", "n2", 1000, priority=5)])
    result = Simulator(cluster).run([Event(0.0, "create", pod=high(1000))])
    outcomes = [(d.pod, d.outcome, d.node, d.victims) for d in result.decisions]
    assert outcomes == [
        ("default/high", "preempting", "n2", ("default/c",)),
        ("default/c", "preempted", "n2", ()),
        ("default/high", "unschedulable", None, ()),
        ("default/high", "bound", "n2", ())]


@pytest.mark.parametrize("cpu, zone, hopeless", [
    (9000, None, True),    # more than any node has
    (3000, None, False),   # n1 has room for it once its pod leaves
    (100, "c", True),      # no node's zone matches
    (3000, "a", True),     # n0 matches, but has 2 cpus
    (3000, "b", False),    # n1 matches and has 4 (3.5 taken now)
])
def test_a_class_is_hopeless_where_no_node_can_ever_take_it(cpu, zone, hopeless):
    """The simulator's stretches carry a parked pod only while it fails whatever pods come
    and go: on every node a node-static filter fails for good, or the pod asks more than
    the node has (NodeResourcesFit's unresolvable insufficiency)."""
    nodes = [Node(f"n{i}", labels={"zone": z}, allocatable={"cpu": c, "pods": 10})
             for i, (z, c) in enumerate([("a", 2000), ("b", 4000)])]
    busy = Pod("busy", node_name="n1", containers=[Container("c", requests={"cpu": 3500})])
    state = ClusterState.from_records(nodes, [busy])
    pod = Pod("p", node_selector={"zone": zone} if zone else None,
              containers=[Container("c", requests={"cpu": cpu})])
    compiled = CompiledPreemption(Framework(default_profile()),
                                  np.zeros(state.num_nodes, dtype=np.int64))
    plan = compiled.plan(0, pod, state)
    assert plan is not None
    assert compiled.hopeless(0, plan, state) is hopeless

"""Pods that fit nowhere fail inside the compiled loop: their diagnosis (each node's first
failing plugin, the counts per reason, the FitError message) is tallied there from the class's
node-static verdicts and NodeResourcesFit's fit codes (:func:`ksched.kernels.loop_steps.
tally_failure`), with no framework cycle and no restart of the loop; a later pod of the class
that meets an unchanged state reuses the answer. Everything equals the object-level path: the
framework's fresh cycle for every pod (``fast_path=False``)."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ksched
from ksched import engine
from ksched.api import (
    Container,
    ContainerPort,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    Toleration,
)
from ksched.driver import Driver
from ksched.fused_loop import Tallies
from ksched.kernels.schedule_loop import KNOWN_FAILURE, NEW_FAILURE
from ksched.pods import shape_signature

GI = 1 << 30
ZONES = ("a", "b", "c")


def _cluster(rng: np.random.Generator, num_nodes: int) -> ksched.ClusterState:
    """Heterogeneous nodes, small enough that most pods of a long batch fail: a few shapes
    (some with GPUs, some holding three pods), taints, cordoned nodes, zone and tier labels
    (tier on some nodes only)."""
    nodes = []
    for i in range(num_nodes):
        labels = {"kubernetes.io/hostname": f"n{i:03d}",
                  "topology.kubernetes.io/zone": str(rng.choice(ZONES))}
        if rng.random() < 0.6:
            labels["tier"] = str(rng.integers(0, 3))
        taints = [Taint("dedicated", "gpu", str(rng.choice(["NoSchedule", "NoExecute"])))] \
            if rng.random() < 0.2 else []
        if rng.random() < 0.15:
            taints.append(Taint("soft", "", "PreferNoSchedule"))
        nodes.append(Node(
            f"n{i:03d}", labels=labels, taints=taints, unschedulable=bool(rng.random() < 0.05),
            allocatable={"cpu": int(rng.choice([1000, 2000, 4000])),
                         "memory": int(rng.choice([2, 4, 8])) * GI,
                         "pods": int(rng.choice([3, 20, 110])),
                         "example.com/gpu": int(rng.choice([0, 0, 0, 1, 2]))}))
    return ksched.ClusterState.from_records(nodes)


def _template(rng: np.random.Generator, k: int, ports: bool) -> Pod:
    """A pod spec: requests from nothing to more than any node has, GPUs, a node selector
    or required affinity on labels few nodes carry, tolerations, a host port (``ports``)."""
    requests = {"cpu": int(rng.choice([0, 200, 900, 1800, 3500, 5000])),
                "memory": int(rng.choice([0, 1, 3, 6, 9])) * GI}
    if rng.random() < 0.3:
        requests["example.com/gpu"] = int(rng.choice([1, 2]))
    affinity = None
    if rng.random() < 0.3:
        affinity = NodeAffinity(required=(NodeSelectorTerm((NodeSelectorRequirement(
            "topology.kubernetes.io/zone", "In", tuple(rng.choice(ZONES, 2))),)),))
    port = [ContainerPort(80, 8080)] if ports and rng.random() < 0.3 else []
    return Pod(f"t{k}", containers=[Container("c", requests=requests, ports=port)],
               tolerations=[Toleration("dedicated", "Exists")] if rng.random() < 0.3 else [],
               node_selector={"tier": str(rng.integers(0, 3))} if rng.random() < 0.3 else None,
               node_affinity=affinity)


def _batch(seed: int, ports: bool = True) -> tuple[ksched.ClusterState, list[Pod], dict]:
    rng = np.random.default_rng(seed)
    cluster = _cluster(rng, int(rng.choice([1, 7, 30, 90])))
    templates = [_template(rng, k, ports) for k in range(int(rng.integers(2, 9)))]
    pods = [attrs.evolve(templates[int(rng.integers(len(templates)))], name=f"p{i}")
            for i in range(int(rng.integers(20, 200)))]
    options = dict(percentage_of_nodes_to_score=int(rng.choice([0, 20, 100])),
                   tie_break=str(rng.choice(["round-robin", "random"])), seed=seed)
    return cluster, pods, options


def _assert_same(fast: engine.Result, slow: engine.Result) -> None:
    assert [(p.pod.name, p.node, p.reason) for p in fast.placements] == \
           [(p.pod.name, p.node, p.reason) for p in slow.placements]
    assert np.array_equal(fast.walks, slow.walks)
    assert np.array_equal(fast.state.requested, slow.state.requested)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_failures_are_worded_as_the_framework_words_them(seed: int) -> None:
    """Random heterogeneous clusters, long batches of interleaved specs, most pods failing:
    the placements, every reason and every node walk equal the framework's, pod by pod."""
    cluster, pods, options = _batch(seed)
    fast = ksched.schedule_batch(cluster, pods, **options)
    _assert_same(fast, ksched.schedule_batch(cluster, pods, fast_path=False, **options))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_full_tally_buffers_leave_the_wording_to_the_framework(seed: int) -> None:
    """With room for one record of two entries, the loop stops at the failures it cannot
    tally and the framework words them: the same outcome."""
    cluster, pods, options = _batch(seed)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "Tallies", lambda n: Tallies(n, records=1, entries=2))
        fast = ksched.schedule_batch(cluster, pods, **options)
    _assert_same(fast, ksched.schedule_batch(cluster, pods, fast_path=False, **options))


@pytest.mark.parametrize("seed", range(6))
def test_one_loop_call_and_no_framework_cycle(seed: int, monkeypatch) -> None:
    """Pods the loop words the failures of (no host ports here) take one loop call for the
    whole batch and no framework cycle; each new failure is tallied afresh, and a later pod
    of its class meeting the same state (nothing placed since) reuses the record. Every
    reason equals the fresh framework cycle's."""
    calls = {"loop": 0, "diagnose": 0}
    run_loop, diagnose = Driver.run_loop, Driver.diagnose

    def counted_loop(self, *args, **kwargs):
        calls["loop"] += 1
        return run_loop(self, *args, **kwargs)

    def counted_diagnose(self, *args, **kwargs):
        calls["diagnose"] += 1
        return diagnose(self, *args, **kwargs)

    monkeypatch.setattr(Driver, "run_loop", counted_loop)
    monkeypatch.setattr(Driver, "diagnose", counted_diagnose)
    seen: list[Tallies] = []

    def kept(n: int) -> Tallies:
        seen.append(Tallies(n))
        return seen[-1]

    monkeypatch.setattr(engine, "Tallies", kept)
    cluster, pods, options = _batch(1000 + seed, ports=False)
    pods = pods + [attrs.evolve(p, name=f"{p.name}-again") for p in pods]  # more failures
    fast = ksched.schedule_batch(cluster, pods, **options)
    assert calls == {"loop": 1, "diagnose": 0}
    monkeypatch.undo()
    _assert_same(fast, ksched.schedule_batch(cluster, pods, fast_path=False, **options))
    assert fast.unschedulable
    (tallies,) = seen
    records = tallies.out_fail[fast.node_rows < 0]
    assert (records >= 0).all() and len(np.unique(records)) == tallies.used[0]


def test_a_known_failure_reuses_the_record_without_a_walk() -> None:
    """Pods of one class failing back to back: the first is tallied (a new failure), the
    others meet the same state and take its record, the start index moving past every node
    as a failed walk leaves it."""
    nodes = [Node(f"n{i}", allocatable={"cpu": 1000, "memory": GI, "pods": 110})
             for i in range(4)]
    cluster = ksched.ClusterState.from_records(nodes)
    big = Pod("big", containers=[Container("c", requests={"cpu": 2000})])
    small = Pod("small", containers=[Container("c", requests={"cpu": 600})])
    pods = [attrs.evolve(big, name="b0"), attrs.evolve(big, name="b1"),
            attrs.evolve(small, name="s0"), attrs.evolve(big, name="b2")]
    from ksched.driver import Driver as D
    from ksched.cache import Assumer
    from ksched.framework.runtime import Framework
    from ksched.framework.tiebreak import TieBreaker
    from ksched.profile import default_profile

    driver = D(Assumer(cluster, pods), TieBreaker("round-robin", None), 0, pending=pods)
    fast = driver.fast_path(Framework(default_profile()))
    classes = np.array([fast.class_of(p, driver.assumer.state) for p in pods])
    out_node, out_start = np.zeros(4, np.int64), np.zeros(4, np.int64)
    tallies = Tallies(4)
    driver.tie_breaker.reserve(4)
    assert driver.run_loop(fast, classes, 0, out_node, out_start, tallies=tallies) == 4
    assert out_node.tolist()[:2] == [NEW_FAILURE, KNOWN_FAILURE]
    assert out_node[2] >= 0 and out_node[3] == NEW_FAILURE  # a pod was placed in between
    assert tallies.out_fail.tolist() == [0, 0, -1, 1] and tallies.used[0] == 2
    message = "0/4 nodes are available: 4 Insufficient cpu."
    assert [fast.wording.message(int(classes[0]), *tallies.entries(f)) for f in (0, 1)] == \
        [message, message]
    result = ksched.schedule_batch(cluster, pods)
    assert [p.reason for p in result.placements] == [message, message, "", message]
    assert result.walks.tolist() == [[0, 4, 0, -1, 0]] * 2 + [[0, 4, 4, 430, 4],
                                                               [0, 4, 0, -1, 0]]
    _assert_same(result, ksched.schedule_batch(cluster, pods, fast_path=False))


def _siblings(seed: int) -> tuple[ksched.ClusterState, list[Pod], dict]:
    """A batch whose specs come in few shapes (selectors, tolerations, affinity), each asked
    for with several request vectors: classes that differ only in their requests."""
    rng = np.random.default_rng(seed)
    cluster = _cluster(rng, int(rng.choice([7, 30, 90])))
    shapes = [_template(rng, k, ports=False) for k in range(int(rng.integers(1, 4)))]
    specs = []
    for k, shape in enumerate(shapes):
        for v in range(int(rng.integers(2, 6))):
            requests = {"cpu": int(rng.choice([0, 100, 700, 1500, 4500])),
                        "memory": int(rng.choice([0, 1, 2, 5])) * GI}
            if rng.random() < 0.4:
                requests["example.com/gpu"] = 1
            specs.append(attrs.evolve(shape, name=f"s{k}-{v}", containers=[
                Container("c", requests=requests)]))
    pods = [attrs.evolve(specs[int(rng.integers(len(specs)))], name=f"p{i}")
            for i in range(int(rng.integers(30, 160)))]
    return cluster, pods, dict(percentage_of_nodes_to_score=int(rng.choice([0, 50, 100])))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_classes_differing_only_in_requests_share_their_verdicts(seed: int) -> None:
    """Classes of one shape share the first one's node-static rows (one row of statuses per
    shape) and compute their own requests, walk lists and fit: the same outcome as the
    framework's."""
    from ksched.cache import Assumer
    from ksched.framework.runtime import Framework
    from ksched.framework.tiebreak import TieBreaker
    from ksched.profile import default_profile

    cluster, pods, options = _siblings(seed)
    _assert_same(ksched.schedule_batch(cluster, pods, **options),
                 ksched.schedule_batch(cluster, pods, fast_path=False, **options))
    driver = Driver(Assumer(cluster, pods), TieBreaker("round-robin", None), 0, pending=pods)
    fast = driver.fast_path(Framework(default_profile()))
    classes = {fast.class_of(p, driver.assumer.state) for p in pods} - {None}
    shapes = {shape_signature(p) for p in pods}
    assert len(fast.arrays()["static_sid"]) <= len(shapes)
    assert len({id(fast.tables.static_ok[c]) for c in classes}) <= len(shapes)


def test_replicas_created_at_different_times_share_one_class() -> None:
    """Every pod of a real snapshot carries its ``creationTimestamp``: replicas that differ
    only in it (and their start time) are one class, placed as the object-level path
    places them."""
    from ksched.cache import Assumer
    from ksched.framework.runtime import Framework
    from ksched.framework.tiebreak import TieBreaker
    from ksched.profile import default_profile

    cluster, pods, options = _siblings(7)
    timed = [attrs.evolve(p, creation_time=1_700_000_000.0 + i, start_time=None)
             for i, p in enumerate(pods)]
    _assert_same(ksched.schedule_batch(cluster, timed, **options),
                 ksched.schedule_batch(cluster, timed, fast_path=False, **options))
    driver = Driver(Assumer(cluster, timed), TieBreaker("round-robin", None), 0, pending=timed)
    fast = driver.fast_path(Framework(default_profile()))
    classes = {fast.class_of(p, driver.assumer.state) for p in timed} - {None}
    untimed = {fast.class_of(attrs.evolve(p, creation_time=None), driver.assumer.state)
               for p in timed} - {None}
    assert classes == untimed and len(classes) < len(timed)

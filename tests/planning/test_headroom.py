"""Headroom, fragmentation and node loss (issue 12 item 5)."""

from __future__ import annotations

import statistics

import pytest

from ksched import ArgumentError, Container, Node, Pod
from ksched.planning.headroom import Displaced, Victim, fits_and_stranded, headroom
from ksched.state import ClusterState

ZONE = "topology.kubernetes.io/zone"


def node(name: str, zone: str | None, cpu: int, memory: int, pods: int = 10) -> Node:
    labels = {"kubernetes.io/hostname": name} | ({ZONE: zone} if zone else {})
    return Node(name, allocatable={"cpu": cpu, "memory": memory, "pods": pods}, labels=labels)


def pod(name: str, cpu: int, memory: int, on: str = "", priority: int = 0) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu, "memory": memory})],
               node_name=on, priority=priority)


@pytest.fixture
def cluster() -> ClusterState:
    """a2 has its memory full (its cpu is stranded); b1 is short of cpu (its memory is)."""
    return ClusterState.from_records(
        [node("a1", "a", 4000, 8000), node("a2", "a", 4000, 8000),
         node("b1", "b", 2000, 4000), node("b2", "b", 2000, 4000)],
        [pod("w1", 1000, 2000, "a1"), pod("w2", 500, 8000, "a2"),
         pod("w3", 1500, 1000, "b1"), pod("w4", 600, 600, "b2")])


REF = pod("ref", 1000, 1000)


def test_per_node_free_percent_fits_and_stranded(cluster):
    report = headroom(cluster, reference=REF)
    rows = {u.name: u for u in report.nodes}
    assert [u.name for u in report.nodes] == ["a1", "a2", "b1", "b2"]
    assert rows["a1"].free == {"cpu": 3000, "memory": 6000, "ephemeral-storage": 0, "pods": 9}
    assert rows["a2"].percent["memory"] == 100.0
    assert rows["b1"].percent["cpu"] == 75.0
    assert {n: u.fits for n, u in rows.items()} == {"a1": 3, "a2": 0, "b1": 0, "b2": 1}
    assert rows["a2"].stranded == {"cpu": 3500, "memory": 0, "ephemeral-storage": 0, "pods": 9}
    assert rows["b1"].stranded == {"cpu": 0, "memory": 3000, "ephemeral-storage": 0, "pods": 9}
    assert rows["a1"].stranded == {"cpu": 0, "memory": 0, "ephemeral-storage": 0, "pods": 0}
    assert report.fits == 4
    assert report.stranded == {"cpu": 3500, "memory": 3000, "ephemeral-storage": 0, "pods": 18}


def test_groups_by_zone_and_total(cluster):
    report = headroom(cluster, reference=REF, by=ZONE)
    a, b = report.groups
    assert (a.name, a.nodes, a.fits, b.name, b.nodes, b.fits) == ("a", 2, 3, "b", 2, 1)
    assert a.allocatable["cpu"] == 8000 and a.requested["cpu"] == 1500
    assert a.free["cpu"] == 6500 and a.percent["cpu"] == 18.75
    assert b.requested == {"cpu": 2100, "memory": 1600, "ephemeral-storage": 0, "pods": 2}
    assert b.percent["cpu"] == 52.5 and b.percent["memory"] == 20.0
    assert a.stranded["cpu"] == 3500 and b.stranded["memory"] == 3000
    total = report.total
    assert (total.nodes, total.allocatable["cpu"], total.requested["memory"]) == (4, 12000, 11600)
    assert total.percent["pods"] == 10.0


def test_nodes_without_the_label_are_grouped_last(cluster):
    state = ClusterState.from_records(list(cluster.nodes) + [node("c1", None, 1000, 1000)])
    assert [u.name for u in headroom(state, by=ZONE).groups] == ["a", "b", "<none>"]
    assert headroom(state, by=ZONE).groups[2].allocatable["cpu"] == 1000


def test_balance_is_the_std_dev_of_utilisation(cluster):
    balance = headroom(cluster).balance
    assert balance["cpu"] == pytest.approx(statistics.pstdev([0.25, 0.125, 0.75, 0.3]))
    assert balance["memory"] == pytest.approx(statistics.pstdev([0.25, 1.0, 0.25, 0.15]))
    assert balance["ephemeral-storage"] == 0.0


def test_without_reference_there_are_no_fits(cluster):
    report = headroom(cluster)
    assert report.fits is None and report.stranded == {}
    assert "fits" not in report.to_rows()[0]


def test_a_resource_no_node_has_fits_nowhere_and_strands_nothing(cluster):
    """Issue 24: a CPU-only node's free CPU is not stranded for a GPU pod (it never could
    host it)."""
    gpu = Pod("gpu", containers=[Container("c", requests={"cpu": 100, "nvidia.com/gpu": 1})])
    report = headroom(cluster, reference=gpu)
    assert report.fits == 0
    assert int(report.hosts.sum()) == 0
    assert report.stranded["cpu"] == 0


def test_fits_and_stranded_kernel_on_plain_arrays():
    import numpy as np

    alloc = np.array([[10, 10, 5], [10, 10, 5]], dtype=np.int64)
    req = np.array([[2, 10, 0], [9, 0, 0]], dtype=np.int64)
    fits, stranded = fits_and_stranded(alloc, req, np.array([3, 2, 1]))
    assert fits.tolist() == [0, 0]
    assert stranded.tolist() == [[8, 0, 5], [0, 10, 5]]


def test_rows_dict_and_text(cluster):
    report = headroom(cluster, reference=REF, by=ZONE)
    rows = report.to_rows()
    assert [(r["scope"], r["name"]) for r in rows] == [
        ("node", "a1"), ("node", "a2"), ("node", "b1"), ("node", "b2"),
        ("group", "a"), ("group", "b"), ("total", "total")]
    assert rows[1]["cpu_stranded"] == 3500 and rows[4]["memory_percent"] == 62.5
    as_dict = report.to_dict()
    assert as_dict["fits"] == 4 and as_dict["total"]["pods_free"] == 36
    text = str(report).splitlines()
    assert text[1].split()[:3] == ["a", "2", "1.5/8.0"]  # cores
    assert "ephemeral-storage" not in text[0]  # no node has any: its columns are left out
    assert text[-1] == ("reference default/ref: 4 copies fit on 4 node(s) that could host "
                        "it; stranded there (free, but another resource is short): cpu 3.5 "
                        "cores, memory 0.0 GiB, pods 18")


@pytest.fixture
def two_zones() -> ClusterState:
    return ClusterState.from_records(
        [node("a1", "a", 2000, 4000), node("a2", "a", 2000, 4000),
         node("b1", "b", 4000, 4000), node("b2", "b", 4000, 4000)],
        [pod("r1", 500, 500, "a1"), pod("r2", 500, 500, "a2"),
         pod("d1", 1000, 1000, "b1"), pod("d2", 1000, 1000, "b1"),
         pod("d3", 3000, 1000, "b2")])


def test_zone_loss_displaces_three_pods_two_fit(two_zones):
    before = (len(two_zones.pods), two_zones.requested.copy())
    report = headroom(two_zones, by=ZONE, without=f"{ZONE}=b")
    lost = report.displaced
    assert lost.removed_nodes == ("b1", "b2")
    assert [(d.pod, d.outcome, d.from_node) for d in lost.pods] == [
        ("default/d1", "placed", "b1"), ("default/d2", "placed", "b1"),
        ("default/d3", "pending", "b2")]
    assert sorted(d.node for d in lost.placed) == ["a1", "a2"]
    assert lost.pending[0].reason == (
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    assert lost.victims == ()
    assert [(g.name, g.nodes) for g in report.groups] == [("a", 2), ("b", 0)]  # b is lost
    assert report.total.requested["cpu"] == 3000
    assert (len(two_zones.pods), two_zones.requested.tolist()) == (before[0], before[1].tolist())


def test_a_label_value_whose_nodes_are_all_removed_keeps_a_row_of_zeros():
    state = ClusterState.from_records(
        [node("a1", "a", 2000, 4000), node("b1", "b", 2000, 4000), node("x1", None, 1000, 1000)],
        [pod("w", 500, 500, "b1")])
    report = headroom(state, by=ZONE, without=f"{ZONE}=b", reference=REF)
    lost = report.groups[1]
    assert [(g.name, g.nodes) for g in report.groups] == [("a", 1), ("b", 0), ("<none>", 1)]
    assert (lost.allocatable["cpu"], lost.requested["cpu"], lost.percent["cpu"], lost.fits) \
        == (0, 0, 0.0, 0)
    assert report.groups[0].requested["cpu"] == 500  # w moved to a1
    assert str(report).splitlines()[2].split()[:3] == ["b", "0", "0.0/0.0"]


def test_removing_every_node_that_has_the_label_or_every_node(two_zones):
    report = headroom(two_zones, by=ZONE, without=f"{ZONE} in (a, b)")
    assert [(g.name, g.nodes) for g in report.groups] == [("a", 0), ("b", 0)]
    assert (report.total.nodes, report.total.allocatable["cpu"]) == (0, 0)
    assert len(report.displaced.pending) == 5
    assert report.to_dict()["groups"][0]["cpu_allocatable"] == 0


def test_node_list_and_in_selector_name_the_same_nodes(two_zones):
    by_names = headroom(two_zones, without=["b2", "b1"]).displaced
    by_set = headroom(two_zones, without=f"{ZONE} in (b, c)").displaced
    assert by_names.removed_nodes == by_set.removed_nodes == ("b1", "b2")
    assert by_names.pods == by_set.pods


def test_displaced_high_priority_pod_preempts_a_running_one():
    state = ClusterState.from_records(
        [node("a1", "a", 2000, 4000), node("b1", "b", 2000, 4000)],
        [pod("low", 1500, 500, "a1"), pod("hi", 1000, 1000, "b1", priority=1000)])
    lost = headroom(state, without="kubernetes.io/hostname=b1").displaced
    assert lost.pods == (Displaced("default/hi", 1000, "b1", "placed", "a1", ""),)
    assert lost.victims == (Victim("default/low", "a1", "default/hi"),)
    assert [p.key for p in lost.state.pods] == ["default/hi"]
    assert lost.evicted == (Displaced("default/low", 0, "a1", "pending", None, lost.evicted[0]
                                      .reason, "default/hi"),)
    text = str(headroom(state, without=["b1"]))
    assert "without 1 node(s): 1 pod(s) end unplaced" in text
    assert "evicted by preemption to make room: 1, 0 placed again, 1 unplaced" in text


def test_displaced_pods_go_in_priority_order():
    state = ClusterState.from_records(
        [node("a1", "a", 1000, 4000), node("b1", "b", 4000, 4000)],
        [pod("first", 1000, 100, "b1"), pod("urgent", 1000, 100, "b1", priority=10)])
    lost = headroom(state, without=["b1"]).displaced
    assert [(d.pod, d.outcome) for d in lost.pods] == [
        ("default/urgent", "placed"), ("default/first", "pending")]


def test_daemonset_pods_leave_with_their_node():
    ds = Pod("agent-x", containers=[Container("c", requests={"cpu": 10})], node_name="b1",
             controller=("apps/v1", "DaemonSet", "agent"))
    state = ClusterState.from_records([node("a1", "a", 1000, 1000), node("b1", "b", 1000, 1000)],
                                      [ds])
    lost = headroom(state, without=["b1"]).displaced
    assert (lost.pods, lost.daemon_pods) == ((), 1)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"by": 5}, "by: expected a node label key, got 5"),
    ({"by": "pool"}, "by: no node has label 'pool'"),
    ({"without": "zone"}, ("without: malformed selector 'zone': expected \"key=value\" or "
                           "\"key in (v1,v2)\"")),
    ({"without": f"{ZONE}=c"}, f"without: selector '{ZONE}=c' matches no node"),
    ({"without": "pool=x"}, "without: selector 'pool=x' matches no node"),
    ({"without": ["a1", "zz"]}, "without[1]: node 'zz' not found"),
    ({"without": ["a1", 3]}, "without[1]: expected a node name, got 3"),
    ({"without": []}, "without: names no node"),
    ({"without": 7}, "without: expected a node selector or a list of node names, got int"),
])
def test_bad_arguments(cluster, kwargs, message):
    with pytest.raises(ArgumentError) as caught:
        headroom(cluster, **kwargs)
    assert str(caught.value) == message


def test_bad_reference_and_cluster_name_the_argument(cluster):
    with pytest.raises(ArgumentError, match="^reference: "):
        headroom(cluster, reference=42)
    with pytest.raises(ArgumentError, match="^cluster: "):
        headroom(42)

"""``schedule_batch`` end to end on small hand-made clusters, with exact outcomes.

Score arithmetic in the comments follows kube-scheduler v1.35 (default profile): TaintToleration
(weight 3, normalised to 100 where no PreferNoSchedule taint applies), NodeResourcesFit
LeastAllocated over cpu and memory with the non-zero defaults (weight 1),
NodeResourcesBalancedAllocation (weight 1), ImageLocality 0 with no images; NodeAffinity,
PodTopologySpread (no services, so no default selector), InterPodAffinity and VolumeBinding
skip at PreScore. Only Fit and Balanced differ between nodes in these tests.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest

import ksched
from ksched import (
    ClusterState,
    Container,
    ContainerPort,
    Node,
    Pod,
    Taint,
    schedule_batch,
)
from ksched.api import PodAffinity, PodAffinityTerm

GI, MI = 1024**3, 1024**2


def node(name: str, cpu: int = 4000, mem: int = 8 * GI, pods: int = 110, **kw: Any) -> Node:
    return Node(name, allocatable={"cpu": cpu, "memory": mem, "pods": pods}, **kw)


def pod(name: str, cpu: int | None = None, mem: int | None = None, **kw: Any) -> Pod:
    requests = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if mem is not None:
        requests["memory"] = mem
    return Pod(name, containers=[Container("c", requests=requests)], **kw)


def port_pod(name: str, host_port: int, protocol: str = "TCP", host_ip: str = "") -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": 100}, ports=[
        ContainerPort(8080, host_port=host_port, protocol=protocol, host_ip=host_ip)])])


def schedule(cluster: ClusterState, pods: list[Pod], **kwargs: Any) -> ksched.Result:
    """``schedule_batch`` through the compiled fast path (the default) and through the
    object-level framework alone; both must give the same placements and reasons."""
    result = schedule_batch(cluster, pods, **kwargs)
    slow = schedule_batch(cluster, pods, fast_path=False, **kwargs)
    assert [(p.node, p.reason) for p in slow.placements] == [
        (p.node, p.reason) for p in result.placements]
    return result


def nodes_of(result: ksched.Result) -> list[str | None]:
    return [p.node for p in result.placements]


def reasons_of(result: ksched.Result) -> list[str]:
    return [p.reason for p in result.placements]


# --------------------------------------------------------------------------- scores


@pytest.mark.parametrize(("bound_cpu", "winner", "fit_b", "total_b"), [
    (0, "b", 50, 450),      # explicit cpu: 0 stays 0 in NonZeroRequested
    (None, "a", 48, 448),   # a missing cpu request counts 100m for scoring
])
def test_scores_choose_the_node(bound_cpu: int | None, winner: str, fit_b: int,
                                total_b: int) -> None:
    """Pod: 2000m cpu, 256Mi. Both nodes 4000m / 4096Mi; b runs a pod with 1792Mi.

    a (empty): LeastAllocated cpu (4000-2000)*100/4000 = 50, mem (4096-256)*100/4096 = 93
      -> (50+93)/2 = 71. Balanced: 2000/4000 = 0.5, 256/4096 = 0.0625, std = 0.21875
      -> int((1-0.21875)*100) = 78. Total 300 + 71 + 78 = 449.
    b, bound pod cpu "0": cpu 50, mem (4096-2048)*100/4096 = 50 -> 50. Balanced 0.5, 0.5
      -> 100. Total 450: b wins by one point.
    b, bound pod without cpu: non-zero cpu 100m + 2000m -> (4000-2100)*100/4000 = 47;
      (47+50)/2 = 48. Balanced uses plain requests: still 100. Total 448: a wins.
    """
    cluster = ClusterState.from_records(
        [node("a", mem=4 * GI), node("b", mem=4 * GI)],
        [pod("bound", bound_cpu, 1792 * MI, node_name="b")])
    incoming = pod("x", 2000, 256 * MI)
    assert nodes_of(schedule(cluster, [incoming])) == [winner]
    explanation = ksched.explain(cluster, incoming)
    rows = {n.node: n for n in explanation.nodes}
    assert rows["a"].scores["NodeResourcesFit"] == (71, 71, 71)
    assert rows["a"].scores["NodeResourcesBalancedAllocation"] == (78, 78, 78)
    assert rows["a"].scores["TaintToleration"] == (0, 100, 300)
    assert rows["a"].total == 449
    assert rows["b"].scores["NodeResourcesFit"] == (fit_b, fit_b, fit_b)
    assert rows["b"].scores["NodeResourcesBalancedAllocation"] == (100, 100, 100)
    assert rows["b"].total == total_b
    assert explanation.chosen == winner and explanation.max_nodes == (winner,)


def test_prefer_no_schedule_taint_moves_the_pod() -> None:
    """TaintToleration: a counts 1 untolerated PreferNoSchedule taint, b 0; normalised
    (reverse) a = 100 - 100*1/1 = 0, b = 100; weight 3 -> 300 points for b, although a is
    bigger (a: Fit 93 + Balanced 100 vs b: 75 + 100)."""
    cluster = ClusterState.from_records([
        node("a", cpu=16000, mem=32 * GI, taints=[Taint("spot", "true", "PreferNoSchedule")]),
        node("b", cpu=4000, mem=8 * GI)])
    assert nodes_of(schedule(cluster, [pod("x", 1000, 2 * GI)])) == ["b"]
    tolerant = pod("y", 1000, 2 * GI, tolerations=[ksched.Toleration("spot", "Exists")])
    assert nodes_of(schedule(cluster, [tolerant])) == ["a"]


# --------------------------------------------------------------------------- tie-breaks


def test_round_robin_tie_break_across_a_batch() -> None:
    """findMaxScores + lastNodeIndex: the index advances once per scored pod.

    Pods 1000m / 1Gi on three identical 4000m / 8Gi nodes. A node holding one pod more scores
    lower (Fit 62 vs 81, Balanced 87 vs 93), so the max set shrinks as nodes fill:
    p0 ties [a b c], index 0 -> a; p1 ties [b c], index 1 -> c; p2 [b], index 2 -> b;
    p3 ties [a b c], index 3 -> a; p4 ties [b c], index 4 -> b; p5 [c] -> c.
    """
    cluster = ClusterState.from_records([node("a"), node("b"), node("c")])
    result = schedule(cluster, [pod(f"p{i}", 1000, GI) for i in range(6)])
    assert nodes_of(result) == ["a", "c", "b", "a", "b", "c"]
    assert reasons_of(result) == [""] * 6


def test_a_single_feasible_node_does_not_advance_the_round_robin_index() -> None:
    """schedulePod returns the only feasible node without scoring, so selectHost (and its
    lastNodeIndex) is not involved.

    p0 can only go to c; p1: c holds p0, so the max set is [a b] with index 0 -> a;
    p2: the max set is [b] -> b. Had p0 advanced the index, p1 would have gone to b.
    """
    cluster = ClusterState.from_records([
        node("a"), node("b"), node("c", labels={"only": "c"})])
    pods = [pod("p0", 100, MI, node_selector={"only": "c"}), pod("p1", 100, MI),
            pod("p2", 100, MI)]
    assert nodes_of(schedule(cluster, pods)) == ["c", "a", "b"]


def test_ties_follow_the_node_tree_zone_order() -> None:
    """The snapshot lists nodes round-robin over zones: a1 b1 a2 b2 for input a1 a2 b1 b2.

    p0 ties all four -> a1 (index 0); p1 ties [b1 a2 b2] -> index 1 -> a2; p2 ties [b1 b2]
    -> index 2 % 2 -> b1; p3 -> b2.
    """
    zone = "topology.kubernetes.io/zone"
    cluster = ClusterState.from_records([
        node("a1", labels={zone: "a"}), node("a2", labels={zone: "a"}),
        node("b1", labels={zone: "b"}), node("b2", labels={zone: "b"})])
    assert cluster.tree_order.tolist() == [0, 2, 1, 3]
    result = schedule(cluster, [pod(f"p{i}", 500, GI) for i in range(4)])
    assert nodes_of(result) == ["a1", "a2", "b1", "b2"]


def test_random_tie_break_is_seeded() -> None:
    cluster = ClusterState.from_records([node(f"n{i}") for i in range(8)])
    pods = [pod(f"p{i}", 1000, GI) for i in range(8)]
    runs = {seed: nodes_of(schedule(cluster, pods, tie_break="random", seed=seed))
            for seed in (1, 2, 3)}
    again = nodes_of(schedule(cluster, pods, tie_break="random", seed=1))
    assert again == runs[1]
    # A Generator is used as given: default_rng(1) draws what seed=1 draws.
    gen = nodes_of(schedule_batch(cluster, pods, tie_break="random",
                                  seed=np.random.default_rng(1)))
    assert gen == runs[1]
    # Every pod still lands on a max-score node: each on a node no earlier pod took.
    for placed in runs.values():
        assert sorted(placed) == [f"n{i}" for i in range(8)]
    assert len({tuple(v) for v in runs.values()}) > 1
    assert runs[1] != nodes_of(schedule(cluster, pods))


def test_unknown_tie_break() -> None:
    cluster = ClusterState.from_records([node("a")])
    with pytest.raises(ksched.KschedError) as info:
        schedule(cluster, [pod("x")], tie_break="first")
    assert str(info.value) == (
        'tie_break: Unsupported value: "first": supported values: "round-robin", "random", '
        '"heap"')
    assert isinstance(info.value, ValueError)


# --------------------------------------------------------------------------- diagnoses


def test_unschedulable_reason_text() -> None:
    cluster = ClusterState.from_records([
        node("a", cpu=500), node("b", taints=[Taint("k", "v")]),
        node("c", taints=[Taint("k", "v", "NoExecute")])])
    result = schedule(cluster, [pod("x", 1000, GI)])
    assert result.placements[0].node is None
    assert result.placements[0].reason == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s).")
    assert result.unschedulable == result.placements and result.scheduled == ()


def test_reason_entries_sort_as_go_strings() -> None:
    """sort.Strings over "count reason": "10 node(s)..." sorts before "2 Insufficient cpu"
    (neither by count nor by reason)."""
    nodes = [node(f"t{i}", taints=[Taint("k", "v")]) for i in range(10)]
    nodes += [node("small-1", cpu=100), node("small-2", cpu=100)]
    result = schedule(ClusterState.from_records(nodes), [pod("x", 1000, GI)])
    assert result.placements[0].reason == (
        "0/12 nodes are available: 10 node(s) had untolerated taint(s), 2 Insufficient cpu.")


def test_every_failing_resource_is_listed_per_node() -> None:
    """fitsRequest order: Too many pods, then cpu, memory, ephemeral-storage, scalars."""
    cluster = ClusterState.from_records([node("a", pods=0), node("b", cpu=0, mem=0, pods=0)])
    result = schedule(cluster, [pod("x", 1000, GI), pod("y")])
    assert reasons_of(result) == [
        "0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 2 Too many pods.",
        "0/2 nodes are available: 2 Too many pods.",
    ]


def test_no_nodes() -> None:
    result = schedule(ClusterState.from_records([]), [pod("x", 100), pod("y")])
    assert nodes_of(result) == [None, None]
    assert reasons_of(result) == ["no nodes available to schedule pods"] * 2


def test_empty_batch() -> None:
    cluster = ClusterState.from_records([node("a")])
    result = schedule(cluster, [])
    assert result.placements == ()
    assert result.state.pods == ()


def test_all_nodes_infeasible_for_different_reasons() -> None:
    cluster = ClusterState.from_records([
        node("a", unschedulable=True), node("b", labels={"disk": "hdd"}),
        node("c", labels={"disk": "ssd"}, taints=[Taint("gpu", "", "NoSchedule")]),
        node("d", labels={"disk": "ssd"}, cpu=200)])
    result = schedule(cluster, [pod("x", 1000, node_selector={"disk": "ssd"})])
    # First failing filter per node: NodeUnschedulable, NodeAffinity, TaintToleration, Fit.
    assert result.placements[0].reason == (
        "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node "
        "affinity/selector, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable.")
    details = {n.node: (n.plugin, n.reasons) for n in ksched.explain(
        cluster, result.placements[0].pod).nodes}
    assert details == {
        "a": ("NodeUnschedulable", ("node(s) were unschedulable",)),
        "b": ("NodeAffinity", ("node(s) didn't match Pod's node affinity/selector",)),
        "c": ("TaintToleration", ("node(s) had untolerated taint(s)",)),
        "d": ("NodeResourcesFit", ("Insufficient cpu",)),
    }


def test_node_name_filter() -> None:
    cluster = ClusterState.from_records([node("a"), node("b")])
    result = schedule(cluster, [pod("x", 100, node_name="b"),
                                pod("y", 100, node_name="zzz")])
    assert nodes_of(result) == ["b", None]
    assert result.placements[1].reason == (
        "0/2 nodes are available: 2 node(s) didn't match the requested node name.")


def test_zero_allocatable() -> None:
    cluster = ClusterState.from_records([node("z", cpu=0, mem=0)])
    result = schedule(cluster, [pod("needs", 1, 1), pod("best-effort"),
                                pod("explicit-zero", 0, 0)])
    # Requests of 0 (stated or not) only meet the pod-count check.
    assert nodes_of(result) == [None, "z", "z"]
    assert result.placements[0].reason == (
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.")


def test_request_above_capacity_and_exact_fit() -> None:
    cluster = ClusterState.from_records([node("a", cpu=4000, mem=GI)])
    result = schedule(cluster, [pod("too-big", 4001), pod("too-much-mem", 1, GI + 1),
                                pod("exact", 4000, GI), pod("after", 1)])
    assert nodes_of(result) == [None, None, "a", None]
    assert reasons_of(result) == [
        "0/1 nodes are available: 1 Insufficient cpu.",
        "0/1 nodes are available: 1 Insufficient memory.",
        "",
        "0/1 nodes are available: 1 Insufficient cpu.",
    ]


def test_too_many_pods() -> None:
    cluster = ClusterState.from_records([node("a", pods=2)], [pod("bound", 0, node_name="a")])
    result = schedule(cluster, [pod("p1"), pod("p2"), pod("p3", 10)])
    assert nodes_of(result) == ["a", None, None]
    assert reasons_of(result)[1:] == ["0/1 nodes are available: 1 Too many pods."] * 2


def test_extended_resources() -> None:
    gpu = "example.com/gpu"
    cluster = ClusterState.from_records([
        node("cpu-only"), Node("gpu", allocatable={"cpu": 4000, "memory": 8 * GI, "pods": 110,
                                                   gpu: 2})])
    pods = [Pod(f"g{i}", containers=[Container("c", requests={gpu: 1})]) for i in range(3)]
    result = schedule(cluster, pods)
    assert nodes_of(result) == ["gpu", "gpu", None]
    assert result.placements[2].reason == (
        "0/2 nodes are available: 2 Insufficient example.com/gpu.")


def test_earlier_pods_in_the_batch_consume_resources() -> None:
    cluster = ClusterState.from_records([node("a", cpu=2000), node("b", cpu=1500)])
    result = schedule(cluster, [pod(f"p{i}", 1000, GI) for i in range(4)])
    # p0: a scores higher (Fit (50+87)/2 = 68, Balanced 100-|0.5-0.125|*50 = 81) than b
    # (Fit (33+87)/2 = 60, Balanced 100-|0.667-0.125|*50 = 72) -> a; p1 fits on a
    # (1000m left) and on b -> b wins (a: Fit (0+75)/2 = 37); p2 fits only on a; p3 nowhere.
    assert nodes_of(result) == ["a", "b", "a", None]
    assert result.placements[3].reason == "0/2 nodes are available: 2 Insufficient cpu."
    cpu = result.state.resource_column("cpu")
    assert result.state.requested[:, cpu].tolist() == [2000, 1000]


def test_host_port_conflicts_within_a_batch() -> None:
    """Round-robin index in brackets. p0 ties [a b] -> a (0); p1's port is taken on a -> b,
    the only feasible node (no tie-break, index stays 1); p2 finds port 80 taken everywhere.
    UDP/80 does not clash with TCP/80: [a b] tie -> b (1). ip1 -> a, the emptier node (2).
    ip2 on 10.0.0.2 does not clash with 10.0.0.1: [a b] tie -> b (3). The wildcard clashes
    with 10.0.0.1 on a and with 10.0.0.2 on b."""
    cluster = ClusterState.from_records([node("a"), node("b")])
    result = schedule(cluster, [
        port_pod("p0", 80), port_pod("p1", 80), port_pod("p2", 80),
        port_pod("udp", 80, protocol="UDP"),
        port_pod("ip1", 8443, host_ip="10.0.0.1"), port_pod("ip2", 8443, host_ip="10.0.0.2"),
        port_pod("wild", 8443)])
    assert nodes_of(result) == ["a", "b", None, "b", "a", "b", None]
    message = ("0/2 nodes are available: 2 node(s) didn't have free ports for the requested "
               "pod ports.")
    assert result.placements[2].reason == message and result.placements[6].reason == message


def test_host_ip_rules_on_one_node() -> None:
    """HostPortInfo.CheckConflict: a specific IP clashes with the same IP or 0.0.0.0; the
    wildcard clashes with any IP; protocols never clash with each other."""
    cluster = ClusterState.from_records([node("a")])
    result = schedule(cluster, [
        port_pod("ip1", 8443, host_ip="10.0.0.1"), port_pod("ip2", 8443, host_ip="10.0.0.2"),
        port_pod("ip1-again", 8443, host_ip="10.0.0.1"), port_pod("wild", 8443),
        port_pod("ip3-udp", 8443, protocol="UDP", host_ip="10.0.0.3"),
        port_pod("wild-udp", 8443, protocol="UDP"), port_pod("wild-sctp", 8443, protocol="SCTP")])
    assert nodes_of(result) == ["a", "a", None, None, "a", None, "a"]
    assert result.placements[2].reason == (
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.")


def test_host_port_conflict_with_a_bound_pod_and_a_sidecar() -> None:
    sidecar = Pod("bound", node_name="a", init_containers=[Container(
        "s", restart_policy="Always", ports=[ContainerPort(9000, host_port=9000)])])
    plain_init = Pod("bound-init", node_name="b", init_containers=[Container(
        "i", ports=[ContainerPort(9000, host_port=9000)])])
    cluster = ClusterState.from_records([node("a"), node("b")], [sidecar, plain_init])
    # Regular init containers' host ports are not in use on the node; sidecars' are.
    result = schedule(cluster, [port_pod("x", 9000), port_pod("y", 9000)])
    assert nodes_of(result) == ["b", None]
    assert result.placements[1].reason == (
        "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports.")


# --------------------------------------------------------------------------- states


def _snapshot(state: ClusterState) -> dict[str, np.ndarray]:
    """Copies of every array field of ``state``."""
    return {a.name: getattr(state, a.name).copy() for a in attrs.fields(type(state))
            if isinstance(getattr(state, a.name), np.ndarray)}


def test_input_cluster_is_never_mutated() -> None:
    cluster = ClusterState.from_records(
        [node("a", labels={"x": "1"}, taints=[Taint("k", "v", "PreferNoSchedule")]), node("b")],
        [Pod("bound", node_name="a", containers=[
            Container("c", requests={"cpu": 500}, ports=[ContainerPort(80, host_port=80)])])])
    arrays = _snapshot(cluster)
    assert arrays  # the state really has arrays to compare
    for name in arrays:
        assert not getattr(cluster, name).flags.writeable, name
    pods_before, resources_before = cluster.pods, cluster.resource_names
    pending = [port_pod("p0", 81), pod("p1", 1000, GI),
               Pod("gpu", containers=[Container("c", requests={"example.com/gpu": 0})])]
    result = schedule(cluster, pending)
    # a carries an untolerated PreferNoSchedule taint: TaintToleration gives b 300 more.
    assert nodes_of(result) == ["b", "b", "b"]
    for name, before in arrays.items():
        after = getattr(cluster, name)
        assert after.shape == before.shape and np.array_equal(after, before), name
        assert not after.flags.writeable, name
    assert cluster.pods is pods_before and cluster.resource_names == resources_before
    assert all(p.node_name == "" for p in pending)


def test_result_state_contains_the_placed_pods() -> None:
    cluster = ClusterState.from_records([node("a", cpu=2000), node("b", cpu=2000)],
                                        [pod("bound", 500, node_name="a")])
    result = schedule(cluster, [pod("p0", 1000, GI), pod("p1", 1000, GI),
                                pod("big", 5000)])
    state = result.state
    assert nodes_of(result) == ["b", "a", None]
    assert [(p.name, p.node_name) for p in state.pods] == [
        ("bound", "a"), ("p0", "b"), ("p1", "a")]
    assert state.pod_node.tolist() == [0, 1, 0]
    assert state.requested[:, state.resource_column("cpu")].tolist() == [1500, 1000]
    assert state.requested[:, state.resource_column("memory")].tolist() == [GI, GI]
    assert state.requested[:, state.resource_column("pods")].tolist() == [2, 1]
    # non-zero aggregates: "bound" has no memory request -> 200Mi
    assert state.nonzero_requested.tolist() == [[1500, GI + 200 * MI], [1000, GI]]
    for array in (state.requested, state.nonzero_requested, state.port_count, state.pod_node):
        assert not array.flags.writeable
    assert result.node_of("default/p1") == "a" and result.node_of("default/big") is None
    with pytest.raises(KeyError):
        result.node_of("default/nobody")
    assert result.to_records()[2] == {
        "namespace": "default", "name": "big", "node": None,
        "reason": "0/2 nodes are available: 2 Insufficient cpu."}
    # The new state schedules on from where the batch left off.
    follow = schedule(state, [pod("p2", 600), pod("p3", 600)])
    assert nodes_of(follow) == ["b", None]
    assert follow.placements[1].reason == "0/2 nodes are available: 2 Insufficient cpu."


# --------------------------------------------------------------------------- sampling


def test_percentage_of_nodes_to_score_200_nodes() -> None:
    """numFeasibleNodesToFind(0, 200): 50 - 200/125 = 49% -> 98 -> at least 100.

    The walk starts at nextStartNodeIndex and stops after 100 feasible nodes; the index moves
    by the nodes processed (100). Identical nodes: p0 sees n000-n099 -> n000 (tie index 0);
    p1 sees n100-n199 -> tie index 1 -> n101; p2 sees n000-n099 less n000 -> index 2 -> n003;
    p3 sees n100-n199 less n101 -> [n100 n102 n103 n104 ...] index 3 -> n104.
    """
    cluster = ClusterState.from_records([node(f"n{i:03d}") for i in range(200)])
    pods = [pod(f"p{i}", 100, MI) for i in range(4)]
    assert nodes_of(schedule(cluster, pods)) == ["n000", "n101", "n003", "n104"]
    # 100% scores every node: the window never moves, only the tie index does.
    assert nodes_of(schedule(cluster, pods, percentage_of_nodes_to_score=100)) == [
        "n000", "n002", "n004", "n006"]


@pytest.mark.parametrize("fast_path", [True, False])
def test_profile_percentage_of_nodes_to_score_wins(fast_path: bool) -> None:
    """``numFeasibleNodesToFind``: a profile's percentage (even 0, i.e. adaptive) wins over
    the scheduler-wide one. Same cluster as above: adaptive -> n000 n101 n003 n104,
    100% -> n000 n002 n004 n006."""
    cluster = ClusterState.from_records([node(f"n{i:03d}") for i in range(200)])
    pods = [pod(f"p{i}", 100, MI) for i in range(4)]
    adaptive = schedule_batch(cluster, pods, percentage_of_nodes_to_score=100,
                              profile=ksched.default_profile(0), fast_path=fast_path)
    assert nodes_of(adaptive) == ["n000", "n101", "n003", "n104"]
    everything = schedule_batch(cluster, pods, percentage_of_nodes_to_score=0,
                                profile=ksched.default_profile(100), fast_path=fast_path)
    assert nodes_of(everything) == ["n000", "n002", "n004", "n006"]


def test_percentage_of_nodes_to_score_300_nodes() -> None:
    """300 nodes: 50 - 300/125 = 48% -> 144 nodes per walk: p0 -> n000, p1 starts at 144
    -> tie index 1 -> n145; p2 starts at 288: n288-n299 then n000-n131, less n000 ->
    index 2 -> n290."""
    cluster = ClusterState.from_records([node(f"n{i:03d}") for i in range(300)])
    result = schedule(cluster, [pod(f"p{i}", 100, MI) for i in range(3)])
    assert nodes_of(result) == ["n000", "n145", "n290"]


def test_sampling_counts_infeasible_nodes_in_the_rotation() -> None:
    """n000-n009 are tainted. p0: 10 failures, then 100 feasible n010-n109 (the walk ends
    at the 101st feasible), start moves by 110 -> n010. p1 starts at 110: n110-n199 (90),
    n000-n009 (10 failures), n010-n019 (10) -> max set less n010, index 1 -> n111, start
    += 110 -> 20. p2 starts at n020: window n020-n119 less n111 -> index 2 -> n022. p3 starts
    at 120: window n120-n199, n010-n029 less n010, n022 -> index 3 -> n123."""
    nodes = [node(f"n{i:03d}", taints=[Taint("k", "v")] if i < 10 else []) for i in range(200)]
    cluster = ClusterState.from_records(nodes)
    result = schedule(cluster, [pod(f"p{i}", 100, MI) for i in range(4)])
    assert nodes_of(result) == ["n010", "n111", "n022", "n123"]


def test_sampling_diagnosis_counts_every_node() -> None:
    """With no feasible node the walk covers all nodes; the message counts all 150."""
    nodes = [node(f"n{i:03d}", cpu=100) for i in range(150)]
    result = schedule(ClusterState.from_records(nodes), [pod("x", 1000)])
    assert result.placements[0].reason == "0/150 nodes are available: 150 Insufficient cpu."


# --------------------------------------------------------------------------- pod affinity

HOSTNAME, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"


def zoned(name: str, zone: str) -> Node:
    return node(name, labels={HOSTNAME: name, ZONE: zone})


def test_pod_affinity_follows_the_matching_pod() -> None:
    """x needs an app=db pod in its zone: db (1 cpu) runs on b in z2, so only b and c are
    feasible, and the emptier c wins on LeastAllocated."""
    term = PodAffinityTerm(ZONE, label_selector=ksched.api.LabelSelector({"app": "db"}))
    db = pod("db", 1000, GI, node_name="b", labels={"app": "db"})
    cluster = ClusterState.from_records([zoned("a", "z1"), zoned("b", "z2"), zoned("c", "z2")],
                                        [db])
    incoming = pod("x", 100, MI, pod_affinity=PodAffinity(required=[term]))
    assert nodes_of(schedule(cluster, [incoming])) == ["c"]
    # Without a db pod anywhere (and x not matching its own term) no node will do.
    result = schedule(ClusterState.from_records([zoned("a", "z1")]), [incoming])
    assert result.placements[0].reason == (
        "0/1 nodes are available: 1 node(s) didn't match pod affinity rules.")


def test_self_affine_pods_gather_in_the_first_pods_zone() -> None:
    """The first app=web pod may go anywhere (it matches its own term); the others follow
    it into its zone."""
    term = PodAffinityTerm(ZONE, label_selector=ksched.api.LabelSelector({"app": "web"}))
    cluster = ClusterState.from_records([zoned("a", "z1"), zoned("b", "z2"), zoned("c", "z2"),
                                         zoned("d", "z1")])
    pods = [pod(f"w{i}", 100, MI, labels={"app": "web"},
                pod_affinity=PodAffinity(required=[term])) for i in range(4)]
    placed = nodes_of(schedule(cluster, pods))
    zone_of = {"a": "z1", "b": "z2", "c": "z2", "d": "z1"}
    assert len({zone_of[n] for n in placed}) == 1


def test_pod_anti_affinity_of_a_running_pod() -> None:
    """db on a refuses app=web pods on its host: web goes to b; on a single-node cluster it
    cannot be placed."""
    term = PodAffinityTerm(HOSTNAME, label_selector=ksched.api.LabelSelector({"app": "web"}))
    bound = pod("db", 100, MI, node_name="a", pod_anti_affinity=PodAffinity(required=[term]))
    web = pod("web", 100, MI, labels={"app": "web"})
    cluster = ClusterState.from_records([zoned("a", "z1"), zoned("b", "z1")], [bound])
    assert nodes_of(schedule(cluster, [web])) == ["b"]
    result = schedule(ClusterState.from_records([zoned("a", "z1")], [bound]), [web])
    assert result.placements[0].reason == (
        "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules.")


def test_pods_go_to_the_profile_they_name_and_others_are_reported() -> None:
    """A configuration's profiles share one cluster; a pod naming none is left alone.

    MostAllocated (cpu 62, memory 14 on a; 25 and 25 on b after the first pod) packs onto a,
    where the default profile's LeastAllocated and BalancedAllocation spread onto b."""
    from ksched.config import load_config

    config = load_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler"},
            {"schedulerName": "packer",
             "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
             "pluginConfig": [{"name": "NodeResourcesFit", "args": {
                 "scoringStrategy": {"type": "MostAllocated"}}}]}]})
    nodes = [Node(n, allocatable={"cpu": 4000, "memory": 8 << 30, "pods": 110})
             for n in ("a", "b")]
    busy = Pod("busy", node_name="a", containers=[Container("c", requests={"cpu": 2000})])
    cluster = ClusterState.from_records(nodes, [busy])

    def pod(name: str, scheduler: str) -> Pod:
        return Pod(name, scheduler_name=scheduler,
                   containers=[Container("c", requests={"cpu": 500, "memory": 1 << 30})])

    pods = [pod("spread", "default-scheduler"), pod("packed", "packer"), pod("lost", "other")]
    for fast_path in (True, False):
        result = ksched.schedule_batch(cluster, pods, profile=config, fast_path=fast_path)
        assert [p.node for p in result.placements] == ["b", "a", None]
        assert result.placements[2].reason == (
            'no scheduler profile named "other": the pod is not scheduled')


# --------------------------------------------------------------------------- inputs


def test_pods_and_clusters_as_kubernetes_dicts() -> None:
    """Wire-format dicts are pods as records are (once an ``AttributeError``)."""
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
              "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}
             for name, cpu in [("a", "1"), ("b", "4")]]
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {
                    "cpu": "1500m"}}}]}}
    result = schedule(ksched.load_cluster(nodes), [manifest])
    assert nodes_of(result) == ["b"]
    # as the Priority admission plugin creates it (no class, no default: priority 0, as read)
    assert result.placements[0].pod == Pod.from_manifest(manifest)
    assert nodes_of(schedule_batch(nodes, manifest)) == ["b"]


def test_a_bound_result_schedules_like_the_batch_went_on() -> None:
    """``ClusterState.bind`` of a batch's placements is its result state: the next pods see
    the same cluster either way."""
    cluster = ClusterState.from_records([node("a"), node("b"), node("c")])
    first = schedule(cluster, [pod(f"p{i}", 700, GI) for i in range(5)])
    bound = cluster.bind([(p.pod, p.node) for p in first.placements])
    more = [pod(f"q{i}", 900, GI) for i in range(4)]
    assert nodes_of(schedule(bound, more)) == nodes_of(schedule(first.state, more))


def test_the_loop_and_the_framework_hand_the_next_pod_the_same_counters() -> None:
    # One Driver places the pods through the compiled loop, another through the framework:
    # the named counters (the walk's start index, pods placed, nodes evaluated) agree after
    # every pod, and so do the nodes and the tie-break state.
    from ksched.cache import Assumer
    from ksched.driver import Driver
    from ksched.framework.runtime import Framework
    from ksched.framework.tiebreak import TieBreaker
    from ksched.profile import default_profile

    cluster = ClusterState.from_records([node(f"n{i}", cpu=2000 + 500 * (i % 3))
                                         for i in range(120)])
    pods = [pod(f"p{i}", cpu=300 + 100 * (i % 4)) for i in range(60)] + [pod("big", cpu=9000)]
    seen = []
    for compiled in (True, False):
        driver = Driver(Assumer(cluster, pods), TieBreaker(), 0, pending=pods)
        framework = Framework(default_profile())
        fast = driver.fast_path(framework)
        steps = []
        for p in pods:
            if compiled:
                classes = np.array([fast.class_of(p, driver.assumer.state)], dtype=np.int64)
                out_node, out_start = np.zeros(1, np.int64), np.zeros(1, np.int64)
                driver.run_loop(fast, classes, 0, out_node, out_start)
                if out_node[0] >= 0:
                    driver.loop_placed(fast, p, int(out_node[0]))
                placed = max(int(out_node[0]), -1)
            else:
                outcome = driver.framework_cycle(framework, p)
                placed = -1 if outcome.node is None else outcome.node
            c = driver.counters
            steps.append((placed, c.next_start_index, c.placed,
                          c.nodes_evaluated, driver.tie_breaker.last_node_index))
        seen.append(steps)
    assert seen[0] == seen[1]
    assert seen[0][-1][0] == -1 and seen[0][-2][2] == 60
    assert seen[0][-1][3] - seen[0][-2][3] == 120  # the failing pod walked every node
    assert len({step[1] for step in seen[0]}) > 1  # the walk's start moved


@pytest.mark.parametrize("fast_path", [True, False])
def test_gated_pods_are_never_scheduled(fast_path: bool) -> None:
    """SchedulingGates' PreEnqueue keeps a gated pod out of the queue: it is left unplaced
    with the pod condition's message, and the pods after it are placed as if it were not
    there (replicas of one spec, gated or not, each judged by their own gates)."""
    cluster = ClusterState.from_records([node("n0"), node("n1")])
    free = pod("free", 1000)
    gated = attrs.evolve(free, name="gated", scheduling_gates=("example.com/quota",))
    pods = [free, gated, attrs.evolve(free, name="free2"), attrs.evolve(gated, name="gated2")]
    result = schedule_batch(cluster, pods, fast_path=fast_path)
    message = "Scheduling is blocked due to non-empty scheduling gates"
    assert [(p.pod.name, p.node, p.reason) for p in result.placements] == [
        ("free", "n0", ""), ("gated", None, message), ("free2", "n1", ""),
        ("gated2", None, message)]
    assert result.walks[[1, 3]].tolist() == [[-1] * 5] * 2  # no cycle ran
    alone = schedule_batch(cluster, [pods[0], pods[2]], fast_path=fast_path)
    assert [p.node for p in result.scheduled] == [p.node for p in alone.placements]

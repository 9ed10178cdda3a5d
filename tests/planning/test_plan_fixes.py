"""plan(): the search's guarantees on random heterogeneous clusters, budgets, and the wrong
answers of issue #24 (PriorityClasses, DaemonSets, StatefulSet claims)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched import Container, Node, Pod, PriorityClass, schedule_batch
from ksched.api import StorageClass
from ksched.planning.plan import plan
from ksched.planning.workloads import expand_workloads
from ksched.state import ClusterState

EMPTY = ClusterState.from_records([])


def _type(name: str, cpu: int, pool: str) -> Node:
    return Node(name, labels={"pool": pool}, allocatable={"cpu": cpu * 1000, "memory": "64Gi",
                                                          "pods": 110})


def _pod(name: str, cpu_halves: int, pool: str | None = None, **kw) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu_halves * 500})],
               node_selector={"pool": pool} if pool else None, **kw)


def _fleet(existing: list[Node], types: list[Node], counts: dict[str, int]) -> ClusterState:
    """The nodes ``plan`` adds (``<type>-plan-<k>``), after ``existing``."""
    return ClusterState.from_records(existing + [
        Node(f"{t.name}-plan-{k}", labels={**t.labels, "kubernetes.io/hostname":
                                           f"{t.name}-plan-{k}"}, allocatable=t.allocatable)
        for t in types for k in range(counts.get(t.name, 0))])


def _placed(existing: list[Node], types: list[Node], counts: dict[str, int],
            pods: list[Pod]) -> set[str]:
    result = schedule_batch(_fleet(existing, types, counts), pods)
    return {p.pod.key for p in result.placements if p.node is not None}


def _moves(counts: dict[str, int], prices: dict[str, float]) -> list[dict[str, int]]:
    """Removal, swap for a cheaper type, one node for the fewest that pay for it."""
    out = []
    for t, n in counts.items():
        if not n:
            continue
        out.append({**counts, t: n - 1})
        for u in counts:
            if u == t:
                continue
            if prices[u] < prices[t]:
                out.append({**counts, t: n - 1, u: counts[u] + 1})
            elif prices[t] > 0 and n >= (k := int(prices[u] // prices[t]) + 1):
                out.append({**counts, t: n - k, u: counts[u] + 1})
    return out


@st.composite
def _instances(draw: st.DrawFn) -> tuple:
    n_types = draw(st.integers(1, 3))
    types = [_type(f"t{i}", draw(st.integers(2, 6)), draw(st.sampled_from("ab")))
             for i in range(n_types)]
    prices = {t.name: float(draw(st.integers(1, 6))) for t in types}
    pods = [_pod(f"p{i}", draw(st.integers(1, 8)), draw(st.sampled_from([None, "a", "b"])))
            for i in range(draw(st.integers(1, 9)))]
    existing = [_type("old", draw(st.integers(1, 4)), "a")] if draw(st.booleans()) else []
    return types, prices, pods, existing


@settings(max_examples=15, deadline=None)
@given(_instances())
def test_plan_places_what_it_claims_and_no_cheaper_move_does(instance: tuple) -> None:
    types, prices, pods, existing = instance
    report = plan(ClusterState.from_records(existing), pods, types, prices=prices)
    unfit = {u.pod.key for u in report.unschedulable}
    fitting = {p.key for p in pods} - unfit
    assert report.message == "" and report.local_minimum
    assert fitting <= _placed(existing, types, report.nodes, pods)
    placed = len(report.placements) - len(report.result.unschedulable)
    assert placed == len(pods) - len(unfit)  # consistent counts
    assert report.bound_cost <= report.cost + 1e-9
    for counts in _moves(report.nodes, prices):
        assert not fitting <= _placed(existing, types, counts, pods), counts


def test_budget_max_cost_stops_and_says_so() -> None:
    report = plan(EMPTY, [_pod(f"p{i}", 4) for i in range(6)], [_type("m", 4, "a")],
                  prices={"m": 3}, max_cost=7)
    assert report.status == "out of budget" and not report.complete
    assert report.nodes == {"m": 2} and report.cost == 6.0
    assert len(report.failed) == 2
    assert report.message.startswith("max_nodes (1,000,000) or max_cost (7) reached")
    assert report.to_dict()["status"] == "out of budget"


def test_a_pod_that_fits_no_type_is_left_out_of_the_bound() -> None:
    pods = [_pod("x", 2, pool="b")] + [_pod(f"p{i}", 2) for i in range(3)]
    report = plan(EMPTY, pods, [_type("m", 2, "a")], prices={"m": 1})
    assert [u.pod.key for u in report.unschedulable] == ["default/x"]
    assert report.bound == {"m": 2} and report.nodes == {"m": 2}  # 3 pods of 1 cpu
    assert report.bound_cost <= report.cost
    assert report.status == "some pods fit no type"


def test_priority_class_of_the_cluster_is_admitted() -> None:
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                "spec": {"priorityClassName": "high", "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    report = plan(EMPTY, [manifest], [_type("m", 4, "a")],
                  priority_classes=[PriorityClass("high", 1000)])
    assert report.placements[0].pod.priority == 1000
    assert report.complete


def _daemon_set(cpu: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {
                         "containers": [{"name": "c", "resources": {"requests": {
                             "cpu": cpu}}}]}}}}


def _deployment(replicas: int, cpu: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                         "containers": [{"name": "c", "resources": {"requests": {
                             "cpu": cpu}}}]}}}}


def test_daemon_pod_too_big_for_an_existing_node() -> None:
    old = ClusterState.from_records([_type("old", 2, "a")])
    report = plan(old, [_daemon_set("3"), _deployment(3, "1")], [_type("m", 4, "a")])
    assert report.nodes == {"m": 1}  # its agent (3) + 1 web; 2 web on old
    agent = report.placements[0]
    assert agent.pod.name.startswith("agent-") and agent.node is None
    assert [u.pod.key for u in report.unschedulable] == [agent.pod.key]
    assert report.status == "some pods fit no type"


def test_daemon_set_that_fits_no_type_is_not_forced_onto_new_nodes() -> None:
    report = plan(EMPTY, [_daemon_set("8"), _deployment(4, "1")], [_type("m", 4, "a")])
    assert report.nodes == {"m": 1}
    assert len(report.placements) == 4 and not report.result.unschedulable
    assert not any(p.name.startswith("agent-") for p in report.result.state.pods)
    (unfit,) = report.unschedulable
    assert unfit.pod.name.startswith("agent-")
    assert unfit.reasons == {"m": "0/1 nodes are available: 1 Insufficient cpu."}


def _stateful_set(replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
            "spec": {"replicas": replicas, "serviceName": "db",
                     "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}}, "spec": {
                         "containers": [{"name": "c", "resources": {"requests": {
                             "cpu": "1"}}}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                         "accessModes": ["ReadWriteOnce"], "storageClassName": "wffc",
                         "resources": {"requests": {"storage": "1Gi"}}}}]}}


def test_stateful_set_claims_are_made_as_the_controller_names_them() -> None:
    expansion = expand_workloads([_stateful_set(2)])
    assert [c.name for c in expansion.claims] == ["data-db-0", "data-db-1"]
    assert expansion.claims[0].storage_class == "wffc"
    assert expansion.claims[0].request == 2**30


def test_stateful_set_with_wait_for_first_consumer_claims_schedules() -> None:
    wffc = StorageClass("wffc", provisioner="csi.example.com",
                        volume_binding_mode="WaitForFirstConsumer")
    cluster = ClusterState.from_records([]).with_storage(
        ClusterState.from_records([]).storage.__class__(storage_classes=[wffc]))
    report = plan(cluster, [_stateful_set(3)], [_type("m", 2, "a")])
    assert report.complete, str(report)
    assert report.nodes == {"m": 2}


def test_the_tie_break_reaches_every_exact_schedule() -> None:
    """``plan(tie_break=...)``: each exact schedule breaks ties as asked (v1.35.4's heap
    included), and an unknown mode is refused before any work."""
    from ksched.errors import KschedError

    pods = [Pod(f"p{i}", containers=[Container("c", requests={"cpu": "1"})]) for i in range(6)]
    m = Node("m", allocatable={"cpu": "4", "memory": "16Gi", "pods": 110})
    empty = ClusterState.from_records([])
    for mode in ("round-robin", "random", "heap"):
        assert plan(empty, pods, [m], tie_break=mode).nodes == {"m": 2}
    with pytest.raises(KschedError, match='tie_break: Unsupported value: "first"'):
        plan(empty, pods, [m], tie_break="first")

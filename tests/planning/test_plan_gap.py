"""Issue 24: the plan's gap explained (how the new nodes are used, what the pods that fail one
node short need, the scheduler's scoring), and the search's block trades."""

from __future__ import annotations

import time

import attrs
import numpy as np
import pytest

from ksched import ClusterState, Container, Node, Pod
from ksched.config import load_config
from ksched.planning.plan import plan
from ksched.planning.plan_gap import amount, needs, scoring_strategy
from ksched.planning.plan_search import Budget, Search
from ksched.profile import default_profile

MOST = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
            "name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}


def _pod(name: str, cpu: str) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu, "memory": "1Gi"})])


#: Seven 1-cpu pods, then one that needs a whole 8-cpu node.
PODS = [*(_pod(f"s{i}", "1") for i in range(7)), _pod("whole", "8")]
BIG = Node("big", allocatable={"cpu": "8", "memory": "32Gi", "pods": 110})


def test_spreading_explains_the_gap() -> None:
    """LeastAllocated puts each small pod on an empty node: the whole-node pod needs an
    eighth node, where the bound packs everything into two."""
    report = plan(ClusterState.from_records([]), PODS, [BIG])
    assert (report.bound, report.nodes, report.gap) == ({"big": 2}, {"big": 8}, 6.0)
    use = report.usage["big"]
    assert (use.nodes, use.pods, use.flexible) == (8, 8, 0)
    assert use.shares == {"cpu": 15 / 64, "memory": 8 / 256}
    assert str(report.needs["default/whole"]) == (
        "8 cpu, 1 GiB memory; fits big only; takes 100% cpu, 3% memory of a new big")
    assert report.why == (
        "default/whole needs 100% of a new big's cpu; the scheduler puts each pod on the "
        "emptiest node that fits (NodeResourcesFit LeastAllocated), so the 8 pods on the 8 new "
        "big nodes (0 of which could use another type) spread over all of them, requesting 23% "
        "of their cpu in all: the plan needs so many big nodes that one still has that much "
        "free when the pod comes")
    text = str(report).splitlines()
    assert "new nodes at the end:" in text
    assert "  big  8 nodes, 8 pods (0 could use another type): cpu 23%, memory 3% requested" \
        in text
    assert f"why: {report.why}" in text
    assert "  one big fewer: 1 pod fails, e.g. default/whole (8 cpu, 1 GiB memory; fits big " \
           "only; takes 100% cpu, 3% memory of a new big): 0/7 nodes are available: 7 " \
           "Insufficient cpu." in text
    data = report.to_dict()
    assert data["usage"]["big"] == {"nodes": 8, "pods": 8, "flexible": 0,
                                    "requested_share": {"cpu": 0.2344, "memory": 0.0312}}
    assert data["fewer"]["big"]["examples"][0]["needs"] == str(report.needs["default/whole"])
    assert data["why"] == report.why


def test_bin_packing_closes_the_gap_and_leaves_no_why() -> None:
    report = plan(ClusterState.from_records([]), PODS, [BIG], profile=load_config(MOST))
    assert report.nodes == report.bound == {"big": 2} and report.gap == 0
    assert report.why == "" and "why:" not in str(report)
    assert report.usage["big"].shares["cpu"] == 15 / 16


def test_a_decoy_type_is_named() -> None:
    """With MostAllocated, 1.5-cpu pods take a cheap 2-cpu node each (the bound packs them
    six to nine cpu); one cheap node fewer sends one onto the dear node the whole-node pod
    needs."""
    small = Node("small", allocatable={"cpu": "2", "memory": "2Gi", "pods": 110})
    pods = [*(_pod(f"s{i}", "1500m") for i in range(7)), _pod("whole", "8")]
    report = plan(ClusterState.from_records([]), pods, [BIG, small],
                  prices={"big": 10.0, "small": 1.0}, profile=load_config(MOST))
    assert (report.bound, report.nodes) == ({"big": 1, "small": 6}, {"big": 1, "small": 7})
    assert report.complete and report.gap == 1.0
    assert "  big    1 node, 1 pod (0 could use another type): cpu 100%, memory 3% " \
           "requested" in str(report).splitlines()
    assert report.why == (
        "default/whole needs 100% of a new big's cpu (NodeResourcesFit MostAllocated); with "
        "one small fewer it fails too, though it does not fit small: those nodes draw other "
        "pods away")


def test_needs_takes_the_type_the_pod_fits_best() -> None:
    types = [Node("m", allocatable={"cpu": "16", "memory": "64Gi"}),
             Node("r", allocatable={"cpu": "16", "memory": "128Gi"})]
    effective = np.array([[16000, 64 << 30], [16000, 128 << 30]], np.int64)
    cache = Pod("cache", containers=[Container("c", requests={"cpu": "2", "memory": "48Gi"})])
    need = needs(cache, types, [True, True], effective, ("cpu", "memory"))
    assert (need.best, need.types, need.largest) == ("r", ("m", "r"), ("memory", 0.375))
    assert str(need) == "2 cpu, 48 GiB memory; fits m, r; takes 12% cpu, 38% memory of a new r"
    assert str(needs(cache, types, [False, False], effective, ("cpu", "memory"))) == \
        "2 cpu, 48 GiB memory"


@pytest.mark.parametrize(("resource", "value", "text"), [
    ("cpu", 88000, "88 cpu"), ("cpu", 500, "0.5 cpu"), ("memory", 320 << 30, "320 GiB memory"),
    ("memory", 3 << 29, "1.5 GiB memory"), ("nvidia.com/gpu", 8, "8 nvidia.com/gpu")])
def test_amounts_in_cores_gib_and_counts(resource: str, value: int, text: str) -> None:
    assert amount(resource, value) == text


def test_scoring_strategy_of_each_profile_form() -> None:
    assert scoring_strategy(None) == "LeastAllocated"
    assert scoring_strategy(default_profile()) == "LeastAllocated"
    assert scoring_strategy(load_config(MOST)) == "MostAllocated"
    no_fit = attrs.evolve(default_profile(), plugins={
        **default_profile().plugins, "score": ("TaintToleration",)},
        weights={"TaintToleration": 3})
    assert scoring_strategy(no_fit) is None


# --------------------------------------------------------------------------- block trades


@attrs.frozen
class _Type:
    name: str


class _Planner:
    """A stand-in whose schedules place every pod when ``feasible(counts)``: a rugged cost
    landscape, as the scheduler's spreading makes."""

    def __init__(self, feasible) -> None:
        self.types = (_Type("dear"), _Type("cheap"))
        self.feasible = feasible

    def run(self, counts: dict[str, int]):
        placed = self.feasible(counts["dear"], counts["cheap"])
        return type("R", (), {"node_rows": np.array([0 if placed else -1])})()


def _search(feasible) -> Search:
    return Search(_Planner(feasible), np.array([True]), np.array([10.0, 1.0]),
                  Budget(10_000, None, None, time.monotonic()), lambda failed: None)


def test_a_block_trade_leaves_a_dip_single_moves_stall_in() -> None:
    """At (16, 0) no single move is feasible, yet 2 dear nodes traded for 10 cheap ones are;
    then single moves take the cheap nodes down to 8."""
    search = _search(lambda d, c: d >= 16 or (d >= 14 and c >= 8))
    start = search.evaluate(np.array([16, 0]))
    assert search.single_moves(start).counts.tolist() == [16, 0]
    block = search.block_trade(start)
    assert block is not None and block.counts.tolist() == [14, 10]
    assert search.descend(start).counts.tolist() == [14, 8]


def test_block_sizes_are_an_eighth_a_sixteenth_and_a_thirty_second() -> None:
    tried = []

    def feasible(d: int, c: int) -> bool:
        tried.append((d, c))
        return d >= 64

    search = _search(feasible)
    assert search.block_trade(search.evaluate(np.array([64, 0]))) is None
    assert tried[1:] == [(56, 40), (60, 20), (62, 10)]  # half of the saving spent on cheap

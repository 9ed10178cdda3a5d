"""A pod that cannot be scheduled at PreFilter (here: its ResourceClaim does not exist) fails
alone, with upstream's reason, in ``schedule_batch``, ``explain`` and the Simulator; the other
pods are scheduled as if it were not there. (Dynamic resource allocation itself is modelled:
tests/dra.)"""

from __future__ import annotations

import pytest

from ksched import ClusterState, Container, Node, Pod, explain, schedule_batch
from ksched.simulator import Event, Simulator

GI = 2**30
REASON = '0/2 nodes are available: resourceclaim.resource.k8s.io "gpu" not found.'
HELD = 'resourceclaim.resource.k8s.io "gpu" not found'


def node(name: str) -> Node:
    return Node(name, labels={"kubernetes.io/hostname": name},
                allocatable={"cpu": 2000, "memory": 8 * GI, "pods": 110})


def pod(name: str, cpu: int = 1000, **extra) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu})], **extra)


CLUSTER = ClusterState.from_records([node("n0"), node("n1")])
PODS = [pod("a"), pod("gpu", resource_claims=("gpu",), claim_sources=(("gpu", "gpu", ""),)),
        pod("b"), pod("c")]


@pytest.mark.parametrize("fast_path", [True, False])
def test_the_batch_goes_on_without_the_pod(fast_path) -> None:
    result = schedule_batch(CLUSTER, PODS, fast_path=fast_path)
    # DynamicResources' PreEnqueue keeps the pod out of the queue: never attempted
    assert [(p.pod.name, p.node, p.reason) for p in result.placements] == [
        ("a", "n0", ""), ("gpu", None, HELD), ("b", "n1", ""), ("c", "n0", "")]
    without = schedule_batch(CLUSTER, [p for p in PODS if p.name != "gpu"],
                             fast_path=fast_path)
    assert [p.node for p in result.scheduled] == [p.node for p in without.placements]


def test_explain_says_the_same() -> None:
    why = explain(CLUSTER, PODS[1])
    assert (why.chosen, why.message, why.feasible) == (None, REASON, ())
    assert [n.reasons for n in why.nodes] == [("not evaluated",)] * 2
    assert why.to_dict()["message"] == REASON


def test_the_simulator_records_it_unschedulable_and_goes_on() -> None:
    result = Simulator(CLUSTER).run([Event(i, "create", pod=p) for i, p in enumerate(PODS)])
    outcomes = {d.pod: (d.outcome, d.node, d.reason) for d in result.decisions}
    # DynamicResources' PreEnqueue holds a pod whose claim does not exist: never attempted
    assert "default/gpu" not in outcomes
    assert [outcomes[f"default/{n}"][:2] for n in "abc"] == [
        ("bound", "n0"), ("bound", "n1"), ("bound", "n0")]
    assert [p.key for p in result.pending] == ["default/gpu"]

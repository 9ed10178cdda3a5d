"""DRA in the simulator: the resourceclaim controller's part (claims generated from templates,
released and deleted with their pods) and DynamicResources' PreEnqueue."""

from __future__ import annotations

from conftest import claim, device_class, exact, gpu, node, pod, resource_slice
from ksched import cluster_from_objects
from ksched.dra.state import dra_objects
from ksched.io import read_objects
from ksched.simulator import Simulator
from ksched.timeline import Event

TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [exact("gpu", "gpu")]}}}}
CLUSTER = cluster_from_objects(read_objects([
    node("n1"), device_class("gpu", 'device.driver == "gpu.example.com"'),
    resource_slice("s1", "gpu.example.com", "n1", [gpu("gpu-0")], node_name="n1"),
    claim("shared", [exact("gpu", "gpu")]), TEMPLATE,
])).widened(resources=["cpu"])


def pod_record(name: str, claims: dict[str, str]):
    return read_objects([pod(name, claims)]).pods[0]


def outcomes(result) -> list[tuple[float, str, str, str | None]]:
    return [(d.time, d.pod, d.outcome, d.node) for d in result.decisions
            if d.outcome in ("bound", "finished", "deleted")]


def test_a_finished_pod_frees_its_device_and_its_generated_claim_is_deleted() -> None:
    result = Simulator(CLUSTER).run([
        Event(0, "create", pod=pod_record("a", {"g": "template:one-gpu"}), duration=10),
        Event(1, "create", pod=pod_record("b", {"g": "template:one-gpu"}))])
    assert outcomes(result) == [(0.0, "default/a", "bound", "n1"),
                                (10.0, "default/a", "finished", "n1"),
                                (10.0, "default/b", "bound", "n1")]
    dra = dra_objects(result.state)
    generated = [c for c in dra.resource_claims if c.owner is not None]
    assert [(c.owner[1], c.reserved_for, [r.device for r in c.allocation.results])
            for c in generated] == [("b", (("pods", "b", "uid-b"),), ["gpu-0"])]
    assert generated[0].name.startswith("b-g-") and len(generated[0].name) == len("b-g-") + 5


def test_a_shared_claim_is_deallocated_when_its_last_consumer_goes() -> None:
    result = Simulator(CLUSTER).run([
        Event(0, "create", pod=pod_record("a", {"g": "claim:shared"}), duration=5),
        Event(0, "create", pod=pod_record("b", {"g": "claim:shared"}), duration=8),
        Event(1, "create", pod=pod_record("c", {"g": "template:one-gpu"}))])
    assert outcomes(result)[-3:] == [(5.0, "default/a", "finished", "n1"),
                                     (8.0, "default/b", "finished", "n1"),
                                     (8.0, "default/c", "bound", "n1")]
    shared = dra_objects(result.state).claim("default", "shared")
    assert (shared.allocation, shared.reserved_for, shared.finalizers) == (None, (), ())


def test_prenqueue_holds_a_pod_whose_claim_does_not_exist() -> None:
    result = Simulator(CLUSTER).run([
        Event(0, "create", pod=pod_record("x", {"g": "claim:missing"})),
        Event(0, "create", pod=pod_record("y", {"g": "template:no-such-template"}))])
    assert outcomes(result) == []
    assert [d.outcome for d in result.decisions] == []  # never attempted
    assert sorted(p.name for p in result.pending) == ["x", "y"]

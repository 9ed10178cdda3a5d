"""The DynamicResources plugin through schedule_batch and explain (object-level framework)."""

from __future__ import annotations

from conftest import claim, device_class, exact, gpu, node, pod, resource_slice
from ksched import cluster_from_objects, explain
from ksched.dra.state import dra_objects
from ksched.engine import schedule_batch
from ksched.io import read_objects

CLUSTER = cluster_from_objects(read_objects([
    node("n1"), node("n2"), device_class("gpu", 'device.driver == "gpu.example.com"'),
    resource_slice("s1", "gpu.example.com", "n1", [gpu("gpu-0")], node_name="n1"),
    resource_slice("s2", "gpu.example.com", "n2", [gpu("gpu-0")], node_name="n2"),
    claim("c1", [exact("gpu", "gpu")]), claim("c2", [exact("gpu", "gpu")]),
    claim("c3", [exact("gpu", "gpu")]), claim("bad", [exact("gpu", "nope")]),
    claim("gen", [exact("gpu", "gpu")], owner=("p5", "uid-p5")),
])).widened(resources=["cpu"])


def pods(*specs: dict):
    return read_objects(list(specs)).pods


def test_the_next_pod_sees_the_devices_taken_and_shared_claims_are_reserved() -> None:
    result = schedule_batch(CLUSTER, pods(pod("p1", {"g": "claim:c1"}),
                                          pod("p2", {"g": "claim:c2"}),
                                          pod("p3", {"g": "claim:c3"}),
                                          pod("p4", {"g": "claim:c1"})))
    assert [(p.pod.name, p.node, p.reason) for p in result.placements] == [
        ("p1", "n1", ""), ("p2", "n2", ""),
        ("p3", None, "0/2 nodes are available: 2 cannot allocate all claims."),
        ("p4", "n1", "")]
    dra = dra_objects(result.state)
    c1 = dra.claim("default", "c1")
    assert [r.wire() for r in c1.allocation.results] == [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]
    assert c1.reserved_for == (("pods", "p1", "uid-p1"), ("pods", "p4", "uid-p4"))
    assert c1.finalizers == ("resource.kubernetes.io/delete-protection",)
    assert dra_objects(CLUSTER).claim("default", "c1").allocation is None  # input unchanged


def test_prefilter_rejections() -> None:
    missing_class = explain(CLUSTER, pods(pod("p", {"g": "claim:bad"}))[0])
    assert missing_class.message == ("0/2 nodes are available: request gpu: device class nope "
                                     "does not exist.")
    missing = explain(CLUSTER, pods(pod("p", {"g": "claim:none"}))[0])
    assert missing.message == ('0/2 nodes are available: resourceclaim.resource.k8s.io "none" '
                               "not found.")


def test_generated_claims_must_be_owned_by_the_pod() -> None:
    owned = pods(pod("p5", {"g": "template:t"}, statuses={"g": "gen"}))[0]
    assert explain(CLUSTER, owned).chosen == "n1"
    other = pods(pod("p6", {"g": "template:t"}, statuses={"g": "gen"}))[0]
    assert explain(CLUSTER, other).message == (
        "0/2 nodes are available: ResourceClaim default/gen was not created for pod "
        "default/p6 (pod is not owner).")
    none_needed = pods(pod("p7", {"g": "template:t"}, statuses={"g": ""}))[0]
    assert explain(CLUSTER, none_needed).chosen == "n1"  # no claim: PreFilter skips

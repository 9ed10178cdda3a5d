"""DynamicResources: scheduler_perf's SchedulingWithResourceClaimTemplate shape (nodes with
eight devices each in a node-local slice, pods with a one-device claim template; the claims
generated as the resourceclaim controller does). Pods/s goes into ``extra_info``; compare it
with U from ``ksched bench`` in the same run."""

from __future__ import annotations

from typing import Any

import pytest

from ksched import cluster_from_objects
from ksched.dra.controller import generate_claims
from ksched.engine import schedule_batch
from ksched.io import read_objects

DRIVER = "test-driver.cdi.k8s.io"


def claim_template_workload(nodes: int, pods: int, devices: int = 8) -> tuple[Any, list]:
    """(cluster, pending pods): ``nodes`` nodes with ``devices`` devices each, ``pods`` pods
    each with a claim generated from a one-device template."""
    objects: list[dict] = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                            "metadata": {"name": "test-class"},
                            "spec": {"selectors": [{"cel": {
                                "expression": f'device.driver == "{DRIVER}"'}}]}},
                           {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                            "metadata": {"name": "test-claim-template", "namespace": "default"},
                            "spec": {"spec": {"devices": {"requests": [{
                                "name": "req-0", "exactly": {
                                    "deviceClassName": "test-class"}}]}}}}]
    for i in range(nodes):
        name = f"node-{i}"
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}})
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                        "metadata": {"name": f"{name}-slice"},
                        "spec": {"driver": DRIVER, "nodeName": name,
                                 "pool": {"name": name, "generation": 1,
                                          "resourceSliceCount": 1},
                                 "devices": [{"name": f"dev-{d}"} for d in range(devices)]}})
    for i in range(pods):
        objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"pod-{i}", "namespace": "default", "uid": f"uid-pod-{i}"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                "requests": {"cpu": "10m"}, "claims": [{"name": "gpu"}]}}],
                "resourceClaims": [{"name": "gpu",
                                    "resourceClaimTemplateName": "test-claim-template"}]}})
    loaded = read_objects(objects)
    dra = loaded.dra
    pending, claims = [], []
    for p in loaded.pods:
        p, made = generate_claims(p, dra)
        pending.append(p)
        claims += made
    cluster = cluster_from_objects(read_objects([o for o in objects if o["kind"] != "Pod"]))
    from ksched.dra.state import dra_objects, with_dra

    cluster = with_dra(cluster, dra_objects(cluster).updated(claims))
    return cluster, pending


@pytest.mark.parametrize("nodes, pods", [(500, 5000)])
def test_bench_claim_template(benchmark: Any, nodes: int, pods: int) -> None:
    cluster, pending = claim_template_workload(nodes, pods)
    result = benchmark.pedantic(schedule_batch, args=(cluster, pending), rounds=1, iterations=1)
    assert sum(p.node is not None for p in result.placements) == min(pods, 8 * nodes)
    benchmark.extra_info.update(nodes=nodes, pods=pods,
                                pods_per_s=pods / benchmark.stats.stats.mean)

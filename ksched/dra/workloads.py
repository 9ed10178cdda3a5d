"""scheduler_perf's DRA workloads (``test/integration/scheduler_perf/dra``): nodes with a
node-local slice of devices of ``test-driver.cdi.k8s.io``, a DeviceClass selecting them, a
one-device ResourceClaimTemplate, claims already allocated (``allocResourceClaims``), and pods
whose claims the resourceclaim controller generates from the template."""

from __future__ import annotations

from typing import Any

from ksched.dra.controller import generate_claims
from ksched.dra.state import dra_objects, with_dra
from ksched.io import read_objects
from ksched.state import ClusterState

__all__ = ["DRIVER", "claim_template_workload", "scheduling_with_claim_template",
           "steady_state_half", "steady_state_workload", "template_pod"]

DRIVER = "test-driver.cdi.k8s.io"


def _objects(nodes: int, devices: int, allocated: int) -> list[dict]:
    """The device class, the one-device claim template, ``nodes`` nodes with ``devices``
    devices each in a node-local slice, and ``allocated`` claims in namespace ``init``
    allocated one device each, spread over the nodes (scheduler_perf's
    ``allocResourceClaims``)."""
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
    for i in range(allocated):
        node = f"node-{i % nodes}"
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": f"init-{i}", "namespace": "init",
                                     "uid": f"uid-init-{i}"},
                        "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {
                            "deviceClassName": "test-class"}}]}},
                        "status": {"allocation": {"devices": {"results": [{
                            "request": "req-0", "driver": DRIVER, "pool": node,
                            "device": f"dev-{i // nodes}"}]}, "nodeSelector": {
                            "nodeSelectorTerms": [{"matchFields": [{
                                "key": "metadata.name", "operator": "In",
                                "values": [node]}]}]}}}})
    return objects


def template_pod(i: int) -> dict:
    """A pod with one claim from the template."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"pod-{i}", "namespace": "default", "uid": f"uid-pod-{i}"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {
            "requests": {"cpu": "10m"}, "claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu",
                                "resourceClaimTemplateName": "test-claim-template"}]}}


def claim_template_workload(nodes: int, pods: int, devices: int = 8,
                            allocated: int = 0) -> tuple[Any, list]:
    """(cluster, pending pods): SchedulingWithResourceClaimTemplate, ``nodes`` nodes with
    ``devices`` devices each (``allocated`` of them held by claims already), ``pods`` pods
    each with a claim generated from a one-device template."""
    objects = _objects(nodes, devices, allocated)
    loaded = read_objects(objects + [template_pod(i) for i in range(pods)])
    dra = loaded.dra
    pending, claims = [], []
    for p in loaded.pods:
        p, made = generate_claims(p, dra)
        pending.append(p)
        claims += made
    cluster = ClusterState.from_objects(read_objects(objects))
    return with_dra(cluster, dra_objects(cluster).updated(claims)), pending


def steady_state_workload(nodes: int, pods: int, devices: int = 10, allocated: int | None = None,
                          pending: int = 10) -> tuple[Any, list]:
    """(cluster, timeline): SteadyStateClusterResourceClaimTemplate, ``nodes`` nodes with
    ``devices`` devices each, half of them held by claims already (``allocated``), and
    ``pods`` pods created one after another with a claim template, each deleted once bound,
    so that about ``pending`` pods wait at a time (the resourceclaim controller makes and
    deletes their claims)."""
    from ksched.timeline import Event

    allocated = nodes * devices // 2 if allocated is None else allocated
    cluster = ClusterState.from_objects(read_objects(_objects(nodes, devices, allocated)))
    pods_read = read_objects([template_pod(i) for i in range(pods)]).pods
    return cluster, [Event(i / pending, "create", pod=p, duration=0.0)
                     for i, p in enumerate(pods_read)]


def scheduling_with_claim_template(nodes: int, allocated: int, pending: int
                                   ) -> tuple[Any, list]:
    """SchedulingWithResourceClaimTemplate (eight devices per node) as
    :class:`~ksched.workloads.Workload` builds it."""
    return claim_template_workload(nodes, pending, 8, allocated)


def steady_state_half(nodes: int, allocated: int, pending: int) -> tuple[Any, list]:
    """SteadyStateClusterResourceClaimTemplate's cluster (ten devices per node, ``allocated``
    of them held: half in ``half_500nodes``) with ``pending`` template pods in one batch (the
    churn itself: :func:`steady_state_workload`)."""
    return claim_template_workload(nodes, pending, 10, allocated)

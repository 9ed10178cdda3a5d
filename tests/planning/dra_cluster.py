"""Small DRA clusters for the planning tests: nodes with node-local GPU slices, a network
attached pool, device classes and claim templates, built from wire-form dicts."""

from __future__ import annotations

from typing import Any

from ksched import cluster_from_objects
from ksched.io import read_objects

DRIVER = "gpu.example.com"
ZONE = "topology.kubernetes.io/zone"
API = "resource.k8s.io/v1"


def node(name: str, cpu: str = "8", zone: str = "a") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, ZONE: zone}},
        "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def device_class(name: str, expression: str) -> dict:
    return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def gpus(node_name: str, models: list[str], *, pool: str = "", driver: str = DRIVER) -> dict:
    """A slice with one device per model (``gpu-<i>``), node-local unless ``node_name`` is
    empty (then on all nodes)."""
    spec: dict[str, Any] = {
        "driver": driver, "pool": {"name": pool or node_name, "generation": 1,
                                   "resourceSliceCount": 1},
        "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": m}}}
                    for i, m in enumerate(models)]}
    if node_name:
        spec["nodeName"] = node_name
    else:
        spec["allNodes"] = True
    return {"apiVersion": API, "kind": "ResourceSlice",
            "metadata": {"name": f"{pool or node_name}-slice"}, "spec": spec}


def template(name: str, cls: str, count: int = 1) -> dict:
    return {"apiVersion": API, "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": cls, "count": count}}]}}}}


def claim(name: str, cls: str, node_name: str, device: str) -> dict:
    """A claim allocated ``device`` of ``node_name``'s pool."""
    return {"apiVersion": API, "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": cls}}]}},
            "status": {"allocation": {"devices": {"results": [{
                "request": "gpu", "driver": DRIVER, "pool": node_name, "device": device}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{
                    "key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}}}


def pod(name: str, cpu: str = "100m", templates: tuple[str, ...] = ("one-gpu",),
        claims: tuple[str, ...] = ()) -> dict:
    """A pod with one claim per template and per named claim."""
    entries = [{"name": f"t{i}", "resourceClaimTemplateName": t}
               for i, t in enumerate(templates)]
    entries += [{"name": f"c{i}", "resourceClaimName": c} for i, c in enumerate(claims)]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                "requests": {"cpu": cpu}, "claims": [{"name": e["name"]} for e in entries]}}],
                "resourceClaims": entries}}


def classes() -> list[dict]:
    return [device_class("gpu", f'device.driver == "{DRIVER}"'),
            device_class("big-gpu", f'device.attributes["{DRIVER}"].model == "big"'),
            device_class("tpu", 'device.driver == "tpu.example.com"'),
            template("one-gpu", "gpu"), template("two-gpu", "gpu", 2),
            template("one-big", "big-gpu")]


def cluster(objects: list[dict]) -> Any:
    return cluster_from_objects(read_objects(objects))


def pod_record(manifest: dict) -> Any:
    return read_objects([manifest]).pods[0]

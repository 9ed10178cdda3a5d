"""Small DRA clusters built from wire-form dicts."""

from __future__ import annotations

from typing import Any


def node(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def device_class(name: str, *expressions: str, config: list | None = None) -> dict:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in expressions]}
    if config:
        spec["config"] = config
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name}, "spec": spec}


def gpu(name: str, **attributes: Any) -> dict:
    typed = {}
    for key, value in attributes.items():
        kind = "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else \
            "version" if key.endswith("Version") else "string"
        typed[key] = {kind: value}
    return {"name": name, "attributes": typed, "capacity": {"memory": {"value": "80Gi"}}}


def resource_slice(name: str, driver: str, pool: str, devices: list, *, node_name: str = "",
                   all_nodes: bool = False, generation: int = 1, count: int = 1,
                   selector: dict | None = None) -> dict:
    spec: dict[str, Any] = {"driver": driver, "pool": {"name": pool, "generation": generation,
                                                        "resourceSliceCount": count},
                            "devices": devices}
    if node_name:
        spec["nodeName"] = node_name
    if all_nodes:
        spec["allNodes"] = True
    if selector is not None:
        spec["nodeSelector"] = selector
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name}, "spec": spec}


def claim(name: str, requests: list, *, namespace: str = "default", constraints: list = (),
          status: dict | None = None, owner: tuple[str, str] | None = None) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner[0],
                                    "uid": owner[1], "controller": True}]
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = list(constraints)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
            "spec": {"devices": devices}, "status": status or {}}


def exact(name: str, cls: str, count: int = 1, *selectors: str, mode: str = "ExactCount",
          admin: bool = False) -> dict:
    body: dict[str, Any] = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        body["count"] = count
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if admin:
        body["adminAccess"] = True
    return {"name": name, "exactly": body}


def pod(name: str, claims: dict[str, str], *, namespace: str = "default",
        statuses: dict[str, str] | None = None) -> dict:
    """``claims``: pod claim name -> "claim:<name>" or "template:<name>"."""
    entries = []
    for key, ref in claims.items():
        kind, _, target = ref.partition(":")
        entries.append({"name": key, ("resourceClaimName" if kind == "claim"
                                      else "resourceClaimTemplateName"): target})
    status: dict[str, Any] = {}
    if statuses:
        status["resourceClaimStatuses"] = [{"name": k, "resourceClaimName": v}
                                           for k, v in statuses.items()]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c", "image": "x",
                                     "resources": {"requests": {"cpu": "100m"},
                                                   "claims": [{"name": k} for k in claims]}}],
                     "resourceClaims": entries},
            "status": status}

"""``ksched example DIR``: a small cluster snapshot and a batch of pending pods, written as the
files a user brings (``kubectl get nodes,pods -A -o json`` and a YAML list of pods), so the
README's commands and Python snippets run as written on a fresh machine.

The pending pods show the usual outcomes: replicas spread over zones, batch pods that tolerate
the tainted pool, a pod that states only limits (the API server defaults its requests from
them) and so fits nowhere, and a pod for a zone that does not exist. For the planner, next
quarter's workloads (two Deployments and a DaemonSet, more than the cluster has room for) and
two node types to buy (Node manifests, as ``ksched plan --node-type`` takes them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

from ksched.workloads import kubectl_snapshot

SNAPSHOT, PENDING, WORKLOADS = "snapshot.json", "pending.yaml", "next-quarter.yaml"
#: Node types to buy: file name -> (instance type, cpu, memory); AWS us-east-1 on-demand
#: prices per hour are in the README's worked example.
NODE_TYPES = {"m6i-4xlarge.yaml": ("m6i.4xlarge", "16", "64Gi"),
              "r6i-4xlarge.yaml": ("r6i.4xlarge", "16", "128Gi")}


def _pod(name: str, app: str, cpu: str, memory: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "main", "image": f"registry.example.com/{app}:1.0",
                 "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "labels": {"app": app}},
            "spec": {"containers": [container], **spec}}


def pending_pods(web: int = 60, batch: int = 30) -> list[dict[str, Any]]:
    """Pending pod manifests: ``web`` spread replicas, ``batch`` tolerating pods, and two that
    cannot be placed."""
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
               "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels":
                                                                       {"app": "web"}}}]
    toleration = [{"key": "dedicated", "operator": "Equal", "value": "batch",
                   "effect": "NoSchedule"}]
    pods = [_pod(f"web-{i}", "web", "500m", "1Gi", topologySpreadConstraints=spread)
            for i in range(web)]
    pods += [_pod(f"batch-{i}", "batch", "2", "4Gi", tolerations=toleration)
             for i in range(batch)]
    huge = _pod("trainer-0", "trainer", "1", "1Gi")
    huge["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "64", "memory": "256Gi"}}
    pods.append(huge)
    pods.append(_pod("pinned-0", "pinned", "100m", "128Mi",
                     nodeSelector={"topology.kubernetes.io/zone": "eu-west-1a"}))
    return pods


def _controller(kind: str, name: str, cpu: str, memory: str, replicas: int | None = None
                ) -> dict[str, Any]:
    """A Deployment (with ``replicas``) or DaemonSet of one container."""
    container = {"name": "main", "image": f"registry.example.com/{name}:2.0",
                 "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "namespace": "shop"}, "spec": spec}


def next_quarter() -> list[dict[str, Any]]:
    """Workloads that outgrow the example cluster: a cpu-bound search tier, a memory-bound
    cache no m5.2xlarge node can hold, and a node agent on every node."""
    return [_controller("Deployment", "search", "4", "8Gi", replicas=600),
            _controller("Deployment", "cache", "2", "48Gi", replicas=40),
            _controller("DaemonSet", "node-agent", "100m", "200Mi")]


def node_type(instance_type: str, cpu: str, memory: str) -> dict[str, Any]:
    """A Node manifest to use as a template (``ksched plan --node-type``)."""
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": instance_type.replace(".", "-"), "labels": {
                "node.kubernetes.io/instance-type": instance_type,
                "topology.kubernetes.io/zone": "us-east-1a", "kubernetes.io/os": "linux"}},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


def write_example(directory: str | os.PathLike, nodes: int = 300,
                  running: int = 2000) -> tuple[Path, ...]:
    """Write ``snapshot.json`` (``nodes`` nodes, ``running`` running pods), ``pending.yaml``,
    ``next-quarter.yaml`` and the node types into ``directory`` (created if missing); returns
    their paths, in that order."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    files = {SNAPSHOT: json.dumps(kubectl_snapshot(nodes, running), indent=1) + "\n",
             PENDING: yaml.safe_dump_all(pending_pods(), sort_keys=False),
             WORKLOADS: yaml.safe_dump_all(next_quarter(), sort_keys=False)}
    files |= {name: yaml.safe_dump(node_type(*spec), sort_keys=False)
              for name, spec in NODE_TYPES.items()}
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return tuple(out / name for name in files)

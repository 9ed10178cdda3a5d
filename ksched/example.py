"""``ksched example DIR``: a small cluster snapshot and a batch of pending pods, written as the
files a user brings (``kubectl get nodes,pods -A -o json`` and a YAML list of pods), so the
README's commands and Python snippets run as written on a fresh machine.

The pending pods show the usual outcomes: replicas spread over zones, batch pods that tolerate
the tainted pool, a pod that states only limits (the API server defaults its requests from
them) and so fits nowhere, and a pod for a zone that does not exist.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

from ksched.workloads import kubectl_snapshot

SNAPSHOT, PENDING = "snapshot.json", "pending.yaml"


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


def write_example(directory: str | os.PathLike, nodes: int = 300,
                  running: int = 2000) -> tuple[Path, Path]:
    """Write ``snapshot.json`` (``nodes`` nodes, ``running`` running pods) and ``pending.yaml``
    into ``directory`` (created if missing); returns their paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    snapshot, pending = out / SNAPSHOT, out / PENDING
    snapshot.write_text(json.dumps(kubectl_snapshot(nodes, running), indent=1) + "\n",
                        encoding="utf-8")
    pending.write_text(yaml.safe_dump_all(pending_pods(), sort_keys=False), encoding="utf-8")
    return snapshot, pending

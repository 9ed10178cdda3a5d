"""``ksched example DIR``: a small cluster snapshot and a batch of pending pods, written as the
files a user brings (``kubectl get nodes,pods -A -o json`` and a YAML list of pods), so the
README's commands and Python snippets run as written on a fresh machine.

The pending pods show the usual outcomes: replicas spread over zones, batch pods that tolerate
the tainted pool, a pod that states only limits (the API server defaults its requests from
them) and so fits nowhere, and a pod for a zone that does not exist. For the planner, next
quarter's workloads (two Deployments and a DaemonSet, more than the cluster has room for) and
two node types to buy (Node manifests, as ``ksched plan --node-type`` takes them).
``ksched example DIR --gpu`` writes the same files for a cluster of three GPU models instead
(:mod:`ksched.example_gpu`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import yaml

from ksched.errors import ArgumentError
from ksched.files import written_whole
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
                  running: int = 2000, *, gpu: bool = False) -> tuple[Path, ...]:
    """Write ``snapshot.json`` (``nodes`` nodes, ``running`` running pods), ``pending.yaml``,
    ``next-quarter.yaml`` and the node types into ``directory`` (created if missing); returns
    their paths, in that order. With ``gpu``, the heterogeneous GPU cluster of
    :mod:`ksched.example_gpu` instead (``nodes`` and ``running`` are not used).

    Every file is made and checked first: on a failure nothing is written (no file replaced,
    no folder left behind) and a :class:`~ksched.errors.KschedError` names the path."""
    out = _folder(directory)
    if gpu:
        from ksched.example_gpu import gpu_contents

        contents = gpu_contents(SNAPSHOT, PENDING, WORKLOADS)
    else:
        contents = _contents(nodes, running)
    files = {out / name: text for name, text in contents.items()}
    for path in files:
        if path.exists() and not path.is_file():  # a folder, a FIFO, ...
            raise ArgumentError(f"directory: {path}: exists and is not a regular file")
    created = _make_folder(out)
    try:
        _write_all(files)
    except BaseException:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise
    return tuple(files)


def _folder(directory: str | os.PathLike) -> Path:
    """``directory`` as a path, refused when empty (it would mean the current folder) or when
    it names something other than a folder."""
    if not isinstance(directory, (str, os.PathLike)) or not os.fspath(directory):
        raise ArgumentError(f"directory: expected a folder name, got {directory!r}")
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise ArgumentError(f"directory: {out}: not a directory")
    return out


def _contents(nodes: int, running: int) -> dict[str, str]:
    """File name -> text of every example file."""
    files = {SNAPSHOT: json.dumps(kubectl_snapshot(nodes, running), indent=1) + "\n",
             PENDING: yaml.safe_dump_all(pending_pods(), sort_keys=False),
             WORKLOADS: yaml.safe_dump_all(next_quarter(), sort_keys=False)}
    return files | {name: yaml.safe_dump(node_type(*spec), sort_keys=False)
                    for name, spec in NODE_TYPES.items()}


def _make_folder(out: Path) -> Path | None:
    """Create ``out`` and its missing parents; the outermost folder created, or ``None``."""
    missing = [folder for folder in (out, *out.parents) if not folder.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArgumentError(f"directory: {out}: cannot create: "
                            f"{(exc.strerror or str(exc)).lower()}") from None
    return missing[-1] if missing else None


def _write_all(files: dict[Path, str]) -> None:
    """Write every file whole (:func:`ksched.files.written_whole`), each renamed into place
    only once all are written."""
    with contextlib.ExitStack() as stack:
        for path, text in files.items():
            stack.enter_context(written_whole(path)).write(text)

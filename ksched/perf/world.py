"""What a workload's ops have created so far: nodes, namespaces, services, storage objects,
pods; and the cluster they make.

:class:`World` turns ops into objects (:mod:`ksched.perf.objects`), keeps the parsed records,
and builds the :class:`~ksched.state.ClusterState` only when an op changed more than the pods
(a batch of pods leaves the state it scheduled on up to date).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ksched.api import Pod
from ksched.io import Objects, read_objects
from ksched.perf.config import Workload
from ksched.perf.objects import (
    Namer,
    Templates,
    manifests_of,
    named,
    node_manifests,
    pod_namespace,
    volume_manifests,
    with_claim,
)
from ksched.state import ClusterState

__all__ = ["World", "DEFAULT_POD"]

#: Upstream's ``makeBasePod``: ``generateName: pod-``, ``testutils.MakePodSpec()``.
DEFAULT_POD: Mapping[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"},
    "spec": {"containers": [{
        "name": "pause", "image": "registry.k8s.io/pause:3.10", "ports": [{"containerPort": 80}],
        "resources": {"limits": {"cpu": "100m", "memory": "500Mi"},
                      "requests": {"cpu": "100m", "memory": "500Mi"}}}]}}
_OBJECT_FIELDS = ("namespaces", "workloads", "persistent_volumes", "persistent_volume_claims",
                  "storage_classes", "csi_nodes", "csi_drivers", "csi_storage_capacities",
                  "priority_classes")


class World:
    """The objects a workload created, and its cluster.

    Parameters
    ----------
    workload : the workload whose templates (paths relative to its config) are read.
    """

    def __init__(self, workload: Workload) -> None:
        self.workload = workload
        self.base = workload.source.parent
        self.templates = Templates()
        self.namer = Namer()
        self.objects = Objects()
        self.state: ClusterState | None = None
        self.bound: tuple[Pod, ...] = ()
        #: Every pod created, by key, with its manifest's finalizers and gates flag.
        self.pods: dict[str, Pod] = {}
        self.finalized: set[str] = set()

    # ----------------------------------------------------------------- objects

    def add(self, manifests: Sequence[Mapping[str, Any]]) -> Objects:
        """Parse ``manifests`` and keep their non-pod objects; returns what was parsed."""
        if not manifests:
            return Objects()
        parsed = read_objects(manifests_of(manifests))
        changes = {f: getattr(self.objects, f) + getattr(parsed, f) for f in _OBJECT_FIELDS
                   if getattr(parsed, f)}
        if parsed.nodes:
            changes["nodes"] = self.objects.nodes + parsed.nodes
        if changes:
            self.objects = attrs.evolve(self.objects, **changes)
            self._forget_state()
        return parsed

    def _forget_state(self) -> None:
        if self.state is not None:
            self.bound = tuple(self.state.pods)
            self.state = None

    def cluster(self) -> ClusterState:
        """The cluster of everything created so far, the bound pods on their nodes."""
        if self.state is None:
            objects = attrs.evolve(self.objects, pods=self.bound)
            self.state = ClusterState.from_objects(objects)
        return self.state

    def set_state(self, state: ClusterState) -> None:
        """The cluster after a batch (or a run) placed pods."""
        self.state = state

    # ----------------------------------------------------------------- ops

    def create_nodes(self, op: Mapping[str, Any]) -> Objects:
        nodes, csi = node_manifests(op, self.templates, self.namer, self.base,
                                    len(self.objects.nodes))
        return self.add(nodes + csi)

    def create_namespaces(self, op: Mapping[str, Any]) -> Objects:
        count, prefix = int(op.get("count", 0)), op.get("prefix") or "namespace"
        path = op.get("namespaceTemplatePath")
        out = []
        for i in range(count):
            ns = (self.templates.make(self.base / path, i, count) if path
                  else {"apiVersion": "v1", "kind": "Namespace"})
            ns["metadata"] = {**(ns.get("metadata") or {}), "name": f"{prefix}-{i}"}
            out.append(ns)
        return self.add(out)

    def create_any(self, op: Mapping[str, Any]) -> Objects:
        path = self.base / op["templatePath"]
        count = int(op.get("count", 1))
        out = []
        for i in range(count):
            obj = named(self.templates.make(path, i, count), self.namer, str(path))
            if op.get("namespace"):
                obj["metadata"]["namespace"] = op["namespace"]
            out.append(obj)
        return self.add(out)

    def make_pods(self, op: Mapping[str, Any], op_index: int) -> list[Pod]:
        """The pods of a ``createPods`` op (their PVs and PVCs kept as objects)."""
        return self.make_pods_and_storage(op, op_index)[0]

    def make_pods_and_storage(self, op: Mapping[str, Any], op_index: int
                              ) -> tuple[list[Pod], Objects]:
        """The pods of a ``createPods`` op and the PVs and PVCs made for them (kept as
        objects too)."""
        namespace = pod_namespace(op, op_index)
        count = int(op.get("count", 0))
        path = op.get("podTemplatePath")
        path = self.base / path if path else self.workload.default_pod_template
        pv_path, pvc_path = (op.get("persistentVolumeTemplatePath"),
                             op.get("persistentVolumeClaimTemplatePath"))
        manifests, storage = [], []
        for i in range(count):
            pod = (self.templates.make(path, i, count) if path is not None
                   else copy.deepcopy(dict(DEFAULT_POD)))
            pod = named(pod, self.namer, str(path or "createPods"))
            pod["metadata"]["namespace"] = namespace
            if pv_path and pvc_path:
                pv, pvc = volume_manifests(self.templates.make(self.base / pv_path),
                                           self.templates.make(self.base / pvc_path),
                                           namespace, i)
                storage += [pv, pvc]
                with_claim(pod, pvc["metadata"]["name"])
            manifests.append(pod)
        made = self.add(storage)
        pods = list(read_objects(manifests_of(manifests)).pods) if manifests else []
        for manifest, pod in zip(manifests, pods):
            self.pods[pod.key] = pod
            if manifest["metadata"].get("finalizers"):
                self.finalized.add(pod.key)
        return pods, made

    def template_priority(self, op: Mapping[str, Any]) -> int:
        """The ``spec.priority`` the op's pod template sets (0 when it sets none)."""
        path = op.get("podTemplatePath")
        path = self.base / path if path else self.workload.default_pod_template
        if path is None:
            return 0
        pod = self.templates.make(Path(path), 0, max(1, int(op.get("count", 1) or 1)))
        priority = (pod.get("spec") or {}).get("priority")
        return int(priority) if isinstance(priority, int) else 0

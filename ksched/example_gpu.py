"""``ksched example DIR --gpu``: a heterogeneous GPU cluster to plan on, written as the files a
user brings (``kubectl get nodes,pods -A -o json``, YAML lists of pods and workloads, Node
manifests of the types to buy).

The cluster (:func:`gpu_snapshot`, 84 nodes in three zones) has CPU nodes and nodes of three
GPU models, labelled as NVIDIA's GPU feature discovery labels them
(``nvidia.com/gpu.product``, ``nvidia.com/gpu.count``) and tainted
``nvidia.com/gpu=present:NoSchedule`` as managed GPU node pools are, so that only pods that
tolerate the taint land there:

- 8 ``p4d.24xlarge`` (8 NVIDIA-A100-SXM4-40GB each), each running a 4-GPU fine-tuning pod:
  half their GPUs are free, yet no node has the 8 a training pod asks for;
- 16 ``g5.12xlarge`` (4 NVIDIA-A10G), three 1-GPU LLM-serving pods on each;
- 20 ``g4dn.12xlarge`` (4 Tesla-T4), two 1-GPU vision pods on each;
- 40 ``m6i.4xlarge`` CPU nodes running the web tier.

The pending pods (:func:`gpu_pending`) start with a 1-GPU vision pod that any model serves
(``ksched capacity`` and ``headroom --reference`` take the first pod), then an LLM pod for
A10G or A100 GPUs and an 8-GPU training pod for A100s only. Next quarter's workloads
(:func:`gpu_next_quarter`) grow all three, and the node types to buy are the three GPU shapes
(AWS us-east-1 on-demand prices per hour in the README); ``binpack.yaml`` is the same
scheduler bin-packing (NodeResourcesFit ``MostAllocated``), to plan with ``--config``.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["BINPACK", "GPU_NODE_TYPES", "binpack_config", "gpu_contents", "gpu_next_quarter",
           "gpu_node_type", "gpu_pending", "gpu_snapshot"]

GPU = "nvidia.com/gpu"
PRODUCT = "nvidia.com/gpu.product"
A100, A10G, T4 = "NVIDIA-A100-SXM4-40GB", "NVIDIA-A10G", "Tesla-T4"
#: instance type -> (allocatable cpu, memory, GPUs, GPU product).
SHAPES = {"p4d.24xlarge": ("95", "1100Gi", 8, A100),
          "g5.12xlarge": ("47", "180Gi", 4, A10G),
          "g4dn.12xlarge": ("47", "180Gi", 4, T4),
          "m6i.4xlarge": ("15", "60Gi", 0, "")}
#: The node types to buy: file name -> instance type.
GPU_NODE_TYPES = {"p4d-24xlarge.yaml": "p4d.24xlarge", "g5-12xlarge.yaml": "g5.12xlarge",
                  "g4dn-12xlarge.yaml": "g4dn.12xlarge"}
#: The snapshot: instance type -> (nodes, the pods running on each: (app, count)).
FLEET = {"p4d.24xlarge": (8, [("finetune", 1)]),
         "g5.12xlarge": (16, [("llm", 3)]),
         "g4dn.12xlarge": (20, [("vision", 2)]),
         "m6i.4xlarge": (40, [("web", 6)])}
TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}


def gpu_node_type(instance_type: str, name: str | None = None,
                  zone: str = "us-east-1a") -> dict[str, Any]:
    """A Node manifest of ``instance_type`` (labels, GPU taint, allocatable)."""
    cpu, memory, gpus, product = SHAPES[instance_type]
    name = name or instance_type.replace(".", "-")
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "node.kubernetes.io/instance-type": instance_type,
              "topology.kubernetes.io/zone": zone}
    spec: dict[str, Any] = {}
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110"}
    if gpus:
        labels |= {PRODUCT: product, "nvidia.com/gpu.count": str(gpus)}
        spec["taints"] = [{"key": GPU, "value": "present", "effect": "NoSchedule"}]
        allocatable[GPU] = str(gpus)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": spec, "status": {"allocatable": allocatable}}


#: app -> (cpu, memory, GPUs, GPU products it may use (empty: any), namespace).
APPS = {"vision": ("4", "16Gi", 1, (), "ml"),
        "llm": ("8", "40Gi", 1, (A10G, A100), "ml"),
        "train": ("90", "1000Gi", 8, (A100,), "ml"),
        "finetune": ("44", "500Gi", 4, (A100,), "ml"),
        "web": ("2", "8Gi", 0, (), "shop")}


def _spec(app: str) -> dict[str, Any]:
    """The pod spec of ``app``: requests, the GPU toleration and model pin of GPU apps."""
    cpu, memory, gpus, products, _ = APPS[app]
    requests = {"cpu": cpu, "memory": memory} | ({GPU: str(gpus)} if gpus else {})
    limits = {GPU: str(gpus)} if gpus else {}
    container = {"name": "main", "image": f"registry.example.com/{app}:1.0",
                 "resources": {"requests": requests, **({"limits": limits} if limits else {})}}
    spec: dict[str, Any] = {"containers": [container]}
    if gpus:
        spec["tolerations"] = [TOLERATION]
    if len(products) == 1:
        spec["nodeSelector"] = {PRODUCT: products[0]}
    elif products:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": PRODUCT, "operator": "In", "values": list(products)}]}]}}}
    return spec


def _pod(app: str, name: str, node: str | None = None) -> dict[str, Any]:
    spec = _spec(app) | ({"nodeName": node} if node else {})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": APPS[app][4], "labels": {"app": app}},
            "spec": spec, **({"status": {"phase": "Running"}} if node else {})}


def gpu_snapshot() -> dict[str, Any]:
    """The cluster as ``kubectl get nodes,pods -A -o json`` writes it (see the module)."""
    nodes, pods, count = [], [], {}
    for instance_type, (n, running) in FLEET.items():
        for i in range(n):
            name = f"{instance_type.split('.')[0]}-{i:02d}"
            nodes.append(gpu_node_type(instance_type, name, f"us-east-1{'abc'[i % 3]}"))
            for app, per_node in running:
                for _ in range(per_node):
                    count[app] = count.get(app, 0) + 1
                    pods.append(_pod(app, f"{app}-{count[app] - 1}", name))
    return {"apiVersion": "v1", "kind": "List", "items": nodes + pods}


def gpu_pending() -> list[dict[str, Any]]:
    """A 1-GPU vision pod (any model), an LLM pod (A10G or A100) and an 8-GPU training pod
    (A100 only), pending."""
    return [_pod("vision", "vision-new"), _pod("llm", "llm-new"), _pod("train", "train-0")]


def _deployment(app: str, replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": app, "namespace": APPS[app][4]},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                     "template": {"metadata": {"labels": {"app": app}}, "spec": _spec(app)}}}


def gpu_next_quarter() -> list[dict[str, Any]]:
    """Next quarter's GPU workloads, in the order the queue takes them: more vision replicas
    (any GPU), more LLM replicas (A10G or A100), then four 8-GPU training pods (A100)."""
    return [_deployment("vision", 120), _deployment("llm", 60), _deployment("train", 4)]


#: The bin-packing scheduler configuration GPU clusters often run: NodeResourcesFit's
#: MostAllocated, GPUs weighted 3.
BINPACK = "binpack.yaml"


def binpack_config() -> dict[str, Any]:
    """A ``KubeSchedulerConfiguration`` whose profile bin-packs (see :data:`BINPACK`)."""
    return {"apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
                "name": "NodeResourcesFit", "args": {"scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                  {"name": GPU, "weight": 3}]}}}]}]}


def gpu_contents(snapshot: str, pending: str, workloads: str) -> dict[str, str]:
    """File name -> text of every file of the GPU example: the cluster, the pending pods and
    the workloads under the names given, then the node types and :data:`BINPACK`."""
    import json

    files = {snapshot: json.dumps(gpu_snapshot(), indent=1) + "\n",
             pending: yaml.safe_dump_all(gpu_pending(), sort_keys=False),
             workloads: yaml.safe_dump_all(gpu_next_quarter(), sort_keys=False)}
    files |= {name: yaml.safe_dump(gpu_node_type(instance_type), sort_keys=False)
              for name, instance_type in GPU_NODE_TYPES.items()}
    return files | {BINPACK: yaml.safe_dump(binpack_config(), sort_keys=False)}

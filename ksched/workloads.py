"""Benchmark workloads shaped like upstream scheduler_perf's (``test/integration/scheduler_perf``).

Each workload builds a cluster and the pending pods. Nodes follow ``node-default.yaml``
(4 cpu, 32Gi, 110 pods) unless the workload says otherwise; pods follow ``pod-default.yaml``
(100m cpu, 500Mi memory).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from ksched.api import (
    ClaimRef,
    Container,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    StorageClass,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
)
from ksched.constants import CPU, LABEL_HOSTNAME, MEMORY, PODS
from ksched.dra.workloads import scheduling_with_claim_template, steady_state_half
from ksched.errors import ArgumentError
from ksched.pod_table import PodTable
from ksched.state import ClusterState
from ksched.storage_listers import StorageObjects

GI, MI = 1024**3, 1024**2
ZONE = "topology.kubernetes.io/zone"


@attrs.frozen
class Workload:
    name: str
    nodes: int
    running: int
    pending: int
    build: Callable[[int, int, int], tuple[ClusterState, list[Pod]]]
    percentage_of_nodes_to_score: int | None = None
    #: A KubeSchedulerConfiguration (as a dict) to schedule with, or ``None``: the default.
    config: dict | None = None
    #: The pods ``bench.measure`` warms up on, untimed (``None``: all of them).
    warmup_pods: int | None = 10

    def profile(self):
        """The configuration to pass to ``schedule_batch`` (``None``: the default profile)."""
        if self.config is None:
            return None
        from ksched.config import load_config

        return load_config(self.config)

    def make(self, scale: float = 1.0) -> tuple[ClusterState, PodTable]:
        """The cluster and pending pods (a :class:`~ksched.pod_table.PodTable`, built here,
        outside any timed region), optionally scaled down (for smoke tests)."""
        cluster, pods = self.build(max(int(self.nodes * scale), 1), int(self.running * scale),
                                   max(int(self.pending * scale), 1))
        return cluster, PodTable.of(pods)


def default_node(i: int, zones: int = 3, **extra: object) -> Node:
    name = f"node-{i:06d}"
    allocatable = {CPU: 4000, MEMORY: 32 * GI, PODS: 110}
    allocatable.update(extra.pop("allocatable", {}))  # type: ignore[arg-type]
    labels = {"kubernetes.io/hostname": name, ZONE: f"zone{i % zones + 1}"}
    labels.update(extra.pop("labels", {}))  # type: ignore[arg-type]
    return Node(name, labels=labels, allocatable=allocatable, **extra)  # type: ignore[arg-type]


def default_pod(name: str, namespace: str = "sched-0", node_name: str = "",
                requests: dict | None = None, **extra: object) -> Pod:
    wanted = {CPU: 100, MEMORY: 500 * MI}
    wanted.update(requests or {})
    return Pod(name, namespace, node_name=node_name, labels={"app": "perf"},
               containers=[Container("pause", "registry.k8s.io/pause:3.10", requests=wanted)],
               **extra)  # type: ignore[arg-type]


def _cluster(nodes: list[Node], running: int, **pod_extra: object) -> ClusterState:
    template = default_pod("init", "sched-setup", **pod_extra)
    bound = [attrs.evolve(template, name=f"init-{i}", node_name=nodes[i % len(nodes)].name)
             for i in range(running)]
    return ClusterState.from_records(nodes, bound)


def replicas(template: Pod, count: int) -> list[Pod]:
    """``count`` copies of ``template`` named ``<name>-<i>``, as a controller would create."""
    return [attrs.evolve(template, name=f"{template.name}-{i}") for i in range(count)]


def scheduling_basic(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    cluster = _cluster([default_node(i) for i in range(nodes)], running)
    return cluster, replicas(default_pod("pod"), pending)


def preemption_basic(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """PreemptionBasic: nodes full of low-priority pods (900m each, priority 0) and
    high-priority pods (3 cpu, priority 10) that fit only by evicting some."""
    node_list = [default_node(i) for i in range(nodes)]
    template = default_pod("low", "sched-setup", requests={CPU: 900})
    bound = [attrs.evolve(template, name=f"low-{i}", node_name=node_list[i % nodes].name,
                          start_time=float(i)) for i in range(running)]
    cluster = ClusterState.from_records(node_list, bound)
    return cluster, replicas(default_pod("high", requests={CPU: 3000}, priority=10), pending)


def node_affinity(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """SchedulingNodeAffinity: half the nodes carry ``zone1``, pods require it."""
    node_list = [default_node(i, labels={"perf/zone": "zone1" if i % 2 == 0 else "zone2"})
                 for i in range(nodes)]
    affinity = NodeAffinity(required=(NodeSelectorTerm((
        NodeSelectorRequirement("perf/zone", "In", ("zone1",)),)),))
    return (_cluster(node_list, running),
            replicas(default_pod("pod", node_affinity=affinity), pending))


def tainted(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """A third of the nodes tainted NoSchedule, a third PreferNoSchedule; pods tolerate the
    first kind only."""
    def node(i: int) -> Node:
        taints = [(), (Taint("dedicated", "batch", "NoSchedule"),),
                  (Taint("spot", "true", "PreferNoSchedule"),)][i % 3]
        return default_node(i, taints=taints)

    tolerations = (Toleration("dedicated", "Equal", "batch", "NoSchedule"),)
    return (_cluster([node(i) for i in range(nodes)], running),
            replicas(default_pod("pod", tolerations=tolerations), pending))


def gpu(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """Extended resources: every other node has 8 GPUs; each pod asks for one."""
    node_list = [default_node(i, allocatable={"nvidia.com/gpu": 8 if i % 2 == 0 else 0})
                 for i in range(nodes)]
    return (_cluster(node_list, running),
            replicas(default_pod("pod", requests={"nvidia.com/gpu": 1}), pending))


def fleet(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """A fleet built from node templates (no Python object per node): CPU and GPU machines in
    three zones with ten resources each; half the pods want a GPU."""
    resources = {CPU: 16000, MEMORY: 64 * GI, PODS: 110, "ephemeral-storage": 200 * GI,
                 "nvidia.com/gpu": 0, "example.com/fpga": 0, "hugepages-2Mi": 0,
                 "hugepages-1Gi": 0, "example.com/nic": 4, "attachable-volumes-csi-ebs": 25}
    kinds = [(f"{kind}-z{zone}", zone, gpus) for zone in range(3)
             for kind, gpus in (("cpu", 0), ("gpu", 8))]
    templates = [(Node(name, labels={"kubernetes.io/hostname": name, ZONE: f"zone{zone}"},
                       allocatable={**resources, "nvidia.com/gpu": gpus}),
                  nodes // len(kinds) + (1 if i < nodes % len(kinds) else 0))
                 for i, (name, zone, gpus) in enumerate(kinds)]
    cluster = ClusterState.from_node_templates(templates)
    half = pending // 2
    return cluster, (replicas(default_pod("gpu", requests={"nvidia.com/gpu": 1}), half)
                     + replicas(default_pod("web"), pending - half))


def _with_labels(pod: Pod, **labels: str) -> Pod:
    return attrs.evolve(pod, labels={**pod.labels, **labels})


def _term(topology_key: str, namespaces: tuple[str, ...] = (), **match: str) -> PodAffinityTerm:
    return PodAffinityTerm(topology_key, LabelSelector(match), namespaces)


def _alike(template: Pod, nodes: int, running: int,
           pending: int) -> tuple[ClusterState, list[Pod]]:
    """Running pods like ``template`` (in namespace sched-0, spread round-robin), then the
    pending replicas, as scheduler_perf's affinity workloads set them up."""
    bound = [attrs.evolve(template, name=f"init-{i}", namespace="sched-0",
                          node_name=f"node-{i % nodes:06d}") for i in range(running)]
    cluster = ClusterState.from_records([default_node(i) for i in range(nodes)], bound)
    return cluster, replicas(template, pending)


def pod_anti_affinity(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """SchedulingPodAntiAffinity: ``color=green`` pods keep one per host (sched-0 and sched-1)."""
    anti = PodAffinity(required=(_term(LABEL_HOSTNAME, ("sched-1", "sched-0"), color="green"),))
    template = _with_labels(default_pod("pod", "sched-1", pod_anti_affinity=anti), color="green")
    return _alike(template, nodes, running, pending)


def pod_affinity(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """SchedulingPodAffinity: pods want a zone already running ``team=devops`` pods."""
    affinity = PodAffinity(required=(_term(ZONE, ("sched-1", "sched-0"), team="devops"),))
    template = _with_labels(default_pod("pod", "sched-1", pod_affinity=affinity), team="devops")
    return _alike(template, nodes, running, pending)


def preferred_pod_affinity(nodes: int, running: int,
                           pending: int) -> tuple[ClusterState, list[Pod]]:
    """SchedulingPreferredPodAffinity / AntiAffinity, both preferences on one pod."""
    prefer = PodAffinity(preferred=(WeightedPodAffinityTerm(1, _term(
        LABEL_HOSTNAME, ("sched-1", "sched-0"), color="red")),))
    template = _with_labels(default_pod("pod", "sched-1", pod_affinity=prefer,
                                        pod_anti_affinity=prefer), color="red")
    return _alike(template, nodes, running, pending)


def preferred_pod_anti_affinity(nodes: int, running: int,
                                pending: int) -> tuple[ClusterState, list[Pod]]:
    """SchedulingPreferredPodAntiAffinity: pods prefer hosts without another ``color=yellow``."""
    prefer = PodAffinity(preferred=(WeightedPodAffinityTerm(1, _term(
        LABEL_HOSTNAME, ("sched-1", "sched-0"), color="yellow")),))
    template = _with_labels(default_pod("pod", "sched-1", pod_anti_affinity=prefer),
                            color="yellow")
    return _alike(template, nodes, running, pending)


def hostname_spreading(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """TopologySpreading over hostnames: maxSkew 1, DoNotSchedule, ``color=blue`` pods."""
    spread = (TopologySpreadConstraint(1, LABEL_HOSTNAME, "DoNotSchedule",
                                       LabelSelector({"color": "blue"})),)
    cluster = _cluster([default_node(i) for i in range(nodes)], running)
    template = _with_labels(default_pod("pod", topology_spread_constraints=spread), color="blue")
    return cluster, replicas(template, pending)


def topology_spreading(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """TopologySpreading: maxSkew 5 over zones (DoNotSchedule) for ``color=blue`` pods."""
    spread = (TopologySpreadConstraint(5, ZONE, "DoNotSchedule", LabelSelector({"color": "blue"})),)
    cluster = _cluster([default_node(i) for i in range(nodes)], running)
    template = _with_labels(default_pod("pod", topology_spread_constraints=spread), color="blue")
    return cluster, replicas(template, pending)


def preferred_topology_spreading(nodes: int, running: int,
                                 pending: int) -> tuple[ClusterState, list[Pod]]:
    """PreferredTopologySpreading: maxSkew 5 over zones, ScheduleAnyway."""
    spread = (TopologySpreadConstraint(5, ZONE, "ScheduleAnyway",
                                       LabelSelector({"color": "blue"})),)
    cluster = _cluster([default_node(i) for i in range(nodes)], running)
    template = _with_labels(default_pod("pod", topology_spread_constraints=spread), color="blue")
    return cluster, replicas(template, pending)


def mixed_base_pod(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """MixedSchedulingBasePod: running pods of five kinds, then default pods."""
    kinds = [pod_anti_affinity, pod_affinity, preferred_pod_affinity, topology_spreading,
             scheduling_basic]
    bound: list[Pod] = []
    for k, kind in enumerate(kinds):
        _, made = kind(nodes, 0, running // len(kinds))
        bound += [attrs.evolve(p, name=f"init-{k}-{i}", namespace="sched-0",
                               node_name=f"node-{(i * len(kinds) + k) % nodes:06d}")
                  for i, p in enumerate(made)]
    cluster = ClusterState.from_records([default_node(i) for i in range(nodes)], bound)
    return cluster, replicas(default_pod("pod"), pending)


def _scoring_config(strategy: dict) -> dict:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}]}]}


MOST_ALLOCATED = _scoring_config({"type": "MostAllocated", "resources": [
    {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]})
REQUESTED_TO_CAPACITY_RATIO = _scoring_config({
    "type": "RequestedToCapacityRatio",
    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
    "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                           {"utilization": 100, "score": 10}]}})

#: The CSI driver of the volume workloads (AWS EBS) and its attach limit in SchedulingCSIPVs
#: (``util.DefaultMaxEBSVolumes``).
EBS_CSI, EBS_ATTACH_LIMIT = "ebs.csi.aws.com", 39


def _csi_nodes(nodes: Sequence[Node], limit: int) -> list[CSINode]:
    return [CSINode(n.name, drivers=[CSINodeDriver(EBS_CSI, node_id=f"i-{k:08x}",
                                                   allocatable=limit)])
            for k, n in enumerate(nodes)]


def _claimed_pods(template: Pod, count: int, claim: str) -> list[Pod]:
    """``count`` replicas, replica ``i`` mounting claim ``<claim>-<i>``."""
    return [attrs.evolve(template, name=f"{template.name}-{i}",
                         volumes=[Volume("data", "persistentVolumeClaim",
                                         claim_name=f"{claim}-{i}")])
            for i in range(count)]


def scheduling_csi_pvs(nodes: int, running: int, pending: int,
                       limit: int = EBS_ATTACH_LIMIT) -> tuple[ClusterState, list[Pod]]:
    """SchedulingCSIPVs: each pending pod mounts its own claim, bound to its own CSI PV (no
    node affinity); every node's CSINode allows ``limit`` EBS volumes (NodeVolumeLimits)."""
    node_list = [default_node(i) for i in range(nodes)]
    pods = _claimed_pods(default_pod("pod"), pending, "pvc")
    volumes = [PersistentVolume(f"pv-{i}", capacity=GI, access_modes=["ReadWriteOnce"],
                                claim_ref=ClaimRef("sched-0", f"pvc-{i}"), phase="Bound",
                                source="csi", driver=EBS_CSI, volume_handle=f"vol-{i:08x}")
               for i in range(pending)]
    claims = [PersistentVolumeClaim(f"pvc-{i}", "sched-0", access_modes=["ReadWriteOnce"],
                                    request=GI, volume_name=f"pv-{i}", phase="Bound",
                                    bind_completed=True) for i in range(pending)]
    storage = StorageObjects(persistent_volumes=volumes, persistent_volume_claims=claims,
                             csi_nodes=_csi_nodes(node_list, limit),
                             csi_drivers=[CSIDriver(EBS_CSI)])
    cluster = _cluster(node_list, running)
    return cluster.with_storage(storage), pods


def stateful_set_claims(nodes: int, running: int, pending: int,
                        limit: int = 25) -> tuple[ClusterState, list[Pod]]:
    """A StatefulSet rollout: each replica mounts its own claim of a WaitForFirstConsumer
    class (EBS, dynamically provisioned where the scheduler puts the pod); nodes attach at
    most ``limit`` EBS volumes."""
    node_list = [default_node(i) for i in range(nodes)]
    pods = _claimed_pods(default_pod("web"), pending, "data-web")
    claims = [PersistentVolumeClaim(f"data-web-{i}", "sched-0", access_modes=["ReadWriteOnce"],
                                    request=10 * GI, storage_class="gp3")
              for i in range(pending)]
    storage = StorageObjects(
        persistent_volume_claims=claims,
        storage_classes=[StorageClass("gp3", EBS_CSI, volume_binding_mode="WaitForFirstConsumer")],
        csi_nodes=_csi_nodes(node_list, limit), csi_drivers=[CSIDriver(EBS_CSI)])
    return _cluster(node_list, running).with_storage(storage), pods


#: The cpu/memory shapes of :func:`mixed_shapes`: 100m to 1 cpu by 100m, times 256Mi to 1.25Gi.
SHAPES = tuple({CPU: 100 * (1 + k % 10), MEMORY: 256 * MI * (1 + k // 10)} for k in range(50))


def mixed_shapes(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """SchedulingBasic with pending pods of the 50 cpu/memory :data:`SHAPES`, interleaved
    (pod ``i`` has shape ``i % 50``): each pod differs from the one before it, as pods of many
    deployments arriving together do."""
    cluster = _cluster([default_node(i) for i in range(nodes)], running)
    shapes = [default_pod(f"shape{k}", requests=r) for k, r in enumerate(SHAPES)]
    return cluster, [attrs.evolve(shapes[i % len(shapes)], name=f"pod-{i}")
                     for i in range(pending)]


def overcommitted(nodes: int, running: int, pending: int) -> tuple[ClusterState, list[Pod]]:
    """:func:`mixed_shapes` four times as large (400m to 4 cpu, 1 to 5 Gi), a quarter of
    the pods pinned to a zone: more than the nodes hold, so that most pods of the second half
    fit nowhere and are diagnosed (a planner's "what if all of these came")."""
    cluster = _cluster([default_node(i) for i in range(nodes)], running)
    shapes = [default_pod(f"big{k}", requests={r: 4 * v for r, v in shape.items()},
                          node_selector={ZONE: f"zone{k % 3 + 1}"} if k % 4 == 0 else None)
              for k, shape in enumerate(SHAPES)]
    return cluster, [attrs.evolve(shapes[i % len(shapes)], name=f"pod-{i}")
                     for i in range(pending)]


WORKLOADS = {w.name: w for w in [
    Workload("SchedulingBasic/500Nodes", 500, 1000, 10000, scheduling_basic),
    Workload("SchedulingBasic/5000Nodes", 5000, 1000, 10000, scheduling_basic),
    Workload("SchedulingBasic/5000Nodes/percentageOfNodesToScore=100", 5000, 1000, 10000,
             scheduling_basic, 100),
    Workload("SchedulingBasic/15000Nodes", 15000, 1000, 10000, scheduling_basic),
    Workload("SchedulingBasic/5000Nodes_50000Pods", 5000, 1000, 50000, scheduling_basic),
    Workload("SchedulingBasic/5000Nodes/mixed-shapes", 5000, 1000, 10000, mixed_shapes),
    Workload("SchedulingBasic/5000Nodes/overcommitted", 5000, 1000, 10000, overcommitted),
    Workload("SchedulingBasic/100000Nodes", 100000, 1000, 10000, scheduling_basic),
    Workload("SchedulingNodeAffinity/5000Nodes", 5000, 5000, 10000, node_affinity),
    Workload("SchedulingTaints/5000Nodes", 5000, 1000, 10000, tainted),
    Workload("SchedulingExtendedResources/5000Nodes", 5000, 1000, 10000, gpu),
    Workload("SchedulingBasic/5000Nodes/MostAllocated", 5000, 1000, 10000, scheduling_basic,
             config=MOST_ALLOCATED),
    Workload("SchedulingBasic/5000Nodes/RequestedToCapacityRatio", 5000, 1000, 10000,
             scheduling_basic, config=REQUESTED_TO_CAPACITY_RATIO),
    Workload("Fleet/1000000Nodes_100000Pods", 1_000_000, 0, 100_000, fleet),
    Workload("SchedulingPodAntiAffinity/5000Nodes", 5000, 1000, 1000, pod_anti_affinity),
    Workload("SchedulingPodAffinity/5000Nodes", 5000, 5000, 1000, pod_affinity),
    Workload("SchedulingPreferredPodAffinity/5000Nodes", 5000, 5000, 1000,
             preferred_pod_affinity),
    Workload("SchedulingPreferredPodAntiAffinity/5000Nodes", 5000, 5000, 1000,
             preferred_pod_anti_affinity),
    Workload("TopologySpreading/5000Nodes", 5000, 5000, 2000, topology_spreading),
    Workload("TopologySpreading/5000Nodes/hostname", 5000, 5000, 2000, hostname_spreading),
    Workload("PreferredTopologySpreading/5000Nodes", 5000, 5000, 2000,
             preferred_topology_spreading),
    Workload("MixedSchedulingBasePod/5000Nodes", 5000, 2000, 1000, mixed_base_pod),
    Workload("SchedulingCSIPVs/5000Nodes", 5000, 1000, 1000, scheduling_csi_pvs),
    Workload("StatefulSetClaims/5000Nodes_10000Pods", 5000, 1000, 10000, stateful_set_claims),
    Workload("SchedulingWithResourceClaimTemplate/500Nodes_5000Pods", 500, 0, 5000,
             scheduling_with_claim_template),
    Workload("SteadyStateClusterResourceClaimTemplate/half_500Nodes/one-batch", 500, 2500, 2500,
             steady_state_half),
]}


@attrs.frozen
class TraceWorkload:
    """A workload read from Alibaba's GPU cluster trace (:mod:`ksched.alibaba`) in ``folder``:
    one ``schedule_batch`` of every pod, or (``simulate``) the
    :class:`~ksched.simulator.Simulator` replaying the trace's timeline. ``folder`` is
    ``None`` until a user names it (``ksched bench --trace-dir DIR``)."""

    name: str
    simulate: bool
    folder: str | None = None
    percentage_of_nodes_to_score: int | None = None
    #: Warm up on every pod: the first ones do not reach every code path the later ones take.
    warmup_pods: int | None = None

    def profile(self) -> None:
        """The default profile (as :meth:`Workload.profile` for a workload without one)."""
        return None

    def load(self, scale: float = 1.0):
        """The trace (a :class:`~ksched.alibaba.GpuTrace`), its first pods only for
        ``scale < 1`` (smoke runs; the nodes stay)."""
        from ksched.alibaba import load_gpu_trace

        if self.folder is None:
            raise ArgumentError(f"{self.name}: needs the trace's folder (ksched bench "
                                f"--trace-dir DIR)")
        trace = load_gpu_trace(self.folder)
        return trace.head(max(int(len(trace.pods) * min(scale, 1.0)), 1))

    def make(self, scale: float = 1.0) -> tuple[ClusterState, PodTable]:
        """The cluster and every pending pod as a :class:`~ksched.pod_table.PodTable`."""
        trace = self.load(scale)
        return trace.cluster, PodTable.of(trace.pods)


TRACE_WORKLOADS = {w.name: w for w in [
    TraceWorkload("AlibabaGPUv2023/trace-batch", simulate=False),
    TraceWorkload("AlibabaGPUv2023/trace-simulator", simulate=True),
]}


def kubectl_snapshot(nodes: int, pods: int, seed: int = 0) -> dict:
    """A ``kubectl get nodes,pods -A -o json`` document: realistic nodes (cloud labels, taints
    on some, images) and running pods (several containers, tolerations, owner references)."""
    import random

    rng = random.Random(seed)
    items: list[dict] = []
    for i in range(nodes):
        name = f"ip-10-0-{i // 250}-{i % 250}.ec2.internal"
        zone = f"us-east-1{'abc'[i % 3]}"
        items.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-node-{i}", "labels": {
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "m5.2xlarge",
                "topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": zone,
                "node-role.kubernetes.io/worker": ""}},
            "spec": {"providerID": f"aws:///{zone}/i-{i:08x}",
                     **({"taints": [{"key": "dedicated", "value": "batch",
                                     "effect": "NoSchedule"}]} if i % 10 == 0 else {})},
            "status": {
                "capacity": {"cpu": "8", "memory": "32408560Ki", "pods": "110",
                             "ephemeral-storage": "104845292Ki"},
                "allocatable": {"cpu": "7910m", "memory": "31391728Ki", "pods": "110",
                                "ephemeral-storage": "95551679124"},
                "images": [{"names": [f"registry.example.com/app{k}@sha256:{k:064x}",
                                      f"registry.example.com/app{k}:1.{k}"],
                            "sizeBytes": 10_000_000 * (k + 1)} for k in range(rng.randint(3, 8))],
                "conditions": [{"type": "Ready", "status": "True"}]}})
    for j in range(pods):
        app = f"app{j % 40}"
        items.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{app}-{j:06d}", "namespace": f"team-{j % 7}",
                         "uid": f"uid-pod-{j}", "labels": {"app": app, "pod-template-hash": "abc"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": f"{app}-abc", "uid": "rs",
                                              "controller": True}]},
            "spec": {
                "nodeName": items[j % nodes]["metadata"]["name"],
                "containers": [{"name": "main", "image": f"registry.example.com/{app}:1.0",
                                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                                              "limits": {"memory": "256Mi"}},
                                "ports": [{"containerPort": 8080, "protocol": "TCP"}]},
                               {"name": "sidecar", "image": "registry.example.com/proxy:2.1",
                                "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}}}],
                "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                 "effect": "NoExecute", "tolerationSeconds": 300}],
                "schedulerName": "default-scheduler", "priority": 0},
            "status": {"phase": "Running", "qosClass": "Burstable"}})
    return {"apiVersion": "v1", "kind": "List", "items": items}


def kubectl_pending_pods(pods: int) -> dict:
    """A ``kubectl get pods -A -o json`` document of ``pods`` pending pods: the pods of
    :func:`kubectl_snapshot` (40 apps in 7 namespaces) as the API server shows them before
    they are bound: no ``nodeName``, their own uid, creation time and resource version, and a
    ``PodScheduled=False`` condition with its own transition time."""
    items = kubectl_snapshot(1, pods)["items"][1:]
    for j, item in enumerate(items):
        del item["spec"]["nodeName"]
        stamp = f"2024-01-01T{j // 3600 % 24:02d}:{j // 60 % 60:02d}:{j % 60:02d}Z"
        item["metadata"].update(creationTimestamp=stamp, resourceVersion=str(1000 + j),
                                generateName=item["metadata"]["name"].rsplit("-", 1)[0] + "-")
        item["status"] = {"phase": "Pending", "qosClass": "Burstable", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "lastProbeTime": None, "lastTransitionTime": stamp,
             "message": "0/3 nodes are available: 3 Insufficient cpu."}]}
    return {"apiVersion": "v1", "kind": "List", "items": items}


def kubectl_storage_snapshot(nodes: int, replicas: int, attach_limit: int = 25) -> dict:
    """A ``kubectl get nodes,pods,sts,pv,pvc,sc,csinode,csidriver -A -o json`` document: the
    nodes of :func:`kubectl_snapshot` (three zones), each with a CSINode for the EBS driver,
    a WaitForFirstConsumer StorageClass, and a StatefulSet ``db`` of ``replicas`` pods whose
    first half runs with bound claims (zonal PVs) while the second half is pending with
    unbound claims."""
    snapshot = kubectl_snapshot(nodes, 0)
    node_items = snapshot["items"]
    names = [n["metadata"]["name"] for n in node_items]
    zones = [n["metadata"]["labels"][ZONE] for n in node_items]
    items: list[dict] = list(node_items)
    items += [{"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
               "spec": {"drivers": [{"name": EBS_CSI, "nodeID": f"i-{i:08x}",
                                     "topologyKeys": [ZONE],
                                     "allocatable": {"count": attach_limit}}]}}
              for i, name in enumerate(names)]
    items.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                  "metadata": {"name": EBS_CSI}, "spec": {"attachRequired": True}})
    items.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                  "metadata": {"name": "gp3"}, "provisioner": EBS_CSI,
                  "volumeBindingMode": "WaitForFirstConsumer"})
    labels = {"app": "db"}
    items.append({"apiVersion": "apps/v1", "kind": "StatefulSet",
                  "metadata": {"name": "db", "namespace": "data", "uid": "sts-db"},
                  "spec": {"replicas": replicas, "serviceName": "db",
                           "selector": {"matchLabels": labels},
                           "template": {"metadata": {"labels": labels}}}})
    for k in range(replicas):
        claim, running = f"data-db-{k}", k < replicas // 2
        node = k % len(names)
        pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": claim, "namespace": "data"},
               "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
                        "resources": {"requests": {"storage": "10Gi"}}}}
        if running:
            pv_name = f"pvc-{k:08x}"
            pvc["spec"]["volumeName"] = pv_name
            pvc["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
            pvc["status"] = {"phase": "Bound"}
            items.append({
                "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv_name},
                "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                         "storageClassName": "gp3", "persistentVolumeReclaimPolicy": "Delete",
                         "csi": {"driver": EBS_CSI, "volumeHandle": f"vol-{k:08x}"},
                         "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "data",
                                      "name": claim},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{
                             "matchExpressions": [{"key": ZONE, "operator": "In",
                                                   "values": [zones[node]]}]}]}}},
                "status": {"phase": "Bound"}})
        items.append(pvc)
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": f"db-{k}", "namespace": "data", "labels": labels,
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                                 "name": "db", "uid": "sts-db",
                                                 "controller": True}]},
               "spec": {"containers": [{"name": "db", "image": "postgres:16",
                                        "resources": {"requests": {"cpu": "500m",
                                                                   "memory": "1Gi"}}}],
                        "volumes": [{"name": "data",
                                     "persistentVolumeClaim": {"claimName": claim}}]}}
        if running:
            pod["spec"]["nodeName"] = names[node]
            pod["status"] = {"phase": "Running"}
        items.append(pod)
    return {"apiVersion": "v1", "kind": "List", "items": items}

"""The API server's defaulting of the fields that reach scheduling, one rule per test: what a
hand-written manifest (or a record) becomes before the scheduler sees it, and what the
scheduler then does with it (``pkg/apis/core/v1/defaults.go``, the pod strategy's
``mutatePodAffinity``, Priority admission, ``SetDefaults_Namespace``,
``SetDefaults_ReplicationController``, ``SetDefaults_NodeStatus``)."""

from __future__ import annotations

from typing import Any

import pytest

import ksched
from ksched import Container, ContainerPort, Namespace, Node, Pod, PriorityClass
from ksched.api import (
    LabelSelector,
    LabelSelectorRequirement,
    TopologySpreadConstraint,
    Workload,
)

GI, MI = 1024**3, 1024**2


def node(name: str = "n1", cpu: str = "4", labels: dict | None = None, **spec: Any) -> dict:
    return {"kind": "Node", "metadata": {"name": name, "labels": labels or {}}, "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def pod(name: str = "p", labels: dict | None = None, **spec: Any) -> dict:
    spec.setdefault("containers", [{"name": "c", "image": "img"}])
    return {"kind": "Pod", "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def ctr(name: str = "c", **fields: Any) -> dict:
    return {"name": name, "image": "img", **fields}


def placements(cluster: list[dict], pods: list[dict]) -> list[tuple[str, str | None, str]]:
    result = ksched.schedule_batch(ksched.load_cluster(cluster), pods)
    return [(p.pod.name, p.node, p.reason) for p in result.placements]


# --------------------------------------------------------------------------- requests from limits


def test_limits_only_cpu_64_requests_64_cores_and_does_not_fit_a_4_cpu_node() -> None:
    big = pod("big", containers=[ctr(resources={"limits": {"cpu": "64"}})])
    assert Pod.from_manifest(big).containers[0].requests == {"cpu": 64_000}
    assert placements([node("n1", cpu="4")], [big]) == [
        ("big", None, "0/1 nodes are available: 1 Insufficient cpu.")]
    # the same pod with 3 cores fits
    small = pod("small", containers=[ctr(resources={"limits": {"cpu": "3"}})])
    assert placements([node("n1", cpu="4")], [small]) == [("small", "n1", "")]


def test_requests_default_per_resource_to_limits() -> None:
    p = Pod.from_manifest(pod(containers=[ctr(resources={
        "limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m"}})]))
    assert p.containers[0].requests == {"cpu": 500, "memory": GI}
    assert p.containers[0].limits == {"cpu": 2000, "memory": GI}


def test_init_container_requests_default_to_limits() -> None:
    p = Pod.from_manifest(pod(initContainers=[ctr("init", resources={"limits": {"cpu": "3"}})]))
    assert p.init_containers[0].requests == {"cpu": 3000}
    # the init container's 3 cores are the pod's request: it does not fit 2 cores
    assert placements([node("n1", cpu="2")], [pod(initContainers=[
        ctr("init", resources={"limits": {"cpu": "3"}})])])[0][1] is None


def test_container_record_requests_default_to_limits() -> None:
    c = Container("c", limits={"cpu": "2", "memory": "1Gi"}, requests={"memory": "512Mi"})
    assert c.requests == {"cpu": 2000, "memory": 512 * MI}
    assert c == Pod.from_manifest(pod(containers=[{"name": "c", "resources": {
        "limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"memory": "512Mi"}}}])).containers[0]


# --------------------------------------------------------------------------- host network ports


def test_host_network_container_port_becomes_a_host_port() -> None:
    p = Pod.from_manifest(pod(hostNetwork=True, containers=[ctr(ports=[{"containerPort": 80}])],
                              initContainers=[ctr("i", ports=[{"containerPort": 9000}])]))
    assert p.host_network is True
    assert p.containers[0].ports == (ContainerPort(80, 80, "TCP"),)
    assert p.init_containers[0].ports == (ContainerPort(9000, 9000, "TCP"),)
    # without host networking the port stays a container port
    plain = Pod.from_manifest(pod(containers=[ctr(ports=[{"containerPort": 80}])]))
    assert plain.containers[0].ports == (ContainerPort(80, 0, "TCP"),)


def test_host_network_pod_conflicts_with_a_host_port_in_use() -> None:
    running = pod("old", nodeName="n1",
                  containers=[ctr(ports=[{"containerPort": 8080, "hostPort": 80}])])
    web = pod("web", hostNetwork=True, containers=[ctr(ports=[{"containerPort": 80}])])
    assert placements([node("n1"), running], [web]) == [
        ("web", None, "0/1 nodes are available: 1 node(s) didn't have free ports for the "
                      "requested pod ports.")]
    # two host-network pods on port 80 cannot share a node
    second = pod("web-2", hostNetwork=True, containers=[ctr(ports=[{"containerPort": 80}])])
    got = placements([node("n1"), node("n2")], [web, second])
    assert sorted(n for _, n, _ in got) == ["n1", "n2"]


def test_pod_record_with_host_network_defaults_its_ports() -> None:
    c = Container("c", ports=[ContainerPort(443), ContainerPort(53, 5353, "UDP")])
    p = Pod("p", host_network=True, containers=[c], init_containers=[c])
    assert p.containers[0].ports == (ContainerPort(443, 443), ContainerPort(53, 5353, "UDP"))
    assert p.init_containers == p.containers
    assert Pod("p", containers=[c]).containers[0].ports[0].host_port == 0


# --------------------------------------------------------------------------- protocol, operators


def test_port_protocol_defaults_to_tcp() -> None:
    p = Pod.from_manifest(pod(containers=[ctr(ports=[{"containerPort": 80, "hostPort": 80}])]))
    assert p.containers[0].ports[0].protocol == "TCP"
    assert ContainerPort(80).protocol == "TCP"
    # so it conflicts with an explicit TCP host port, not a UDP one
    tcp = pod("tcp", nodeName="n1", containers=[ctr(ports=[
        {"containerPort": 80, "hostPort": 80, "protocol": "TCP"}])])
    udp = pod("udp", nodeName="n2", containers=[ctr(ports=[
        {"containerPort": 80, "hostPort": 80, "protocol": "UDP"}])])
    new = pod("new", containers=[ctr(ports=[{"containerPort": 80, "hostPort": 80}])])
    assert placements([node("n1"), node("n2"), tcp, udp], [new])[0][1] == "n2"


def test_toleration_without_operator_means_equal() -> None:
    tainted = node("n1", taints=[{"key": "team", "value": "a", "effect": "NoSchedule"}])
    same = pod("same", tolerations=[{"key": "team", "value": "a", "effect": "NoSchedule"}])
    other = pod("other", tolerations=[{"key": "team", "value": "b", "effect": "NoSchedule"}])
    assert Pod.from_manifest(same).tolerations[0].operator == ""
    got = placements([tainted], [same, other])
    assert [(name, n) for name, n, _ in got] == [("same", "n1"), ("other", None)]


def test_scheduler_name_and_namespace_defaults() -> None:
    p = Pod.from_manifest({"kind": "Pod", "metadata": {"name": "p"},
                           "spec": {"schedulerName": "", "containers": [{"name": "c"}]}})
    assert (p.namespace, p.scheduler_name) == ("default", "default-scheduler")


# --------------------------------------------------------------------------- spread policies


def _spread_cluster(taint_zone_a: bool) -> list[dict]:
    taints = [{"key": "k", "effect": "NoSchedule"}] if taint_zone_a else []
    zone = "topology.kubernetes.io/zone"
    return [node("a1", labels={zone: "a", "pool": "x"}, taints=taints),
            node("b1", labels={zone: "b", "pool": "y"}),
            pod("old", labels={"app": "web"}, nodeName="b1")]


def _spreading(**policies: str) -> dict:
    return {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}, **policies}


def test_spread_node_taints_policy_defaults_to_ignore() -> None:
    """The tainted zone still counts (0 pods), so the skew on b would be 2."""
    default = pod("new", labels={"app": "web"}, topologySpreadConstraints=[_spreading()])
    assert Pod.from_manifest(default).topology_spread_constraints[0].node_taints_policy is None
    assert placements(_spread_cluster(True), [default])[0][1] is None
    honor = pod("new", labels={"app": "web"},
                topologySpreadConstraints=[_spreading(nodeTaintsPolicy="Honor")])
    assert placements(_spread_cluster(True), [honor])[0][1] == "b1"


def test_spread_node_affinity_policy_defaults_to_honor() -> None:
    """Zone a is outside the pod's node selector: it does not count, b takes the pod."""
    default = pod("new", labels={"app": "web"}, nodeSelector={"pool": "y"},
                  topologySpreadConstraints=[_spreading()])
    assert placements(_spread_cluster(False), [default])[0][1] == "b1"
    ignore = pod("new", labels={"app": "web"}, nodeSelector={"pool": "y"},
                 topologySpreadConstraints=[_spreading(nodeAffinityPolicy="Ignore")])
    assert placements(_spread_cluster(False), [ignore])[0][1] is None
    record = TopologySpreadConstraint(1, "zone", "DoNotSchedule")
    assert (record.node_affinity_policy, record.node_taints_policy, record.min_domains) == (
        None, None, None)


# --------------------------------------------------------------------------- priority


def test_priority_comes_from_the_priority_class() -> None:
    classes = [{"kind": "PriorityClass", "metadata": {"name": "gold"}, "value": 1000,
                "preemptionPolicy": "Never"},
               {"kind": "PriorityClass", "metadata": {"name": "base"}, "value": 10,
                "globalDefault": True}]
    named, plain = ksched.read_objects(classes + [pod("a", priorityClassName="gold"),
                                                  pod("b")]).pods
    assert (named.priority, named.preemption_policy) == (1000, "Never")
    assert (plain.priority, plain.priority_class_name) == (10, "base")
    assert PriorityClass.from_manifest(classes[1]).preemption_policy == "PreemptLowerPriority"


# --------------------------------------------------------------------------- pod-level resources


def test_pod_level_requests_default_from_containers_then_limits() -> None:
    """``defaultPodRequests``: cpu, memory from the containers' aggregate where they state
    them, else the pod-level limit."""
    p = Pod.from_manifest(pod(resources={"limits": {"cpu": "4", "memory": "2Gi"}},
                              containers=[ctr(resources={"requests": {"memory": "1Gi"}})]))
    assert p.pod_limits == {"cpu": 4000, "memory": 2 * GI}
    assert p.pod_requests == {"cpu": 4000, "memory": GI}
    # and the pod-level request is what the pod needs: 4 cores do not fit 2
    assert placements([node("n1", cpu="2")], [pod(resources={"limits": {"cpu": "4"}})])[0][1] \
        is None
    # without pod-level limits nothing is defaulted
    assert Pod.from_manifest(pod(resources={"requests": {"cpu": "1"}})).pod_requests == {
        "cpu": 1000}


def test_pod_level_hugepage_limits_default_to_the_containers() -> None:
    hp = {"hugepages-2Mi": "4Mi", "memory": "1Gi"}
    p = Pod.from_manifest(pod(resources={"requests": {"cpu": "1"}},
                              containers=[ctr(resources={"limits": hp})]))
    assert p.pod_limits == {"hugepages-2Mi": 4 * MI}
    assert p.pod_requests == {"cpu": 1000, "memory": GI, "hugepages-2Mi": 4 * MI}


def test_pod_record_pod_limits_default_its_requests() -> None:
    p = Pod("p", pod_limits={"cpu": "2"}, containers=[Container("c", requests={"memory": "1Gi"})])
    assert p.pod_requests == {"cpu": 2000, "memory": GI}


# --------------------------------------------------------------------------- other objects


def test_node_allocatable_defaults_to_capacity() -> None:
    n = Node.from_manifest({"kind": "Node", "metadata": {"name": "n1"},
                            "status": {"capacity": {"cpu": "2", "pods": "10"}}})
    assert n.allocatable == {"cpu": 2000, "pods": 10}


def test_namespace_is_labelled_with_its_name() -> None:
    ns = Namespace.from_manifest({"kind": "Namespace", "metadata": {"name": "team-a"}})
    assert ns.labels == {"kubernetes.io/metadata.name": "team-a"}
    # which a namespaceSelector on that label selects
    term = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {},
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}}}
    cluster = [node("n1", labels={"kubernetes.io/hostname": "n1"}),
               node("n2", labels={"kubernetes.io/hostname": "n2"}),
               {"kind": "Namespace", "metadata": {"name": "team-a"}},
               {**pod("other", nodeName="n2"), "metadata": {"name": "other",
                                                            "namespace": "team-a"}}]
    near = pod("near", affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    assert placements(cluster, [near])[0][1] == "n2"


def test_replication_controller_selects_its_template_labels() -> None:
    rc = Workload.from_manifest({"kind": "ReplicationController", "metadata": {"name": "rc"},
                                 "spec": {"template": {"metadata": {"labels": {"app": "x"}}}}})
    assert rc.selector == LabelSelector({"app": "x"})
    assert rc.replicas == 1


# --------------------------------------------------------------------------- matchLabelKeys


def _affinity_pod(**meta: Any) -> dict:
    term = {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "web"}},
            "matchLabelKeys": ["version"], "mismatchLabelKeys": ["tenant"]}
    obj = pod("p", labels={"app": "web", "version": "v2", "tenant": "t1"},
              affinity={"podAntiAffinity": {
                  "requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    obj["metadata"].update(meta)
    return obj


def test_match_label_keys_merge_into_the_selector_at_creation() -> None:
    term = Pod.from_manifest(_affinity_pod()).pod_anti_affinity.required[0]
    assert term.label_selector.match_expressions == (
        LabelSelectorRequirement("version", "In", ("v2",)),
        LabelSelectorRequirement("tenant", "NotIn", ("t1",)))
    # a pod read back from the API server (it has a uid) was merged already
    stored = Pod.from_manifest(_affinity_pod(uid="0b9c")).pod_anti_affinity.required[0]
    assert stored.label_selector.match_expressions == ()


def test_quantities_round_up_to_scheduler_units() -> None:
    c = Pod.from_manifest(pod(containers=[ctr(resources={"requests": {
        "cpu": "0.0001", "memory": "1.5"}})])).containers[0]
    assert c.requests == {"cpu": 1, "memory": 2}


@pytest.mark.parametrize(("allocatable", "expected"), [
    ({"cpu": "8", "memory": "32Gi"}, {"cpu": 8000, "memory": 32 * GI}),
    ({"cpu": 8000, "memory": 32 * GI}, {"cpu": 8000, "memory": 32 * GI}),
    ({"cpu": 0.5, "pods": "110"}, {"cpu": 500, "pods": 110}),
])
def test_node_record_quantities(allocatable: dict, expected: dict) -> None:
    assert Node("n", allocatable=allocatable).allocatable == expected

"""Parsing Kubernetes objects into records: exact error messages for bad input, exact values
for good input, and inputs that are never mutated."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import ksched
import ksched.io
from ksched import ClusterState, InvalidObjectError, Node, Pod

GI, MI = 1024**3, 1024**2


def pod_manifest(spec: dict[str, Any] | None = None, name: str = "web-1",
                 namespace: str | None = "default", **top: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    spec = {"containers": [container()], **(spec or {})}  # validateContainers: at least one
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, **top}


def container(requests: dict[str, Any] | None = None, name: str = "c", **extra: Any) -> dict:
    out: dict[str, Any] = {"name": name, "image": "registry.k8s.io/pause:3.10", **extra}
    if requests is not None:
        out["resources"] = {"requests": requests}
    return out


def node_manifest(name: str = "n1", allocatable: dict[str, Any] | None = None,
                  **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec,
            "status": {"allocatable": allocatable if allocatable is not None
                       else {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def raises_invalid(obj: dict[str, Any]) -> InvalidObjectError:
    """Parse ``obj`` (a Pod or Node manifest); the InvalidObjectError it must raise."""
    parse = Pod.from_manifest if obj.get("kind") == "Pod" else Node.from_manifest
    with pytest.raises(InvalidObjectError) as info:
        parse(obj)
    return info.value


# --------------------------------------------------------------------------- bad input


def test_malformed_quantity_names_object_and_field() -> None:
    err = raises_invalid(pod_manifest({"containers": [container({"cpu": "1.5.0"})]}))
    assert str(err) == ('pod default/web-1: spec.containers[0].resources.requests.cpu: '
                        'invalid quantity "1.5.0"')
    assert err.obj == "pod default/web-1"
    assert err.path == "spec.containers[0].resources.requests.cpu"
    assert err.problem == 'invalid quantity "1.5.0"'
    assert isinstance(err, ValueError) and isinstance(err, ksched.KschedError)


def test_malformed_quantity_through_read_objects_and_second_container() -> None:
    obj = pod_manifest({"containers": [container({"cpu": "1"}),
                                       container({"memory": "12XiB"}, name="d")]})
    with pytest.raises(InvalidObjectError) as info:
        ksched.read_objects(obj)
    assert str(info.value) == ('pod default/web-1: spec.containers[1].resources.requests.memory: '
                               'invalid quantity "12XiB"')


def test_malformed_quantity_in_init_container_and_node_allocatable() -> None:
    err = raises_invalid(pod_manifest({"containers": [container()],
                                       "initContainers": [container({"cpu": "abc"}, "i")]}))
    assert str(err) == ('pod default/web-1: spec.initContainers[0].resources.requests.cpu: '
                        'invalid quantity "abc"')
    err = raises_invalid(node_manifest(allocatable={"cpu": "4", "memory": "8 Gi"}))
    assert str(err) == 'node n1: status.allocatable.memory: invalid quantity "8 Gi"'


def test_namespace_defaults_to_default_in_the_object_name() -> None:
    err = raises_invalid(pod_manifest({"containers": [container({"cpu": "1.5.0"})]},
                                      namespace=None))
    assert err.obj == "pod default/web-1"
    err = raises_invalid(pod_manifest({"containers": [container({"cpu": "x"})]},
                                      namespace="team-a"))
    assert str(err) == ('pod team-a/web-1: spec.containers[0].resources.requests.cpu: '
                        'invalid quantity "x"')


@pytest.mark.parametrize("metadata", [{"namespace": "default"}, {"name": ""}, {}, None])
def test_missing_pod_name(metadata: dict | None) -> None:
    obj = {"apiVersion": "v1", "kind": "Pod", "spec": {}}
    if metadata is not None:
        obj["metadata"] = metadata
    err = raises_invalid(obj)
    assert str(err) == ("pod <unnamed>: metadata.name: Required value: "
                        "name or generateName is required")
    assert err.path == "metadata.name"


def test_missing_node_name() -> None:
    err = raises_invalid({"kind": "Node", "metadata": {"labels": {"a": "b"}}})
    assert str(err) == ("node <unnamed>: metadata.name: Required value: "
                        "name or generateName is required")


def test_metadata_of_wrong_type() -> None:
    err = raises_invalid({"kind": "Node", "metadata": ["n1"]})
    assert str(err) == "node <unnamed>: metadata: expected an object, got a list"


def test_duplicate_node_name_from_records() -> None:
    nodes = [Node.from_manifest(node_manifest("n1")), Node.from_manifest(node_manifest("n2")),
             Node.from_manifest(node_manifest("n1"))]
    with pytest.raises(InvalidObjectError) as info:
        ClusterState.from_records(nodes)
    assert str(info.value) == "node n1: metadata.name: duplicate node name"


def test_duplicate_node_name_from_load_cluster() -> None:
    with pytest.raises(InvalidObjectError, match=r"^node a: metadata.name: duplicate node name$"):
        ksched.load_cluster([node_manifest("a"), node_manifest("b"), node_manifest("a")])


def test_unknown_taint_effect() -> None:
    err = raises_invalid(node_manifest(taints=[{"key": "k", "value": "v", "effect": "NoSchedule"},
                                               {"key": "k", "effect": "NoScheduel"}]))
    assert str(err) == ('node n1: spec.taints[1].effect: Unsupported value: "NoScheduel": '
                        'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"')


def test_taint_without_key_or_effect() -> None:
    err = raises_invalid(node_manifest(taints=[{"effect": "NoSchedule"}]))
    # validateNodeTaints: the key must be a label name (ValidateLabelName)
    assert str(err) == ('node n1: spec.taints[0].key: Invalid value: "": '
                        'name part must be non-empty')
    # Taint.effect is required upstream (validateTaintEffect without allowEmpty).
    err = raises_invalid(node_manifest(taints=[{"key": "k"}]))
    assert str(err) == 'node n1: spec.taints[0].effect: Required value'


def test_unknown_toleration_operator() -> None:
    err = raises_invalid(pod_manifest({"tolerations": [{"key": "k", "operator": "exists"}]}))
    assert str(err) == ('pod default/web-1: spec.tolerations[0].operator: Unsupported value: '
                        '"exists": supported values: "Equal", "Exists"')


@pytest.mark.parametrize(("spec", "message"), [
    # a string where a list is expected
    ({"containers": "c"}, "spec.containers: expected a list, got a string"),
    ({"tolerations": {"key": "k"}}, "spec.tolerations: expected a list, got an object"),
    ({"containers": [container(ports="8080")]},
     "spec.containers[0].ports: expected a list, got a string"),
    # an int where a string is expected
    ({"containers": [{"name": 7}]}, "spec.containers[0].name: expected a string, got an integer"),
    ({"nodeName": 3}, "spec.nodeName: expected a string, got an integer"),
    ({"nodeSelector": {"disk": 1}}, "spec.nodeSelector.disk: expected a string, got an integer"),
    # a bool where a quantity is expected
    ({"containers": [container({"cpu": True})]},
     "spec.containers[0].resources.requests.cpu: expected a quantity, got a boolean"),
    ({"overhead": {"memory": False}}, "spec.overhead.memory: expected a quantity, got a boolean"),
    # other shapes
    ({"containers": [container({"cpu": None})]},
     "spec.containers[0].resources.requests.cpu: expected a quantity, got null"),
    ({"containers": [container({"cpu": ["1"]})]},
     "spec.containers[0].resources.requests.cpu: expected a quantity, got a list"),
    ({"nodeSelector": ["a"]}, "spec.nodeSelector: expected an object, got a list"),
    ({"priority": "high"}, "spec.priority: expected an integer, got a string"),
    ({"priority": True}, "spec.priority: expected an integer, got a boolean"),
    ({"containers": [container(ports=[{"containerPort": "80"}])]},
     "spec.containers[0].ports[0].containerPort: expected an integer, got a string"),
])
def test_wrong_types(spec: dict[str, Any], message: str) -> None:
    assert str(raises_invalid(pod_manifest(spec))) == f"pod default/web-1: {message}"


def test_wrong_types_in_metadata_and_node() -> None:
    obj = pod_manifest()
    obj["metadata"]["labels"] = {"app": 1}
    assert str(raises_invalid(obj)) == ("pod default/web-1: metadata.labels.app: "
                                        "expected a string, got an integer")
    assert str(raises_invalid(node_manifest(unschedulable="true"))) == (
        "node n1: spec.unschedulable: expected a boolean, got a string")
    assert str(raises_invalid(node_manifest(taints="key=value:NoSchedule"))) == (
        "node n1: spec.taints: expected a list, got a string")


@pytest.mark.parametrize(("value", "shown"), [("-1", "-1"), ("-100m", "-100m"), (-2, "-2")])
def test_negative_quantity(value: Any, shown: str) -> None:
    err = raises_invalid(pod_manifest({"containers": [container({"cpu": value})]}))
    assert str(err) == (f"pod default/web-1: spec.containers[0].resources.requests.cpu: "
                        f'Invalid value: "{shown}": must be greater than or equal to 0')


def test_negative_allocatable() -> None:
    err = raises_invalid(node_manifest(allocatable={"memory": "-1Gi"}))
    assert str(err) == ('node n1: status.allocatable.memory: '
                        'Invalid value: "-1Gi": must be greater than or equal to 0')


def test_pod_bound_to_missing_node_is_left_out_with_a_warning() -> None:
    """The scheduler's cache ignores a pod whose node is not in the snapshot (a node being
    deleted between ``kubectl get nodes`` and ``kubectl get pods``): so does ksched, aloud."""
    objs = [node_manifest("n1"), pod_manifest({"nodeName": "nope", "containers": [container()]})]
    with pytest.warns(ksched.io.IgnoredObjectsWarning,
                      match=r'1 pod\(s\) bound to 1 node\(s\) not in the snapshot \("nope"; '
                            r"first pod default/web-1\) left out"):
        cluster = ksched.load_cluster(objs)
    assert cluster.pods == ()


def test_terminal_pod_bound_to_missing_node_is_ignored() -> None:
    objs = [node_manifest("n1"),
            pod_manifest({"nodeName": "gone", "containers": [container({"cpu": "1"})]},
                         status={"phase": "Succeeded"})]
    cluster = ksched.load_cluster(objs)
    assert cluster.pods == ()


# --------------------------------------------------------------------------- good input


def test_quantities_land_in_scheduler_units() -> None:
    # extended resources and hugepages cannot be overcommitted: requests equal limits
    gpus = {"example.com/gpu": "2", "nvidia.com/gpu": 3}
    pod = Pod.from_manifest(pod_manifest({"containers": [
        container(resources={"requests": {"cpu": "1.5", "memory": "1Gi",
                                          "ephemeral-storage": "1.5", **gpus},
                             "limits": gpus}),
        container(name="d", resources={"requests": {"cpu": "0.1m", "memory": "1e3"},
                                       "limits": {"hugepages-2Mi": "4Mi"}}),
        container({"cpu": 2, "memory": "500M"}, name="e"),
        container({"cpu": "250m", "memory": "1.5Ki"}, name="f"),
    ]}))
    got = [dict(c.requests) for c in pod.containers]
    assert got == [
        # cpu in milli-cores; everything else in units, rounded up as Quantity.Value() does.
        {"cpu": 1500, "memory": GI, "ephemeral-storage": 2, "example.com/gpu": 2,
         "nvidia.com/gpu": 3},
        {"cpu": 1, "memory": 1000, "hugepages-2Mi": 4 * MI},  # 0.1m rounds up to 1m
        {"cpu": 2000, "memory": 500_000_000},
        {"cpu": 250, "memory": 1536},
    ]


def test_node_allocatable_defaults_to_capacity() -> None:
    node = Node.from_manifest({"kind": "Node", "metadata": {"name": "n1"},
                               "status": {"capacity": {"cpu": "4", "memory": "8Gi",
                                                       "pods": "110"}}})
    assert dict(node.allocatable) == {"cpu": 4000, "memory": 8 * GI, "pods": 110}
    node = Node.from_manifest({"kind": "Node", "metadata": {"name": "n1"},
                               "status": {"capacity": {"cpu": "4", "pods": "110"},
                                          "allocatable": {"cpu": "3500m"}}})
    assert dict(node.allocatable) == {"cpu": 3500}


def test_node_fields() -> None:
    node = Node.from_manifest(node_manifest(
        "n1", taints=[{"key": "k", "value": "v", "effect": "PreferNoSchedule"},
                      {"key": "dedicated", "effect": "NoExecute"}],
        unschedulable=True))
    assert node.unschedulable is True
    assert node.taints == (ksched.Taint("k", "v", "PreferNoSchedule"),
                           ksched.Taint("dedicated", "", "NoExecute"))


def test_sidecars_and_init_containers() -> None:
    pod = Pod.from_manifest(pod_manifest({
        "containers": [container({"cpu": "500m"})],
        "initContainers": [container({"cpu": "200m"}, name="side", restartPolicy="Always"),
                           container({"cpu": "1"}, name="init")],
    }))
    assert [(c.name, c.is_sidecar, c.restart_policy) for c in pod.init_containers] == [
        ("side", True, "Always"), ("init", False, "")]
    assert pod.containers[0].is_sidecar is False


def test_sidecar_requests_in_the_cluster_state() -> None:
    """PodRequests: app 500m + sidecar 200m = 700m running; the init container needs
    1000m + the 200m sidecar started before it = 1200m; the pod requests max = 1200m.
    A sidecar started after the init container does not add to it."""
    spec = {"nodeName": "n1", "containers": [container({"cpu": "500m"})],
            "initContainers": [container({"cpu": "200m"}, name="side", restartPolicy="Always"),
                               container({"cpu": "1"}, name="init"),
                               container({"cpu": "300m"}, name="late", restartPolicy="Always")]}
    cluster = ksched.load_cluster([node_manifest("n1"), pod_manifest(spec)])
    cpu = cluster.resource_column("cpu")
    # running: 500 + 200 + 300 = 1000; init phase: max(200, 1000 + 200, 500) = 1200
    assert cluster.requested[0, cpu] == 1200
    assert cluster.requested[0, cluster.resource_column("pods")] == 1


def test_node_selector_nil_versus_empty() -> None:
    absent = Pod.from_manifest(pod_manifest({"containers": [container()]}))
    null = Pod.from_manifest(pod_manifest({"containers": [container()], "nodeSelector": None}))
    empty = Pod.from_manifest(pod_manifest({"containers": [container()], "nodeSelector": {}}))
    assert absent.node_selector is None and null.node_selector is None
    assert empty.node_selector is not None and dict(empty.node_selector) == {}
    # Upstream NodeAffinity PreFilter skips only for a nil map.
    cluster = ksched.load_cluster([node_manifest("n1"), node_manifest("n2")])
    assert "NodeAffinity" in ksched.explain(cluster, absent).pre_filter_skipped
    assert "NodeAffinity" not in ksched.explain(cluster, empty).pre_filter_skipped


def test_preferred_node_affinity_none_versus_empty() -> None:
    na = "nodeAffinity"
    pref = "preferredDuringSchedulingIgnoredDuringExecution"
    none = Pod.from_manifest(pod_manifest({"affinity": {na: {}}}))
    empty = Pod.from_manifest(pod_manifest({"affinity": {na: {pref: []}}}))
    one = Pod.from_manifest(pod_manifest({"affinity": {na: {pref: [
        {"weight": 5, "preference": {"matchExpressions": [
            {"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}}}))
    assert none.node_affinity == ksched.NodeAffinity(required=None, preferred=None)
    assert empty.node_affinity == ksched.NodeAffinity(required=None, preferred=())
    assert one.node_affinity.preferred[0].weight == 5
    assert one.node_affinity.preferred[0].preference.match_expressions == (
        ksched.NodeSelectorRequirement("disk", "In", ("ssd",)),)
    assert Pod.from_manifest(pod_manifest()).node_affinity is None
    # Upstream NodeAffinity PreScore skips only for a nil preferred list.
    cluster = ksched.load_cluster([node_manifest("n1"), node_manifest("n2")])
    assert "NodeAffinity" in ksched.explain(cluster, none).pre_score_skipped
    assert "NodeAffinity" not in ksched.explain(cluster, empty).pre_score_skipped


def test_required_node_affinity_needs_a_term() -> None:
    """``ValidateNodeSelector``: an empty required node selector is refused (a record may
    still hold one: NodeAffinity then matches no node)."""
    req = "requiredDuringSchedulingIgnoredDuringExecution"
    err = raises_invalid(pod_manifest({"affinity": {"nodeAffinity": {
        req: {"nodeSelectorTerms": []}}}}))
    assert str(err) == (f"pod default/web-1: spec.affinity.nodeAffinity.{req}.nodeSelectorTerms: "
                        "Required value: must have at least one node selector term")
    assert ksched.NodeAffinity(required=()).required == ()


def test_pod_defaults() -> None:
    pod = Pod.from_manifest({"kind": "Pod", "metadata": {"name": "p"},
                             "spec": {"containers": [{"name": "c", "image": "i"}]}})
    assert (pod.namespace, pod.key, pod.scheduler_name, pod.priority, pod.node_name) == (
        "default", "default/p", "default-scheduler", 0, "")
    assert pod.tolerations == () and pod.node_selector is None


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_terminal_pods_are_ignored_by_load_cluster(phase: str) -> None:
    objs = [node_manifest("n1"),
            pod_manifest({"nodeName": "n1", "containers": [container({"cpu": "3"})]},
                         name="done", status={"phase": phase}),
            pod_manifest({"nodeName": "n1", "containers": [container({"cpu": "1"})]},
                         name="running", status={"phase": "Running"}),
            pod_manifest({"containers": [container({"cpu": "1"})]}, name="old-pending",
                         status={"phase": phase}),
            pod_manifest({"containers": [container({"cpu": "1"})]}, name="pending")]
    cluster = ksched.load_cluster(objs)
    assert [p.name for p in cluster.pods] == ["running"]
    assert cluster.requested[0, cluster.resource_column("cpu")] == 1000
    assert cluster.requested[0, cluster.resource_column("pods")] == 1
    assert [p.name for p in ksched.load_pods(objs)] == ["pending"]


def test_inputs_are_never_mutated() -> None:
    objs = [
        node_manifest("n1", taints=[{"key": "k", "effect": "NoSchedule"}]),
        {"kind": "Node", "metadata": {"name": "n2", "labels": {"zone": "a"}},
         "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "10"}}},
        pod_manifest({"nodeName": "n1", "containers": [container({"cpu": "1"})],
                      "initContainers": [container({"cpu": "1"}, name="s",
                                                   restartPolicy="Always")]}, name="a"),
        pod_manifest({"containers": [container({"cpu": "100m", "memory": "1Gi"},
                                               ports=[{"containerPort": 80, "hostPort": 80}])],
                      "nodeSelector": {}, "tolerations": [{"operator": "Exists"}],
                      "affinity": {"nodeAffinity": {
                          "preferredDuringSchedulingIgnoredDuringExecution": []}}},
                     name="b", namespace=None),
        {"apiVersion": "v1", "kind": "PodList",
         "items": [{"metadata": {"name": "c"}, "spec": {"containers": [container()]}}]},
    ]
    before = copy.deepcopy(objs)
    cluster = ksched.load_cluster(objs)
    pods = ksched.load_pods(objs)
    ksched.read_objects(objs)
    result = ksched.schedule_batch(cluster, pods)
    assert objs == before
    assert "kind" not in objs[4]["items"][0]
    assert [p.node for p in result.placements] == ["n2", "n2"]


def test_records_are_frozen() -> None:
    pod = Pod.from_manifest(pod_manifest({"containers": [container({"cpu": "1"})],
                                          "nodeSelector": {"a": "b"}}))
    with pytest.raises(AttributeError):
        pod.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        pod.containers[0].requests["cpu"] = 5  # type: ignore[index]
    with pytest.raises(TypeError):
        pod.node_selector["a"] = "c"  # type: ignore[index]
    assert isinstance(pod.containers, tuple)
    cluster = ClusterState.from_records([Node.from_manifest(node_manifest())], [])
    assert not cluster.allocatable.flags.writeable
    with pytest.raises(ValueError):
        cluster.allocatable[0, 0] = np.int64(1)


def test_with_status_is_evolve_of_start_time_and_nomination() -> None:
    import attrs

    pod = Pod.from_manifest(pod_manifest({"containers": [container({"cpu": "1"})],
                                          "priority": 7, "nodeSelector": {"a": "b"}}))
    copy_ = pod.with_status(12.5, "n3")
    assert copy_ == attrs.evolve(pod, start_time=12.5, nominated_node_name="n3")
    assert (copy_.start_time, copy_.nominated_node_name) == (12.5, "n3")
    assert (pod.start_time, pod.nominated_node_name) == (None, "")
    assert copy_.containers is pod.containers


def test_pods_of_one_load_with_equal_containers_share_them() -> None:
    spec = {"containers": [container({"cpu": "500m"})]}
    a, b = (Pod.from_manifest(pod_manifest(spec, name=n)) for n in ("a", "b"))
    other = Pod.from_manifest(pod_manifest({"containers": [container({"cpu": "1"})]}))
    assert a.containers is b.containers
    assert other.containers is not a.containers and other.containers != a.containers

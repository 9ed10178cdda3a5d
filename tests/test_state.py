from __future__ import annotations

import numpy as np
import pytest

from ksched.api import Container, ContainerImage, ContainerPort, Node, Pod, Taint
from ksched.state import ABSENT, ClusterState, node_tree_order, parse_go_int, zone_key


def zoned(name: str, zone: str | None, region: str | None = "r") -> Node:
    labels = {}
    if zone is not None:
        labels["topology.kubernetes.io/zone"] = zone
    if region is not None:
        labels["topology.kubernetes.io/region"] = region
    return Node(name, labels=labels)


def test_node_tree_interleaves_zones_in_first_seen_order() -> None:
    nodes = [zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b"), zoned("a3", "a"),
             zoned("x1", None, None), zoned("b2", "b")]
    order = [nodes[i].name for i in node_tree_order(nodes)]
    assert order == ["a1", "b1", "x1", "a2", "b2", "a3"]


def test_zone_key_prefers_beta_labels_and_keeps_region_only_nodes_apart() -> None:
    assert zone_key({"failure-domain.beta.kubernetes.io/zone": "old",
                     "topology.kubernetes.io/zone": "new"}) == ":\x00:old"
    assert zone_key({"topology.kubernetes.io/region": "r1"}) == "r1:\x00:"
    assert zone_key({}) == ""


@pytest.mark.parametrize("text, value", [("42", 42), ("-7", -7), ("+3", 3), ("1.5", None),
                                         ("1_000", None), (" 1", None), ("", None),
                                         ("9223372036854775808", None)])
def test_parse_go_int(text: str, value: int | None) -> None:
    assert parse_go_int(text) == value


def test_columns_hold_what_node_info_holds() -> None:
    node = Node("n", labels={"zone": "z"}, taints=[Taint("k", "v", "NoSchedule")],
                allocatable={"cpu": 4000, "memory": 1 << 30, "pods": 10, "example.com/gpu": 2},
                images=[ContainerImage(("img:1", "img@sha256:x"), 500)])
    web = Pod("web", node_name="n", containers=[
        Container("c", requests={"cpu": 200, "example.com/gpu": 1},
                  ports=[ContainerPort(80, 8080)])])
    done = Pod("done", node_name="n", phase="Succeeded",
               containers=[Container("c", requests={"cpu": 999})])
    state = ClusterState.from_records([node], [web, done])
    assert state.pods == (web,)
    cols = state.resource_names
    assert cols[:4] == ("cpu", "memory", "ephemeral-storage", "pods")
    assert state.requested[0, cols.index("cpu")] == 200
    assert state.requested[0, cols.index("pods")] == 1
    assert state.requested[0, cols.index("example.com/gpu")] == 1
    assert state.nonzero_requested[0].tolist() == [200, 200 * 1024 * 1024]
    assert state.port_keys == (("0.0.0.0", "TCP", 8080),)
    assert state.port_count.tolist() == [[1]]
    assert state.labels[0, state.label_column("zone")] == state.vocab.get("z")
    assert state.image_num_nodes.tolist() == [1, 1]
    with pytest.raises(ValueError):
        state.requested[0, 0] = 1  # read-only


def test_widened_adds_zero_columns_only_for_new_names() -> None:
    state = ClusterState.from_records([Node("n", allocatable={"cpu": 1000})])
    wider = state.widened(resources=["cpu", "example.com/fpga", "unprefixed"],
                          ports=[("0.0.0.0", "UDP", 53)])
    assert wider.resource_names[-1] == "example.com/fpga"
    assert "unprefixed" not in wider.resource_names  # upstream's Resource drops such names
    assert wider.allocatable[:, -1].tolist() == [0]
    assert wider.port_keys == (("0.0.0.0", "UDP", 53),)
    assert state.widened() is state
    assert state.labels.shape == (1, 0) and ABSENT == -1
    assert np.array_equal(wider.allocatable[:, :4], state.allocatable)


def test_node_templates_build_the_same_columns_as_records() -> None:
    from ksched.api import Container

    gpu = Node("gpu", labels={"kubernetes.io/hostname": "gpu", "topology.kubernetes.io/zone": "a"},
               taints=[Taint("nvidia.com/gpu", "", "NoSchedule")],
               allocatable={"cpu": 8000, "memory": 64 << 30, "pods": 110, "nvidia.com/gpu": 8},
               images=[ContainerImage(("cuda:12",), 3 << 30)])
    cpu = Node("cpu", labels={"kubernetes.io/hostname": "cpu", "topology.kubernetes.io/zone": "b"},
               allocatable={"cpu": 4000, "memory": 16 << 30, "pods": 110})
    running = Pod("r", node_name="cpu-1", containers=[Container("c", requests={"cpu": 500})])
    fleet = ClusterState.from_node_templates([(gpu, 2), (cpu, 3)], [running])
    assert list(fleet.node_names) == ["gpu-0", "gpu-1", "cpu-0", "cpu-1", "cpu-2"]
    assert fleet.node_index["cpu-2"] == 4 and "cpu-3" not in fleet.node_index
    assert fleet.nodes[1].labels["kubernetes.io/hostname"] == "gpu-1"
    same = ClusterState.from_records(list(fleet.nodes), [running])
    for column in ("allocatable", "requested", "nonzero_requested", "unschedulable",
                   "taint_indptr", "taint_effects", "image_indptr", "image_num_nodes",
                   "tree_order", "pod_node"):
        assert np.array_equal(getattr(fleet, column), getattr(same, column)), column
    hostname = fleet.label_column("kubernetes.io/hostname")
    assert fleet.labels[3, hostname] == fleet.vocab.get("cpu-1")


def test_a_templated_fleet_schedules_like_its_records() -> None:
    import ksched
    from ksched.workloads import default_pod, replicas

    small = Node("s", labels={"kubernetes.io/hostname": "s", "topology.kubernetes.io/zone": "a"},
                 allocatable={"cpu": 1000, "memory": 4 << 30, "pods": 110})
    big = Node("b", labels={"kubernetes.io/hostname": "b", "topology.kubernetes.io/zone": "b"},
               allocatable={"cpu": 4000, "memory": 16 << 30, "pods": 110})
    fleet = ClusterState.from_node_templates([(small, 60), (big, 60)])
    same = ClusterState.from_records(list(fleet.nodes))
    pods = replicas(default_pod("web"), 300)
    a = ksched.schedule_batch(fleet, pods)
    b = ksched.schedule_batch(same, pods)
    assert [p.node for p in a.placements] == [p.node for p in b.placements]
    explained = ksched.explain(fleet, pods[0])
    assert explained.chosen == a.placements[0].node


def test_node_classes_group_nodes_that_differ_only_by_name_and_hostname() -> None:
    def make(name: str, zone: str, taints=()) -> Node:
        return Node(name, labels={"kubernetes.io/hostname": name, "zone": zone}, taints=taints,
                    allocatable={"cpu": 1000 if name < "c" else 2000})

    nodes = [make("a", "z1"), make("b", "z1"), make("c", "z2"),
             make("d", "z1", [Taint("k", "", "NoSchedule")]), make("e", "z1")]
    state = ClusterState.from_records(nodes)
    assert state.node_class.tolist() == [0, 0, 1, 2, 0]
    assert state.class_nodes.tolist() == [0, 2, 3]


# --------------------------------------------------------------------------- binding


def _node(name: str, zone: str = "z1") -> Node:
    return Node(name, labels={"topology.kubernetes.io/zone": zone},
                allocatable={"cpu": 4000, "memory": 8 << 30, "pods": 110,
                             "example.com/fpga": 2})


def _pod(name: str, cpu: int = 500, host_port: int = 0, fpga: int = 0, **kw) -> Pod:
    requests = {"cpu": cpu, "memory": 1 << 30} | ({"example.com/fpga": fpga} if fpga else {})
    ports = [ContainerPort(80, host_port=host_port)] if host_port else []
    return Pod(name, containers=[Container("c", requests=requests, ports=ports)], **kw)


def _same_columns(a: ClusterState, b: ClusterState) -> None:
    assert a.resource_names == b.resource_names and a.port_keys == b.port_keys
    assert [p.key for p in a.pods] == [p.key for p in b.pods]
    assert list(a.pods) == list(b.pods)
    assert a.affinity_pods == b.affinity_pods
    for column in ("pod_node", "requested", "nonzero_requested", "port_count", "allocatable"):
        assert np.array_equal(getattr(a, column), getattr(b, column)), column


def test_with_pods_records_host_ports_the_cluster_had_no_column_for() -> None:
    """The nominated-pods pass adds pods to a copy of the cluster: a host port no bound pod
    used before must be counted, or the next pod asking for it is judged to fit."""
    import ksched
    from ksched.framework.runtime import Framework
    from ksched.profile import default_profile

    state = ClusterState.from_records([_node("a"), _node("b")])
    assert state.port_keys == ()
    added = state.with_pods(added=[(_pod("first", host_port=8080), 0)])
    assert added.port_keys == (("0.0.0.0", "TCP", 8080),)
    assert added.port_count.tolist() == [[1], [0]]
    second = _pod("second", host_port=8080)
    status = Framework(default_profile()).filter_node(added, second, 0)
    assert (status.plugin, status.reasons) == (
        "NodePorts", ("node(s) didn't have free ports for the requested pod ports",))
    assert ksched.schedule_batch(added, [second]).placements[0].node == "b"
    # Removing it frees the port again; the arrays are read-only, the input unchanged.
    removed = added.with_pods(removed=[0])
    assert removed.port_count.tolist() == [[0], [0]]
    assert not added.port_count.flags.writeable and state.port_keys == ()


def test_bind_agrees_with_schedule_batchs_result_state() -> None:
    import ksched

    cluster = ClusterState.from_records([_node("a"), _node("b", "z2"), _node("c")],
                                        [_pod("old", node_name="a")])
    pods = [_pod("web", 1000, host_port=8080), _pod("gpu", fpga=1), _pod("web-2", host_port=8080),
            _pod("sidecar", 200)]
    result = ksched.schedule_batch(cluster, pods)
    assert all(p.scheduled for p in result.placements)
    pairs = [(p.pod, p.node) for p in result.placements]
    _same_columns(cluster.bind(pairs), result.state)
    # Pods carrying their node, and the one-pair form, give the same state.
    bound = [attrs_evolve(p.pod, node_name=p.node) for p in result.placements]
    _same_columns(cluster.bind(bound), result.state)
    one = cluster.bind(pairs[0])
    assert [p.key for p in one.pods] == ["default/old", "default/web"]
    # What is bound is scheduled around: the next pod asking for 8080 avoids both nodes.
    after = cluster.bind(pairs)
    last = ksched.schedule_batch(after, [_pod("web-3", host_port=8080)]).placements[0]
    assert last.node not in {p.node for p in result.placements if p.pod.name.startswith("web")}


def attrs_evolve(pod: Pod, **changes) -> Pod:
    import attrs

    return attrs.evolve(pod, **changes)


def test_unbind_gives_back_what_bind_took() -> None:
    cluster = ClusterState.from_records([_node("a"), _node("b")],
                                        [_pod("old", 700, host_port=9000, node_name="b")])
    bound = cluster.bind([(_pod("x", 300, host_port=8080), "a"), (_pod("y", fpga=2), "b")])
    back = bound.unbind(["default/x", "default/y"])
    assert [p.key for p in back.pods] == ["default/old"]
    columns = [back.resource_names.index(r) for r in cluster.resource_names]
    assert np.array_equal(back.requested[:, columns], cluster.requested)
    assert np.array_equal(back.nonzero_requested, cluster.nonzero_requested)
    assert back.port_count[:, back.port_keys.index(("0.0.0.0", "TCP", 8080))].tolist() == [0, 0]
    assert back.port_count[:, back.port_keys.index(("0.0.0.0", "TCP", 9000))].tolist() == [0, 1]
    # By key, by pod, one or many; the states before are unchanged.
    assert [p.key for p in bound.unbind(_pod("x")).pods] == ["default/old", "default/y"]
    assert [p.key for p in cluster.unbind("old").pods] == []
    assert [p.key for p in bound.pods] == ["default/old", "default/x", "default/y"]
    assert cluster.unbind([]) is cluster
    for array in (back.requested, back.pod_node, back.port_count):
        assert not array.flags.writeable


@pytest.mark.parametrize("call, message", [
    (lambda s: s.bind([(_pod("x"), "nowhere")]),
     'pod default/x: spec.nodeName: node "nowhere" not found'),
    (lambda s: s.bind([_pod("x")]),
     "pod default/x: spec.nodeName: Required value: a pod to bind needs spec.nodeName"),
    (lambda s: s.bind([(_pod("old"), "a")]),
     'pod default/old: pod old is already assigned to node "b"'),
    (lambda s: s.bind([(_pod("x"), "a"), (_pod("x"), "b")]),
     'pod default/x: metadata.name: Duplicate value: "x"'),
    (lambda s: s.bind([(_pod("x", node_name="b"), "a")]),
     'pod default/x: pod x is already assigned to node "b"'),
    (lambda s: s.bind([(_pod("x", deleting=True), "a")]),
     "pod default/x: pod x is being deleted, cannot be assigned to a host"),
    (lambda s: s.bind([(_pod("x", phase="Succeeded"), "a")]),
     "pod default/x: status.phase: a Succeeded pod holds no node and cannot be bound"),
    (lambda s: s.unbind(["default/nobody"]), 'pod default/nobody: pods "nobody" not found'),
    (lambda s: s.unbind(["other/old"]), 'pod other/old: pods "old" not found'),
    (lambda s: s.unbind(["old", "default/old"]),
     'pod default/old: metadata.name: Duplicate value: "old"'),
])
def test_bind_and_unbind_refuse_clearly(call, message: str) -> None:
    from ksched.errors import InvalidObjectError

    state = ClusterState.from_records([_node("a"), _node("b")], [_pod("old", node_name="b")])
    with pytest.raises(InvalidObjectError) as info:
        call(state)
    assert str(info.value).startswith(message)
    assert [p.key for p in state.pods] == ["default/old"]


def test_bind_on_a_templated_fleet() -> None:
    fleet = ClusterState.from_node_templates([(_node("m"), 3)])
    bound = fleet.bind([(_pod("web", 3000), "m-1")])
    assert bound.requested[:, 0].tolist() == [0, 3000, 0]
    assert [p.node_name for p in bound.pods] == ["m-1"]
    assert bound.unbind("web").requested[:, 0].tolist() == [0, 0, 0]
    assert fleet.requested[:, 0].tolist() == [0, 0, 0]


def test_widened_for_reads_pods_given_as_a_generator_whole() -> None:
    """Replicas sharing their containers are read once; an overhead is read from every pod,
    also when the pods come as a one-pass iterable."""
    state = ClusterState.from_records([Node("n", allocatable={"cpu": 4000, "pods": 10})])
    shared = (Container("c", "img", requests={"cpu": 100, "example.com/fpga": 1}),)
    pods = [Pod("a", containers=shared),
            Pod("b", containers=shared, overhead={"hugepages-2Mi": 2 << 20},
                init_containers=(Container("s", "img", restart_policy="Always",
                                           ports=[ContainerPort(80, 8080)]),))]
    widened = state.widened_for(p for p in pods)
    assert {"example.com/fpga", "hugepages-2Mi"} <= set(widened.resource_names)
    assert widened.port_keys == (("0.0.0.0", "TCP", 8080),)

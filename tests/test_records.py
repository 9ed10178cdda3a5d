"""Records that check themselves: field types checked at construction (``attrs.evolve``
included), quantity strings converted where users write them, integers kept in scheduler
units, and what records leave alone on purpose (label syntax, which plugins judge)."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import ksched
from ksched import (
    Container,
    ContainerPort,
    InvalidObjectError,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    Toleration,
)
from ksched.api import FrozenDict, LabelSelector, PodDisruptionBudget, ResourceList

GI = 1024**3


def test_quantity_strings_where_users_write_them() -> None:
    node = Node("n1", allocatable={"cpu": "8", "memory": "32Gi", "pods": "110"})
    assert node.allocatable == {"cpu": 8000, "memory": 32 * GI, "pods": 110}
    c = Container("c", requests={"cpu": "250m", "memory": "1.5Gi", "example.com/gpu": "1"})
    assert c.requests == {"cpu": 250, "memory": 3 * GI // 2, "example.com/gpu": 1}
    p = Pod("p", overhead={"cpu": "100m"}, pod_requests={"memory": "1Gi"})
    assert (p.overhead, p.pod_requests) == ({"cpu": 100}, {"memory": GI})


def test_integers_keep_their_meaning() -> None:
    """cpu in milli-cores, everything else in units, as existing code builds records."""
    node = Node("n1", allocatable={"cpu": 4000, "memory": 8 * GI, "pods": 110})
    assert node.allocatable == {"cpu": 4000, "memory": 8 * GI, "pods": 110}
    assert Container("c", requests={"cpu": 4000}) == Container("c", requests={"cpu": "4"})


def test_a_checked_list_is_not_checked_again() -> None:
    node = Node("n1", allocatable={"cpu": "1"})
    assert type(node.allocatable) is ResourceList
    assert attrs.evolve(node, name="n2").allocatable is node.allocatable
    assert isinstance(node.allocatable, FrozenDict)


def test_wrong_types_refused_at_construction() -> None:
    with pytest.raises(InvalidObjectError) as info:
        Node("n1", unschedulable="false")
    assert str(info.value) == "node n1: unschedulable: expected a boolean, got a string"
    assert isinstance(info.value, ksched.KschedError)
    with pytest.raises(InvalidObjectError, match="^pod default/p: priority: expected an integer"):
        Pod("p", priority="10")


def test_evolve_checks_too() -> None:
    pod = Pod("p", containers=[Container("c")])
    with pytest.raises(InvalidObjectError, match="^pod default/p: ready: expected a boolean"):
        attrs.evolve(pod, ready=1)
    with pytest.raises(InvalidObjectError, match=r"^pod default/p: containers\[0\]: expected "
                                                 r"a Container, got a string"):
        attrs.evolve(pod, containers=["c"])


def test_with_status_copies_without_checks() -> None:
    pod = Pod("p", containers=[Container("c", requests={"cpu": "1"})])
    copy = pod.with_status(3.0, "n1")
    assert copy == attrs.evolve(pod, start_time=3.0, nominated_node_name="n1")
    assert copy.containers is pod.containers


def test_sequences_become_tuples_and_strings_are_not_sequences() -> None:
    pod = Pod("p", scheduling_gates=["a", "b"], tolerations=[Toleration("k", "Exists")])
    assert pod.scheduling_gates == ("a", "b") and isinstance(pod.tolerations, tuple)
    with pytest.raises(InvalidObjectError,
                       match="^pod default/p: scheduling_gates: expected a list, got a string"):
        Pod("p", scheduling_gates="ab")
    assert NodeAffinity(required=[NodeSelectorTerm()]).required == (NodeSelectorTerm(),)
    assert NodeAffinity().required is None


def test_enums_are_checked_in_the_api_servers_words() -> None:
    with pytest.raises(InvalidObjectError) as info:
        Taint("k", "v", "NoScheduel")
    assert str(info.value) == ('taint: effect: Unsupported value: "NoScheduel": supported '
                               'values: "NoSchedule", "PreferNoSchedule", "NoExecute"')
    assert ContainerPort(53, protocol="UDP").protocol == "UDP"
    assert Toleration(operator="Exists").tolerates(Taint("any", "x", "NoExecute"))


def test_label_syntax_is_left_to_the_plugins() -> None:
    """NodeAffinity treats an invalid requirement as matching nothing; records keep it."""
    req = NodeSelectorRequirement("bad key!", "Gt", ["-5", "x"])
    assert req.values == ("-5", "x")
    assert LabelSelector({"not a key": "not a value!"}).match_labels == {
        "not a key": "not a value!"}


def test_records_keep_equal_and_hashable() -> None:
    a = Pod("p", labels={"app": "web"}, containers=[Container("c", requests={"cpu": "1"})])
    b = Pod("p", labels={"app": "web"}, containers=[Container("c", requests={"cpu": 1000})])
    assert a == b and hash(a) == hash(b)


def test_pdb_budgets_take_ints_or_percentages() -> None:
    assert PodDisruptionBudget("b", min_available="50%").min_available == "50%"
    assert PodDisruptionBudget("b", max_unavailable=1).max_unavailable == 1
    with pytest.raises(InvalidObjectError, match="min_available: expected an integer, a "
                                                 "percentage or null, got a number"):
        PodDisruptionBudget("b", min_available=0.5)


def test_cluster_state_from_string_records() -> None:
    nodes = [Node("n1", allocatable={"cpu": "2", "memory": "4Gi", "pods": "10"})]
    pods = [Pod("a", containers=[Container("c", requests={"cpu": "1500m"})])]
    result = ksched.schedule_batch(ksched.ClusterState.from_records(nodes), pods)
    assert [p.node for p in result.placements] == ["n1"]
    second = [Pod("b", containers=[Container("c", requests={"cpu": "1"})])]
    cluster = ksched.ClusterState.from_records(nodes, [attrs.evolve(pods[0], node_name="n1")])
    assert [p.node for p in ksched.schedule_batch(cluster, second).placements] == [None]


def test_every_record_kind_reads_its_manifest_through_the_registered_reader() -> None:
    """``from_manifest`` of each record kind runs the reader :mod:`ksched.api` registered for
    it (the records cannot import the readers, which build records)."""
    from ksched.api import (
        MANIFEST_READERS,
        CSIDriver,
        CSINode,
        CSIStorageCapacity,
        Namespace,
        PersistentVolume,
        PersistentVolumeClaim,
        PriorityClass,
        StorageClass,
        Workload,
    )

    kinds = {Pod, Node, Namespace, Workload, PriorityClass, PodDisruptionBudget,
             PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver,
             CSIStorageCapacity}
    assert set(MANIFEST_READERS) == kinds
    assert CSIDriver.from_manifest({"metadata": {"name": "d.example.com"}}) == CSIDriver(
        "d.example.com")
    namespace = Namespace.from_manifest({"metadata": {"name": "team-a"}})
    assert namespace.labels == {"kubernetes.io/metadata.name": "team-a"}
    with pytest.raises(InvalidObjectError, match="metadata.name"):
        Namespace.from_manifest({"metadata": {"name": "Team_A"}})


@given(st.dictionaries(st.sampled_from("abc"), st.sampled_from("xyz"), max_size=3),
       st.dictionaries(st.sampled_from("abc"), st.sampled_from("xyz"), max_size=2),
       st.lists(st.tuples(st.sampled_from("abc"),
                          st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist")),
                          st.lists(st.sampled_from("xyz"), max_size=2)), max_size=3))
def test_a_label_selector_matches_as_the_selector_built_from_it(
        labels: dict[str, str], match_labels: dict[str, str],
        expressions: list[tuple[str, str, list[str]]]) -> None:
    """``LabelSelector.matches`` and ``labels.Selector`` (``LabelSelectorAsSelector``) share
    one matching rule: they agree on every valid selector."""
    from ksched.api import LabelSelectorRequirement
    from ksched.labels import Selector, label_selector_error

    selector = LabelSelector(match_labels, [LabelSelectorRequirement(k, op, values)
                                            for k, op, values in expressions])
    assume(label_selector_error(selector) is None)
    assert selector.matches(labels) == Selector.from_label_selector(selector).matches(labels)


def test_renamed_copies_every_field_but_the_name() -> None:
    from ksched import Container, Pod

    pod = Pod("web", namespace="shop", labels={"app": "web"},
              containers=[Container("c", requests={"cpu": "1"})], priority=7)
    copy = pod.renamed("web-3")
    assert copy.name == "web-3" and pod.name == "web"
    assert attrs.evolve(copy, name="web") == pod
    assert copy.containers is pod.containers  # shared, not rebuilt
    with pytest.raises(ksched.ArgumentError, match="name: expected a string, got int"):
        pod.renamed(3)
    with pytest.raises(ksched.ArgumentError, match="node_name: expected a string, got NoneType"):
        pod.bound_to(None)
    bound = pod.bound_to("n1")
    assert (bound.node_name, pod.node_name) == ("n1", "")
    assert attrs.evolve(bound, node_name="") == pod

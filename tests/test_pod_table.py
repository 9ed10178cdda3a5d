"""Pending pods as columns (:class:`ksched.pod_table.PodTable`): spec rows shared by replicas,
pods made on access, the same refusals as plain pod lists, and the same placements."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ksched
from ksched import ClusterState, Container, Node, Pod, schedule_batch
from ksched.api import Volume
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.inputs import as_pod_table, as_pods, check_not_running
from ksched.pod_table import PodTable
from tests.refusals import refused

GI = 1024**3


def web(name: str, cpu: int = 100, **kw) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu})], **kw)


def nodes(count: int, cpu: int = 1000) -> list[Node]:
    return [Node(f"n{i}", labels={"topology.kubernetes.io/zone": f"z{i % 2}"},
                 allocatable={"cpu": cpu, "memory": 8 * GI, "pods": 110}) for i in range(count)]


def outcome(result: ksched.Result) -> list[tuple[str, str | None, str]]:
    return [(p.pod.key, p.node, p.reason) for p in result.placements]


def test_replicas_share_a_spec_row_and_identity_fields_do_not_split_rows() -> None:
    template = web("t")
    pods = [attrs.evolve(template, name=f"r{i}", uid=f"u{i}", creation_time=float(i))
            for i in range(5)]
    pods += [web("alone", cpu=200), web("equal")]  # built apart, equal by value to the template
    pods += [attrs.evolve(template, name="labelled", labels={"app": "x"})]
    table = PodTable.of(pods)
    assert table.spec.tolist() == [0, 0, 0, 0, 0, 1, 0, 2]
    assert table.specs == (pods[0], pods[5], pods[7])
    assert table.names == tuple(p.name for p in pods)
    assert table.uids[:2] == ("u0", "u1") and table.creation_times[4] == 4.0
    assert list(table) == pods and table == pods and pods == table and table == tuple(pods)
    assert PodTable.of(table) is table and as_pod_table(table) is table
    assert as_pods(table) == tuple(pods) and type(as_pods(table)) is tuple
    assert not table.spec.flags.writeable


def test_rows_sharing_containers_interleaved_beyond_the_latest_rows_are_found_by_value(
) -> None:
    """Twelve label sets on one containers object, interleaved: more than the rows a pod is
    compared with by identity, so the others are found by value; equal specs built apart
    join them."""
    template = web("t")
    shapes = [attrs.evolve(template, labels={"shard": str(k)}) for k in range(12)]
    pods = [attrs.evolve(shapes[i % 12], name=f"p{i}") for i in range(36)]
    pods.append(web("apart", labels={"shard": "3"}))
    table = PodTable.of(pods)
    assert table.spec.tolist() == [i % 12 for i in range(36)] + [3]
    assert [p.labels["shard"] for p in table.specs] == [str(k) for k in range(12)]


def test_pods_with_claims_get_a_row_each() -> None:
    claim = Volume("data", "persistentVolumeClaim", claim_name="c")
    template = web("t", volumes=[claim])
    table = PodTable.of([attrs.evolve(template, name=f"s{i}") for i in range(3)])
    assert table.spec.tolist() == [0, 1, 2]


def test_slices_and_take_are_tables_of_those_pods() -> None:
    pods = [web(f"a{i}") for i in range(4)] + [web(f"b{i}", cpu=300) for i in range(3)]
    table = PodTable.of(pods)
    part = table[3:6]
    assert isinstance(part, PodTable) and list(part) == pods[3:6]
    assert part.spec.tolist() == [0, 1, 1] and part.specs == (pods[3], pods[4])
    assert list(table.take([6, 0])) == [pods[6], pods[0]]
    assert table[-1] == pods[-1] and len(table[5:2]) == 0
    with pytest.raises(IndexError):
        table[7]


def test_from_columns_makes_the_pods_on_access() -> None:
    a, b = web("tmpl-a", namespace="ns1"), web("tmpl-b", cpu=500)
    unused = web("unused", cpu=900)
    table = PodTable.from_columns([unused, a, b], [2, 1, 2, 1], ["x0", "x1", "x2", "x3"],
                                  uids=["u0", "u1", "u2", "u3"],
                                  creation_times=[None, 1.0, None, 3.0])
    expected = [attrs.evolve(b, name="x0", uid="u0"),
                attrs.evolve(a, name="x1", uid="u1", creation_time=1.0),
                attrs.evolve(b, name="x2", uid="u2"),
                attrs.evolve(a, name="x3", uid="u3", creation_time=3.0)]
    assert table.spec.tolist() == [0, 1, 0, 1]  # rows numbered by first use, unused dropped
    assert table.specs == (expected[0], expected[1])
    assert table.namespace_column() == ["default", "ns1", "default", "ns1"]
    assert table[3] == expected[3] and list(table) == expected
    assert table.pods(1, 3) == expected[1:3]


@pytest.mark.parametrize(("args", "message"), [
    (([web("t")], [0, 1], ["a", "b"]), "spec: rows must be in [0, 1)"),
    (([web("t")], [0], ["a", "b"]), "names: expected 1 items (one per pod), got 2"),
    (([web("t")], [0], [7]), "names[0]: expected a string, got int"),
    ((["pod"], [0], ["a"]), "specs[0]: expected a Pod, got str"),
    (([web("t")], [[0]], ["a"]), "spec: expected a 1-d array of spec rows (integers)"),
])
def test_from_columns_refuses_bad_columns(args, message: str) -> None:
    with pytest.raises(ArgumentError) as err:
        PodTable.from_columns(*args)
    assert str(err.value) == message


_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
              "characters, '-' or '.', and must start and end with an alphanumeric character")


@pytest.mark.parametrize(("names", "message"), [
    (["ok", ""], "names[1]: pod default/<unnamed>: metadata.name: Required value: name or "
                 "generateName is required"),
    (["Web-1"], f'names[0]: pod default/Web-1: metadata.name: Invalid value: "Web-1": '
                f"{_SUBDOMAIN}"),
    (["a", "web_1"], 'names[1]: pod default/web_1: metadata.name: Invalid value: "web_1"'),
    (["web-"], 'names[0]: pod default/web-: metadata.name: Invalid value: "web-"'),
    (["a..b"], 'names[0]: pod default/a..b: metadata.name: Invalid value: "a..b"'),
    (["a.-b"], 'names[0]: pod default/a.-b: metadata.name: Invalid value: "a.-b"'),
    (["a\nb"], 'metadata.name: Invalid value: "a\\nb"'),
    (["wéb"], 'names[0]: pod default/wéb: metadata.name: Invalid value: "wéb"'),
    (["a" * 254], "metadata.name: Invalid value: \"" + "a" * 254 + "\": must be no more than "
                  "253 characters"),
])
def test_from_columns_refuses_names_the_api_server_refuses(names, message: str) -> None:
    err = refused(PodTable.from_columns, [web("t")], [0] * len(names), names,
                  error=InvalidObjectError, match=message)
    assert str(err).startswith("names[")


def test_from_columns_takes_every_valid_pod_name() -> None:
    names = ["a", "0", "a-b", "a--b", "a.b", "web-7f.x-9", "a" * 253]
    assert list(PodTable.from_columns([web("t")], [0] * len(names), names).names) == names


def test_of_refuses_what_is_no_pod() -> None:
    with pytest.raises(ArgumentError, match=r"pods\[1\]: expected a Pod, got dict"):
        PodTable.of([web("a"), {"kind": "Pod"}])
    with pytest.raises(ArgumentError):
        PodTable.of("pods.yaml")
    (pod,) = as_pod_table([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "m"},
                            "spec": {"containers": [{"name": "c"}]}}])
    assert (pod.name, [c.name for c in pod.containers]) == ("m", ["c"])


def _message(call) -> str:
    with pytest.raises(InvalidObjectError) as err:
        call()
    return str(err.value)


def test_duplicate_keys_are_refused_as_as_pods_refuses_them() -> None:
    pods = [web("a"), web("b"), web("a", namespace="other"), web("b", cpu=300), web("a")]
    expected = _message(lambda: as_pods(pods))
    assert "Duplicate value" in expected
    assert _message(lambda: PodTable.of(pods)) == expected
    assert _message(lambda: PodTable.from_columns([web("t")], [0, 0], ["x", "x"])) == \
        _message(lambda: as_pods([web("x", cpu=100), web("x")]))


def test_a_pending_pod_already_bound_is_refused_with_the_list_message() -> None:
    bound = [attrs.evolve(web(f"p{i}"), node_name="n0") for i in (3, 1, 2)]
    cluster = ClusterState.from_records(nodes(2), bound)
    pending = [web("p2"), web("q"), web("p1")]
    expected = _message(lambda: check_not_running(pending, cluster))
    assert "p1" in expected and "already bound" in expected
    assert _message(lambda: check_not_running(PodTable.of(pending), cluster)) == expected
    assert _message(lambda: schedule_batch(cluster, PodTable.of(pending))) == expected
    check_not_running(PodTable.of([web("q")]), cluster)


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_tables_place_as_pod_lists_and_the_framework_do(data: st.DataObject) -> None:
    """Drawn clusters (tests/strategies.py) and batches mixing replicas of a few drawn pods:
    a table made from columns (pods made on access), the plain list, and the object-level
    framework place every pod alike and leave the same state."""
    from tests.strategies import placement_clusters

    cluster, pod = data.draw(placement_clusters())
    templates = [pod, attrs.evolve(pod, labels={**pod.labels, "extra": "1"}),
                 attrs.evolve(pod, containers=[Container("c", requests={"cpu": 700})])]
    rows = data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=12))
    names = [f"r{i}" for i in range(len(rows))]
    listed = [attrs.evolve(templates[r], name=n) for r, n in zip(rows, names)]
    table = PodTable.from_columns(templates, rows, names,
                                  uids=[pod.uid] * len(rows),
                                  creation_times=[pod.creation_time] * len(rows))
    assert table == listed
    percentage = data.draw(st.sampled_from([0, 50, 100]))
    results = [schedule_batch(cluster, source, percentage_of_nodes_to_score=percentage, **kw)
               for source, kw in ((table, {}), (listed, {}), (listed, {"fast_path": False}))]
    first = results[0]
    for other in results[1:]:
        assert outcome(first) == outcome(other)
        assert np.array_equal(first.state.requested, other.state.requested)
        assert list(first.state.pods) == list(other.state.pods)
        assert np.array_equal(first.state.pod_node, other.state.pod_node)
        assert first.state.affinity_pods == other.state.affinity_pods
    assert first.nodes_evaluated == results[1].nodes_evaluated


def test_load_pods_returns_a_table() -> None:
    manifests = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                  "spec": {"containers": [{"name": "c", "image": "x"}]}} for i in range(3)]
    table = ksched.load_pods(manifests)
    assert isinstance(table, PodTable) and len(table.specs) == 1
    assert table == ksched.read_objects(manifests).pending_pods

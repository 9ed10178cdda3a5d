"""One way in (``ksched.inputs``): every form of pods and clusters a user may pass gives the
same records and the same placements; duplicates are refused."""

from __future__ import annotations

import copy
import inspect
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import ksched
from ksched import ClusterState, Container, InvalidObjectError, Node, Pod, inputs, schedule_batch
from ksched.inputs import as_cluster, as_pod, as_pods, is_snake_case

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import ApiClient  # noqa: E402

GI = 1024**3


def pod_manifest(name: str, cpu: str = "500m", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "team-a",
                         "labels": {"app": "web", "my_label": "under_score"},
                         "creationTimestamp": "2024-05-01T10:00:00Z"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {
                "cpu": cpu, "memory": "1Gi"}}}], **spec}}


MANIFESTS = [
    pod_manifest("a", "1500m"),
    pod_manifest("b", nodeSelector={"disk_type": "ssd"}),
    pod_manifest("c", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu",
                                    "effect": "NoSchedule"}]),
    pod_manifest("d", "2"),
    {**pod_manifest("e"), "spec": {
        "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}],
                        "resources": {"requests": {"cpu": "100m"}}}],
        "initContainers": [{"name": "setup", "resources": {"requests": {"cpu": "3"}}}],
        "priorityClassName": "", "schedulerName": "default-scheduler"}},
    pod_manifest("f", "250m", affinity={"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [
                {"key": "disk_type", "operator": "In", "values": ["ssd"]}]}}]}}),
]


def cluster() -> ClusterState:
    def node(name: str, cpu: int, **kw: Any) -> Node:
        return Node(name, allocatable={"cpu": cpu, "memory": 16 * GI, "pods": 110}, **kw)
    return ClusterState.from_records([
        node("n1", 4000, labels={"disk_type": "ssd"}),
        node("n2", 3000, taints=[ksched.Taint("dedicated", "gpu")]),
        node("n3", 8000), node("n4", 2000, labels={"disk_type": "hdd"})])


def client_pod(manifest: dict[str, Any]) -> Any:
    """The manifest as the kubernetes client deserialises it (a ``V1Pod``)."""
    class Response:
        data = json.dumps(manifest)

    client = ApiClient()
    if "content_type" in inspect.signature(client.deserialize).parameters:  # newer clients
        return client.deserialize(Response.data, "V1Pod", "application/json")
    return client.deserialize(Response(), "V1Pod")


def placements(pods: Any, **kwargs: Any) -> list[tuple[str, str | None]]:
    result = schedule_batch(cluster(), pods, **kwargs)
    return [(p.pod.key, p.node) for p in result.placements]


EXPECTED = placements([Pod.from_manifest(m) for m in MANIFESTS])


def test_the_expected_placements_use_every_node_rule() -> None:
    assert EXPECTED == [("team-a/a", "n3"), ("team-a/b", "n1"), ("team-a/c", "n2"),
                        ("team-a/d", "n3"), ("team-a/e", "n3"), ("team-a/f", "n1")]


def _generator() -> Iterator[dict[str, Any]]:
    yield from copy.deepcopy(MANIFESTS)


FORMS = {
    "records tuple": lambda tmp: tuple(Pod.from_manifest(m) for m in MANIFESTS),
    "records list": lambda tmp: [Pod.from_manifest(m) for m in MANIFESTS],
    "camelCase dicts": lambda tmp: copy.deepcopy(MANIFESTS),
    "snake_case dicts": lambda tmp: [client_pod(m).to_dict() for m in MANIFESTS],
    "client objects": lambda tmp: [client_pod(m) for m in MANIFESTS],
    "client V1PodList": lambda tmp: kubernetes.client.V1PodList(
        items=[client_pod(m) for m in MANIFESTS]),
    "PodList dict": lambda tmp: {"apiVersion": "v1", "kind": "PodList", "items": [
        {k: v for k, v in m.items() if k != "kind"} for m in MANIFESTS]},
    "v1 List dict": lambda tmp: {"apiVersion": "v1", "kind": "List", "items": MANIFESTS},
    "generator": lambda tmp: _generator(),
    "mixed": lambda tmp: [Pod.from_manifest(MANIFESTS[0]), MANIFESTS[1],
                          client_pod(MANIFESTS[2]), client_pod(MANIFESTS[3]).to_dict(),
                          *MANIFESTS[4:]],
    "YAML path": lambda tmp: _write(tmp / "pods.yaml", yaml.safe_dump_all(MANIFESTS)),
    "JSON path": lambda tmp: _write(tmp / "pods.json", json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": MANIFESTS})),
    "directory": lambda tmp: _directory(tmp),
    "list of paths": lambda tmp: [_write(tmp / f"{i}.json", json.dumps(m))
                                  for i, m in enumerate(MANIFESTS)],
}


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def _directory(tmp: Path) -> Path:
    for i, m in enumerate(MANIFESTS):
        (tmp / f"{i:02d}-pod.yaml").write_text(yaml.safe_dump(m))
    return tmp


@pytest.mark.parametrize("form", FORMS)
def test_every_accepted_form_gives_identical_placements(form: str, tmp_path: Path) -> None:
    source = FORMS[form](tmp_path)
    before = copy.deepcopy(source) if isinstance(source, list | dict) else None
    assert placements(source) == EXPECTED
    assert placements(FORMS[form](tmp_path), fast_path=False) == EXPECTED
    if before is not None:
        assert source == before  # inputs are never mutated


@pytest.mark.parametrize("form", ["camelCase dicts", "snake_case dicts", "client objects",
                                  "client V1PodList", "mixed", "records list", "YAML path"])
def test_every_form_gives_the_same_records(form: str, tmp_path: Path) -> None:
    records = tuple(Pod.from_manifest(m) for m in MANIFESTS)
    if form == "YAML path":  # read as load_pods reads it: through Priority admission
        records = ksched.admit_priorities(records, ())
    assert as_pods(FORMS[form](tmp_path)) == records


def test_a_single_pod_in_each_form() -> None:
    manifest = MANIFESTS[1]
    record = Pod.from_manifest(manifest)
    for single in (record, manifest, client_pod(manifest), client_pod(manifest).to_dict()):
        assert as_pods(single) == (record,)
        assert placements(single) == [("team-a/b", "n1")]
        assert ksched.explain(cluster(), single).chosen == "n1"


def test_snake_case_keeps_free_form_keys() -> None:
    """Field names are renamed; label keys, nodeSelector keys and resource names are not."""
    snake = client_pod(MANIFESTS[1]).to_dict()
    assert "node_selector" in snake["spec"] and is_snake_case(snake)
    pod = as_pod(snake)
    assert pod.labels == {"app": "web", "my_label": "under_score"}
    assert pod.node_selector == {"disk_type": "ssd"}
    assert pod.creation_time == Pod.from_manifest(MANIFESTS[1]).creation_time is not None
    assert pod == Pod.from_manifest(MANIFESTS[1])


def test_snake_case_by_hand_and_mixed_keys() -> None:
    hand = {"metadata": {"name": "x", "labels": {"a_b": "c"}},
            "spec": {"scheduler_name": "other", "nodeName": "n2",
                     "init_containers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
                     "containers": [{"name": "c", "image_pull_policy": "Always"}]}}
    pod = as_pod(hand)
    assert (pod.scheduler_name, pod.node_name, pod.labels) == ("other", "n2", {"a_b": "c"})
    assert pod.init_containers[0].requests == {"cpu": 2000}


def test_camel_case_with_underscored_labels_is_not_snake_case() -> None:
    assert not is_snake_case(MANIFESTS[1])
    assert not is_snake_case({"metadata": {"name": "x", "annotations": {"a_b": "c"}},
                              "spec": {"nodeSelector": {"x_y": "z"}, "containers": []}})


def test_snake_case_without_the_client_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    snake = client_pod(MANIFESTS[0]).to_dict()
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    monkeypatch.setitem(sys.modules, "kubernetes.client", None)
    with pytest.raises(InvalidObjectError) as info:
        as_pods([snake])
    assert str(info.value).startswith(
        "pod team-a/a: a snake_case dict (the kubernetes client's to_dict()) needs the "
        "kubernetes package to be read: pip install kubernetes")
    assert as_pods([MANIFESTS[0]])[0].name == "a"  # the camelCase form needs no client


def test_records_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tuple of Pod records is taken as is: no per-pod conversion."""
    pods = tuple(Pod(f"p{i}", containers=[Container("c", requests={"cpu": 10})])
                 for i in range(300))

    def no_conversion(*args: Any) -> Any:
        raise AssertionError("converted a Pod record")

    monkeypatch.setattr(inputs, "as_pod", no_conversion)
    monkeypatch.setattr(inputs, "_pods_of_item", no_conversion)
    assert as_pods(pods) is pods
    assert len(schedule_batch(cluster(), pods).scheduled) == 300


def test_a_path_gives_the_pending_pods_only(tmp_path: Path) -> None:
    bound = {**pod_manifest("running"), "spec": {**MANIFESTS[0]["spec"], "nodeName": "n1"}}
    done = {**pod_manifest("done"), "status": {"phase": "Succeeded"}}
    node = {"kind": "Node", "metadata": {"name": "n9"}}
    path = _write(tmp_path / "all.yaml", yaml.safe_dump_all([bound, MANIFESTS[0], done, node]))
    assert [p.name for p in as_pods(path)] == ["a"]
    assert as_pods(path) == ksched.load_pods(path)


def test_clusters_in_every_form(tmp_path: Path) -> None:
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
              "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}
             for i in range(3)]
    running = {**pod_manifest("r"), "spec": {**MANIFESTS[0]["spec"], "nodeName": "n0"}}
    path = _write(tmp_path / "cluster.json", json.dumps({"kind": "List",
                                                         "items": nodes + [running]}))
    expected = placements(MANIFESTS[:1])  # on the 4-node cluster
    state = ClusterState.from_records([Node.from_manifest(n) for n in nodes],
                                      [Pod.from_manifest(running)])
    assert as_cluster(state) is state
    for source in (path, Path(path), nodes + [running], [path]):
        got = as_cluster(source)
        assert list(got.node_names) == ["n0", "n1", "n2"]
        assert [p.key for p in got.pods] == ["team-a/r"]
        result = schedule_batch(source, [MANIFESTS[0]])
        assert result.placements[0].node == "n1"  # n0 holds the running pod
    assert expected[0][1] == "n3"


def test_two_pending_pods_with_one_name_are_refused() -> None:
    pods = [Pod("web-1"), Pod("web-2"), Pod("web-1")]
    with pytest.raises(InvalidObjectError) as info:
        schedule_batch(cluster(), pods)
    assert str(info.value) == 'pod default/web-1: metadata.name: Duplicate value: "web-1"'
    # One name in two namespaces is two pods.
    ok = schedule_batch(cluster(), [Pod("web-1"), Pod("web-1", namespace="other")])
    assert len(ok.placements) == 2


def test_a_pending_pod_already_running_is_refused() -> None:
    state = cluster().bind([(Pod("web-1"), "n2")])
    with pytest.raises(InvalidObjectError) as info:
        schedule_batch(state, [Pod("web-0"), Pod("web-1")])
    assert str(info.value) == ('pod default/web-1: metadata.name: Duplicate value: "web-1": '
                               'already bound to node "n2"')
    with pytest.raises(InvalidObjectError, match="already bound"):
        ksched.explain(state, Pod("web-1"))
    # A batch's result state holds its placed pods: scheduling them again is refused too.
    after = schedule_batch(state, [Pod("web-2")]).state
    with pytest.raises(InvalidObjectError, match='Duplicate value: "web-2"'):
        schedule_batch(after, [Pod("web-2")])


def test_two_running_pods_with_one_name_are_refused() -> None:
    nodes = [Node("n1"), Node("n2")]
    with pytest.raises(InvalidObjectError) as info:
        ClusterState.from_records(nodes, [Pod("db", node_name="n1"), Pod("db", node_name="n2")])
    assert str(info.value) == 'pod default/db: metadata.name: Duplicate value: "db"'
    with pytest.raises(InvalidObjectError, match='Duplicate value: "db"'):
        ksched.load_cluster([{"kind": "Node", "metadata": {"name": "n1"}}] + [
            {"kind": "Pod", "metadata": {"name": "db"},
             "spec": {"nodeName": "n1", "containers": [{"name": "c"}]}}] * 2)
    # A finished pod holds no node and does not count.
    state = ClusterState.from_records(nodes, [Pod("db", node_name="n1", phase="Succeeded"),
                                              Pod("db", node_name="n2")])
    assert [p.node_name for p in state.pods] == ["n2"]


def _builders() -> list[Any]:
    from ksched.workloads import WORKLOADS

    return list({w.build.__name__: w.build for w in WORKLOADS.values()}.values())


@pytest.mark.parametrize("build", _builders(), ids=lambda b: b.__name__)
def test_generated_workloads_have_unique_names(build: Any) -> None:
    state, pods = build(60, 40, 50)
    keys = [p.key for p in state.pods] + [p.key for p in pods]
    assert len(keys) == len(set(keys))


def test_load_pods_refuses_two_pending_pods_with_one_name(tmp_path: Path) -> None:
    path = _write(tmp_path / "pods.yaml", yaml.safe_dump_all([MANIFESTS[0], MANIFESTS[1],
                                                             MANIFESTS[0]]))
    with pytest.raises(InvalidObjectError) as info:
        ksched.load_pods(path)
    assert str(info.value) == 'pod team-a/a: metadata.name: Duplicate value: "a"'

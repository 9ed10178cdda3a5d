"""Reading Kubernetes objects from every accepted source: files, Lists, YAML streams,
directories, gzip, dicts, lists and kubernetes-client model objects."""

from __future__ import annotations

import copy
import datetime
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import ksched
from ksched import InvalidObjectError
from ksched.io import to_wire

GI, MI = 1024**3, 1024**2


def node(name: str, cpu: str = "4", memory: str = "8Gi", kind: bool = True) -> dict[str, Any]:
    out = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
           "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}
    if not kind:
        del out["apiVersion"], out["kind"]
    return out


def pod(name: str, node_name: str = "", cpu: str = "500m", namespace: str = "default",
        kind: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx",
                                            "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    out = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": namespace}, "spec": spec}
    if not kind:
        del out["apiVersion"], out["kind"]
    return out


OBJECTS = [node("n1"), node("n2", cpu="2"), pod("run-1", "n1", cpu="1"), pod("pend-1"),
           pod("pend-2", namespace="other")]


def check_standard(source: Any) -> None:
    """``source`` holds OBJECTS: two nodes, one bound pod, two pending pods, in that order."""
    cluster = ksched.load_cluster(source)
    assert [n.name for n in cluster.nodes] == ["n1", "n2"]
    assert [n.allocatable["cpu"] for n in cluster.nodes] == [4000, 2000]
    assert [p.key for p in cluster.pods] == ["default/run-1"]
    cpu = cluster.resource_column("cpu")
    assert cluster.requested[:, cpu].tolist() == [1000, 0]
    assert [p.key for p in ksched.load_pods(source)] == ["default/pend-1", "other/pend-2"]
    objects = ksched.read_objects(source)
    assert (len(objects.nodes), len(objects.pods)) == (2, 3)


# --------------------------------------------------------------------------- files


def test_json_file_with_one_object(tmp_path: Path) -> None:
    path = tmp_path / "node.json"
    path.write_text(json.dumps(node("solo", memory="1Gi")))
    cluster = ksched.load_cluster(path)
    assert [n.name for n in cluster.nodes] == ["solo"]
    assert cluster.nodes[0].allocatable["memory"] == GI
    assert ksched.load_pods(str(path)) == ()


def test_json_file_with_v1_list(tmp_path: Path) -> None:
    # The shape `kubectl get nodes,pods -A -o json` writes.
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": OBJECTS,
                                "metadata": {"resourceVersion": ""}}, indent=2))
    check_standard(path)
    check_standard(str(path))


def test_podlist_and_nodelist_items_without_kind(tmp_path: Path) -> None:
    # The shape `kubectl get pods -o json` / the API server's list responses take.
    node_list = {"apiVersion": "v1", "kind": "NodeList", "metadata": {},
                 "items": [node("n1", kind=False), node("n2", cpu="2", kind=False)]}
    pod_list = {"apiVersion": "v1", "kind": "PodList", "metadata": {},
                "items": [pod("run-1", "n1", cpu="1", kind=False), pod("pend-1", kind=False),
                          pod("pend-2", namespace="other", kind=False)]}
    check_standard([node_list, pod_list])
    path = tmp_path / "lists.json"
    path.write_text(json.dumps({"kind": "List", "items": [node_list, pod_list]}))
    check_standard(path)


def test_items_without_kind_are_refused() -> None:
    """kubectl refuses them (``Object 'Kind' is missing``): ignoring them would drop nodes
    without a word."""
    with pytest.raises(InvalidObjectError, match=r"input: items\[0\]: Object 'Kind' is missing"):
        ksched.read_objects({"apiVersion": "v1", "kind": "List",
                             "items": [node("n1", kind=False), node("n2")]})
    snake = {"api_version": "v1", "kind": None, "metadata": {"name": "n1"}}
    with pytest.raises(InvalidObjectError, match="to_dict\\(\\) leaves it empty"):
        ksched.load_cluster([snake])


def test_multi_document_yaml(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    docs = [OBJECTS[0], None, {"apiVersion": "v1", "kind": "List", "items": OBJECTS[1:3]},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ignored"}},
            OBJECTS[3], OBJECTS[4]]
    path.write_text("---\n" + yaml.safe_dump_all(docs) + "---\n")
    check_standard(path)


def test_yml_suffix_and_namespaces(tmp_path: Path) -> None:
    path = tmp_path / "ns.yml"
    path.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": "team-a", "labels": {"tier": "gold"}}}, node("n1")]))
    objects = ksched.read_objects(path)
    # SetDefaults_Namespace labels every namespace with its name
    labels = {"tier": "gold", "kubernetes.io/metadata.name": "team-a"}
    assert objects.namespaces == (ksched.Namespace("team-a", labels),)
    cluster = ksched.load_cluster(path)
    assert dict(cluster.namespaces) == {"team-a": labels}


def test_directory_of_files(tmp_path: Path) -> None:
    (tmp_path / "b-pods.yaml").write_text(yaml.safe_dump_all([OBJECTS[2], OBJECTS[3]]))
    (tmp_path / "a-nodes.json").write_text(json.dumps({"kind": "List", "items": OBJECTS[:2]}))
    with gzip.open(tmp_path / "c-more.yml.gz", "wt") as f:
        f.write(yaml.safe_dump(OBJECTS[4]))
    (tmp_path / "README.txt").write_text("not: [kubernetes")  # not a manifest suffix: skipped
    sub = tmp_path / "nested"
    sub.mkdir()
    (sub / "extra.json").write_text(json.dumps(node("n9")))  # sub-directories are not walked
    check_standard(tmp_path)


def test_directory_files_are_read_in_name_order(tmp_path: Path) -> None:
    for name in ("20.json", "03.json", "10.yaml"):
        (tmp_path / name).write_text(json.dumps(pod(f"p{name.split('.')[0]}")))
    assert [p.name for p in ksched.load_pods(tmp_path)] == ["p03", "p10", "p20"]


def test_json_gz_file(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": OBJECTS}, f)
    check_standard(path)


def test_yaml_gz_file(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.yaml.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(yaml.safe_dump_all(OBJECTS))
    check_standard(path)


def test_unparsable_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"kind": "Node",')
    with pytest.raises(InvalidObjectError) as info:
        ksched.read_objects(path)
    assert str(info.value) == f"file {path}: line 1 column 17: unexpected end of JSON input"


def test_document_that_is_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "scalar.yaml"
    path.write_text("--- 42\n")
    with pytest.raises(InvalidObjectError) as info:
        ksched.read_objects(path)
    assert str(info.value) == f"file {path}: expected a Kubernetes object, got an integer"


def test_missing_file(tmp_path: Path) -> None:
    """A ``KschedError`` naming the path, that is a ``FileNotFoundError`` too."""
    with pytest.raises(FileNotFoundError) as info:
        ksched.load_cluster(tmp_path / "absent.json")
    assert isinstance(info.value, ksched.KschedError)
    assert str(info.value) == f"{tmp_path / 'absent.json'}: no such file or directory"


def test_unsupported_source_type() -> None:
    with pytest.raises(ksched.ArgumentError, match="cannot read Kubernetes objects from int"):
        ksched.read_objects(42)


def test_bytes_are_read_as_a_file_content() -> None:
    content = json.dumps({"apiVersion": "v1", "kind": "List", "items": OBJECTS}).encode()
    assert ksched.read_objects(content) == ksched.read_objects(OBJECTS)


# --------------------------------------------------------------------------- Python values


def test_a_dict() -> None:
    cluster = ksched.load_cluster(node("only"))
    assert [n.name for n in cluster.nodes] == ["only"]
    check_standard({"apiVersion": "v1", "kind": "List", "items": OBJECTS})


def test_a_list_of_dicts_and_a_tuple() -> None:
    check_standard(OBJECTS)
    check_standard(tuple(OBJECTS))
    check_standard([[OBJECTS[0], OBJECTS[1]], {"kind": "List", "items": OBJECTS[2:]}])


def test_sources_are_not_mutated(tmp_path: Path) -> None:
    source = [{"kind": "PodList", "items": [pod("a", kind=False)]}, copy.deepcopy(OBJECTS)]
    before = copy.deepcopy(source)
    ksched.read_objects(source)
    ksched.load_cluster(source)
    assert source == before


# --------------------------------------------------------------------------- client models


class _Model:
    """The shape of a kubernetes-client model: ``openapi_types``, ``attribute_map`` and
    one attribute per field, ``None`` when unset."""

    openapi_types: ClassVar[dict[str, str]] = {}
    attribute_map: ClassVar[dict[str, str]] = {}

    def __init__(self, **kwargs: Any) -> None:
        unknown = set(kwargs) - set(self.attribute_map)
        assert not unknown, unknown
        for attr in self.attribute_map:
            setattr(self, attr, kwargs.get(attr))


def _model(name: str, fields: dict[str, tuple[str, str]]) -> type[_Model]:
    return type(name, (_Model,), {
        "openapi_types": {attr: typ for attr, (_, typ) in fields.items()},
        "attribute_map": {attr: wire for attr, (wire, _) in fields.items()},
    })


_TOP = {"api_version": ("apiVersion", "str"), "kind": ("kind", "str"),
        "metadata": ("metadata", "V1ObjectMeta")}
FakeV1ObjectMeta = _model("V1ObjectMeta", {
    "name": ("name", "str"), "namespace": ("namespace", "str"),
    "labels": ("labels", "dict(str, str)"),
    "creation_timestamp": ("creationTimestamp", "datetime")})
FakeV1Taint = _model("V1Taint", {"key": ("key", "str"), "value": ("value", "str"),
                                 "effect": ("effect", "str"),
                                 "time_added": ("timeAdded", "datetime")})
FakeV1NodeSpec = _model("V1NodeSpec", {"taints": ("taints", "list[V1Taint]"),
                                       "unschedulable": ("unschedulable", "bool")})
FakeV1NodeStatus = _model("V1NodeStatus", {"allocatable": ("allocatable", "dict(str, str)"),
                                           "capacity": ("capacity", "dict(str, str)")})
FakeV1Node = _model("V1Node", {**_TOP, "spec": ("spec", "V1NodeSpec"),
                               "status": ("status", "V1NodeStatus")})
FakeV1ResourceRequirements = _model("V1ResourceRequirements", {
    "limits": ("limits", "dict(str, str)"), "requests": ("requests", "dict(str, str)")})
FakeV1Container = _model("V1Container", {
    "name": ("name", "str"), "image": ("image", "str"),
    "resources": ("resources", "V1ResourceRequirements"),
    "restart_policy": ("restartPolicy", "str")})
FakeV1PodSpec = _model("V1PodSpec", {
    "containers": ("containers", "list[V1Container]"),
    "init_containers": ("initContainers", "list[V1Container]"),
    "node_name": ("nodeName", "str"), "node_selector": ("nodeSelector", "dict(str, str)")})
FakeV1PodStatus = _model("V1PodStatus", {"phase": ("phase", "str")})
FakeV1Pod = _model("V1Pod", {**_TOP, "spec": ("spec", "V1PodSpec"),
                             "status": ("status", "V1PodStatus")})
FakeV1ListMeta = _model("V1ListMeta", {"resource_version": ("resourceVersion", "str")})
FakeV1PodList = _model("V1PodList", {"api_version": ("apiVersion", "str"),
                                     "items": ("items", "list[V1Pod]"),
                                     "kind": ("kind", "str"),
                                     "metadata": ("metadata", "V1ListMeta")})
FakeV1NodeList = _model("V1NodeList", {"api_version": ("apiVersion", "str"),
                                       "items": ("items", "list[V1Node]"),
                                       "kind": ("kind", "str"),
                                       "metadata": ("metadata", "V1ListMeta")})

STAMP = datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)


def fake_node(name: str, cpu: str = "4", kind: str | None = "Node") -> _Model:
    return FakeV1Node(
        api_version="v1" if kind else None, kind=kind,
        metadata=FakeV1ObjectMeta(name=name, labels={"zone": "a"}, creation_timestamp=STAMP),
        spec=FakeV1NodeSpec(taints=[FakeV1Taint(key="k", value="v", effect="NoSchedule",
                                                time_added=STAMP)]),
        status=FakeV1NodeStatus(allocatable={"cpu": cpu, "memory": "8Gi", "pods": "110"}))


def fake_pod(name: str, node_name: str | None = None, cpu: str = "500m",
             kind: str | None = "Pod", phase: str | None = None) -> _Model:
    return FakeV1Pod(
        api_version="v1" if kind else None, kind=kind,
        metadata=FakeV1ObjectMeta(name=name, namespace="default"),
        spec=FakeV1PodSpec(
            node_name=node_name,
            containers=[FakeV1Container(name="c", image="nginx",
                                        resources=FakeV1ResourceRequirements(
                                            requests={"cpu": cpu}))],
            init_containers=[FakeV1Container(name="s", restart_policy="Always")]),
        status=FakeV1PodStatus(phase=phase))


def test_to_wire_uses_wire_names_and_drops_unset_fields() -> None:
    wire = to_wire(fake_pod("p", "n1"))
    assert wire == {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx",
                                 "resources": {"requests": {"cpu": "500m"}}}],
                 "initContainers": [{"name": "s", "restartPolicy": "Always"}],
                 "nodeName": "n1"},
        "status": {},
    }
    assert to_wire(fake_node("n"))["metadata"]["creationTimestamp"] == STAMP.isoformat()


def test_client_model_objects() -> None:
    source = [fake_node("n1"), fake_node("n2", cpu="2"), fake_pod("run-1", "n1", cpu="1"),
              fake_pod("pend-1"), fake_pod("done", "n2", phase="Succeeded"),
              fake_pod("pend-2")]
    cluster = ksched.load_cluster(source)
    assert [n.name for n in cluster.nodes] == ["n1", "n2"]
    assert cluster.nodes[0].taints == (ksched.Taint("k", "v", "NoSchedule"),)
    assert dict(cluster.nodes[1].allocatable) == {"cpu": 2000, "memory": 8 * GI, "pods": 110}
    assert [p.key for p in cluster.pods] == ["default/run-1"]
    assert cluster.requested[:, cluster.resource_column("cpu")].tolist() == [1000, 0]
    pending = ksched.load_pods(source)
    assert [p.name for p in pending] == ["pend-1", "pend-2"]
    assert pending[0].init_containers[0].is_sidecar


def test_client_list_models_whose_items_lack_kind() -> None:
    # What CoreV1Api.list_node() / list_pod_for_all_namespaces() return: the list has its
    # kind, the items do not.
    nodes = FakeV1NodeList(api_version="v1", kind="NodeList",
                           metadata=FakeV1ListMeta(resource_version="7"),
                           items=[fake_node("n1", kind=None), fake_node("n2", kind=None)])
    pods = FakeV1PodList(api_version="v1", kind="PodList",
                         items=[fake_pod("run-1", "n1", kind=None), fake_pod("pend-1", kind=None)])
    cluster = ksched.load_cluster([nodes, pods])
    assert [n.name for n in cluster.nodes] == ["n1", "n2"]
    assert [p.name for p in cluster.pods] == ["run-1"]
    assert [p.name for p in ksched.load_pods([nodes, pods])] == ["pend-1"]


def test_client_model_in_a_dict_list() -> None:
    source = {"apiVersion": "v1", "kind": "PodList", "items": [fake_pod("a", kind=None)]}
    assert [p.name for p in ksched.load_pods(source)] == ["a"]


def test_top_level_client_model_without_kind_is_read_by_its_class() -> None:
    node_obj = fake_node("n1", kind=None)
    pod_obj = fake_pod("pend-1", kind=None)
    hand_list = FakeV1PodList(items=[fake_pod("pend-2", kind=None)])
    assert [n.name for n in ksched.load_cluster(node_obj).nodes] == ["n1"]
    assert [p.name for p in ksched.load_pods([pod_obj, hand_list])] == ["pend-1", "pend-2"]


def test_real_kubernetes_client_models() -> None:
    client = pytest.importorskip("kubernetes.client")
    n = client.V1Node(api_version="v1", kind="Node",
                      metadata=client.V1ObjectMeta(name="n1"),
                      status=client.V1NodeStatus(allocatable={"cpu": "2", "memory": "4Gi",
                                                              "pods": "110"}))
    p = client.V1Pod(api_version="v1", kind="Pod",
                     metadata=client.V1ObjectMeta(name="p", namespace="default"),
                     spec=client.V1PodSpec(containers=[client.V1Container(
                         name="c", resources=client.V1ResourceRequirements(
                             requests={"cpu": "250m"}))]))
    pods = client.V1PodList(kind="PodList", items=[client.V1Pod(
        metadata=client.V1ObjectMeta(name="q"),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c")]))])
    cluster = ksched.load_cluster([n])
    assert dict(cluster.nodes[0].allocatable) == {"cpu": 2000, "memory": 4 * GI, "pods": 110}
    assert [(x.key, x.containers[0].requests.get("cpu")) for x in ksched.load_pods([p, pods])] == [
        ("default/p", 250), ("default/q", None)]


# --------------------------------------------------------------------------- reading files
# As kubectl reads ``-f``: the content decides JSON or YAML, a List's items are parsed one at a
# time, pipes are read once; YAML scalars resolve as go-yaml v2 resolves them.


def _kubectl_list(items: list[dict]) -> bytes:
    """``kubectl get -o json``'s layout: keys sorted (``kind`` after ``items``), four spaces."""
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List",
                       "metadata": {"resourceVersion": ""}}, indent=4, sort_keys=True).encode()


def test_kubectl_list_with_kind_after_items(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    path.write_bytes(_kubectl_list(OBJECTS))
    check_standard(path)


def test_list_items_are_split_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny scan chunks and page releases change nothing: the same objects, in order."""
    from ksched import io, stream

    items = [pod(f"p{i}", "n1" if i % 2 else "") for i in range(40)] + OBJECTS[:2]
    items[3]["metadata"]["annotations"] = {"quote": 'a"b\\', "brace": "}{][", "e": "é ü"}
    path = tmp_path / "snapshot.json"
    path.write_bytes(_kubectl_list(items))
    released: list[tuple[int, int]] = []
    real = io._releaser

    def recording(mapped: Any) -> Any:
        release = real(mapped)
        return lambda start, end: (released.append((start, end)), release(start, end))

    monkeypatch.setattr(stream, "_SCAN_CHUNK", 97)
    monkeypatch.setattr(stream, "_RELEASE_EVERY", 500)
    monkeypatch.setattr(io, "_releaser", recording)
    objects = ksched.read_objects(path)
    assert [p.name for p in objects.pods] == [f"p{i}" for i in range(40)]
    assert [n.name for n in objects.nodes] == ["n1", "n2"]
    assert objects == ksched.read_objects(items)
    assert len(released) > 20 and released[-1][1] > path.stat().st_size - 600


def test_json_stream_and_top_level_array(tmp_path: Path) -> None:
    """A stream of JSON values (``jq -c '.items[]'``) and a top-level array."""
    stream = tmp_path / "objects.json"
    stream.write_text("\n".join(json.dumps(o) for o in OBJECTS) + "\n")
    check_standard(stream)
    array = tmp_path / "array.json"
    array.write_text(json.dumps([OBJECTS[:2], *OBJECTS[2:]]))
    check_standard(array)


def test_object_with_items_that_is_no_list(tmp_path: Path) -> None:
    """Only a ``...List`` (or kind-less) object's items are objects; another kind is itself."""
    weird = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"},
             "items": [node("n1")]}
    path = tmp_path / "ns.json"
    path.write_text(json.dumps(weird))
    with pytest.raises(ksched.InvalidObjectError,
                       match='namespace ns: strict decoding error: unknown field "items"'):
        ksched.read_objects(path)
    from ksched.api.schema import UnknownFieldWarning, strict_fields

    with strict_fields(False), pytest.warns(UnknownFieldWarning):
        objects = ksched.read_objects(path)
    assert ([ns.name for ns in objects.namespaces], objects.nodes) == (["ns"], ())


def test_content_decides_json_or_yaml(tmp_path: Path) -> None:
    as_json = tmp_path / "really-json.yaml"
    as_json.write_text(json.dumps({"kind": "List", "items": OBJECTS}))
    check_standard(as_json)
    as_yaml = tmp_path / "really-yaml.json"
    as_yaml.write_text(yaml.safe_dump_all(OBJECTS))
    check_standard(as_yaml)
    gz = tmp_path / "compressed.yaml"  # gzip is recognised by its first bytes
    gz.write_bytes(gzip.compress(yaml.safe_dump_all(OBJECTS).encode(), mtime=0))
    check_standard(gz)


def test_gzip_members_bom_and_utf16(tmp_path: Path) -> None:
    members = tmp_path / "two-members.json.gz"
    members.write_bytes(gzip.compress(json.dumps(OBJECTS[:2]).encode(), mtime=0)
                        + gzip.compress(json.dumps(OBJECTS[2:]).encode(), mtime=0))
    check_standard(members)
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(OBJECTS).encode())
    check_standard(bom)
    utf16 = tmp_path / "powershell.yaml"  # what `> file` writes in Windows PowerShell 5
    utf16.write_bytes(yaml.safe_dump_all(OBJECTS).encode("utf-16"))
    check_standard(utf16)


def test_files_without_objects(tmp_path: Path) -> None:
    for name, text in [("empty.yaml", ""), ("blank.json", "  \n"),
                       ("comments.yaml", "# nothing\n---\n# here\n---\n"),
                       ("empty-list.json", '{"kind": "List", "items": []}')]:
        (tmp_path / name).write_text(text)
        assert ksched.read_objects(tmp_path / name) == ksched.Objects(), name
    assert ksched.load_cluster(tmp_path / "empty.yaml").num_nodes == 0


def test_fifo_is_read_once(tmp_path: Path) -> None:
    import threading

    fifo = tmp_path / "snapshot"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(_kubectl_list(OBJECTS)))
    writer.start()
    objects = ksched.read_objects(fifo)
    writer.join(5)
    assert ([n.name for n in objects.nodes], len(objects.pods)) == (["n1", "n2"], 3)


@pytest.mark.parametrize("source", ["/dev/stdin", "sys.stdin", "sys.stdin.buffer"])
def test_standard_input_and_pipes(tmp_path: Path, source: str) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(OBJECTS))
    arg = repr(source) if source.startswith("/") else source
    program = (f"import sys, ksched; c = ksched.load_cluster({arg}); "
               "print(c.num_nodes, len(c.pods))")
    with open(path, "rb") as stdin:  # a file as standard input
        out = subprocess.run([sys.executable, "-c", program], stdin=stdin, capture_output=True,
                             text=True, timeout=120, check=False)
    assert out.stdout.split() == ["2", "1"], out.stderr
    piped = subprocess.run([sys.executable, "-c", program], input=path.read_bytes(),
                           capture_output=True, timeout=120, check=False)  # a pipe
    assert piped.stdout.split() == [b"2", b"1"], piped.stderr


def test_open_file_objects(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    path.write_bytes(_kubectl_list(OBJECTS))
    with open(path, "rb") as f:
        check_standard_objects(ksched.read_objects(f))
    with open(path, encoding="utf-8") as f:
        check_standard_objects(ksched.read_objects(f))


def check_standard_objects(objects: ksched.Objects) -> None:
    assert [n.name for n in objects.nodes] == ["n1", "n2"]
    assert [p.key for p in objects.pods] == ["default/run-1", "default/pend-1", "other/pend-2"]


YAML_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  creationTimestamp: 2024-05-06T07:08:09Z
  labels:
    day: 2024-05-06
    build: 0x1F
    quoted: "yes"
spec:
  priority: {priority}
  containers:
  - name: c
    image: nginx
"""


@pytest.mark.parametrize(("written", "priority"), [
    ("0x1F", 31), ("0o17", 15), ("017", 15), ("1_000", 1000), ("0b101", 5), ("-0b11", -3),
    ("+7", 7)])
def test_yaml_integers_resolve_as_go_yaml_v2(tmp_path: Path, written: str, priority: int) -> None:
    """Unquoted timestamps and dates stay strings (the API server parses the timestamp);
    integers take Go's bases; a quoted scalar is a string."""
    path = tmp_path / "pod.yaml"
    path.write_text(YAML_POD.format(priority=written).replace("build: 0x1F", "build: b1"))
    (p,) = ksched.load_pods(path)
    assert p.priority == priority
    assert p.creation_time == datetime.datetime(2024, 5, 6, 7, 8, 9,
                                                tzinfo=datetime.timezone.utc).timestamp()
    assert (p.labels["day"], p.labels["quoted"]) == ("2024-05-06", "yes")


def test_outline_of_json(tmp_path: Path) -> None:
    """The kernel's rows: top-level values, their members, a List's items."""
    from ksched.kernels.json_scan import OK, scan

    data = b'{"a": [1, {"b": "]"}], "items": [{"x": "\\"}"}, 2], "k": null} [3] "s"'
    starts, ends, depths, parents, is_key, error, _, _ = scan(data, 100)
    rows = [(data[s:e].decode(), int(d), int(p), bool(k))
            for s, e, d, p, k in zip(starts, ends, depths, parents, is_key)]
    assert error == OK
    assert rows == [
        ('{"a": [1, {"b": "]"}], "items": [{"x": "\\"}"}, 2], "k": null}', 0, -1, False),
        ('"a"', 1, 0, True), ('[1, {"b": "]"}]', 1, 0, False), ('"items"', 1, 0, True),
        ('[{"x": "\\"}"}, 2]', 1, 0, False), ('{"x": "\\"}"}', 2, 4, False), ("2", 2, 4, False),
        ('"k"', 1, 0, True), ("null", 1, 0, False), ("[3]", 0, -1, False), ("3", 1, 9, False),
        ('"s"', 0, -1, False)]


@settings(max_examples=100, deadline=None)
@given(value=st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text(max_size=6)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["items", "kind", "a", "é", '"']), inner, max_size=4),
    max_leaves=25), indent=st.sampled_from([None, 1, 4]))
def test_json_documents_give_what_a_json_parser_gives(value: Any, indent: int | None) -> None:
    """Splitting a List into items and parsing them one by one gives the parsed document."""
    from ksched.stream import json_documents

    data = json.dumps(value, indent=indent).encode()
    (doc, items), = list(json_documents(data, "test"))
    if items is not None:
        listed = list(items)
        doc = listed if isinstance(value, list) else {**doc, "items": listed}
    assert doc == json.loads(data)


def test_snake_case_dicts_are_read_as_their_kinds_client_model() -> None:
    """A client model's ``to_dict()`` (snake_case field names, ``None`` for unset fields) reads
    as the model would: its node name, requests and class are not silently left out."""
    client = pytest.importorskip("kubernetes").client
    pod_model = client.V1Pod(
        kind="Pod", metadata=client.V1ObjectMeta(name="db-0", labels={"app_x": "y"}),
        spec=client.V1PodSpec(node_name="n1", containers=[client.V1Container(
            name="c", resources=client.V1ResourceRequirements(requests={"cpu": "1"}))]))
    claim_model = client.V1PersistentVolumeClaim(
        kind="PersistentVolumeClaim", metadata=client.V1ObjectMeta(name="data", namespace="db"),
        spec=client.V1PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"], storage_class_name="fast",
            resources=client.V1VolumeResourceRequirements(requests={"storage": "1Gi"})))
    objects = ksched.read_objects([node("n1"), pod_model.to_dict(), claim_model.to_dict()])
    assert objects == ksched.read_objects([node("n1"), pod_model, claim_model])
    (running,) = objects.bound_pods
    assert (running.node_name, running.labels, running.containers[0].requests) == (
        "n1", {"app_x": "y"}, {"cpu": 1000})
    (claim,) = objects.persistent_volume_claims
    assert (claim.key, claim.storage_class, claim.request) == ("db/data", "fast", GI)

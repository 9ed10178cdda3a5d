"""ksched.live against a local HTTP server that speaks the Kubernetes list API."""

from __future__ import annotations

import copy
import gzip
import json
import socket
import sys
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

import ksched
from ksched.errors import ArgumentError, ClusterAccessError, KschedError
from ksched.live import load_live, read_live_items, save_snapshot

TOKEN = "test-token"

PATHS = {
    "Node": "/api/v1/nodes",
    "Pod": "/api/v1/pods",
    "Namespace": "/api/v1/namespaces",
    "Service": "/api/v1/services",
    "ReplicationController": "/api/v1/replicationcontrollers",
    "ReplicaSet": "/apis/apps/v1/replicasets",
    "StatefulSet": "/apis/apps/v1/statefulsets",
    "PodDisruptionBudget": "/apis/policy/v1/poddisruptionbudgets",
    "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
    "PersistentVolume": "/api/v1/persistentvolumes",
    "PersistentVolumeClaim": "/api/v1/persistentvolumeclaims",
    "StorageClass": "/apis/storage.k8s.io/v1/storageclasses",
    "CSINode": "/apis/storage.k8s.io/v1/csinodes",
    "CSIDriver": "/apis/storage.k8s.io/v1/csidrivers",
    "CSIStorageCapacity": "/apis/storage.k8s.io/v1/csistoragecapacities",
}
API_VERSIONS = {"ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
                "PodDisruptionBudget": "policy/v1", "PriorityClass": "scheduling.k8s.io/v1",
                **{kind: "storage.k8s.io/v1" for kind in ("StorageClass", "CSINode", "CSIDriver",
                                                          "CSIStorageCapacity")}}


def _node(i: int) -> dict:
    return {"kind": "Node", "apiVersion": "v1",
            "metadata": {"name": f"node-{i}", "labels": {
                "kubernetes.io/hostname": f"node-{i}",
                "topology.kubernetes.io/zone": "ab"[i % 2]}},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}


def _pod(i: int, node: str, owner: dict | None = None, priority: str | None = None) -> dict:
    metadata = {"name": f"web-{i}", "namespace": "shop", "uid": f"uid-web-{i}",
                "labels": {"app": "web"}}
    if owner:
        metadata["ownerReferences"] = [owner]
    spec = {"nodeName": node, "containers": [{
        "name": "c", "image": "nginx",
        "resources": {"requests": {"cpu": f"{100 * (i + 1)}m", "memory": f"{64 * (i + 1)}Mi"}}}]}
    if priority:
        spec["priorityClassName"] = priority
    return {"kind": "Pod", "apiVersion": "v1", "metadata": metadata, "spec": spec,
            "status": {"phase": "Running"}}


def _objects() -> list[dict]:
    """Seven nodes, five running pods and one of every other kind listed."""
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "uid": "rs-1",
             "controller": True}
    selector = {"matchLabels": {"app": "web"}}
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    return [
        *(_node(i) for i in range(7)),
        *(_pod(i, f"node-{i % 3}", owner, "high" if i == 0 else None) for i in range(5)),
        {"kind": "Namespace", "apiVersion": "v1",
         "metadata": {"name": "shop", "labels": {"team": "a"}}},
        {"kind": "PodDisruptionBudget", "apiVersion": "policy/v1",
         "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"minAvailable": 2, "selector": selector}},
        {"kind": "PriorityClass", "apiVersion": "scheduling.k8s.io/v1",
         "metadata": {"name": "high"}, "value": 1000},
        {"kind": "Service", "apiVersion": "v1", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"selector": {"app": "web"}}},
        {"kind": "ReplicaSet", "apiVersion": "apps/v1",
         "metadata": {"name": "web-abc", "namespace": "shop", "uid": "rs-1"},
         "spec": {"replicas": 5, "selector": selector, "template": template}},
        {"kind": "StatefulSet", "apiVersion": "apps/v1",
         "metadata": {"name": "db", "namespace": "shop"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "db"}},
                  "template": {**template, "metadata": {"labels": {"app": "db"}}}}},
        {"kind": "ReplicationController", "apiVersion": "v1",
         "metadata": {"name": "old", "namespace": "shop"},
         "spec": {"replicas": 0, "selector": {"app": "old"},
                  "template": {**template, "metadata": {"labels": {"app": "old"}}}}},
        *_storage_objects(),
    ]


def _storage_objects() -> list[dict]:
    """One object of every storage kind: a volume bound to a claim, its class, a CSINode of
    node-0 with an attach limit, the driver and a capacity."""
    storage = "storage.k8s.io/v1"
    return [
        {"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": "pv-1"},
         "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                  "storageClassName": "fast",
                  "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
                  "claimRef": {"namespace": "shop", "name": "data", "uid": "pvc-1"}},
         "status": {"phase": "Bound"}},
        {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
         "metadata": {"name": "data", "namespace": "shop", "uid": "pvc-1",
                      "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                  "resources": {"requests": {"storage": "10Gi"}}, "volumeName": "pv-1"},
         "status": {"phase": "Bound"}},
        {"kind": "StorageClass", "apiVersion": storage, "metadata": {"name": "fast"},
         "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer"},
        {"kind": "CSINode", "apiVersion": storage, "metadata": {"name": "node-0"},
         "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-0",
                               "allocatable": {"count": 25}}]}},
        {"kind": "CSIDriver", "apiVersion": storage, "metadata": {"name": "ebs.csi.aws.com"},
         "spec": {"attachRequired": True}},
        {"kind": "CSIStorageCapacity", "apiVersion": storage,
         "metadata": {"name": "cap-a", "namespace": "kube-system"},
         "storageClassName": "fast", "capacity": "1Ti",
         "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}},
    ]


class FakeApiServer:
    """A list API on 127.0.0.1: paging by ``limit``/``continue``, bearer-token auth, forced
    statuses per path, and continue tokens that expire once per path on request."""

    def __init__(self, objects: list[dict]) -> None:
        self.routes: dict[str, list[dict]] = {path: [] for path in PATHS.values()}
        for obj in objects:
            item = {k: v for k, v in copy.deepcopy(obj).items() if k not in ("kind", "apiVersion")}
            self.routes[PATHS[obj["kind"]]].append(item)  # list items carry no kind
        self.requests: list[tuple[str, int | None, str]] = []
        self.status: dict[str, int] = {}
        self.expire_once: set[str] = set()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def requested(self, path: str) -> list[tuple[int | None, str]]:
        return [(limit, token) for p, limit, token in self.requests if p == path]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake._answer(self)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        url = urlsplit(request.path)
        query = parse_qs(url.query)
        limit = int(query["limit"][0]) if "limit" in query else None
        token = query.get("continue", [""])[0]
        self.requests.append((url.path, limit, token))
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._status(request, 401, "Unauthorized", "Unauthorized")
        if url.path in self.status:
            code = self.status[url.path]
            return self._status(request, code, "Forbidden" if code == 403 else "NotFound",
                                f"{url.path} is refused ({code})")
        if url.path not in self.routes:
            return self._status(request, 404, "NotFound", "the server could not find it")
        if token and url.path in self.expire_once:
            self.expire_once.discard(url.path)
            return self._status(request, 410, "Expired", "The provided continue parameter "
                                "is too old to display a consistent list result.")
        self._page(request, self.routes[url.path], limit, token)

    def _page(self, request: BaseHTTPRequestHandler, items: list[dict], limit: int | None,
              token: str) -> None:
        start = int(token.removeprefix("tok-")) if token else 0
        stop = len(items) if limit is None else start + limit
        metadata = {"resourceVersion": "42"}
        if stop < len(items):
            metadata["continue"] = f"tok-{stop}"
        self._send(request, 200, {"kind": "List", "apiVersion": "v1", "metadata": metadata,
                                  "items": items[start:stop]})

    def _status(self, request: BaseHTTPRequestHandler, code: int, reason: str,
                message: str) -> None:
        self._send(request, code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                   "message": message, "reason": reason, "code": code})

    @staticmethod
    def _send(request: BaseHTTPRequestHandler, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        request.send_response(code)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)


def _kubeconfig(tmp_path, server: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {{server: "{server}", insecure-skip-tls-verify: true}}
users:
- name: good
  user: {{token: {TOKEN}}}
- name: bad
  user: {{token: wrong}}
contexts:
- name: local
  context: {{cluster: local, user: good}}
- name: wrong-token
  context: {{cluster: local, user: bad}}
current-context: local
""")
    return str(path)


@pytest.fixture
def api():
    server = FakeApiServer(_objects())
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()
        server.thread.join(timeout=5)


@pytest.fixture
def kubeconfig(tmp_path, api):
    return _kubeconfig(tmp_path, api.url)


@pytest.fixture
def cluster_file(tmp_path):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _objects()}))
    return path


def _same_cluster(a: ksched.ClusterState, b: ksched.ClusterState) -> None:
    assert list(a.node_names) == list(b.node_names)
    assert [(p.namespace, p.name) for p in a.pods] == [(p.namespace, p.name) for p in b.pods]
    assert list(a.pods) == list(b.pods)
    assert a.resource_names == b.resource_names
    np.testing.assert_array_equal(a.requested, b.requested)
    np.testing.assert_array_equal(a.allocatable, b.allocatable)
    np.testing.assert_array_equal(a.pod_node, b.pod_node)
    assert a.objects == b.objects


def test_every_page_is_requested_and_the_load_equals_the_file(api, kubeconfig, cluster_file):
    live = ksched.load_cluster(kubeconfig=kubeconfig)
    _same_cluster(live, ksched.load_cluster(cluster_file))
    assert list(live.node_names) == [f"node-{i}" for i in range(7)]
    assert [p.name for p in live.pods] == [f"web-{i}" for i in range(5)]
    assert api.requested("/api/v1/nodes") == [(500, "")]
    # 7 nodes in pages of 3: three requests, each continuing where the last one stopped
    assert load_live(kubeconfig, page_size=3) == ksched.read_objects(cluster_file)
    assert api.requested("/api/v1/nodes")[1:] == [(3, ""), (3, "tok-3"), (3, "tok-6")]
    assert api.requested("/api/v1/pods")[-2:] == [(3, ""), (3, "tok-3")]
    assert {p for p, _, _ in api.requests} == set(PATHS.values())


def test_items_get_their_kind_and_the_default_context_is_used(api, kubeconfig):
    items = read_live_items(kubeconfig, "local", page_size=2)
    assert [item["kind"] for item in items] == (
        ["Node"] * 7 + ["Pod"] * 5 + ["Namespace", "PodDisruptionBudget", "PriorityClass",
                                      "Service", "ReplicaSet", "StatefulSet",
                                      "ReplicationController", "PersistentVolume",
                                      "PersistentVolumeClaim", "StorageClass", "CSINode",
                                      "CSIDriver", "CSIStorageCapacity"])
    for item in items:
        assert item["apiVersion"] == API_VERSIONS.get(item["kind"], "v1"), item["kind"]
    assert items[7]["spec"]["priorityClassName"] == "high"
    assert len(api.requested("/api/v1/nodes")) == 4  # 2 + 2 + 2 + 1


def test_the_live_load_applies_priority_classes(api, kubeconfig):
    pods = load_live(kubeconfig).pods
    assert [p.priority for p in pods] == [1000, 0, 0, 0, 0]


def test_global_client_configuration_is_untouched(api, kubeconfig):
    from kubernetes import client

    before = client.Configuration.get_default_copy().host
    load_live(kubeconfig)
    assert client.Configuration.get_default_copy().host == before != api.url


def test_unauthorized_is_a_cluster_access_error_with_the_status(api, kubeconfig):
    with pytest.raises(ClusterAccessError) as info:
        load_live(kubeconfig, "wrong-token")
    assert info.value.status == 401
    assert str(info.value) == (f"listing Nodes from {api.url}: HTTP 401 Unauthorized: "
                               "Unauthorized")
    assert isinstance(info.value, KschedError)


def test_forbidden_names_the_kind(api, kubeconfig):
    api.status["/api/v1/pods"] = 403
    with pytest.raises(ClusterAccessError, match=r"^listing Pods from .*: HTTP 403 Forbidden: "
                                                  r"/api/v1/pods is refused \(403\)$") as info:
        load_live(kubeconfig)
    assert info.value.status == 403


def test_a_server_that_is_down_is_a_clear_error(tmp_path):
    with socket.socket() as sock:  # a port that was free a moment ago, and closed now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ClusterAccessError, match=rf"^listing Nodes from http://127.0.0.1:{port}:"
                                                  r" cannot reach the server: .*refused") as info:
        load_live(_kubeconfig(tmp_path, f"http://127.0.0.1:{port}"))
    assert info.value.status is None
    assert "\n" not in str(info.value)


def test_an_expired_continue_token_restarts_the_list_once(api, kubeconfig, cluster_file):
    api.expire_once.add("/api/v1/nodes")
    objects = load_live(kubeconfig, page_size=3)
    assert objects == ksched.read_objects(cluster_file)
    assert api.requested("/api/v1/nodes") == [(3, ""), (3, "tok-3"), (3, ""), (3, "tok-3"),
                                              (3, "tok-6")]


def test_a_continue_token_that_expires_again_is_an_error(api, kubeconfig, monkeypatch):
    original = api._answer

    def always_expire(request):
        api.expire_once.add("/api/v1/pods")
        original(request)

    monkeypatch.setattr(api, "_answer", always_expire)
    with pytest.raises(ClusterAccessError, match="listing Pods .*continue token expired twice"):
        load_live(kubeconfig, page_size=2)
    assert len(api.requested("/api/v1/pods")) == 4


@pytest.mark.parametrize("missing", ["/apis/scheduling.k8s.io/v1/priorityclasses",
                                     "/apis/apps/v1/statefulsets",
                                     "/apis/storage.k8s.io/v1/csinodes"])
def test_optional_kinds_the_server_lacks_are_skipped(api, kubeconfig, cluster_file, missing):
    api.status[missing] = 404
    with pytest.warns(RuntimeWarning, match="serves no (PriorityClasses|StatefulSets|CSINodes) "):
        items = read_live_items(kubeconfig)
    kind = next(k for k, p in PATHS.items() if p == missing)
    expected = [o for o in _objects() if o["kind"] != kind]
    assert [(o["kind"], o["metadata"]["name"]) for o in items] == [
        (o["kind"], o["metadata"]["name"]) for o in expected]


def test_a_missing_required_kind_is_an_error(api, kubeconfig):
    api.status["/api/v1/nodes"] = 404
    with pytest.raises(ClusterAccessError, match=r"listing Nodes from .*: HTTP 404$"):
        load_live(kubeconfig)


def test_bad_kubeconfig_path_and_unknown_context(tmp_path, api, kubeconfig):
    missing = tmp_path / "nope"
    with pytest.raises(ClusterAccessError, match=rf"^kubeconfig {missing}: no such file$"):
        load_live(missing)
    with pytest.raises(ClusterAccessError, match=r"^kubeconfig .*: .*name staging .*contexts"):
        ksched.load_cluster(kubeconfig=kubeconfig, context="staging")
    garbage = tmp_path / "garbage"
    garbage.write_text("::: [")
    with pytest.raises(ClusterAccessError, match=rf"^kubeconfig {garbage}: ") as info:
        load_live(garbage)
    assert "\n" not in str(info.value)
    assert api.requests == []


def test_page_size_and_source_conflicts_are_refused(kubeconfig, cluster_file):
    with pytest.raises(ArgumentError, match="page_size: must be a positive int, not 0"):
        read_live_items(kubeconfig, page_size=0)
    with pytest.raises(ArgumentError, match="not both"):
        ksched.load_cluster(cluster_file, kubeconfig=kubeconfig)
    with pytest.raises(ArgumentError, match="source: required"):
        ksched.load_cluster()


def test_without_the_kubernetes_package(monkeypatch, kubeconfig):
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    with pytest.raises(KschedError, match=r"pip install ksched\[cluster\]"):
        load_live(kubeconfig)


@pytest.mark.parametrize("name", ["snap.json", "snap.json.gz"])
def test_snapshot_round_trip(api, kubeconfig, tmp_path, name):
    items = read_live_items(kubeconfig, page_size=4)
    kept = copy.deepcopy(items)
    path = save_snapshot(items, tmp_path / name)
    assert items == kept  # not mutated
    raw = path.read_bytes()
    assert (raw[:2] == b"\x1f\x8b") == name.endswith(".gz")
    body = json.loads(gzip.decompress(raw) if name.endswith(".gz") else raw)
    assert (body["apiVersion"], body["kind"], len(body["items"])) == ("v1", "List", 25)
    assert ksched.read_objects(path) == load_live(kubeconfig)
    _same_cluster(ksched.load_cluster(path), ksched.load_cluster(kubeconfig=kubeconfig))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["kubeconfig", name])


def test_snapshot_refuses_parsed_objects_and_leaves_no_file(tmp_path, cluster_file):
    target = tmp_path / "snap.json"
    with pytest.raises(ArgumentError, match="objects_or_items: parsed Objects keep no wire"):
        save_snapshot(ksched.read_objects(cluster_file), target)
    with pytest.raises(ArgumentError, match=r"objects_or_items\[1\]: expected an object"):
        save_snapshot([{"kind": "Node"}, 3], target)
    with pytest.raises(KschedError, match="cannot write"):
        save_snapshot([], tmp_path / "no-such-dir" / "snap.json")
    assert not target.exists()
    save_snapshot({"kind": "List", "items": [_node(0)]}, target)
    assert [n.name for n in ksched.read_objects(target).nodes] == ["node-0"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(ksched.load_cluster(target).node_names) == ["node-0"]


# --------------------------------------------------------------------------- command line


PENDING = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "new", "namespace": "shop"},
           "spec": {"containers": [{"name": "c", "image": "nginx",
                                    "resources": {"requests": {"cpu": "3"}}}]}}


def test_commands_read_the_live_cluster_as_they_read_a_file(api, kubeconfig, cluster_file,
                                                           tmp_path):
    from tests.refusals import run_cli

    pending = tmp_path / "pending.json"
    pending.write_text(json.dumps(PENDING))
    live = run_cli(["schedule", "--kubeconfig", kubeconfig, str(pending), "-o", "json"])
    offline = run_cli(["schedule", str(cluster_file), str(pending), "-o", "json"])
    assert live[0] == offline[0] == 0
    assert json.loads(live[1]) == json.loads(offline[1])
    assert json.loads(live[1])[0]["node"] is not None
    status, out, _ = run_cli(["headroom", f"--kubeconfig={kubeconfig}", "-o", "json"])
    assert status == 0 and json.loads(out) == json.loads(
        run_cli(["headroom", str(cluster_file), "-o", "json"])[1])


def test_snapshot_saves_what_the_live_cluster_holds(api, kubeconfig, cluster_file, tmp_path):
    from tests.refusals import run_cli

    path = tmp_path / "snap.json.gz"
    status, _, err = run_cli(["snapshot", "--kubeconfig", kubeconfig, "-o", str(path)])
    assert status == 0, err
    assert err.startswith(f"{path}: 7 Nodes, 5 Pods")
    assert err == (f"{path}: 7 Nodes, 5 Pods, 1 Namespace, 1 PodDisruptionBudget, "
                   "1 PriorityClass, 1 Service, 1 ReplicaSet, 1 StatefulSet, "
                   "1 ReplicationController, 1 PersistentVolume, 1 PersistentVolumeClaim, "
                   "1 StorageClass, 1 CSINode, 1 CSIDriver, 1 CSIStorageCapacity\n")
    _same_cluster(ksched.load_cluster(path), ksched.load_cluster(cluster_file))


def test_the_command_line_names_an_unreachable_server_in_one_line(tmp_path):
    from tests.refusals import cli_refused

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = _kubeconfig(tmp_path, f"http://127.0.0.1:{port}")
    cli_refused(["snapshot", "--kubeconfig", config, "-o", str(tmp_path / "s.json")],
                "cannot reach the server")
    cli_refused(["headroom", "--kubeconfig", config], "cannot reach the server")
    assert not (tmp_path / "s.json").exists()


def test_the_live_load_holds_the_storage_objects(api, kubeconfig):
    """PersistentVolumes, claims, classes, CSINodes, CSIDrivers and capacities are listed
    (paged like the rest) and reach the cluster's :attr:`~ksched.ClusterState.storage`."""
    storage = ksched.load_cluster(kubeconfig=kubeconfig).storage
    assert storage.volume("pv-1").claim_ref == ksched.api.ClaimRef("shop", "data", "pvc-1")
    claim = storage.claim("shop", "data")
    assert (claim.volume_name, claim.bind_completed, claim.request) == ("pv-1", True, 10 << 30)
    assert storage.storage_class("fast").volume_binding_mode == "WaitForFirstConsumer"
    assert storage.csi_node("node-0").driver("ebs.csi.aws.com").allocatable == 25
    assert storage.csi_driver("ebs.csi.aws.com").attach_required
    assert [c.capacity for c in storage.capacities("fast")] == [1 << 40]
    assert api.requested("/apis/storage.k8s.io/v1/csinodes") == [(500, "")]

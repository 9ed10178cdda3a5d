"""Workloads expanded into pods as their controllers would (ksched.planning.workloads)."""

from __future__ import annotations

import copy
import json
import re

import pytest

from ksched import ClusterState, Node, Pod, Taint, schedule_batch
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.planning.workloads import (
    expand,
    expand_workloads,
    read_workloads,
    template_hash,
)
from tests.refusals import refused

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def template(app: str, **spec: object) -> dict:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {
                "requests": {"cpu": "100m", "memory": "100Mi"}}}], **spec}}


def workload(kind: str, name: str, namespace: str | None = None, **spec: object) -> dict:
    api = {"Job": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
    body: dict = {"template": template(name, **({"restartPolicy": "Never"} if kind == "Job"
                                                else {}))}
    if kind != "Job":
        body["selector"] = ({"app": name} if kind == "ReplicationController"
                            else {"matchLabels": {"app": name}})
    body.update(spec)
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": body}


def node(name: str, zone: str = "a", cpu: str = "8", labels: dict | None = None,
         taints: tuple = ()) -> Node:
    return Node(name, labels={ZONE: zone, HOST: name, **(labels or {})}, taints=taints,
                allocatable={"cpu": cpu, "memory": "64Gi", "pods": 110})


# --------------------------------------------------------------------------- kinds


def test_deployment_pods_are_named_labelled_and_owned_by_the_implied_replica_set():
    dep = workload("Deployment", "web", "shop", replicas=3)
    before = copy.deepcopy(dep)
    got = expand_workloads(dep)
    pod_hash = template_hash(dep["spec"]["template"])
    assert dep == before  # input not mutated
    assert len(got.pods) == 3
    assert all(re.fullmatch(f"web-{pod_hash}-{SUFFIX}", p.name) for p in got.pods)
    assert len({p.name for p in got.pods}) == 3
    assert {p.namespace for p in got.pods} == {"shop"}
    assert all(dict(p.labels) == {"app": "web", "pod-template-hash": pod_hash} for p in got.pods)
    assert {p.controller for p in got.pods} == {("apps/v1", "ReplicaSet", f"web-{pod_hash}")}
    (rs,) = got.workloads
    assert (rs.kind, rs.name, rs.namespace, rs.replicas) == (
        "ReplicaSet", f"web-{pod_hash}", "shop", 3)
    assert dict(rs.selector.match_labels) == {"app": "web", "pod-template-hash": pod_hash}
    assert got == expand_workloads(copy.deepcopy(dep))  # deterministic
    assert got.pods[0].containers[0].requests == {"cpu": 100, "memory": 100 * 2**20}


def test_deployment_defaults_to_one_replica_and_the_hash_follows_the_template():
    one = expand(workload("Deployment", "web"))
    other = expand(workload("Deployment", "web", template=template("web", priority=5)))
    assert len(one) == 1 and one[0].namespace == "default"
    assert one[0].labels["pod-template-hash"] != other[0].labels["pod-template-hash"]
    assert expand(workload("Deployment", "web", replicas=0)) == ()


@pytest.mark.parametrize("kind, owner", [("ReplicaSet", ("apps/v1", "ReplicaSet", "api")),
                                         ("ReplicationController",
                                          ("v1", "ReplicationController", "api"))])
def test_replica_set_and_replication_controller(kind, owner):
    got = expand_workloads(workload(kind, "api", replicas=4))
    assert [bool(re.fullmatch(f"api-{SUFFIX}", p.name)) for p in got.pods] == [True] * 4
    assert len({p.name for p in got.pods}) == 4
    assert {p.controller for p in got.pods} == {owner}
    assert all(dict(p.labels) == {"app": "api"} for p in got.pods)
    assert [(w.kind, w.name, w.replicas) for w in got.workloads] == [(kind, "api", 4)]


def test_stateful_set_pods_have_ordinals_labels_and_claims():
    sts = workload("StatefulSet", "db", replicas=3, serviceName="db",
                   volumeClaimTemplates=[{"metadata": {"name": "data"}}])
    got = expand_workloads(sts)
    assert [p.name for p in got.pods] == ["db-0", "db-1", "db-2"]
    revision = f"db-{template_hash(sts['spec']['template'])}"
    assert dict(got.pods[2].labels) == {
        "app": "db", "controller-revision-hash": revision,
        "statefulset.kubernetes.io/pod-name": "db-2", "apps.kubernetes.io/pod-index": "2"}
    assert {p.controller for p in got.pods} == {("apps/v1", "StatefulSet", "db")}
    assert [v.claim_name for v in got.pods[1].volumes] == ["data-db-1"]
    assert [(w.kind, w.name) for w in got.workloads] == [("StatefulSet", "db")]
    started = expand(workload("StatefulSet", "db", replicas=2, ordinals={"start": 5}))
    assert [p.name for p in started] == ["db-5", "db-6"]


@pytest.mark.parametrize("spec, count", [({}, 1), ({"parallelism": 3}, 3),
                                         ({"parallelism": 5, "completions": 2}, 2),
                                         ({"parallelism": 2, "completions": 10}, 2),
                                         ({"parallelism": 0}, 0),
                                         ({"parallelism": 4, "suspend": True}, 0)])
def test_job_runs_min_of_parallelism_and_completions(spec, count):
    got = expand_workloads(workload("Job", "batch", **spec))
    assert len(got.pods) == count and got.workloads == ()
    assert all(re.fullmatch(f"batch-{SUFFIX}", p.name) for p in got.pods)
    assert {p.controller for p in got.pods} <= {("batch/v1", "Job", "batch")}


def test_job_labels_carry_its_uid_and_name():
    job = workload("Job", "batch")
    job["metadata"]["uid"] = "1234"
    (pod,) = expand(job)
    assert dict(pod.labels) == {"app": "batch", "batch.kubernetes.io/controller-uid": "1234",
                                "batch.kubernetes.io/job-name": "batch",
                                "controller-uid": "1234", "job-name": "batch"}
    uid = expand(workload("Job", "batch"))[0].labels["controller-uid"]
    assert re.fullmatch("[0-9a-f-]{36}", uid)  # a stable UUID when the Job has none
    assert uid == expand(workload("Job", "batch"))[0].labels["controller-uid"]


def test_indexed_job_pods_carry_their_index():
    pods = expand(workload("Job", "idx", parallelism=3, completions=2,
                           completionMode="Indexed"))
    assert [bool(re.fullmatch(f"idx-{i}-{SUFFIX}", p.name)) for i, p in enumerate(pods)] == [
        True, True]
    assert [p.labels["batch.kubernetes.io/job-completion-index"] for p in pods] == ["0", "1"]


# --------------------------------------------------------------------------- DaemonSets


def daemon_cluster(pods: tuple = ()) -> ClusterState:
    return ClusterState.from_records([
        node("n0", labels={"disk": "ssd"}),
        node("n1", labels={"disk": "ssd"}, taints=(
            Taint("node.kubernetes.io/unschedulable", "", "NoSchedule"),
            Taint("node.kubernetes.io/not-ready", "", "NoExecute"))),
        node("n2"),
        node("n3", labels={"disk": "ssd"}, taints=(Taint("dedicated", "gpu", "NoSchedule"),)),
    ], pods)


def test_daemon_set_places_one_pod_per_eligible_node():
    ds = workload("DaemonSet", "agent", "kube-system",
                  template=template("agent", nodeSelector={"disk": "ssd"}))
    pods = expand(ds, cluster=daemon_cluster())
    # n2 lacks the label; n3's taint is not tolerated; n1's taints are daemon defaults
    required = [p.node_affinity.required[0].match_fields[0] for p in pods]
    assert [(r.key, r.operator, r.values) for r in required] == [
        ("metadata.name", "In", ("n0",)), ("metadata.name", "In", ("n1",))]
    assert all(re.fullmatch(f"agent-{SUFFIX}", p.name) for p in pods)
    assert {p.controller for p in pods} == {("apps/v1", "DaemonSet", "agent")}
    assert {(t.key, t.effect) for t in pods[0].tolerations} >= {
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
        ("node.kubernetes.io/not-ready", "NoExecute")}
    result = schedule_batch(daemon_cluster(), pods)
    assert [p.node for p in result.placements] == ["n0", "n1"]


def test_daemon_set_tolerating_the_taint_and_skipping_nodes_it_runs_on():
    ds = workload("DaemonSet", "agent", template=template("agent", tolerations=[
        {"key": "dedicated", "operator": "Exists"}]))
    running = Pod.from_manifest({"metadata": {
        "name": "agent-old", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                                  "name": "agent", "controller": True}]},
        "spec": {"nodeName": "n2", "containers": [{"name": "c"}]}})
    pods = expand(ds, cluster=daemon_cluster((running,)))
    assert [p.node_affinity.required[0].match_fields[0].values for p in pods] == [
        ("n0",), ("n1",), ("n3",)]


def test_daemon_set_needs_a_cluster():
    with pytest.raises(ArgumentError, match="^cluster: daemonset default/agent places one pod "
                                            "per eligible node: pass the cluster it runs on$"):
        expand(workload("DaemonSet", "agent"))


# --------------------------------------------------------------------------- sources

HELM = """\
# Source: chart/templates/svc.yaml
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}}
---
# Source: chart/templates/deploy.yaml
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: postgres}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    spec: {restartPolicy: Never, containers: [{name: c, image: migrate}]}
"""


def test_multi_document_yaml_with_several_kinds(tmp_path):
    path = tmp_path / "rendered.yaml"
    path.write_text(HELM)
    assert [w["kind"] for w in read_workloads(path)] == ["Deployment", "StatefulSet", "Job"]
    got = expand_workloads(path)
    kinds = [p.controller[1] for p in got.pods]
    assert kinds == ["ReplicaSet", "ReplicaSet", "StatefulSet", "StatefulSet", "Job"]
    assert [p.name for p in got.pods][2:4] == ["db-0", "db-1"]
    assert [w.kind for w in got.workloads] == ["ReplicaSet", "StatefulSet"]


def test_kubectl_list_and_many_files(tmp_path):
    items = [workload("Deployment", "web", replicas=2), workload("ReplicaSet", "api")]
    listing = tmp_path / "list.json"
    listing.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    single = tmp_path / "job.json"
    single.write_text(json.dumps(workload("Job", "batch", parallelism=2)))
    pods = expand([listing, single])
    assert [p.controller[1] for p in pods] == ["ReplicaSet"] * 3 + ["Job"] * 2
    assert [p.name for p in pods] == [p.name for p in expand(items + [json.loads(
        single.read_text())])]


# --------------------------------------------------------------------------- scheduling


def test_default_spreading_sees_the_implied_replica_set():
    nodes = [node("big-a", "a", cpu="64"), node("small-b", "b"), node("small-c", "c")]
    got = expand_workloads(workload("Deployment", "web", replicas=6))
    alone = schedule_batch(ClusterState.from_records(nodes), got.pods)
    spread = schedule_batch(ClusterState.from_records(nodes, objects={
        "workloads": got.workloads}), got.pods)
    assert [p.node for p in alone.placements] == ["big-a"] * 6
    assert sorted(p.node for p in spread.placements) == ["big-a", "big-a", "small-b", "small-b",
                                                         "small-c", "small-c"]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kind, change, message", [
    ("Deployment", {"replicas": -1},
     ("deployment default/web: spec.replicas: Invalid value: -1: must be greater than or equal "
     "to 0")),
    ("Deployment", {"replicas": "3"},
     "deployment default/web: spec.replicas: expected an integer, got a string"),
    ("Deployment", {"template": None}, "deployment default/web: spec.template: Required value"),
    ("StatefulSet", {"template": []},
     "statefulset default/web: spec.template: expected an object, got a list"),
    ("ReplicaSet", {"selector": None}, "replicaset default/web: spec.selector: Required value"),
    ("Deployment", {"selector": {}},
     ("deployment default/web: spec.selector: Invalid value: {}: empty selector is invalid for "
     "deployment")),
    ("Deployment", {"selector": {"matchLabels": {"app": "api"}}},
     ("deployment default/web: spec.template.metadata.labels: Invalid value: "
     'map[string]string{"app":"web"}: `selector` does not match template `labels`')),
    ("Job", {"parallelism": -2},
     "job default/web: spec.parallelism: Invalid value: -2: must be greater than or equal to 0"),
    ("Job", {"completions": 1.5},
     "job default/web: spec.completions: expected an integer, got a number"),
    ("Job", {"completionMode": "Ordered"},
     ('job default/web: spec.completionMode: Unsupported value: "Ordered": supported values: '
      '"NonIndexed", "Indexed"')),
    ("Job", {"completionMode": "Indexed"},
     "job default/web: spec.completions: Required value: when completion mode is Indexed"),
    ("Job", {"template": template("web")},
     ('job default/web: spec.template.spec.restartPolicy: Required value: valid values: '
      '"OnFailure", "Never"')),
    ("Job", {"template": template("web", restartPolicy="Always")},
     ('job default/web: spec.template.spec.restartPolicy: Required value: valid values: '
      '"OnFailure", "Never"')),
    ("Job", {"template": template("web", restartPolicy="Sometimes")},
     ('job default/web: spec.template.spec.restartPolicy: Unsupported value: "Sometimes": '
      'supported values: "OnFailure", "Never"')),
    ("Deployment", {"template": {"metadata": {"labels": ["app=web"]}, "spec": {
        "containers": [{"name": "c"}]}}},
     "deployment default/web: spec.template.metadata.labels: expected an object, got a list"),
    ("StatefulSet", {"template": {"metadata": {"labels": "app=web"}, "spec": {
        "containers": [{"name": "c"}]}}},
     "statefulset default/web: spec.template.metadata.labels: expected an object, got a "
     "string"),
    ("Deployment", {"template": {"metadata": {"labels": {"app": "web"}, "annotations": [1]},
                                 "spec": {"containers": [{"name": "c"}]}}},
     ("deployment default/web: spec.template.metadata.annotations: expected an object, got "
      "a list")),
    ("Deployment", {"replicas": 10_000_001},
     ("deployment default/web: spec.replicas: Invalid value: 10000001: ksched expands at most "
      "10,000,000 pods of one workload")),
    ("Job", {"parallelism": 2**31 - 1},
     ("job default/web: spec.parallelism: Invalid value: 2147483647: ksched expands at most "
      "10,000,000 pods of one workload")),
    ("Deployment", {"template": template("web", containers=[{"name": "c", "resources": {
        "requests": {"cpu": "1.5.0"}}}])},
     ('deployment default/web: spec.template.spec.containers[0].resources.requests.cpu: '
     'invalid quantity "1.5.0"')),
])
def test_bad_workloads_name_the_object_and_field(kind, change, message):
    with pytest.raises(InvalidObjectError) as caught:
        expand(workload(kind, "web", **change))
    assert str(caught.value) == message


def test_the_same_workload_twice_is_refused():
    dep = workload("Deployment", "web", "shop")
    refused(expand, [dep, copy.deepcopy(dep)], error=InvalidObjectError,
            match='deployment shop/web: metadata.name: Duplicate value: "web": the deployment '
                  'is given more than once')
    assert len(expand([dep, workload("Deployment", "web", "other")])) == 2  # two namespaces


def test_owners_of_one_name_and_different_kinds_make_different_pod_names():
    pods = expand([workload("ReplicaSet", "web", replicas=3),
                   workload("ReplicationController", "web", replicas=3),
                   workload("Job", "web", parallelism=3)])
    assert len({p.name for p in pods}) == 9


def test_a_pod_name_made_twice_is_refused_naming_both_owners():
    dep = workload("Deployment", "web", replicas=1)
    rs_name = f"web-{template_hash(dep['spec']['template'])}"
    given = workload("ReplicaSet", rs_name, replicas=1)
    given["spec"]["template"] = dep["spec"]["template"]
    given["spec"]["selector"] = {"matchLabels": {"app": "web"}}
    message = str(refused(expand, [dep, given], error=InvalidObjectError,
                          match=f'metadata.name: Duplicate value: "{rs_name}-'))
    assert message.startswith(f"pod default/{rs_name}-")
    assert message.endswith(f"made by both deployment default/web and replicaset "
                            f"default/{rs_name}")


def test_a_workload_without_a_name():
    bad = workload("Deployment", "web")
    del bad["metadata"]["name"]
    with pytest.raises(InvalidObjectError, match=re.escape(
            "deployment <unnamed>: metadata.name: Required value: name or generateName is "
            "required")):
        expand(bad)

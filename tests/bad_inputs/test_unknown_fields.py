"""Unknown fields refused as kubectl's strict decoding refuses them, for every kind ksched reads
and at every nesting level; a real-looking ``kubectl get -o json`` snapshot full of fields
ksched does not model loads; ``strict=False`` / ``--no-strict-fields`` warn instead."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

import ksched
from ksched.api.schema import (
    SCHEMA_CLIENT,
    UnknownFieldError,
    UnknownFieldWarning,
    strict_fields,
)
from ksched.cli import main
from ksched.coerce import as_node, as_pod
from ksched.io import read_objects

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop"},
       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _with(obj: dict, path: list[Any], value: Any) -> dict:
    obj = copy.deepcopy(obj)
    here = obj
    for step in path[:-1]:
        if isinstance(step, int):
            here = here[step]
        else:
            here = here.setdefault(step, {} if not isinstance(path[path.index(step) + 1], int)
                                   else [{}])
    here[path[-1]] = value
    return obj


#: (id, manifest, owner in the message, the unknown field's path).
CASES = [
    ("pod-top", {**POD, "Spec": {}}, "pod shop/web", "Spec"),
    ("pod-metadata", _with(POD, ["metadata", "Labels"], {"a": "b"}), "pod shop/web",
     "metadata.Labels"),
    ("pod-spread-policy", _with(POD, ["spec", "topologySpreadConstraints"], [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
         "NodeAffinityPolicy": "Honor"}]), "pod shop/web",
     "spec.topologySpreadConstraints[0].NodeAffinityPolicy"),
    ("pod-container", _with(POD, ["spec", "containers", 0, "resource"], {}), "pod shop/web",
     "spec.containers[0].resource"),
    ("pod-deep-affinity", _with(POD, ["spec", "affinity"], {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"],
                                   "value": "y"}]}]}}}), "pod shop/web",
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[0].value"),
    ("pod-status", _with(POD, ["status", "phaze"], "Running"), "pod shop/web", "status.phaze"),
    ("node-spec", _with(NODE, ["spec", "unSchedulable"], True), "node n1",
     "spec.unSchedulable"),
    ("node-taint", _with(NODE, ["spec", "taints"], [{"key": "k", "effect": "NoSchedule",
                                                     "Value": "v"}]), "node n1",
     "spec.taints[0].Value"),
    ("pv", {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
            "spec": {"capacity": {"storage": "1Gi"}, "storageClass": "fast"}},
     "persistentvolume pv1", "spec.storageClass"),
    ("pvc", {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                    "storageclassName": "x"}},
     "persistentvolumeclaim default/data", "spec.storageclassName"),
    ("storageclass", {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                      "metadata": {"name": "fast"}, "provisioner": "x",
                      "volumeBindingmode": "WaitForFirstConsumer"},
     "storageclass fast", "volumeBindingmode"),
    ("csinode", {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                 "metadata": {"name": "n1"}, "spec": {"drivers": [
                     {"name": "d", "nodeID": "n1", "allocatable": {"Count": 3}}]}},
     "csinode n1", "spec.drivers[0].allocatable.Count"),
    ("csidriver", {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                   "metadata": {"name": "d"}, "spec": {"attachrequired": False}},
     "csidriver d", "spec.attachrequired"),
    ("priorityclass", {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                       "metadata": {"name": "high"}, "value": 10, "globaldefault": True},
     "priorityclass high", "globaldefault"),
    ("pdb", {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
             "metadata": {"name": "b"}, "spec": {"minavailable": 1}},
     "poddisruptionbudget default/b", "spec.minavailable"),
    ("statefulset", {"apiVersion": "apps/v1", "kind": "StatefulSet",
                     "metadata": {"name": "s"}, "spec": {"replica": 3}},
     "statefulset default/s", "spec.replica"),
]


@pytest.mark.parametrize("manifest, owner, field", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_unknown_field_refused_naming_object_and_path(manifest, owner, field) -> None:
    with pytest.raises(UnknownFieldError) as info:
        read_objects(manifest)
    assert str(info.value).startswith(
        f'{owner}: strict decoding error: unknown field "{field}"')
    assert info.value.path == field


@pytest.mark.parametrize("manifest, owner, field", [c[1:] for c in CASES[:3]],
                         ids=[c[0] for c in CASES[:3]])
def test_unknown_field_refused_in_json_and_yaml_files(tmp_path: Path, manifest, owner,
                                                      field) -> None:
    import yaml

    listed = tmp_path / "list.json"
    listed.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                  "items": [NODE, manifest]}, indent=4))
    as_yaml = tmp_path / "obj.yaml"
    as_yaml.write_text(yaml.safe_dump(manifest))
    for path in (listed, as_yaml):
        with pytest.raises(UnknownFieldError, match=re.escape(f'unknown field "{field}"')):
            ksched.load_cluster(path)


def test_unknown_field_in_later_pod_of_a_known_shape(tmp_path: Path) -> None:
    """Pods of one shape are checked once; a pod of another shape is checked again."""
    pods = [_with(POD, ["metadata", "name"], f"p{i}") for i in range(5)]
    pods[3]["spec"]["containers"][0]["imagePullpolicy"] = "Always"
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    with pytest.raises(UnknownFieldError,
                       match=r'pod shop/p3: .*"spec.containers\[0\].imagePullpolicy"'):
        ksched.load_pods(path)


def test_unknown_field_of_the_list_itself(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [POD],
                                "metadata": {"resourceVersion": "1", "Continue": ""}}))
    with pytest.raises(UnknownFieldError, match='unknown field "metadata.Continue"'):
        ksched.load_pods(path)


def test_every_unknown_field_listed() -> None:
    manifest = {**POD, "Spec": {}, "extra": 1}
    with pytest.raises(UnknownFieldError) as info:
        read_objects(manifest)
    assert info.value.fields == ("Spec", "extra")
    assert 'unknown field "Spec", unknown field "extra"' in str(info.value)


def test_maps_and_free_form_values_are_not_checked() -> None:
    pod = copy.deepcopy(POD)
    pod["metadata"]["labels"] = {"Anything": "goes"}
    pod["metadata"]["annotations"] = {"NodeAffinityPolicy": "x"}
    pod["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update",
                                         "fieldsType": "FieldsV1",
                                         "fieldsV1": {"f:spec": {"f:Whatever": {}}}}]
    pod["spec"]["containers"][0]["resources"] = {"requests": {"memory": "1Gi"}}
    pod["spec"]["nodeSelector"] = {"Zone": "a"}
    assert read_objects(pod).pods[0].name == "web"


def test_strict_false_warns_and_reads(tmp_path: Path) -> None:
    manifest = CASES[2][1]
    with pytest.warns(UnknownFieldWarning,
                      match='unknown field "spec.topologySpreadConstraints\\[0\\]'):
        cluster = ksched.load_cluster([NODE, {**manifest, "spec": {
            **manifest["spec"], "nodeName": "n1"}}], strict=False)
    assert len(cluster.pods) == 1
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"kind": "List", "items": [manifest]}))
    with pytest.warns(UnknownFieldWarning):
        assert len(ksched.load_pods(path, strict=False)) == 1


def test_strict_must_be_a_bool() -> None:
    with pytest.raises(ksched.errors.ArgumentError, match="strict: must be True or False"):
        ksched.load_cluster([NODE], strict="no")


def test_cli_refuses_then_no_strict_fields_warns(tmp_path: Path, capsys) -> None:
    path = tmp_path / "cluster.json"
    bad = _with(POD, ["spec", "nodeSelektor"], {"a": "b"})
    path.write_text(json.dumps({"kind": "List", "items": [NODE, bad]}))
    assert main(["schedule", str(path)]) == 2
    assert 'unknown field "spec.nodeSelektor"' in capsys.readouterr().err
    assert main(["schedule", str(path), "--no-strict-fields"]) == 0
    assert capsys.readouterr().err.splitlines()[0] == (
        'ksched: warning: pod shop/web: strict decoding error: unknown field '
        '"spec.nodeSelektor" (ignored)')


def test_schema_generated_from_the_v1_35_client() -> None:
    assert SCHEMA_CLIENT.startswith("35.")


def _kubectl_pod(i: int) -> dict:
    """A pod as ``kubectl get pods -o json`` prints it, with many fields ksched ignores."""
    name = f"web-7d4b9c-{i:05d}"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2024-01-01T00:00:00Z"},
            "creationTimestamp": "2024-01-01T00:00:00Z", "generateName": "web-7d4b9c-",
            "labels": {"app": "web", "pod-template-hash": "7d4b9c"},
            "name": name, "namespace": "shop", "resourceVersion": str(1000 + i),
            "uid": f"0000-{i}",
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True,
                                 "controller": True, "kind": "ReplicaSet",
                                 "name": "web-7d4b9c", "uid": "rs-1"}],
            "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}},
                               "manager": "kube-controller-manager", "operation": "Update",
                               "time": "2024-01-01T00:00:00Z"}],
            "finalizers": ["example.com/guard"],
        },
        "spec": {
            "containers": [{
                "name": "main", "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent",
                "args": ["--port=8080"], "command": ["nginx"],
                "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {
                    "apiVersion": "v1", "fieldPath": "status.podIP"}}}],
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http",
                                               "scheme": "HTTP"},
                                   "periodSeconds": 10, "failureThreshold": 3},
                "livenessProbe": {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 5},
                "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                              "limits": {"memory": "128Mi"}},
                "securityContext": {"allowPrivilegeEscalation": False,
                                    "capabilities": {"drop": ["ALL"]},
                                    "runAsNonRoot": True,
                                    "seccompProfile": {"type": "RuntimeDefault"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                                  "name": f"kube-api-access-{i:05d}", "readOnly": True},
                                 {"mountPath": "/cache", "name": "cache"}],
            }],
            "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "nodeName": "n1",
            "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "securityContext": {"fsGroup": 2000}, "serviceAccount": "default",
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
            "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["db"]}],
            "dnsConfig": {"options": [{"name": "ndots", "value": "2"}]},
            "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready",
                             "operator": "Exists", "tolerationSeconds": 300}],
            "volumes": [
                {"name": f"kube-api-access-{i:05d}", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}],
                                   "name": "kube-root-ca.crt"}},
                    {"downwardAPI": {"items": [{"fieldRef": {
                        "apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        "path": "namespace"}]}}]}},
                {"name": "cache", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
                {"name": "conf", "secret": {"secretName": "web-conf", "defaultMode": 256}},
            ],
        },
        "status": {
            "conditions": [{"lastProbeTime": None, "lastTransitionTime": "2024-01-01T00:00:01Z",
                            "status": "True", "type": t}
                           for t in ("PodReadyToStartContainers", "Initialized", "Ready",
                                     "ContainersReady", "PodScheduled")],
            "containerStatuses": [{
                "containerID": f"containerd://{i:064x}", "image": "nginx:1.25",
                "imageID": "nginx@sha256:abc", "lastState": {}, "name": "main",
                "ready": True, "restartCount": 0, "started": True,
                "state": {"running": {"startedAt": "2024-01-01T00:00:01Z"}},
                "volumeMounts": [{"mountPath": "/cache", "name": "cache"}],
            }],
            "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}], "phase": "Running",
            "podIP": f"10.1.0.{i % 250}", "podIPs": [{"ip": f"10.1.0.{i % 250}"}],
            "qosClass": "Burstable", "startTime": "2024-01-01T00:00:00Z",
        },
    }


def _kubectl_node() -> dict:
    node = copy.deepcopy(NODE)
    node["metadata"].update({"labels": {"kubernetes.io/hostname": "n1"},
                             "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
                             "uid": "u", "resourceVersion": "5"})
    node["spec"] = {"podCIDR": "10.1.0.0/24", "podCIDRs": ["10.1.0.0/24"],
                    "providerID": "aws:///us-east-1a/i-1"}
    node["status"].update({
        "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
        "addresses": [{"address": "10.0.0.1", "type": "InternalIP"}],
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "ok", "lastHeartbeatTime": "2024-01-01T00:00:00Z",
                        "lastTransitionTime": "2024-01-01T00:00:00Z"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "images": [{"names": ["nginx:1.25"], "sizeBytes": 1000}],
        "nodeInfo": {"architecture": "amd64", "bootID": "b", "containerRuntimeVersion": "c",
                     "kernelVersion": "k", "kubeProxyVersion": "", "kubeletVersion": "v1.35.4",
                     "machineID": "m", "operatingSystem": "linux", "osImage": "o",
                     "systemUUID": "s"},
        "runtimeHandlers": [{"name": "runc", "features": {"recursiveReadOnlyMounts": True,
                                                          "userNamespaces": True}}],
        "features": {"supplementalGroupsPolicy": True},
    })
    return node


def test_real_looking_kubectl_snapshot_loads(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    items = [_kubectl_node()] + [_kubectl_pod(i) for i in range(30)]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items,
                                "metadata": {"resourceVersion": ""}}, indent=4))
    cluster = ksched.load_cluster(path)
    assert cluster.num_nodes == 1 and len(cluster.pods) == 30
    pending = [{**p, "spec": {k: v for k, v in p["spec"].items() if k != "nodeName"},
                "status": {"phase": "Pending"}} for p in items[1:]]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "PodList", "items": pending}))
    assert len(ksched.load_pods(path)) == 30


@pytest.mark.parametrize(("convert", "manifest", "field"), [
    (as_pod, _with(POD, ["spec", "containers", 0, "imagee"], "x"), "spec.containers[0].imagee"),
    (as_pod, {**POD, "extra": 1}, "extra"),
    (as_node, _with(NODE, ["spec", "taint"], []), "spec.taint"),
], ids=["pod-container", "pod-top", "node"])
def test_single_object_entry_points_check_fields(convert, manifest, field) -> None:
    with pytest.raises(UnknownFieldError, match=f'unknown field "{re.escape(field)}"'):
        convert(manifest)
    with strict_fields(False), pytest.warns(UnknownFieldWarning, match=re.escape(field)):
        assert convert(manifest).name == manifest["metadata"]["name"]

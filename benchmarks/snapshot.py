"""A realistic ``kubectl get nodes,pods -A -o json`` snapshot, written straight to a file.

Nodes carry what a cloud node reports (a dozen labels, annotations, taints on some,
addresses, allocatable and capacity, four conditions, 8-24 images, nodeInfo); pods belong to
a few hundred Deployments (ReplicaSet owners) and carry full metadata (annotations,
ownerReferences; managedFields on request), a spec as the API server stores it after
defaulting (the projected service-account volume with its per-pod name, tolerations) and a
status with conditions and container statuses. The layout is kubectl's: keys sorted,
four-space indent (20,000 nodes and 100,000 pods make about 1.1 GB).
:func:`write_lean_snapshot` writes :func:`ksched.workloads.kubectl_snapshot`'s lean objects
in the same layout (about 310 MB at that size).

``python benchmarks/snapshot.py NODES PODS OUT.json`` writes one; :func:`cached_snapshot`
writes one once per machine (in the temporary directory) and reuses it.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from pathlib import Path

_T0 = 1_700_000_000  # 2023-11-14T22:13:20Z


def _ts(seconds: int) -> str:
    import datetime

    moment = datetime.datetime.fromtimestamp(_T0 + seconds, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _fields(paths: list[str]) -> dict:
    """A managedFields ``fieldsV1`` tree for ``|``-separated ``f:`` paths."""
    out: dict = {}
    for path in paths:
        node = out
        for part in path.split("|"):
            node = node.setdefault(part, {})
    out.setdefault(".", {})
    return out


def _template(obj: dict, indent: str) -> str:
    """``obj`` as kubectl prints it inside ``items`` (sorted keys, four spaces), with ``%``
    escaped except in ``@@name@@`` placeholders, which become ``%(name)s``."""
    text = json.dumps(obj, indent=4, sort_keys=True).replace("%", "%%")
    while "@@" in text:
        head, _, rest = text.partition("@@")
        name, _, tail = rest.partition("@@")
        text = f"{head}%({name})s{tail}"
    return indent + text.replace("\n", "\n" + indent)


def _node_template(rng: random.Random, pool: int, tainted: bool, managed: bool) -> str:
    zone = f"us-east-1{'abcdef'[pool % 6]}"
    itype = ["m5.2xlarge", "m5.4xlarge", "c5.4xlarge", "r5.2xlarge"][pool % 4]
    images = [{"names": [f"registry.example.com/team{k % 17}/service{k}@sha256:{k * 7919:064x}",
                         f"registry.example.com/team{k % 17}/service{k}:v1.{k % 9}.{k % 5}"],
               "sizeBytes": 10_000_000 + 3_000_017 * k}
              for k in rng.sample(range(400), rng.randint(8, 24))]
    conditions = [{"lastHeartbeatTime": "@@beat@@", "lastTransitionTime": _ts(-86400 * 30),
                   "message": message, "reason": reason, "status": status, "type": kind}
                  for kind, status, reason, message in [
                      ("MemoryPressure", "False", "KubeletHasSufficientMemory",
                       "kubelet has sufficient memory available"),
                      ("DiskPressure", "False", "KubeletHasNoDiskPressure",
                       "kubelet has no disk pressure"),
                      ("PIDPressure", "False", "KubeletHasSufficientPID",
                       "kubelet has sufficient PID available"),
                      ("Ready", "True", "KubeletReady", "kubelet is posting ready status")]]
    node = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": "@@ip@@",
                "csi.volume.kubernetes.io/nodeid": '{"ebs.csi.aws.com":"@@instance@@"}',
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "creationTimestamp": "@@created@@",
            "labels": {
                "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": itype,
                "beta.kubernetes.io/os": "linux", "eks.amazonaws.com/nodegroup": f"pool-{pool}",
                "failure-domain.beta.kubernetes.io/region": "us-east-1",
                "failure-domain.beta.kubernetes.io/zone": zone,
                "k8s.io/cloud-provider-aws": "a94967527effcefb5f5829f529c0a1b9",
                "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": "@@name@@",
                "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": itype,
                "topology.ebs.csi.aws.com/zone": zone,
                "topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": zone},
            "managedFields": [
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": _fields([
                    "f:metadata|f:annotations|f:alpha.kubernetes.io/provided-node-ip",
                    "f:metadata|f:labels|f:kubernetes.io/hostname",
                    "f:metadata|f:labels|f:topology.kubernetes.io/zone",
                    "f:spec|f:providerID"]),
                 "manager": "kubelet", "operation": "Update", "time": "@@created@@"},
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": _fields([
                    "f:status|f:conditions|k:{\"type\":\"Ready\"}|f:lastHeartbeatTime",
                    "f:status|f:conditions|k:{\"type\":\"Ready\"}|f:status",
                    "f:status|f:images", "f:status|f:nodeInfo|f:bootID"]),
                 "manager": "kubelet", "operation": "Update", "subresource": "status",
                 "time": "@@beat@@"}],
            "name": "@@name@@", "resourceVersion": "@@rv@@", "uid": "@@uid@@"},
        "spec": {"podCIDR": "@@cidr@@", "podCIDRs": ["@@cidr@@"],
                 "providerID": f"aws:///{zone}/@@instance@@",
                 **({"taints": [{"effect": "NoSchedule", "key": "dedicated",
                                 "value": f"pool-{pool}"}]} if tainted else {})},
        "status": {
            "addresses": [{"address": "@@ip@@", "type": "InternalIP"},
                          {"address": "@@name@@", "type": "InternalDNS"},
                          {"address": "@@name@@", "type": "Hostname"}],
            "allocatable": {"cpu": "7910m", "ephemeral-storage": "95551679124",
                            "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                            "memory": "31391728Ki", "pods": "110"},
            "capacity": {"cpu": "8", "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0",
                         "hugepages-2Mi": "0", "memory": "32408560Ki", "pods": "110"},
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {"architecture": "amd64", "bootID": "@@uid@@",
                         "containerRuntimeVersion": "containerd://1.7.22",
                         "kernelVersion": "6.1.112-124.190.amzn2023.x86_64",
                         "kubeProxyVersion": "v1.35.4", "kubeletVersion": "v1.35.4",
                         "machineID": "@@instance@@", "operatingSystem": "linux",
                         "osImage": "Amazon Linux 2023.6.20241031",
                         "systemUUID": "@@uid@@"}}}
    if not managed:
        del node["metadata"]["managedFields"]
    return _template(node, " " * 8)


def _pod_template(rng: random.Random, app: str, namespace: str, tolerates: bool,
                  managed: bool) -> str:
    containers = []
    for k in range(rng.choice([1, 1, 1, 2])):
        name = "main" if k == 0 else f"sidecar-{k}"
        containers.append({
            "image": f"registry.example.com/{namespace}/{app}-{name}:v{rng.randint(1, 9)}.0",
            "imagePullPolicy": "IfNotPresent", "name": name,
            "ports": [{"containerPort": 8080 + k, "name": "http", "protocol": "TCP"}],
            "resources": {"limits": {"memory": f"{rng.choice([256, 512, 1024])}Mi"},
                          "requests": {"cpu": f"{rng.choice([50, 100, 250, 500])}m",
                                       "memory": f"{rng.choice([64, 128, 256])}Mi"}},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                              "name": "@@volume@@", "readOnly": True}]})
    statuses = [{"containerID": "containerd://@@cid@@", "image": c["image"],
                 "imageID": c["image"].split(":")[0] + "@sha256:@@cid@@", "lastState": {},
                 "name": c["name"], "ready": True, "restartCount": 0, "started": True,
                 "state": {"running": {"startedAt": "@@started@@"}}} for c in containers]
    tolerations = [{"effect": "NoExecute", "key": f"node.kubernetes.io/{t}",
                    "operator": "Exists", "tolerationSeconds": 300}
                   for t in ("not-ready", "unreachable")]
    if tolerates:
        tolerations.append({"effect": "NoSchedule", "key": "dedicated", "operator": "Exists"})
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "annotations": {"kubectl.kubernetes.io/restartedAt": _ts(-3600),
                            "prometheus.io/scrape": "true"},
            "creationTimestamp": "@@created@@", "generateName": f"{app}-@@hash@@-",
            "labels": {"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": namespace,
                       "pod-template-hash": "@@hash@@"},
            "managedFields": [
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": _fields(
                    ["f:metadata|f:generateName", "f:metadata|f:labels|f:app.kubernetes.io/name",
                     'f:metadata|f:ownerReferences|k:{"uid":"@@owner@@"}']
                    + [f'f:spec|f:containers|k:{{"name":"{c["name"]}"}}|f:image'
                       for c in containers]),
                 "manager": "kube-controller-manager", "operation": "Update",
                 "time": "@@created@@"},
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": _fields(
                    ['f:status|f:conditions|k:{"type":"Ready"}|f:status',
                     "f:status|f:containerStatuses", "f:status|f:podIP", "f:status|f:startTime"]),
                 "manager": "kubelet", "operation": "Update", "subresource": "status",
                 "time": "@@started@@"}],
            "name": "@@name@@", "namespace": namespace,
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True,
                                 "controller": True, "kind": "ReplicaSet",
                                 "name": f"{app}-@@hash@@", "uid": "@@owner@@"}],
            "resourceVersion": "@@rv@@", "uid": "@@uid@@"},
        "spec": {
            "containers": containers, "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
            "nodeName": "@@node@@", "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "securityContext": {}, "serviceAccount": "default", "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30, "tolerations": tolerations,
            "volumes": [{"name": "@@volume@@", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}],
                               "name": "kube-root-ca.crt"}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1",
                                                         "fieldPath": "metadata.namespace"},
                                            "path": "namespace"}]}}]}}]},
        "status": {
            "conditions": [{"lastProbeTime": None, "lastTransitionTime": "@@started@@",
                            "status": "True", "type": kind}
                           for kind in ("PodReadyToStartContainers", "Initialized", "Ready",
                                        "ContainersReady", "PodScheduled")],
            "containerStatuses": statuses, "hostIP": "@@hostip@@",
            "hostIPs": [{"ip": "@@hostip@@"}], "phase": "Running", "podIP": "@@podip@@",
            "podIPs": [{"ip": "@@podip@@"}], "qosClass": "Burstable",
            "startTime": "@@started@@"}}
    if not managed:
        del pod["metadata"]["managedFields"]
    return _template(pod, " " * 8)


def write_snapshot(path: str | os.PathLike, nodes: int, pods: int, deployments: int = 300,
                   seed: int = 0, managed_fields: bool = False) -> Path:
    """Write the snapshot to ``path`` (nodes first, then pods, as kubectl lists them).

    ``managed_fields``: keep ``metadata.managedFields``, which kubectl leaves out unless
    ``--show-managed-fields`` is given (the file roughly doubles).
    """
    rng = random.Random(seed)
    path = Path(path)
    node_templates = [_node_template(rng, pool, pool % 8 == 7, managed_fields)
                      for pool in range(24)]
    apps = [(f"svc-{d:03d}", f"team-{d % 23}") for d in range(deployments)]
    pod_templates = [_pod_template(rng, app, ns, d % 8 == 7, managed_fields)
                     for d, (app, ns) in enumerate(apps)]
    names = [f"ip-10-{i // 62500}-{i // 250 % 250}-{i % 250}.ec2.internal" for i in range(nodes)]
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        first = True
        for i, name in enumerate(names):
            f.write(("" if first else ",\n") + node_templates[i % 24] % {
                "name": name, "uid": f"{rng.getrandbits(128):032x}", "ip": f"10.{i}",
                "instance": f"i-{rng.getrandbits(64):016x}", "cidr": f"100.{i % 250}.0.0/24",
                "created": _ts(-86400 * 30 + i), "beat": _ts(-i % 60), "rv": str(1000 + i)})
            first = False
        for j in range(pods):
            d = j % deployments
            app = apps[d][0]
            suffix = f"{j * 2654435761 % 2**24:06x}"  # unique per pod (an odd multiplier)
            f.write(",\n" + pod_templates[d] % {
                "name": f"{app}-{d * 7919 % 99991:x}-{suffix}", "hash": f"{d * 7919 % 99991:x}",
                "uid": f"{rng.getrandbits(128):032x}", "owner": f"rs-{d}",
                "node": names[rng.randrange(nodes)], "volume": f"kube-api-access-{suffix}",
                "cid": f"{rng.getrandbits(256):064x}", "created": _ts(-3600 + j % 3000),
                "started": _ts(-3000 + j % 3000), "rv": str(500000 + j),
                "hostip": f"10.0.{j % 250}.{j % 200}", "podip": f"100.{j % 250}.{j % 200}.9"})
        f.write('\n    ],\n    "kind": "List",\n    "metadata": {\n'
                '        "resourceVersion": ""\n    }\n}\n')
    tmp.replace(path)
    return path


def write_lean_snapshot(path: str | os.PathLike, nodes: int, pods: int) -> Path:
    """:func:`ksched.workloads.kubectl_snapshot`'s lean objects (no status noise, no
    per-pod volumes) in kubectl's layout: 20,000 nodes and 100,000 pods make about 310 MB."""
    from ksched.workloads import kubectl_snapshot

    path = Path(path)
    items = kubectl_snapshot(nodes, pods)["items"]
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        f.write(",\n".join(_template(item, " " * 8).replace("%%", "%") for item in items))
        f.write('\n    ],\n    "kind": "List",\n    "metadata": {\n'
                '        "resourceVersion": ""\n    }\n}\n')
    tmp.replace(path)
    return path


def cached_snapshot(nodes: int, pods: int, lean: bool = False) -> Path:
    """The snapshot of ``nodes`` and ``pods`` (:func:`write_snapshot`, or
    :func:`write_lean_snapshot`), written once into the temporary directory."""
    folder = Path(tempfile.gettempdir()) / "ksched-bench"
    folder.mkdir(exist_ok=True)
    path = folder / f"kubectl-snapshot-{nodes}n-{pods}p-{'lean-' if lean else ''}v2.json"
    if not path.exists():
        (write_lean_snapshot if lean else write_snapshot)(path, nodes, pods)
    return path


if __name__ == "__main__":
    write_snapshot(sys.argv[3], int(sys.argv[1]), int(sys.argv[2]))

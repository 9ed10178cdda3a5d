"""The storage objects in: PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities read from their wire format (exact values, the API server's defaulting), a
pod's volumes, every source ``read_objects`` takes, the cluster's lookups, and the states built
from a cluster keeping them."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import ksched
from ksched.api import (
    ClaimRef,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    LabelSelector,
    LabelSelectorRequirement,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    TopologySelectorLabelRequirement,
    TopologySelectorTerm,
    Volume,
)
from ksched.conformance import run_case
from ksched.storage_listers import EMPTY_STORAGE, StorageObjects

GI = 1 << 30
STORAGE = "storage.k8s.io/v1"
CONFORMANCE = Path(__file__).parent / "conformance"

PV = {
    "apiVersion": "v1", "kind": "PersistentVolume",
    "metadata": {"name": "pv-a", "labels": {"topology.kubernetes.io/zone": "z1"},
                 "annotations": {"pv.kubernetes.io/provisioned-by": "ebs.csi.aws.com"}},
    "spec": {"capacity": {"storage": "50Gi"}, "accessModes": ["ReadWriteOnce"],
             "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "gp3",
             "volumeMode": "Filesystem",
             "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1", "fsType": "ext4"},
             "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                 {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}]}]}},
             "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "db", "name": "data-0",
                          "uid": "u-1", "apiVersion": "v1"}},
    "status": {"phase": "Bound"}}
PVC = {
    "apiVersion": "v1", "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data-0", "namespace": "db", "uid": "u-1",
                 "annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                 "volume.kubernetes.io/selected-node": "n1"}},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1.5Gi"}},
             "storageClassName": "gp3", "volumeName": "pv-a", "volumeMode": "Filesystem",
             "selector": {"matchLabels": {"tier": "db"}}},
    "status": {"phase": "Bound", "capacity": {"storage": "50Gi"}}}
SC = {"apiVersion": STORAGE, "kind": "StorageClass", "metadata": {"name": "gp3"},
      "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer",
      "reclaimPolicy": "Retain", "parameters": {"type": "gp3"},
      "allowedTopologies": [{"matchLabelExpressions": [
          {"key": "topology.kubernetes.io/zone", "values": ["z1", "z2"]}]}]}
CSI_NODE = {"apiVersion": STORAGE, "kind": "CSINode",
            "metadata": {"name": "n1", "annotations": {
                "storage.alpha.kubernetes.io/migrated-plugins":
                    "kubernetes.io/aws-ebs,kubernetes.io/gce-pd"}},
            "spec": {"drivers": [
                {"name": "ebs.csi.aws.com", "nodeID": "i-1",
                 "topologyKeys": ["topology.kubernetes.io/zone"], "allocatable": {"count": 25}},
                {"name": "nfs.csi.k8s.io", "nodeID": "n1"}]}}
CSI_DRIVER = {"apiVersion": STORAGE, "kind": "CSIDriver", "metadata": {"name": "ebs.csi.aws.com"},
              "spec": {"attachRequired": True, "podInfoOnMount": False,
                       "storageCapacity": True, "volumeLifecycleModes": ["Persistent"]}}
CAPACITY = {"apiVersion": STORAGE, "kind": "CSIStorageCapacity",
            "metadata": {"name": "cap-z1", "namespace": "kube-system"},
            "storageClassName": "gp3", "capacity": "100Gi", "maximumVolumeSize": "16Ti",
            "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "z1"}}}
STORAGE_OBJECTS = [PV, PVC, SC, CSI_NODE, CSI_DRIVER, CAPACITY]


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, node: str = "", volumes: list | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "volumes": volumes or []}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "db"},
            "spec": spec}


# --------------------------------------------------------------------------- each kind


def test_a_persistent_volume_reads_exactly() -> None:
    zone = NodeSelectorTerm((NodeSelectorRequirement("topology.kubernetes.io/zone", "In",
                                                     ("z1",)),))
    assert PersistentVolume.from_manifest(PV) == PersistentVolume(
        name="pv-a", labels={"topology.kubernetes.io/zone": "z1"}, capacity=50 * GI,
        access_modes=("ReadWriteOnce",), volume_mode="Filesystem", storage_class="gp3",
        reclaim_policy="Delete", node_affinity=(zone,), claim_ref=ClaimRef("db", "data-0", "u-1"),
        phase="Bound", source="csi", driver="ebs.csi.aws.com", volume_handle="vol-1")


def test_a_persistent_volume_is_defaulted_as_the_api_server_stores_it() -> None:
    """``SetDefaults_PersistentVolume``: ``Retain``, ``Filesystem``, phase ``Pending``; no
    node affinity and no claim stay ``None``; the beta class annotation wins."""
    pv = PersistentVolume.from_manifest({
        "kind": "PersistentVolume", "metadata": {
            "name": "old", "annotations": {"volume.beta.kubernetes.io/storage-class": "slow"}},
        "spec": {"capacity": {"storage": "1500m"}, "accessModes": ["ReadOnlyMany"],
                 "storageClassName": "fast",
                 "gcePersistentDisk": {"pdName": "disk-1", "partition": 2, "readOnly": True}}})
    assert (pv.reclaim_policy, pv.volume_mode, pv.phase, pv.node_affinity, pv.claim_ref) == (
        "Retain", "Filesystem", "Pending", None, None)
    assert (pv.storage_class, pv.capacity) == ("slow", 2)  # 1.5 bytes, rounded up
    assert (pv.source, pv.pd_name, pv.partition, pv.read_only) == (
        "gcePersistentDisk", "disk-1", 2, True)


@pytest.mark.parametrize(("source", "fields"), [
    ({"awsElasticBlockStore": {"volumeID": "vol-9"}}, {"volume_id": "vol-9"}),
    ({"rbd": {"monitors": ["m1", "m2"], "image": "img"}},
     {"monitors": ("m1", "m2"), "rbd_pool": "rbd", "rbd_image": "img"}),
    ({"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:disk",
                "lun": 3, "readOnly": True}},
     {"target_portal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:disk", "lun": 3,
      "read_only": True}),
    ({"azureDisk": {"diskName": "d", "diskURI": "/subscriptions/s/disks/d"}},
     {"disk_uri": "/subscriptions/s/disks/d", "disk_kind": "Shared"}),
    ({"cinder": {"volumeID": "c-1"}}, {"volume_id": "c-1"}),
    ({"nfs": {"server": "nfs", "path": "/x"}}, {}),
])
def test_a_persistent_volumes_source_fields(source: dict, fields: dict) -> None:
    pv = PersistentVolume.from_manifest({
        "kind": "PersistentVolume", "metadata": {"name": "pv"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], **source}})
    assert pv == PersistentVolume("pv", capacity=GI, access_modes=("ReadWriteOnce",),
                                  source=next(iter(source)), **fields)


def test_a_claim_reads_exactly() -> None:
    assert PersistentVolumeClaim.from_manifest(PVC) == PersistentVolumeClaim(
        name="data-0", namespace="db", uid="u-1", access_modes=("ReadWriteOnce",),
        request=3 * GI // 2, storage_class="gp3", volume_name="pv-a", volume_mode="Filesystem",
        selector=LabelSelector({"tier": "db"}), phase="Bound", bind_completed=True,
        selected_node="n1")


def test_a_claim_is_defaulted_and_reads_its_legacy_class_and_owner() -> None:
    claim = PersistentVolumeClaim.from_manifest({
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "web-cache", "annotations": {
            "volume.beta.kubernetes.io/storage-class": "legacy"},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "other"},
                {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "pod-uid",
                 "controller": True}]},
        "spec": {"accessModes": ["ReadWriteOncePod"], "resources": {"requests": {
            "storage": "1G"}}, "storageClassName": "ignored",
            "selector": {"matchExpressions": [{"key": "tier", "operator": "In",
                                               "values": ["db"]}]}}})
    assert claim == PersistentVolumeClaim(
        "web-cache", access_modes=("ReadWriteOncePod",), request=10**9, storage_class="legacy",
        selector=LabelSelector(match_expressions=(
            LabelSelectorRequirement("tier", "In", ("db",)),)),
        controller_uid="pod-uid")
    assert (claim.namespace, claim.phase, claim.volume_mode, claim.bind_completed) == (
        "default", "Pending", "Filesystem", False)


def test_a_storage_class_reads_exactly_and_defaults() -> None:
    assert StorageClass.from_manifest(SC) == StorageClass(
        "gp3", "ebs.csi.aws.com", "WaitForFirstConsumer", "Retain",
        (TopologySelectorTerm((TopologySelectorLabelRequirement(
            "topology.kubernetes.io/zone", ("z1", "z2")),)),), {"type": "gp3"})
    plain = StorageClass.from_manifest({"kind": "StorageClass", "metadata": {"name": "std"},
                                        "provisioner": "kubernetes.io/no-provisioner"})
    assert (plain.volume_binding_mode, plain.reclaim_policy, plain.allowed_topologies) == (
        "Immediate", "Delete", ())


def test_a_csi_node_and_a_csi_driver_read_exactly() -> None:
    assert CSINode.from_manifest(CSI_NODE) == CSINode("n1", (
        CSINodeDriver("ebs.csi.aws.com", "i-1", ("topology.kubernetes.io/zone",), 25),
        CSINodeDriver("nfs.csi.k8s.io", "n1")),
        ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd"))
    assert CSINode.from_manifest(CSI_NODE).driver("nfs.csi.k8s.io").allocatable is None
    assert CSIDriver.from_manifest(CSI_DRIVER) == CSIDriver("ebs.csi.aws.com",
                                                            storage_capacity=True)
    bare = CSIDriver.from_manifest({"kind": "CSIDriver", "metadata": {"name": "x.example.com"},
                                    "spec": {"attachRequired": False}})
    assert (bare.attach_required, bare.storage_capacity, bare.fs_group_policy,
            bare.volume_lifecycle_modes) == (False, False, "ReadWriteOnceWithFSType",
                                             ("Persistent",))


def test_a_csi_storage_capacity_reads_exactly() -> None:
    assert CSIStorageCapacity.from_manifest(CAPACITY) == CSIStorageCapacity(
        "cap-z1", "kube-system", "gp3", LabelSelector({"topology.kubernetes.io/zone": "z1"}),
        100 * GI, 16 << 40)


# --------------------------------------------------------------------------- a pod's volumes


def test_a_pods_volumes_carry_what_the_volume_plugins_read() -> None:
    pod = Pod.from_manifest(_pod("web-0", volumes=[
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-0", "readOnly": True}},
        {"name": "cache", "ephemeral": {"volumeClaimTemplate": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}}},
        {"name": "pd", "gcePersistentDisk": {"pdName": "disk-1", "readOnly": True}},
        {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-1", "partition": 1}},
        {"name": "ceph", "rbd": {"monitors": ["a:6789"], "pool": "kube", "image": "img"}},
        {"name": "lun", "iscsi": {"targetPortal": "10.0.0.1", "iqn": "iqn.2001-04.com.x:y",
                                  "lun": 7}},
        {"name": "inline", "csi": {"driver": "secrets-store.csi.k8s.io"}},
        {"name": "token", "projected": {"sources": []}},
    ]))
    assert pod.volumes == (
        Volume("data", "persistentVolumeClaim", claim_name="data-0", read_only=True),
        Volume("cache", "ephemeral"),
        Volume("pd", "gcePersistentDisk", pd_name="disk-1", read_only=True),
        Volume("ebs", "awsElasticBlockStore", volume_id="vol-1", partition=1),
        Volume("ceph", "rbd", monitors=("a:6789",), rbd_pool="kube", rbd_image="img"),
        Volume("lun", "iscsi", target_portal="10.0.0.1", iqn="iqn.2001-04.com.x:y", lun=7),
        Volume("inline", "csi", driver="secrets-store.csi.k8s.io"),
        Volume("token", "projected"),
    )
    assert [(v.uses_claim, v.claim_for(pod.name)) for v in pod.volumes[:3]] == [
        (True, "data-0"), (True, "web-0-cache"), (False, "")]
    assert pod.renamed("web-1").volumes[1].claim_for("web-1") == "web-1-cache"


def test_a_pod_without_volumes_has_none() -> None:
    assert Pod.from_manifest(_pod("p")).volumes == ()


# --------------------------------------------------------------------------- every source


def _kubectl_list() -> dict[str, Any]:
    """``kubectl get nodes,pods,pv,pvc,sc,csinode,csidriver,csistoragecapacities -A -o json``."""
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
            "items": [_node("n1"), _pod("db-0", "n1", [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}}]),
                      *copy.deepcopy(STORAGE_OBJECTS)]}


def _check(objects: ksched.Objects) -> None:
    assert [v.name for v in objects.persistent_volumes] == ["pv-a"]
    assert [c.key for c in objects.persistent_volume_claims] == ["db/data-0"]
    assert [c.name for c in objects.storage_classes] == ["gp3"]
    assert [n.name for n in objects.csi_nodes] == ["n1"]
    assert [d.name for d in objects.csi_drivers] == ["ebs.csi.aws.com"]
    assert [c.name for c in objects.csi_storage_capacities] == ["cap-z1"]
    assert objects.persistent_volumes[0] == PersistentVolume.from_manifest(PV)
    assert objects.csi_nodes[0] == CSINode.from_manifest(CSI_NODE)


def test_read_objects_round_trip_of_a_kubectl_list(tmp_path: Path) -> None:
    expected = ksched.read_objects(_kubectl_list())
    _check(expected)
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(_kubectl_list(), indent=1))
    assert ksched.read_objects(path) == expected
    with gzip.open(tmp_path / "snapshot.json.gz", "wt") as f:
        json.dump(_kubectl_list(), f)
    assert ksched.read_objects(tmp_path / "snapshot.json.gz") == expected
    (tmp_path / "more.yaml").write_text(yaml.safe_dump_all(_kubectl_list()["items"]))
    assert ksched.read_objects(tmp_path / "more.yaml") == expected
    folder = tmp_path / "split"
    folder.mkdir()
    for i, item in enumerate(_kubectl_list()["items"]):
        (folder / f"{i:02d}.yaml").write_text(yaml.safe_dump(item))
    assert ksched.read_objects(folder) == expected
    typed = [{"apiVersion": "v1", "kind": f"{o['kind']}List",
              "items": [{k: v for k, v in o.items() if k != "kind"}]}
             for o in _kubectl_list()["items"]]  # kubectl get pv -o json: items without kind
    assert ksched.read_objects(typed) == expected


def test_read_objects_takes_client_models_and_their_snake_case_dicts() -> None:
    client = pytest.importorskip("kubernetes").client
    api = client.ApiClient()

    def model(obj: dict[str, Any]) -> Any:
        return api.deserialize(json.dumps(obj), f"V1{obj['kind']}", "application/json")

    models = [model(o) for o in STORAGE_OBJECTS]
    expected = ksched.read_objects(STORAGE_OBJECTS)
    assert ksched.read_objects(models) == expected
    snake = [m.to_dict() for m in models]
    assert "access_modes" in snake[0]["spec"]  # not the wire form
    assert ksched.read_objects(snake) == expected
    items = client.V1PersistentVolumeList(items=[models[0]])
    assert ksched.read_objects(items).persistent_volumes == expected.persistent_volumes


def test_the_cluster_holds_the_storage_objects_with_their_lookups(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(_kubectl_list()))
    for cluster in (ksched.load_cluster(path),
                    ksched.cluster_from_objects(ksched.read_objects(path))):
        storage = cluster.storage
        assert storage.claim("db", "data-0").volume_name == "pv-a"
        assert storage.claim("default", "data-0") is None
        assert storage.volume("pv-a").capacity == 50 * GI
        assert storage.volume("pv-b") is None
        assert storage.storage_class("gp3").volume_binding_mode == "WaitForFirstConsumer"
        assert storage.csi_node("n1").driver("ebs.csi.aws.com").allocatable == 25
        assert storage.csi_node("n2") is None
        assert storage.csi_driver("ebs.csi.aws.com").storage_capacity
        assert [c.name for c in storage.capacities("gp3")] == ["cap-z1"]
        assert storage == ksched.read_objects(path).storage
    assert ksched.load_cluster([_node("n1")]).storage is EMPTY_STORAGE
    assert not EMPTY_STORAGE and ksched.read_objects(path).storage


def test_storage_updated_replaces_and_adds_in_order() -> None:
    storage = ksched.read_objects(STORAGE_OBJECTS).storage
    claimed = PersistentVolumeClaim("data-0", "db", volume_name="pv-b", phase="Bound")
    other = PersistentVolumeClaim("logs", "db")
    pv_b = PersistentVolume("pv-b", capacity=GI, claim_ref=ClaimRef("db", "data-0"))
    new = storage.updated(volumes=[pv_b], claims=[other, claimed])
    assert [c.key for c in new.persistent_volume_claims] == ["db/data-0", "db/logs"]
    assert new.claim("db", "data-0") is claimed and new.volume("pv-b") is pv_b
    assert [v.name for v in new.persistent_volumes] == ["pv-a", "pv-b"]
    assert storage.claim("db", "data-0").volume_name == "pv-a"  # unchanged
    assert new.storage_class("gp3") is storage.storage_class("gp3")


def test_states_rebuilt_from_a_cluster_keep_its_storage_objects() -> None:
    objects = ksched.read_objects([_node("n1"), _node("n2"), *STORAGE_OBJECTS])
    cluster = ksched.cluster_from_objects(objects)
    storage = cluster.storage
    web = Pod("web", containers=[ksched.Container("c", requests={"example.com/gpu": 1})])
    bound = cluster.bind([(web, "n1")])
    assert bound.storage is storage and bound.pods[0].name == "web"
    assert cluster.widened_for([web]).storage is storage
    assert bound.unbind("default/web").storage is storage
    assert cluster.with_pods(added=[(web, 1)]).storage is storage
    rebuilt = ksched.ClusterState.from_records(cluster.nodes, cluster.pods,
                                               objects=cluster.objects)
    assert rebuilt.storage is storage
    given = ksched.ClusterState.from_records(cluster.nodes, storage=storage)
    assert given.storage is storage and given.objects["storage"] is storage
    fleet = ksched.ClusterState.from_node_templates([(cluster.nodes[0], 3)], storage=storage)
    assert fleet.storage is storage
    assert cluster.with_storage(EMPTY_STORAGE).storage is EMPTY_STORAGE
    assert cluster.storage is storage
    simulator = ksched.Simulator(cluster)
    assert simulator.run([ksched.Event(0.0, "create", pod=Pod("p"))]).state.storage is storage


def test_a_state_refuses_what_is_no_storage_objects() -> None:
    with pytest.raises(ksched.ArgumentError, match="storage: expected a StorageObjects, got "
                                                    "tuple"):
        ksched.ClusterState.from_records([], storage=())
    with pytest.raises(ksched.ArgumentError, match="expected PersistentVolume records, got "
                                                    "dict"):
        StorageObjects(persistent_volumes=[PV])


def test_the_conformance_replay_feeds_a_traces_storage_objects(monkeypatch) -> None:
    """The volumes traces pass: their storage objects are read and reach the replayed
    cluster."""
    import ksched.conformance as conformance

    seen = []
    real = conformance.Assumer

    def assumer(state, pods):
        seen.append(state.storage)
        return real(state, pods)

    monkeypatch.setattr(conformance, "Assumer", assumer)
    result = run_case(CONFORMANCE / "volumes-1.json.gz")
    assert result.outcome == "PASS", result.detail
    trace = json.loads(gzip.decompress((CONFORMANCE / "volumes-1.json.gz").read_bytes()))
    want = trace["input"]
    assert [len(seen[0].persistent_volumes), len(seen[0].persistent_volume_claims),
            len(seen[0].storage_classes), len(seen[0].csi_nodes), len(seen[0].csi_drivers)] == [
        len(want[k]) for k in ("persistent_volumes", "persistent_volume_claims",
                               "storage_classes", "csi_nodes", "csi_drivers")]

"""``kubectl get pods -o json`` read straight into a pod table (:mod:`ksched.pod_loading`): the
same pods, in the same order, and the same errors, as the ordinary reader gives."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import ksched
from ksched.api import PriorityClass
from ksched.errors import KschedError
from ksched.inputs import as_pod_table, as_pods
from ksched.io import read_objects
from ksched.pod_loading import pending_table_of_file
from ksched.pod_table import PodTable


def replica(app: str, i: int, **spec) -> dict:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"{app}-{i:04d}", "namespace": "team", "uid": f"uid-{app}-{i}",
                     "resourceVersion": str(100 + i), "generateName": f"{app}-",
                     "creationTimestamp": f"2024-05-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z",
                     "labels": {"app": app},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": f"{app}-rs", "uid": "rs", "controller": True}]},
        "spec": {"containers": [{"name": "main", "image": f"reg/{app}:1",
                                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
                 **spec},
        "status": {"phase": "Pending", "qosClass": "Burstable", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "lastProbeTime": None, "lastTransitionTime": f"2024-05-01T11:00:{i % 60:02d}Z",
             "message": f"0/{i} nodes are available"}]},
    }


def write(tmp_path: Path, items: list[dict], kind: str = "List") -> Path:
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": kind, "items": items}))
    return path


def ordinary(path: Path) -> PodTable:
    return PodTable.of(read_objects(path).pending_pods)


def items() -> list[dict]:
    found = [replica("web", i) for i in range(30)] + [replica("db", i) for i in range(5)]
    found += [replica("crit", i, priorityClassName="system-cluster-critical") for i in range(3)]
    bound = replica("web", 99)
    bound["spec"]["nodeName"] = "n1"
    done = replica("web", 98)
    done["status"]["phase"] = "Succeeded"
    vols = [replica("sts", i, volumes=[{"name": "data", "ephemeral": {"volumeClaimTemplate": {
        "spec": {"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}}}}]) for i in range(3)]
    new = replica("new", 0, affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "matchLabelKeys": ["app"],
             "labelSelector": {"matchLabels": {"tier": "x"}}}]}})
    new_too = copy.deepcopy(new)
    new_too["metadata"]["name"] = "new-0001"
    for pod in (new, new_too):
        del pod["metadata"]["uid"]  # being created: its label keys are merged
    ready = replica("web", 97)
    ready["status"]["conditions"].append({"type": "Ready", "status": "True"})
    found[3:3] = [bound, done, ready]
    return found + vols + [new, new_too, replica("web", 200)]


def test_a_kubectl_list_reads_as_the_ordinary_reader_reads_it(tmp_path: Path) -> None:
    path = write(tmp_path, items())
    table = pending_table_of_file(path)
    assert table is not None
    expected = ordinary(path)
    assert list(table) == list(expected) and len(table) == len(items()) - 2
    assert table.names == expected.names and table.uids == expected.uids
    assert table.creation_times == expected.creation_times
    assert len(table.specs) < len(table) / 2  # replicas share spec rows
    assert ksched.load_pods(path) == expected and as_pods(path) == expected
    assert as_pod_table(path) == expected and type(as_pods(path)) is tuple
    assert table[table.names.index("crit-0001")].priority == 2000000000
    assert table[table.names.index("new-0001")].pod_anti_affinity == \
        expected[expected.names.index("new-0001")].pod_anti_affinity


def test_results_of_a_loaded_table_equal_the_ordinary_ones(tmp_path: Path) -> None:
    path = write(tmp_path, [replica("web", i) for i in range(50)])
    cluster = ksched.ClusterState.from_records([ksched.Node(
        f"n{i}", allocatable={"cpu": 1000, "memory": 2**33, "pods": 110}) for i in range(4)])
    fast = ksched.schedule_batch(cluster, path)
    slow = ksched.schedule_batch(cluster, list(ordinary(path)), fast_path=False)
    assert fast.placements == tuple(slow.placements)
    assert fast.unschedulable and list(fast.state.pods) == list(slow.state.pods)


def _error(path: Path) -> str:
    with pytest.raises(KschedError) as err:
        read_objects(path).pending_pods and ordinary(path)
    return str(err.value)


@pytest.mark.parametrize("spoil", [
    lambda items: items[7]["metadata"].update(name="Bad_Name"),
    lambda items: items[7]["metadata"].update(uid=7),
    lambda items: items[7]["metadata"].update(creationTimestamp="yesterday"),
    lambda items: items[7]["metadata"].update(name=items[5]["metadata"]["name"]),
    lambda items: items[7]["spec"]["containers"][0].update(name=3),
    lambda items: items.append(["not", "an", "object"]),
], ids=["name", "uid", "timestamp", "duplicate", "container", "item"])
def test_bad_items_fail_with_the_ordinary_words(tmp_path: Path, spoil) -> None:
    found = [replica("web", i) for i in range(12)]
    spoil(found)
    path = write(tmp_path, found)
    expected = _error(path)
    assert pending_table_of_file(path) is None
    with pytest.raises(KschedError) as err:
        ksched.load_pods(path)
    assert str(err.value) == expected


def test_other_files_are_left_to_the_ordinary_reader(tmp_path: Path) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    mixed = write(tmp_path, [replica("web", 1), node])
    assert pending_table_of_file(mixed) is None
    assert ksched.load_pods(mixed) == ordinary(mixed)
    single = tmp_path / "one.json"
    single.write_text(json.dumps(replica("web", 2)))
    assert pending_table_of_file(single) is None
    assert pending_table_of_file(tmp_path) is None
    yaml = tmp_path / "pods.yaml"
    yaml.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: from-yaml}\n"
                    "spec: {containers: [{name: c}]}\n")
    assert pending_table_of_file(yaml) is None
    assert [p.name for p in ksched.load_pods(yaml)] == ["from-yaml"]


def test_a_class_the_file_does_not_hold_is_left_to_the_cluster(tmp_path: Path) -> None:
    """Both readers leave a pod naming an unknown PriorityClass unadmitted; the cluster it
    meets admits it, or refuses it in the ordinary words."""
    found = [replica("web", i) for i in range(12)]
    found[7]["spec"].update(priorityClassName="nope")
    path = write(tmp_path, found)
    table = pending_table_of_file(path)
    assert table is not None and list(table) == list(ordinary(path))
    assert table[7].priority_class_name == "nope" and not table[7].priority_set
    nodes = [ksched.Node("n0", allocatable={"cpu": 64000, "memory": 2**36, "pods": 110})]
    with pytest.raises(KschedError) as err:
        ksched.schedule_batch(ksched.ClusterState.from_records(nodes), path)
    assert str(err.value) == ("pod team/web-0007: spec.priorityClassName: no PriorityClass "
                              "with name nope was found")
    held = ksched.ClusterState.from_records(
        nodes, objects={"priority_classes": (PriorityClass("nope", 7),)})
    placed = ksched.schedule_batch(held, path).placements[7]
    assert placed.pod.priority == 7 and placed.node == "n0"

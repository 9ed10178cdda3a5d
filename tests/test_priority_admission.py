"""PriorityClasses reach pending pods the same way whatever form the pods come in and
whichever command takes them: the cluster's classes admit pods where they meet it
(issue #24)."""

from __future__ import annotations

import json

import ksched
from ksched import load_cluster, schedule_batch
from ksched.inputs import as_pods
from ksched.simulator import Event, Simulator


def _class(name: str, value: int) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value}


def _pod(name: str, cls: str = "") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {**({"priorityClassName": cls} if cls else {}),
                     "containers": [{"name": "c", "image": "x",
                                     "resources": {"requests": {"cpu": "1"}}}]}}


def _cluster() -> ksched.ClusterState:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}
    return load_cluster([node, _class("high", 1000)])


def test_the_loader_keeps_priority_classes():
    assert [pc.name for pc in _cluster().objects["priority_classes"]] == ["high"]


def test_schedule_batch_admits_pod_dicts_with_the_clusters_class():
    result = schedule_batch(_cluster(), [_pod("web", "high"), _pod("plain")])
    assert [p.pod.priority for p in result.placements] == [1000, 0]
    assert sorted(p.priority for p in result.state.pods) == [0, 1000]


def test_a_list_dict_holding_priority_classes_is_read_as_the_same_list_in_a_file(tmp_path):
    listed = {"apiVersion": "v1", "kind": "List",
              "items": [_class("mid", 500), _pod("web", "mid")]}
    path = tmp_path / "pods.json"
    path.write_text(json.dumps(listed))
    from_dict, from_file = as_pods(listed), as_pods(str(path))
    assert [(p.key, p.priority) for p in from_dict] == [("default/web", 500)]
    assert [(p.key, p.priority) for p in from_dict] == [(p.key, p.priority) for p in from_file]


def test_the_simulator_admits_created_pods_with_the_clusters_class():
    result = Simulator(_cluster()).run([Event(0.0, "create", pod=_pod("web", "high"))])
    assert [p.priority for p in result.state.pods] == [1000]


def test_a_given_class_of_the_same_name_replaces_the_clusters():
    low = ksched.PriorityClass("high", 7)
    result = Simulator(_cluster(), priority_classes=[low]).run(
        [Event(0.0, "create", pod=_pod("web", "high"))])
    assert [p.priority for p in result.state.pods] == [7]

"""Issue 24 (capacity, headroom and cluster-capacity parts): each wrong answer pinned."""

from __future__ import annotations

import json

import attrs
import pytest
import yaml

from ksched import ArgumentError, ClusterState, Container, Node, Pod, Taint
from ksched.cli import main
from ksched.planning.capacity import capacity
from ksched.planning.capacity_reason import condition_message
from ksched.planning.headroom import headroom

GI = 2**30
GPU = "nvidia.com/gpu"
MODEL = "gpu-model"


def _node(name: str, cpu: int = 4000, **kw) -> Node:
    return Node(name, labels={"kubernetes.io/hostname": name},
                allocatable={"cpu": cpu, "memory": 8 * GI, "pods": 110}, **kw)


def _pod(name: str, cpu: int = 1000, **kw) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu})], **kw)


def _three(*running: Pod) -> ClusterState:
    return ClusterState.from_records([_node(f"n{i}") for i in range(3)], list(running))


# --------------------------------------------------------------------------- capacity


def test_several_templates_are_independent_by_default_and_the_order_is_named():
    cluster = _three()
    shapes = [_pod(f"s{i}", 1000 + 500 * i) for i in range(3)]
    alone = [capacity(cluster, s).results[0].replicas for s in shapes]
    report = capacity(cluster, shapes)
    assert [r.replicas for r in report.results] == alone == [12, 6, 6]
    assert report.order == "independent" and report.to_dict()["order"] == "independent"
    assert "order: independent: each template alone" in str(report)
    filled = capacity(cluster, shapes, order="fill")
    assert [r.replicas for r in filled.results] == [12, 0, 0]
    assert "order: fill:" in str(filled)


def test_copies_skip_the_names_running_pods_hold():
    """A template ``web`` beside a running ``web-3``: copies are web-0..2, web-4, ..."""
    cluster = _three(attrs.evolve(_pod("web-3"), node_name="n0"))
    for kw in ({}, {"max_limit": 100}):  # closed form, loop
        report = capacity(cluster, _pod("web"), **kw)
        assert report.results[0].replicas == 11
        names = {p.name for p in report.state.pods}
        assert "web-3" in names and "web-11" in names and len(names) == 12
        assert "Insufficient cpu" in report.results[0].stop_reason


def test_a_template_bound_to_a_node_is_cleared_as_cluster_capacity_does():
    report = capacity(_three(), _pod("web", node_name="n2"))
    assert report.results[0].replicas == 12


def test_a_single_kubernetes_client_pod_is_one_template():
    client = pytest.importorskip("kubernetes.client")
    pod = client.V1Pod(metadata=client.V1ObjectMeta(name="v"), spec=client.V1PodSpec(
        containers=[client.V1Container(name="c", resources=client.V1ResourceRequirements(
            requests={"cpu": "1"}))]))
    report = capacity(_three(), pod)
    assert [r.template.name for r in report.results] == ["v"]
    assert report.results[0].replicas == 12


def test_tie_break_and_seed_reach_the_loop():
    cluster = _three()
    one = capacity(cluster, _pod("web"), max_limit=5, tie_break="random", seed=7)
    two = capacity(cluster, _pod("web"), max_limit=5, tie_break="random", seed=7)
    assert one.results[0].replicas_on_nodes == two.results[0].replicas_on_nodes
    assert sum(one.results[0].replicas_on_nodes.values()) == 5
    with pytest.raises(ArgumentError, match="tie_break"):
        capacity(cluster, _pod("web"), tie_break="first")


@pytest.mark.parametrize("priority", [0, 5])
def test_closed_form_reason_is_the_simulators_condition_message(priority):
    """With a lower-priority pod a copy could preempt (then the condition message is the
    diagnosis alone), and with a tainted node (preemption not helpful there)."""
    nodes = [_node("n0"), _node("n1"), _node("n2", taints=(Taint("k", "v", "NoSchedule"),))]
    low = attrs.evolve(_pod("low", 500), node_name="n1", priority=1)
    cluster = ClusterState.from_records(nodes, [low])
    template = _pod("web", priority=priority)
    result = capacity(cluster, template).results[0]
    assert result.method == "closed-form" and result.replicas == 7
    exact = condition_message(capacity(cluster, template).state,
                              template.renamed("web-7"))
    assert result.stop_reason == exact
    assert ("preemption:" in exact) == (priority == 0)


# --------------------------------------------------------------------------- headroom


@pytest.fixture
def gpus() -> ClusterState:
    """Two 8-GPU A100 nodes (one with 6 GPUs used, one idle), one 4-GPU T4 node whose CPU
    is full, and a CPU-only node."""
    def gpu_node(name: str, model: str, count: int) -> Node:
        return Node(name, labels={"kubernetes.io/hostname": name, MODEL: model},
                    allocatable={"cpu": 32000, "memory": 256 * GI, "pods": 110, GPU: count})
    nodes = [gpu_node("a0", "a100", 8), gpu_node("a1", "a100", 8), gpu_node("t0", "t4", 4),
             _node("c0", cpu=64000)]
    used = Pod("train", containers=[Container("c", requests={"cpu": 8000, GPU: 6})],
               node_name="a0")
    hog = Pod("hog", containers=[Container("c", requests={"cpu": 32000, GPU: 1})],
              node_name="t0")
    return ClusterState.from_records(nodes, [used, hog])


def test_gpu_headroom_counts_gpus_and_strands_only_on_gpu_nodes(gpus):
    ref = Pod("ref", containers=[Container("c", requests={"cpu": 4000, GPU: 4})])
    report = headroom(gpus, reference=ref, by=MODEL)
    total = report.total
    assert (total.allocatable[GPU], total.requested[GPU], total.free[GPU]) == (20, 7, 13)
    assert report.hosts.tolist() == [True, True, True, False]  # c0 has no GPU
    assert report.fits == 2  # a1 takes two, a0 has 2 GPUs left, t0 no cpu
    # a0 strands cpu (2 GPUs left); t0 fragments 3 GPUs; c0 (no GPU) strands nothing
    assert report.stranded[GPU] == 0 and report.stranded["cpu"] == 24000  # a0: 2 GPUs left
    frag = report.fragmentation()[GPU]
    assert frag == {"free": 13, "whole_free_nodes": 1, "whole_free": 8, "fragmented": 5}
    by_model = report.to_dict()["fragmentation"]
    assert by_model["a100"][GPU]["fragmented"] == 2 and by_model["t4"][GPU]["free"] == 3
    groups = {g.name: g for g in report.groups}
    assert groups["a100"].allocatable[GPU] == 16 and groups["t4"].requested[GPU] == 1


def test_headroom_text_speaks_cores_gib_and_gpus(gpus):
    ref = Pod("ref", containers=[Container("c", requests={"cpu": 4000, GPU: 4})])
    text = str(headroom(gpus, reference=ref))
    header = text.splitlines()[0]
    assert "cpu used/alloc cores" in header and "memory used/alloc GiB" in header
    assert f"{GPU} used/alloc (%)" in header and "ephemeral-storage" not in header
    assert "total  4      40.0/160.0 (25.0%)" in text
    assert "stranded there (free, but another resource is short): cpu 24.0 cores" in text
    assert f"{GPU}: 13 free; 1 node(s) with all of it free (8); 5 free on nodes" in text


# --------------------------------------------------------------------------- the command


@pytest.fixture
def files(tmp_path):
    cluster = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
        for i in range(2)]}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"nodeName": "n1", "containers": [
               {"name": "c", "image": "nginx",
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi", GPU: "0"},
                              "limits": {GPU: "0"}}}]}}
    (tmp_path / "cluster.json").write_text(json.dumps(cluster))
    (tmp_path / "pod.json").write_text(json.dumps(pod))
    return str(tmp_path / "cluster.json"), str(tmp_path / "pod.json")


def test_cluster_capacity_json_is_its_review(files, capsys):
    cluster, pod = files
    assert main(["cluster-capacity", cluster, "--podspec", pod, "-o", "json",
                 "--max-limit", "0"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one compact line, as json.Marshal and Println
    review = json.loads(out)
    assert set(review) == {"spec", "status"}
    spec, status = review["spec"], review["status"]
    assert spec["replicas"] == 0 and status["replicas"] == 16  # 0 = unlimited
    template = spec["templates"][0]
    assert template["metadata"] == {"name": "web", "namespace": "default",
                                    "creationTimestamp": None}
    assert "nodeName" not in template["spec"] and template["status"] == {}
    assert template["spec"]["schedulerName"] == "default-scheduler"
    assert spec["podRequirements"][0]["resources"] == {
        "primaryResources": {"cpu": "500m", "memory": "1Gi", "nvdia.com/gpu": "0"},
        "scalarResources": {GPU: 0}}
    assert status["failReason"]["failType"] == "Unschedulable"
    assert ", preemption: 0/2 nodes are available" in status["failReason"]["failMessage"]
    assert status["pods"][0]["failSummary"] is None
    assert "." in status["creationTimestamp"]  # sub-second, as RFC 3339 nano


def test_cluster_capacity_yaml_text_and_limit(files, capsys):
    cluster, pod = files
    assert main(["cluster-capacity", cluster, "--podspec", pod, "-o", "yaml",
                 "--max-limit", "3"]) == 0
    review = yaml.safe_load(capsys.readouterr().out)
    assert review["status"]["failReason"] == {
        "failType": "LimitReached", "failMessage": "Maximum number of pods simulated: 3"}
    assert main(["cluster-capacity", cluster, "--podspec", pod]) == 0
    assert capsys.readouterr().out == "16\n"
    assert main(["cluster-capacity", cluster, "--podspec", pod, "--verbose",
                 "--exclude-nodes", "n0"]) == 0
    text = capsys.readouterr().out
    assert "web pod requirements:\n\t- CPU: 500m\n\t- Memory: 1Gi\n" in text
    assert "The cluster can schedule 8 instance(s) of the pod web." in text
    assert "Termination reason: Unschedulable: 0/1 nodes are available:" in text
    assert "\t- n1: 8 instance(s)" in text


def test_capacity_max_limit_zero_is_unlimited(files, capsys):
    cluster, pod = files
    assert main(["capacity", cluster, pod, "--max-limit", "0", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["replicas"] == 16

"""Issue 24: a template or pod naming a PriorityClass that only the cluster holds gets that
class's value and preemption policy wherever it meets the cluster, as ``schedule_batch``
admits it (``capacity``, ``explain``, ``cluster-capacity``, ``plan``, pod files), and is
refused, naming the pod and the field, where nobody holds the class."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ksched
from ksched import InvalidObjectError
from ksched.explain import explain
from ksched.io import read_objects
from ksched.planning.capacity import capacity
from ksched.planning.plan import plan
from ksched.simulator import Event, Simulator
from tests.refusals import run_cli

CLUSTER = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: polite}
value: 1000
preemptionPolicy: Never
---
apiVersion: v1
kind: Node
metadata: {name: n0, labels: {kubernetes.io/hostname: n0}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low-0, namespace: default}
spec:
  nodeName: n0
  containers: [{name: c, resources: {requests: {cpu: "3"}}}]
"""


def _pod(name: str, cls: str | None) -> dict:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}
    if cls:
        spec["priorityClassName"] = cls
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


UNKNOWN = "pod default/big: spec.priorityClassName: no PriorityClass with name gold was found"
#: The stop reason of a 2-cpu copy on the 4-cpu node where a 3-cpu pod of priority 0 runs.
FIT = "0/1 nodes are available: 1 Insufficient cpu."
STOP = {
    # DefaultPreemption finds a victim: the copy would be nominated, no preemption clause
    "high": FIT,
    "polite": f"{FIT} no new claims to deallocate, preemption: not eligible due to "
              "preemptionPolicy=Never.",
    None: f"{FIT} no new claims to deallocate, preemption: 0/1 nodes are available: 1 No "
          "preemption victims found for incoming pod.",
}


@pytest.fixture(scope="module")
def cluster() -> ksched.ClusterState:
    return ksched.cluster_from_objects(read_objects(CLUSTER.encode()))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    out = {"cluster": tmp_path / "cluster.yaml"}
    out["cluster"].write_text(CLUSTER)
    for cls in ("high", "polite", "gold", None):
        path = tmp_path / f"{cls or 'none'}.yaml"
        path.write_text(json.dumps(_pod("big", cls)))
        out[cls or "none"] = path
    out["type"] = tmp_path / "m.yaml"
    out["type"].write_text("apiVersion: v1\nkind: Node\nmetadata: {name: m}\n"
                           "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n")
    return {k: str(v) for k, v in out.items()}


# --------------------------------------------------------------------------- library


@pytest.mark.parametrize("cls", ["high", "polite", None])
@pytest.mark.parametrize("max_limit", [None, 5])  # the closed form, the loop
def test_capacity_template_takes_the_cluster_class(cluster, cls, max_limit) -> None:
    report = capacity(cluster, _pod("big", cls), max_limit=max_limit)
    result = report.results[0]
    assert result.replicas == 0
    assert (result.template.priority, result.template.preemption_policy) == {
        "high": (1000, "PreemptLowerPriority"), "polite": (1000, "Never"),
        None: (0, "PreemptLowerPriority")}[cls]
    assert result.stop_reason == STOP[cls]


def test_capacity_refuses_a_class_nobody_holds(cluster) -> None:
    with pytest.raises(InvalidObjectError) as err:
        capacity(cluster, _pod("big", "gold"))
    assert str(err.value) == UNKNOWN


def test_explain_admits_the_pod_with_the_cluster_class(cluster) -> None:
    why = explain(cluster, _pod("big", "polite"))
    assert (why.pod.priority, why.pod.preemption_policy) == (1000, "Never")
    assert why.to_dict()["priority"] == 1000
    assert why.to_dict()["preemption_policy"] == "Never"
    assert why.message == FIT
    with pytest.raises(InvalidObjectError) as err:
        explain(cluster, _pod("big", "gold"))
    assert str(err.value) == UNKNOWN


def test_a_pod_file_naming_a_class_of_the_cluster_is_read_and_admitted_there(
        cluster, files) -> None:
    (pod,) = read_objects(files["high"]).pods
    assert (pod.priority_class_name, pod.priority, pod.priority_set) == ("high", 0, False)
    (loaded,) = ksched.load_pods(files["high"])
    assert loaded.priority_set is False
    placed = ksched.schedule_batch(cluster, [loaded]).placements[0]
    assert placed.pod.priority == 1000 and placed.node is None
    # the simulator admits it too, and its preemption evicts the priority-0 pod
    result = Simulator(cluster).run([Event(0.0, "create", pod=loaded)])
    preempting = [d for d in result.decisions if d.outcome == "preempting"]
    assert [(d.pod, d.victims) for d in preempting] == [("default/big", ("default/low-0",))]
    assert {p.key: p.node_name for p in result.state.pods} == {"default/big": "n0"}


def test_a_pod_file_naming_a_class_nobody_holds_is_refused_where_it_meets_the_cluster(
        cluster, files) -> None:
    (pod,) = read_objects(files["gold"]).pods  # the file alone cannot tell
    for call in (lambda: ksched.schedule_batch(cluster, [pod]),
                 lambda: ksched.schedule_batch(cluster, files["gold"]),
                 lambda: Simulator(cluster).run([Event(0.0, "create", pod=pod)])):
        with pytest.raises(InvalidObjectError) as err:
            call()
        assert str(err.value) == UNKNOWN


def test_plan_admits_pods_with_the_cluster_class(cluster) -> None:
    node_type = ksched.Node("m", allocatable={"cpu": "4", "memory": "8Gi", "pods": 110})
    report = plan(cluster, [_pod("big", "polite")], [node_type])
    assert report.complete and report.nodes == {"m": 1}
    pod = report.placements[0].pod
    assert (pod.priority, pod.preemption_policy) == (1000, "Never")
    with pytest.raises(InvalidObjectError) as err:
        plan(cluster, [_pod("big", "gold")], [node_type])
    assert str(err.value) == UNKNOWN


# --------------------------------------------------------------------------- CLI


@pytest.mark.parametrize("cls", ["high", "polite", "none"])
def test_cli_capacity_and_cluster_capacity(files, cls) -> None:
    status, out, err = run_cli(["capacity", files["cluster"], files[cls], "-o", "json"])
    assert status == 0, err
    (result,) = json.loads(out)["templates"]
    assert result["replicas"] == 0
    assert result["stop_reason"] == STOP[None if cls == "none" else cls]
    status, out, err = run_cli(["cluster-capacity", files["cluster"], "--podspec", files[cls],
                                "-o", "json"])
    assert status == 0, err
    review = json.loads(out)
    assert review["status"]["failReason"]["failMessage"] == \
        STOP[None if cls == "none" else cls]


def test_cli_plan_explain_and_schedule(files) -> None:
    status, out, err = run_cli(["plan", files["cluster"], files["polite"], "--node-type",
                                files["type"], "-o", "json"])
    assert status == 0, err
    assert json.loads(out)["nodes"] == {"m": 1}
    status, out, err = run_cli(["explain", files["cluster"], files["polite"]])
    assert status == 0, err
    why = json.loads(out)
    assert (why["priority"], why["preemption_policy"]) == (1000, "Never")
    status, out, err = run_cli(["schedule", files["cluster"], files["high"]])
    assert status == 0, err
    assert out.startswith(f"default/big\t-\t{FIT}")


@pytest.mark.parametrize("command", [
    ["capacity", "{cluster}", "{gold}"],
    ["cluster-capacity", "{cluster}", "--podspec", "{gold}"],
    ["explain", "{cluster}", "{gold}"],
    ["schedule", "{cluster}", "{gold}"],
    ["plan", "{cluster}", "{gold}", "--node-type", "{type}"],
])
def test_cli_refuses_a_class_nobody_holds(files, command) -> None:
    status, out, err = run_cli([part.format(**files) for part in command])
    assert status == 2 and out == ""
    assert err == f"ksched: {UNKNOWN}\n"

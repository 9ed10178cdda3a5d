"""``plan`` with node types that carry ResourceSlices (issue 25 leftovers): the usage table's
device figures per DeviceClass, and DaemonSet pods whose template claims devices getting
claims of their own on each new node (and on existing nodes), counted in the bound."""

from __future__ import annotations

import json

import pytest

from ksched.dra.state import dra_objects
from ksched.planning import plan_devices
from ksched.planning.plan import plan
from tests.planning.dra_cluster import classes, cluster, gpus, node, pod, pod_record


def gpu_type(devices: int = 4, cpu: str = "8") -> tuple[dict, list[dict]]:
    return node("gpu", cpu=cpu), [gpus("gpu", ["small"] * devices)]


def daemon_set(template: str = "one-gpu") -> dict:
    """A DaemonSet whose pod asks for 100m cpu and one claim from ``template``."""
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                    "requests": {"cpu": "100m"}, "claims": [{"name": "g"}]}}],
                    "resourceClaims": [{"name": "g", "resourceClaimTemplateName": template}]}}}}


def claim_pods(n: int) -> list[dict]:
    return [pod(f"p{i}") for i in range(n)]


def mixed_plan() -> object:
    """6 one-device pods that fit only the gpu type (1 cpu, 4 devices) and 4 plain 2-cpu
    pods that fit only the cpu type (16 cpu, no slices)."""
    plain = [pod(f"w{i}", cpu="2", templates=()) for i in range(4)]
    state = cluster(classes() + [node("n0", cpu="1")])
    return plan(state, [pod_record(p) for p in claim_pods(6) + plain],
                [node("cpu", cpu="16"), gpu_type(cpu="1")], prices={"cpu": 1.0, "gpu": 5.0})


def test_usage_reports_devices_per_class_on_the_device_type_only() -> None:
    report = mixed_plan()
    assert report.complete and report.nodes == {"cpu": 1, "gpu": 2}
    gpu, cpu = report.usage["gpu"], report.usage["cpu"]
    assert (gpu.nodes, gpu.pods) == (2, 6)
    assert gpu.devices == {"gpu": (6, 8)}  # big-gpu and tpu match no device of the type
    assert cpu.devices == {}
    assert str(gpu) == ("2 nodes, 6 pods (0 could use another type): cpu 30%, memory 0% "
                        "requested; gpu: 6/8 devices (75%)")
    assert str(cpu) == "1 node, 4 pods (0 could use another type): cpu 50%, memory 0% requested"
    lines = str(report).splitlines()
    assert "  gpu  2 nodes, 6 pods (0 could use another type): cpu 30%, memory 0% requested; " \
           "gpu: 6/8 devices (75%)" in lines
    assert "  cpu  1 node, 4 pods (0 could use another type): cpu 50%, memory 0% requested" \
        in lines


def test_usage_devices_in_json() -> None:
    data = json.loads(json.dumps(mixed_plan().to_dict()))
    assert data["usage"]["gpu"]["devices"] == {
        "gpu": {"allocatable": 8, "allocated": 6, "utilisation": 0.75}}
    assert data["usage"]["cpu"] == {"nodes": 1, "pods": 4, "flexible": 0,
                                    "requested_share": {"cpu": 0.5, "memory": 0.0}}


@pytest.mark.parametrize("pods", [1, 3, 4, 7])
def test_daemon_set_claims_one_device_per_new_node(pods: int) -> None:
    state = cluster(classes())
    report = plan(state, claim_pods(pods) + [daemon_set()], [gpu_type()])
    want = -(-pods // 3)  # one device of each node's 4 is the DaemonSet pod's
    assert report.complete and report.nodes == {"gpu": want}
    assert report.bound == {"gpu": want}
    final = dra_objects(report.result.state)
    agents = [p for p in report.result.state.pods if p.name.startswith("agent-")]
    assert sorted(p.node_name for p in agents) == [f"gpu-plan-{k}" for k in range(want)]
    for agent in agents:  # each holds its own generated claim, allocated on its node's pool
        (entry, name), = agent.claim_statuses
        claim = final.claim("default", name)
        assert entry == "g" and name.startswith(f"{agent.name}-g-")
        assert claim.owner == ("Pod", agent.name, agent.uid)
        assert [r.pool for r in claim.allocation.results] == [agent.node_name]
    held = [c for c in final.resource_claims if c.allocation is not None]
    assert len(held) == pods + want
    assert report.usage["gpu"].devices == {"gpu": (pods + want, 4 * want)}
    assert len(dra_objects(state).resource_claims) == 0  # the cluster is not changed


def test_the_bound_takes_the_daemon_set_devices_off_each_new_node() -> None:
    state = cluster(classes())
    pods = [pod_record(p) for p in claim_pods(4)]
    report = plan(state, pods, [gpu_type()])
    assert report.nodes == {"gpu": 1} and report.bound == {"gpu": 1}
    types, slices = plan_devices.node_types([gpu_type()])
    for daemons, left in (({}, 4), ({"gpu": {"gpu": 1}}, 3), ({"gpu": {"gpu": 9}}, 0)):
        columns = plan_devices.device_columns(pods[:1], types, slices, state, daemons)
        assert columns.classes == ("gpu",) and columns.requests.tolist() == [[1]]
        assert columns.allocatable.tolist() == [[left]]


def test_daemon_set_whose_claims_fit_no_new_node_is_reported() -> None:
    report = plan(cluster(classes()), claim_pods(3) + [daemon_set("two-gpu")], [gpu_type(1)])
    assert report.nodes == {"gpu": 3} and report.bound == {"gpu": 3}
    assert report.status == "some pods fit no type"
    (unfit,) = report.unschedulable
    assert unfit.pod.controller == ("apps/v1", "DaemonSet", "agent")
    assert unfit.reasons == {"gpu": "0/1 nodes are available: 1 cannot allocate all claims."}
    assert "(1 DaemonSet pods fit no new node of their type)" in str(report)
    assert not any(p.name.startswith("agent-") for p in report.result.state.pods)
    assert report.usage["gpu"].devices == {"gpu": (3, 3)}  # every device left to the pods


def test_daemon_set_claims_on_a_type_without_slices_are_reported() -> None:
    plain = [pod(f"w{i}", templates=()) for i in range(3)]
    report = plan(cluster(classes()), plain + [daemon_set()], [node("cpu"), gpu_type()],
                  prices={"cpu": 1.0, "gpu": 5.0})
    assert report.nodes == {"cpu": 1, "gpu": 0} and report.bound == {"cpu": 1, "gpu": 0}
    (unfit,) = report.unschedulable
    assert unfit.reasons == {"cpu": "0/1 nodes are available: 1 cannot allocate all claims."}


def test_existing_nodes_daemon_set_pods_get_claims_of_their_own() -> None:
    state = cluster(classes() + [node("n0"), gpus("n0", ["small"] * 2)])
    report = plan(state, claim_pods(3) + [daemon_set()], [gpu_type()])
    assert report.complete and report.nodes == {"gpu": 1} and report.bound == {"gpu": 1}
    on = {p.pod.name: p.node for p in report.placements}
    agent = next(name for name in on if name.startswith("agent-"))
    assert on[agent] == "n0"  # its claim is allocated one of n0's 2 devices
    final = dra_objects(report.result.state)
    held = {c.name: c.allocation.results[0].pool for c in final.resource_claims
            if c.allocation is not None}
    assert sorted(held.values()) == ["gpu-plan-0"] * 3 + ["n0"] * 2
    assert report.usage["gpu"].devices == {"gpu": (3, 4)}  # 2 pods and its DaemonSet pod


def test_existing_nodes_daemon_set_pod_without_devices_gets_the_schedulers_reason() -> None:
    state = cluster(classes() + [node("n0"), gpus("n0", ["small"])])  # 1 device, 2 wanted
    report = plan(state, claim_pods(3) + [daemon_set("two-gpu")], [gpu_type()])
    assert report.nodes == {"gpu": 1} and report.status == "some pods fit no type"
    (unfit,) = report.unschedulable
    assert unfit.pod.controller == ("apps/v1", "DaemonSet", "agent")
    assert unfit.reasons == {"gpu": "0/2 nodes are available: 1 cannot allocate all claims, "
                                    "1 node(s) didn't satisfy plugin(s) [NodeAffinity]."}
    agents = [p.node_name for p in report.result.state.pods if p.name.startswith("agent-")]
    assert agents == ["gpu-plan-0"]  # the new node's DaemonSet pod holds 2 of its 4 devices
    assert report.usage["gpu"].devices == {"gpu": (4, 4)}

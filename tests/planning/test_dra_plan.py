"""``plan`` with node types that carry ResourceSlices: each new node gets its own copies of
the slices, pending pods' claims from templates are generated, and the bound counts devices
(issue 25 item 5)."""

from __future__ import annotations

import json

import pytest
import yaml

from ksched.dra.state import dra_objects
from ksched.errors import ArgumentError
from ksched.planning.plan import plan
from tests.planning.dra_cluster import classes, cluster, gpus, node, pod, pod_record
from tests.refusals import run_cli


def gpu_type(devices: int = 4, cpu: str = "8") -> tuple[dict, list[dict]]:
    return node("gpu", cpu=cpu), [gpus("gpu", ["small"] * devices)]


def no_gpu_cluster() -> object:
    return cluster(classes() + [node("n0", cpu="1")])


def claim_pods(n: int) -> list:
    return [pod_record(pod(f"p{i}")) for i in range(n)]


@pytest.mark.parametrize("pods", [1, 4, 10])
def test_one_device_pods_buy_ceil_pods_over_4_nodes(pods: int) -> None:
    state = no_gpu_cluster()
    before = len(dra_objects(state).resource_slices)
    report = plan(state, claim_pods(pods), [gpu_type()], prices={"gpu": 3.0})
    want = -(-pods // 4)
    assert report.complete and report.nodes == {"gpu": want}
    assert report.bound == {"gpu": want} and report.cost == 3.0 * want
    failing, shown = report.fewer["gpu"]
    assert failing == pods - 4 * (want - 1)
    assert shown[0][1] == (f"0/{want} nodes are available: {want} cannot allocate all "
                           "claims.")
    # each new node has its own pool of 4 devices; every pod holds one generated claim
    final = dra_objects(report.result.state)
    pools = {(s.pool, s.node_name) for s in final.resource_slices}
    assert pools == {(f"gpu-plan-{k}", f"gpu-plan-{k}") for k in range(want)}
    held = [c for c in final.resource_claims if c.allocation is not None]
    assert len(held) == pods
    assert len(dra_objects(state).resource_slices) == before  # the cluster is not changed


def test_device_pods_go_only_to_the_device_type() -> None:
    cpu = node("cpu", cpu="16")
    plain = [pod_record(pod(f"w{i}", cpu="2", templates=())) for i in range(6)]
    report = plan(no_gpu_cluster(), claim_pods(6) + plain, [cpu, gpu_type(cpu="1")],
                  prices={"cpu": 1.0, "gpu": 5.0})
    assert report.complete and report.nodes == {"cpu": 1, "gpu": 2}
    assert report.bound == {"cpu": 1, "gpu": 2}
    for p in report.placements:  # the plain pods fit no gpu node: 2 cpu against 1
        kind = "gpu" if p.pod.name.startswith("p") else "cpu"
        assert p.node.startswith(f"{kind}-plan-"), (p.pod.name, p.node)
    assert report.unschedulable == ()
    # a cheap device-less type never takes a device pod, however cheap
    report = plan(no_gpu_cluster(), claim_pods(2), [node("cpu", cpu="16"), gpu_type()],
                  prices={"cpu": 0.1, "gpu": 5.0})
    assert report.nodes == {"cpu": 0, "gpu": 1} and report.bound == {"cpu": 0, "gpu": 1}


def test_the_bound_uses_existing_free_devices() -> None:
    state = cluster(classes() + [node("n0"), gpus("n0", ["small"] * 2)])
    report = plan(state, claim_pods(6), [gpu_type()])
    assert report.complete and report.nodes == {"gpu": 1} and report.bound == {"gpu": 1}


def test_a_list_manifest_node_type_and_renamed_slices() -> None:
    n, slices = gpu_type(2)
    slices[0]["metadata"]["name"] = "gpus"
    slices[0]["spec"]["pool"]["name"] = "shared-pool"
    item = {"apiVersion": "v1", "kind": "List", "items": [n, *slices]}
    report = plan(no_gpu_cluster(), claim_pods(3), [item])
    assert report.nodes == {"gpu": 2}
    names = {(s.name, s.pool) for s in dra_objects(report.result.state).resource_slices}
    assert names == {(f"gpu-plan-{k}-gpus", f"gpu-plan-{k}-shared-pool") for k in range(2)}
    assert item["items"][1]["metadata"]["name"] == "gpus"  # input not modified


def test_a_slice_of_another_node_is_refused() -> None:
    with pytest.raises(ArgumentError, match=r"node_types\[0\]: ResourceSlice 'other-slice': "
                                            r"spec.nodeName must name"):
        plan(no_gpu_cluster(), claim_pods(1), [(node("gpu"), [gpus("other", ["small"])])])
    with pytest.raises(ArgumentError, match=r"node_types\[0\]\[1\]: expected a list"):
        plan(no_gpu_cluster(), claim_pods(1), [(node("gpu"), gpus("gpu", ["small"]))])


def test_cli_node_type_file_with_slices(tmp_path) -> None:
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(
        classes() + [node("n0", cpu="1")]))
    (tmp_path / "work.yaml").write_text(yaml.safe_dump_all(
        [pod(f"p{i}") for i in range(5)]))
    n, slices = gpu_type()
    (tmp_path / "gpu.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "v1", "kind": "List", "items": [n, *slices]}))
    status, out, err = run_cli(["plan", str(tmp_path / "cluster.yaml"),
                                str(tmp_path / "work.yaml"), "--node-type",
                                f"{tmp_path / 'gpu.yaml'}=2", "-o", "json"])
    assert status == 0, err
    report = json.loads(out)
    assert report["status"] == "complete" and report["nodes"] == {"gpu": 2}
    assert report["cost"] == 4.0 and report["scheduled"] == 5
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump_all([n, gpus("x", ["small"])]))
    status, _, err = run_cli(["plan", str(tmp_path / "cluster.yaml"),
                              str(tmp_path / "work.yaml"), "--node-type", str(other)])
    assert status != 0 and f"--node-type {other}: ResourceSlice 'x-slice'" in err

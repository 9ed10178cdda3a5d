"""The conversion of Alibaba's GPU cluster trace (``ksched.alibaba``) and the trace workloads
of ``ksched bench``, on a few rows written here in the trace's format (the real CSVs are not
part of the project: ``ksched bench --trace-dir DIR`` reads them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ksched
from ksched import bench
from ksched.alibaba import (
    NODE_LIST,
    POD_LIST,
    gpu_trace_timeline,
    load_gpu_trace,
    trace_files,
)
from ksched.cli import main
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.pod_table import PodTable
from ksched.simulator import Simulator
from ksched.workloads import SHAPES, mixed_shapes

MIB = 1024**2
NODES = """sn,cpu_milli,memory_mib,gpu,model
cpu-0,32000,262144,0,
gpu-0,96000,786432,8,G2
cpu-1,32000,262144,0,
t4-0,64000,262144,4,T4
cpu-2,32000,262144,0,
cpu-3,32000,262144,0,
"""
#: Out of creation order on purpose; ``late`` asks for a model no node has; ``never`` was
#: never scheduled in the trace; ``shared`` uses 460 milli of a GPU.
PODS = """name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,\
deletion_time,scheduled_time
late,4000,8192,1,1000,A10,BE,Pending,300,900,
ls,12000,16384,1,1000,,LS,Running,0,1000,10
shared,6000,12288,1,460,T4,Burstable,Running,100,700,100
pinned,8000,16384,2,1000,V100M16|T4|T4,Guaranteed,Succeeded,200,400,250
never,1000,2048,0,0,,BE,Pending,50,600,
"""


def write_trace(folder: Path, nodes: str = NODES, pods: str = PODS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / NODE_LIST).write_text(nodes)
    (folder / POD_LIST).write_text(pods)
    return folder


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    return write_trace(tmp_path / "trace")


def test_nodes_carry_resources_gpu_model_and_zones_per_shape(trace_dir: Path) -> None:
    cluster = load_gpu_trace(trace_dir).cluster
    nodes = {n.name: n for n in cluster.nodes}
    assert [n.name for n in cluster.nodes] == ["cpu-0", "gpu-0", "cpu-1", "t4-0", "cpu-2",
                                               "cpu-3"]
    assert dict(nodes["gpu-0"].allocatable) == {"cpu": 96000, "memory": 786432 * MIB,
                                                "pods": 110, "nvidia.com/gpu": 8}
    assert "nvidia.com/gpu" not in nodes["cpu-0"].allocatable
    assert nodes["t4-0"].labels["nvidia.com/gpu.product"] == "T4"
    assert "nvidia.com/gpu.product" not in nodes["cpu-0"].labels
    zone = "topology.kubernetes.io/zone"
    assert [nodes[f"cpu-{i}"].labels[zone] for i in range(4)] == ["zone-a", "zone-b", "zone-c",
                                                                  "zone-a"]
    assert nodes["gpu-0"].labels[zone] == nodes["t4-0"].labels[zone] == "zone-a"
    assert not any(n.taints for n in cluster.nodes) and not cluster.pods


def test_pods_in_creation_order_with_requests_equal_to_limits(trace_dir: Path) -> None:
    trace = load_gpu_trace(trace_dir)
    assert [p.name for p in trace.pods] == ["ls", "never", "shared", "pinned", "late"]
    assert trace.created == (0.0, 50.0, 100.0, 200.0, 300.0)
    assert trace.scheduled == (10.0, None, 100.0, 250.0, None)
    assert trace.deleted == (1000.0, 600.0, 700.0, 400.0, 900.0)
    ls, never, shared, pinned, late = trace.pods
    container, = ls.containers
    assert dict(container.requests) == dict(container.limits) == {
        "cpu": 12000, "memory": 16384 * MIB, "nvidia.com/gpu": 1}
    assert dict(never.containers[0].requests) == {"cpu": 1000, "memory": 2048 * MIB}
    assert shared.containers[0].requests["nvidia.com/gpu"] == 1  # a shared GPU, asked whole
    assert pinned.containers[0].requests["nvidia.com/gpu"] == 2
    assert ls.node_selector is None and ls.node_affinity is None
    assert dict(shared.node_selector) == {"nvidia.com/gpu.product": "T4"}
    requirement, = pinned.node_affinity.required[0].match_expressions
    assert (requirement.key, requirement.operator, requirement.values) == (
        "nvidia.com/gpu.product", "In", ("V100M16", "T4"))
    assert pinned.node_selector is None and dict(late.node_selector) == {
        "nvidia.com/gpu.product": "A10"}
    assert all(p.node_name == "" and p.namespace == "default" for p in trace.pods)


def test_qos_becomes_a_priority_class(trace_dir: Path) -> None:
    trace = load_gpu_trace(trace_dir)
    classes = {pc.name: pc.value for pc in trace.priority_classes}
    assert classes == {"qos-ls": 1000, "qos-guaranteed": 1000, "qos-burstable": 500,
                       "qos-be": 0}
    assert [(p.priority_class_name, p.priority) for p in trace.pods] == [
        ("qos-ls", 1000), ("qos-be", 0), ("qos-burstable", 500), ("qos-guaranteed", 1000),
        ("qos-be", 0)]


def test_one_batch_places_what_fits_and_names_why_the_rest_does_not(trace_dir: Path) -> None:
    trace = load_gpu_trace(trace_dir)
    result = ksched.schedule_batch(trace.cluster, trace.pods)
    where = {p.pod.name: p.node for p in result.placements}
    assert where["shared"] == where["pinned"] == "t4-0"  # the only T4 node, four GPUs
    assert where["ls"] == "gpu-0" and where["never"] is not None
    late, = result.unschedulable
    assert late.pod.name == "late"
    assert "didn't match Pod's node affinity/selector" in late.reason


def test_timeline_creates_each_pod_and_deletes_the_never_scheduled(trace_dir: Path) -> None:
    trace = load_gpu_trace(trace_dir)
    events = gpu_trace_timeline(trace)
    assert [(e.time, e.kind, e.pod.name if e.pod else e.name, e.duration) for e in events] == [
        (0.0, "create", "ls", 990.0), (50.0, "create", "never", None),
        (100.0, "create", "shared", 600.0), (200.0, "create", "pinned", 150.0),
        (300.0, "create", "late", None), (600.0, "delete", "default/never", None),
        (900.0, "delete", "default/late", None)]


def test_the_simulator_replays_the_timeline(trace_dir: Path) -> None:
    trace = load_gpu_trace(trace_dir)
    result = Simulator(trace.cluster, priority_classes=trace.priority_classes).run(
        gpu_trace_timeline(trace))
    summary = result.summary()
    assert summary["pods_created"] == 5
    assert summary["pods_scheduled"] == 4  # all but ``late``, deleted at 900 s unplaced
    assert summary["pods_pending_at_end"] == 0


def test_a_head_keeps_the_cluster_and_the_first_pods(trace_dir: Path) -> None:
    trace = load_gpu_trace(trace_dir)
    head = trace.head(2)
    assert head.cluster is trace.cluster
    assert [p.name for p in head.pods] == ["ls", "never"] and head.scheduled == (10.0, None)


def _error(tmp_path: Path, **files: str) -> str:
    with pytest.raises(InvalidObjectError) as caught:
        load_gpu_trace(write_trace(tmp_path / "bad", **files))
    return str(caught.value)


@pytest.mark.parametrize(("nodes", "pods", "expected"), [
    (NODES.replace("cpu-1,32000", "cpu-1,32k"), PODS,
     f"{NODE_LIST}: line 4: column 2 (cpu_milli): must be an integer >= 0, got '32k'"),
    (NODES.replace("8,G2", "-8,G2"), PODS,
     f"{NODE_LIST}: line 3: column 4 (gpu): must be an integer >= 0, got '-8'"),
    (NODES.replace("cpu-3,", "cpu-0,"), PODS,
     f"{NODE_LIST}: line 7: column 1 (sn): duplicate name 'cpu-0' (first on line 2)"),
    (NODES.replace(",model", ""), PODS, f"{NODE_LIST}: line 1: missing column 'model'"),
    (NODES.replace("gpu-0,96000,786432,8,G2", "gpu-0,96000,786432"), PODS,
     f"{NODE_LIST}: line 3: expected 5 columns, got 3"),
    (NODES, PODS.replace(",LS,", ",Premium,"),
     f"{POD_LIST}: line 3: column 7 (qos): must be one of LS, Guaranteed, Burstable, BE, "
     f"got 'Premium'"),
    (NODES, PODS.replace("Running,0,1000,10", "Running,soon,1000,10"),
     f"{POD_LIST}: line 3: column 9 (creation_time): must be a number of seconds >= 0, "
     f"got 'soon'"),
    (NODES, PODS.replace("Succeeded,200,400,250", "Succeeded,200,400,150"),
     f"{POD_LIST}: line 5: column 11 (scheduled_time): must lie between creation_time and "
     f"deletion_time, got 150"),
    (NODES, PODS.replace("Pending,50,600,", "Pending,50,40,"),
     f"{POD_LIST}: line 6: column 10 (deletion_time): before creation_time (40 < 50)"),
    (NODES, PODS.replace("\nnever,", "\nls,"),
     f"{POD_LIST}: line 6: column 1 (name): duplicate name 'ls' (first on line 3)"),
])
def test_a_malformed_row_is_refused_naming_file_line_and_column(
        tmp_path: Path, nodes: str, pods: str, expected: str) -> None:
    assert expected in _error(tmp_path, nodes=nodes, pods=pods)


def test_a_missing_folder_or_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match="not a folder"):
        trace_files(tmp_path / "nowhere")
    (tmp_path / NODE_LIST).write_text(NODES)
    with pytest.raises(ArgumentError, match=f"{POD_LIST}: no such file"):
        load_gpu_trace(tmp_path)


def test_mixed_shapes_interleaves_fifty_shapes() -> None:
    cluster, pods = mixed_shapes(50, 10, 120)
    assert len(SHAPES) == len({tuple(s.values()) for s in SHAPES}) == 50
    assert [dict(p.containers[0].requests) for p in pods[:50]] == list(SHAPES)
    assert all(a.containers != b.containers for a, b in zip(pods, pods[1:]))
    assert len(PodTable.of(pods).specs) == 50


def test_trace_workloads_are_skipped_with_a_note_without_a_folder() -> None:
    notes: list[str] = []
    chosen = bench.workloads(["trace"], note=notes.append)
    assert chosen == [] and len(notes) == 2
    assert all("skipped" in n and "--trace-dir" in n for n in notes)
    with pytest.raises(ArgumentError, match="not a folder"):
        bench.workloads(["trace"], trace_dir="/nonexistent/trace")


def test_trace_workloads_measure_the_batch_and_the_replay(trace_dir: Path) -> None:
    batch, replay = bench.workloads(["trace"], trace_dir=str(trace_dir))
    measured = bench.measure(batch, rounds=1)
    assert (measured.pods, measured.scheduled, measured.unit) == (5, 4, "pods/s")
    assert measured.nodes_evaluated > 0
    measured = bench.measure(replay, rounds=2)
    assert (measured.pods, measured.scheduled, measured.unit) == (7, 4, "events/s")
    assert len(measured.seconds) == 2 and measured.median_pods_per_second > 0
    assert measured.data_item()["unit"] == "events/s"


def test_bench_cli_runs_the_trace_workloads(trace_dir: Path,
                                            capsys: pytest.CaptureFixture) -> None:
    assert main(["bench", "--workload", "trace", "--trace-dir", str(trace_dir), "--rounds", "1",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(i["labels"]["Name"], i["unit"]) for i in report["dataItems"]] == [
        ("AlibabaGPUv2023/trace-batch", "pods/s"),
        ("AlibabaGPUv2023/trace-simulator", "events/s")]

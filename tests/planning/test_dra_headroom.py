"""``headroom`` with devices: per DeviceClass the devices its selectors match, allocated and
free, per node, per label value and in total, and the free devices stranded on nodes that
cannot take the reference pod (issue 25 item 5)."""

from __future__ import annotations

import csv
import io
import json

from ksched import ClusterState, Container, Node, Pod
from ksched.planning.headroom import headroom
from ksched.planning.report import headroom_table
from tests.planning.dra_cluster import (
    ZONE,
    claim,
    classes,
    cluster,
    gpus,
    node,
    pod,
    pod_record,
)
from tests.refusals import run_cli

MODELS = ["small", "big", "small", "big"]
#: n0 is too small for the reference's cpu; claims hold three of n1's four GPUs.
OBJECTS = (classes() + [node("n0", "250m"), node("n1"), node("n2", zone="b")]
           + [gpus(f"n{i}", MODELS) for i in range(3)]
           + [claim(f"held-{d}", "gpu", "n1", f"gpu-{d}") for d in range(3)])
REFERENCE = pod_record(pod("web", "300m", ("two-gpu",)))


def entry(allocatable: int, allocated: int, stranded: int | None = None) -> dict:
    out = {"allocatable": allocatable, "allocated": allocated, "free": allocatable - allocated}
    return out if stranded is None else out | {"stranded": stranded}


def test_devices_per_node_and_class_without_a_reference():
    report = headroom(cluster(OBJECTS))
    assert report.devices.classes == ("big-gpu", "gpu", "tpu")
    assert report.devices.shown == ("big-gpu", "gpu")  # tpu matches no device: left out
    assert {u.name: u.devices for u in report.nodes} == {
        "n0": {"big-gpu": entry(2, 0), "gpu": entry(4, 0)},
        "n1": {"big-gpu": entry(2, 1), "gpu": entry(4, 3)},
        "n2": {"big-gpu": entry(2, 0), "gpu": entry(4, 0)}}
    assert report.total.devices == {"big-gpu": entry(6, 1), "gpu": entry(12, 3)}
    text = str(report).splitlines()
    assert text[0].split("  ")[-2:] == ["big-gpu devices used/alloc (%)",
                                        "gpu devices used/alloc (%)"]
    assert text[2].split()[-4:] == ["1/2", "(50.0%)", "3/4", "(75.0%)"]
    assert text[-2:] == ["devices big-gpu: 5 free of 6 (1 allocated)",
                         "devices gpu: 9 free of 12 (3 allocated)"]


def test_a_device_reference_fits_by_free_devices_and_strands_the_rest():
    report = headroom(cluster(OBJECTS), reference=REFERENCE, by=ZONE)
    nodes = {u.name: u for u in report.nodes}
    # n0: no host (250m of cpu); n1: one free GPU, a copy takes two; n2: four free GPUs
    assert {n: u.fits for n, u in nodes.items()} == {"n0": 0, "n1": 0, "n2": 2}
    assert report.hosts.tolist() == [False, True, True]
    assert nodes["n1"].stranded["cpu"] == 8000 and nodes["n0"].stranded["cpu"] == 0
    assert nodes["n1"].devices == {"big-gpu": entry(2, 1, 1), "gpu": entry(4, 3, 1)}
    assert nodes["n0"].devices == {"big-gpu": entry(2, 0, 2), "gpu": entry(4, 0, 4)}
    assert nodes["n2"].devices == {"big-gpu": entry(2, 0, 0), "gpu": entry(4, 0, 0)}
    a, b = report.groups
    assert (a.name, a.fits, a.devices["gpu"], b.name, b.fits, b.devices["gpu"]) == (
        "a", 0, entry(8, 3, 5), "b", 2, entry(4, 0, 0))
    assert report.fits == 2
    assert report.to_dict()["devices"] == {"big-gpu": entry(6, 1, 3), "gpu": entry(12, 3, 5)}
    assert str(report).splitlines()[-1] == (
        "devices gpu: 9 free of 12 (3 allocated); 5 free on nodes that cannot take "
        "default/web (stranded)")


def test_network_attached_devices_count_in_the_total_only():
    objects = OBJECTS + [gpus("", ["big", "small"], pool="net")]
    report = headroom(cluster(objects), reference=REFERENCE, by=ZONE)
    assert [g.devices["gpu"]["allocatable"] for g in report.groups] == [8, 4]
    # a class with devices outside node-local slices bounds no node: fits by resources,
    # so only n0 (no host) strands its devices
    assert [u.fits for u in report.nodes] == [0, 26, 26]
    assert report.total.devices["gpu"] == entry(14, 3, 4)
    assert report.total.devices["big-gpu"] == entry(7, 1, 2)


def test_a_missing_template_strands_every_free_device():
    report = headroom(cluster(OBJECTS), reference=pod_record(pod("web", templates=("none",))))
    assert report.fits == 0
    assert report.total.devices["gpu"] == entry(12, 3, 9)


def test_a_cluster_without_device_classes_reports_no_devices():
    state = ClusterState.from_records([Node("n", allocatable={"cpu": 1000, "pods": 10})])
    report = headroom(state, reference=Pod("p", containers=[Container("c", requests={
        "cpu": 100})]))
    assert report.devices is None and report.total.devices == {}
    assert report.to_dict()["devices"] == {}
    assert "devices" not in str(report)


def test_the_csv_table_and_the_cli(tmp_path):
    report = headroom(cluster(OBJECTS), reference=REFERENCE)
    table = headroom_table(report)
    assert [c for c in table.columns if c.startswith("devices.")] == [
        f"devices.{c}_{w}" for c in ("big-gpu", "gpu")
        for w in ("allocatable", "allocated", "free", "stranded")]
    (tmp_path / "cluster.json").write_text(json.dumps({"kind": "List", "items": OBJECTS}))
    (tmp_path / "web.json").write_text(json.dumps(pod("web", "300m", ("two-gpu",))))
    status, out, err = run_cli(["headroom", str(tmp_path / "cluster.json"), "--reference",
                                str(tmp_path / "web.json"), "-o", "csv"])
    assert status == 0, err
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(out))}
    assert [rows[n]["devices.gpu_stranded"] for n in ("n0", "n1", "n2", "total")] == [
        "4", "1", "0", "5"]
    assert rows["total"]["devices.gpu_allocated"] == "3"

"""A generated snapshot with a StatefulSet, its claims, PVs, a StorageClass and CSINodes loads,
schedules and explains from the command line (issue 14)."""

from __future__ import annotations

import json

import pytest

from ksched.workloads import ZONE, kubectl_storage_snapshot
from tests.refusals import run_cli


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> str:
    doc = kubectl_storage_snapshot(30, 20, attach_limit=2)
    # one more replica whose claim is bound to the PV of db-0 (zone of the first node)
    pod = next(i for i in doc["items"] if i["kind"] == "Pod" and i["metadata"]["name"] == "db-10")
    twin = json.loads(json.dumps(pod))
    twin["metadata"]["name"] = "db-twin"
    twin["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] = "data-db-0"
    doc["items"].append(twin)
    path = tmp_path_factory.mktemp("sts") / "snapshot.json"
    path.write_text(json.dumps(doc))
    return str(path)


def _ok(argv: list[str]) -> str:
    status, out, err = run_cli(argv)
    assert status == 0, err
    return out


def test_schedule_places_the_pending_replicas(snapshot: str) -> None:
    lines = [line.split("\t") for line in _ok(["schedule", snapshot]).splitlines()]
    assert [key for key, _, _ in lines] == [f"data/db-{k}" for k in range(10, 20)] + \
        ["data/db-twin"]
    assert all(node != "-" for _, node, _ in lines)


def test_a_bound_claim_keeps_its_pod_in_the_pvs_zone(snapshot: str) -> None:
    out = json.loads(_ok(["schedule", snapshot, "-o", "json"]))
    twin = next(r for r in out if (r["namespace"], r["name"]) == ("data", "db-twin"))
    doc = json.loads(open(snapshot).read())
    zone_of = {i["metadata"]["name"]: i["metadata"]["labels"][ZONE]
               for i in doc["items"] if i["kind"] == "Node"}
    first = next(i["metadata"]["name"] for i in doc["items"] if i["kind"] == "Node")
    assert zone_of[twin["node"]] == zone_of[first]


def test_explain_names_volume_verdicts(snapshot: str) -> None:
    why = json.loads(_ok(["explain", snapshot, snapshot, "--name", "db-twin"]))
    failing = {row["plugin"] for row in why["nodes"] if not row["feasible"]}
    assert "VolumeBinding" in failing  # nodes outside the PV's zone
    assert why["chosen"]

"""Smoke runs of every benchmark workload at a tiny scale (the real figures: ``benchmarks/``)."""

from __future__ import annotations

import json

import pytest

import ksched
from ksched import bench
from ksched.cli import main
from ksched.workloads import WORKLOADS


#: Workloads with more pods than room, as upstream shapes them: how many of their pods fit.
ROOM = {
    # eight devices per node, one per pod: the pods beyond them fit nowhere
    "SchedulingWithResourceClaimTemplate/500Nodes_5000Pods": lambda m: 8 * m.nodes,
    # at this scale 80 of the 100 pods fit (the framework places the same: see below)
    "SchedulingBasic/5000Nodes/overcommitted": lambda m: 80,
}


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_workload_runs_and_places_every_pod(name: str) -> None:
    measurement = bench.measure(WORKLOADS[name], rounds=1, scale=0.01)
    room = ROOM[name](measurement) if name in ROOM else measurement.pods
    assert measurement.scheduled == min(room, measurement.pods)
    assert measurement.nodes_evaluated >= measurement.pods
    assert measurement.median_pods_per_second > 0


@pytest.mark.parametrize("name", ["SchedulingNodeAffinity/5000Nodes", "SchedulingTaints/5000Nodes",
                                  "SchedulingExtendedResources/5000Nodes",
                                  "SchedulingBasic/5000Nodes/overcommitted"])
def test_workload_fast_and_framework_paths_agree(name: str) -> None:
    cluster, pods = WORKLOADS[name].make(0.02)
    fast = ksched.schedule_batch(cluster, pods)
    slow = ksched.schedule_batch(cluster, pods, fast_path=False)
    assert [(p.node, p.reason) for p in fast.placements] == \
        [(p.node, p.reason) for p in slow.placements]


def test_bench_cli_prints_scheduler_perf_data_items(capsys: pytest.CaptureFixture) -> None:
    assert main(["bench", "--workload", "SchedulingBasic/500Nodes", "--scale", "0.02",
                 "--rounds", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    item, = report["dataItems"]
    assert item["unit"] == "pods/s"
    assert item["labels"]["Name"] == "SchedulingBasic/500Nodes"
    assert set(item["data"]) == {"Average", "Perc50", "Perc90", "Perc99"}
    assert item["data"]["Perc50"] > 0


def test_bench_cli_replays_the_day_of_churn_on_the_simulator(
        capsys: pytest.CaptureFixture) -> None:
    """``DayOfChurn``: the generated day on the Simulator, its rate in arrivals per second;
    every pod of the (shrunk) day is scheduled."""
    assert main(["bench", "--workload", "DayOfChurn", "--scale", "0.005", "--rounds", "1",
                 "--json"]) == 0
    item, = json.loads(capsys.readouterr().out)["dataItems"]
    assert (item["labels"]["Name"], item["unit"]) == ("DayOfChurn/5000Nodes_100000Pods",
                                                      "events/s")
    assert (item["labels"]["nodes"], item["labels"]["pods"]) == ("25", "500")
    assert item["data"]["Perc50"] > 0

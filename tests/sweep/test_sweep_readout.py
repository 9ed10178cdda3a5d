"""Reading a sweep's outcome: a plot line per combination of the other parameters (never a
silent average), labels that fit, the summary ``ksched sweep`` prints, GPUs in the metrics,
and ``RequestedToCapacityRatio`` refused with the way to give a shape (issue #24)."""

from __future__ import annotations

import pytest

import ksched
from ksched import ClusterState, Container, Node, Pod
from ksched.sweep import Scenario
from ksched.sweep.result import SweepResult
from ksched.sweep.summary import direction, summary_table
from tests.refusals import refused

GPU = "nvidia.com/gpu"


def _result(rows: list[tuple], failed: int = 0) -> SweepResult:
    """Rows of (scale, strategy, config, unschedulable)."""
    made = [{"scenario": i, "scale": s, "strategy": st, "config": c, "unschedulable": u,
             "error": None, "seconds": 0.1} for i, (s, st, c, u) in enumerate(rows)]
    made += [{"scenario": len(made) + k, "scale": 1, "strategy": "A", "config": rows[0][2],
              "unschedulable": None, "error": "ArgumentError: boom", "seconds": 0.1}
             for k in range(failed)]
    return SweepResult("schedule", ["scale", "strategy", "config"], ["unschedulable"], made)


def test_a_line_per_combination_of_the_other_axes_config_paths_included(tmp_path):
    pytest.importorskip("matplotlib")
    long = "/very/long/folder/of/configurations/most-allocated-with-weights.yaml"
    result = _result([(1, "A", "a.yaml", 1), (2, "A", "a.yaml", 2),
                      (1, "A", long, 10), (2, "A", long, 20)], failed=1)
    figure = result.plot("unschedulable", "scale", path=tmp_path / "p.png")
    ax = figure.axes[0]
    labels = [line.get_label() for line in ax.lines]
    assert len(labels) == 2 and labels[0] == "config=a.yaml"
    assert labels[1].startswith("config=…") and labels[1].endswith("weights.yaml")
    assert [list(line.get_ydata()) for line in ax.lines] == [[1, 2], [10, 20]]  # no mean
    assert ax.get_ylabel() == "unschedulable"
    assert ax.get_title() == "unschedulable by scale\n(1 failed scenario(s) left out)"
    figure.canvas.draw()  # the constrained layout keeps the labels inside the figure
    box = ax.yaxis.label.get_window_extent()
    assert box.x0 >= 0 and box.y0 >= 0


def test_by_names_its_parameter_first():
    pytest.importorskip("matplotlib")
    result = _result([(1, "A", "a", 1), (1, "B", "a", 2), (1, "A", "b", 3), (1, "B", "b", 4),
                      (2, "A", "a", 1), (2, "B", "a", 2), (2, "A", "b", 3), (2, "B", "b", 4)])
    figure = result.plot("unschedulable", "scale", by="strategy")
    assert [line.get_label() for line in figure.axes[0].lines] == [
        "strategy=A, config=a", "strategy=B, config=a", "strategy=A, config=b",
        "strategy=B, config=b"]


def test_only_scenarios_with_the_same_parameters_are_averaged_and_the_title_says_so():
    pytest.importorskip("matplotlib")
    result = _result([(1, "A", "a", 1), (1, "A", "a", 3), (2, "A", "a", 5)])
    figure = result.plot("unschedulable", "scale")
    ax = figure.axes[0]
    assert [list(line.get_ydata()) for line in ax.lines] == [[2.0, 5.0]]
    assert "mean of up to 2 scenarios with the same parameters" in ax.get_title()


def test_summary_names_the_range_and_the_best_and_worst_scenarios():
    result = _result([(1, "A", "a", 4), (2, "A", "a", 0), (4, "B", "a", 9)], failed=1)
    table = summary_table(result)
    assert table.title == ("4 scenarios of the schedule study, 1 failed (see the error "
                           "column); varying scale, strategy")
    assert table.to_records() == [{
        "metric": "unschedulable", "min": "0", "mean": "4.333", "max": "9",
        "best (or lowest)": "#1 scale=2, strategy=A",
        "worst (or highest)": "#2 scale=4, strategy=B"}]
    assert (direction("placed"), direction("unplaced"), direction("cpu_utilisation"),
            direction("nodes.m5")) == (1, -1, 0, -1)


def _gpu_base() -> Scenario:
    nodes = [Node(f"g{i}", labels={"kubernetes.io/hostname": f"g{i}"},
                  allocatable={"cpu": 8000, "memory": 2**35, "pods": 10, GPU: 4})
             for i in range(2)]
    pods = [Pod(f"train-{i}", containers=[Container("c", requests={"cpu": 1000, GPU: 3})])
            for i in range(3)]
    return Scenario(ClusterState.from_records(nodes), pods=pods)


@pytest.mark.parametrize("study", ["schedule", "headroom"])
def test_gpus_are_in_the_metrics(study):
    row = ksched.sweep(_gpu_base(), {"strategy": ["LeastAllocated"]}, study, executor="inline",
                       progress=False).rows[0]
    if study == "schedule":  # two of the three 3-GPU pods fit, one per 4-GPU node
        assert (row[f"extended.{GPU}.allocatable"], row[f"extended.{GPU}.requested"],
                row[f"extended.{GPU}.free"], row[f"extended.{GPU}.utilisation"]) == (
            8, 6, 2, 0.75)
    else:  # nothing placed yet
        assert (row[f"extended.{GPU}.requested"], row[f"extended.{GPU}.free"]) == (0, 8)


def test_the_simulate_study_reports_gpu_time_averages():
    row = ksched.sweep(_gpu_base(), {"seed": [0]}, "simulate", executor="inline",
                       progress=False).rows[0]
    assert row[f"extended.{GPU}.utilisation_max"] == 0.75
    assert row[f"extended.{GPU}.free"] == 2


def test_requested_to_capacity_ratio_needs_a_shape_from_the_base():
    refused(ksched.sweep, _gpu_base(), {"strategy": ["RequestedToCapacityRatio"]},
            executor="inline", progress=False,
            match="RequestedToCapacityRatio needs a shape, and kube-scheduler has no default",
            error=ksched.ArgumentError)
    shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1",
              "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                  {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                      "type": "LeastAllocated",
                      "requestedToCapacityRatio": {"shape": shape}}}}]}]}
    base = Scenario(_gpu_base().cluster, pods=_gpu_base().pods, config=config)
    rows = ksched.sweep(base, {"strategy": ["RequestedToCapacityRatio"]}, executor="inline",
                        progress=False).rows
    assert rows[0]["error"] is None and rows[0]["placed"] == 2

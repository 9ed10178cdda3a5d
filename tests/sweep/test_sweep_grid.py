"""``ksched.sweep``'s scenarios: the grid, parameters checked and applied, each study's
metrics against the library's own answers, and the result table's exports."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import attrs
import pytest

import ksched
from ksched import ClusterState, Container, Node, Pod
from ksched.sweep import Scenario, grid
from ksched.sweep.apply import prepare
from ksched.sweep.digest import digest
from ksched.sweep.params import check_grid, configured
from tests.refusals import refused

ZONE, TYPE = "topology.kubernetes.io/zone", "node.kubernetes.io/instance-type"
GI = 1024**3


def _node(i: int, kind: str, cpu: int) -> Node:
    name = f"n{i}"
    return Node(name, labels={"kubernetes.io/hostname": name, ZONE: "abc"[i % 3], TYPE: kind},
                allocatable={"cpu": cpu * 1000, "memory": 32 * GI, "pods": 110})


def _pod(name: str, cpu: int = 1000, node: str = "", **extra) -> Pod:
    return Pod(name, node_name=node, labels={"app": "web"},
               containers=[Container("c", requests={"cpu": cpu, "memory": GI})], **extra)


@pytest.fixture(scope="module")
def base() -> Scenario:
    """Six nodes over zones a, b, c: four small (4 cpu), two big (16 cpu); one 1-cpu pod
    running on each; ten 1-cpu pods pending."""
    nodes = [_node(i, "small", 4) for i in range(4)] + [_node(i, "big", 16) for i in (4, 5)]
    running = [_pod(f"run-{i}", node=f"n{i}") for i in range(6)]
    pending = [_pod(f"web-{i}") for i in range(10)]
    return Scenario(ClusterState.from_records(nodes, running), pods=pending)


def _sweep(base, axes, study="schedule", **kw):
    return ksched.sweep(base, axes, study, executor="inline", progress=False, **kw)


# ---------------------------------------------------------------------------- the grid


def test_grid_is_the_product_with_the_last_axis_fastest():
    assert grid({"seed": [0, 1], "strategy": ["MostAllocated", "LeastAllocated"]}) == [
        {"seed": 0, "strategy": "MostAllocated"}, {"seed": 0, "strategy": "LeastAllocated"},
        {"seed": 1, "strategy": "MostAllocated"}, {"seed": 1, "strategy": "LeastAllocated"}]
    assert grid({"scale": range(1, 3), "without": [None, ["n1", "n2"]]})[-1] == \
        {"scale": 2, "without": ["n1", "n2"]}
    assert grid([{"seed": 3}, {"scale": 2}]) == [{"seed": 3}, {"scale": 2}]
    assert grid({}) == [{}]


@pytest.mark.parametrize(("axes", "match"), [
    ({"seed": 3}, "axes['seed']: expected a list of values, got int"),
    ({"seed": "012"}, "axes['seed']: expected a list of values, got str"),
    ({"seed": []}, "axes['seed']: no values"),
    ([{"seed": 1}, 5], "axes[1]: expected a mapping of parameter -> value, got int"),
    ("seed", "axes: expected a mapping of parameter -> values or a list of scenarios"),
])
def test_malformed_axes_are_refused(base, axes, match):
    refused(_sweep, base, axes, match=match, error=ksched.ArgumentError)


@pytest.mark.parametrize(("name", "value", "match"), [
    ("wieghts.NodeResourcesFit", 2, "axes: unknown parameter 'wieghts.NodeResourcesFit'"),
    ("percentage_of_nodes_to_score", 101,
     "percentage_of_nodes_to_score: expected an integer from 0 to 100, got 101"),
    ("tie_break", "coin", "tie_break: expected one of round-robin, random, heap, got 'coin'"),
    ("seed", -1, "seed: expected an integer from 0 to 9,223,372,036,854,775,807, got -1"),
    ("scale", 0, "scale: expected a number > 0 and <= 100, got 0"),
    ("scale", True, "scale: expected a number > 0"),
    ("strategy", "Fastest", "strategy: expected one of LeastAllocated, MostAllocated"),
    ("weights.NoSuchPlugin", 3, 'weights.NoSuchPlugin: 3: creating profile for scheduler name '
                                'default-scheduler: ScorePlugin "NoSuchPlugin" does not exist'),
    ("config.parallelism", 0, "config.parallelism: 0: parallelism: Invalid value: 0"),
    ("node_count.huge", 3, "node_count.huge: no node type 'huge'"),
    ("node_count.big", -1, "node_count.big: expected an integer from 0 to 1,000,000"),
    ("without", f"{ZONE}=z9", f"without: selector '{ZONE}=z9' matches no node"),
    ("without", ["n1", "n9"], "without[1]: node 'n9' not found"),
])
def test_bad_parameters_are_refused_naming_them(base, name, value, match):
    refused(_sweep, base, {name: [value]}, match=match, error=ksched.ArgumentError)


def test_a_study_refuses_the_parameters_it_does_not_take(base):
    refused(_sweep, base, {"tie_break": ["random"]}, "capacity",
            match="tie_break: not a parameter of the capacity study", error=ksched.ArgumentError)
    refused(_sweep, base, {}, "fastest", match="study: expected one of schedule, capacity",
            error=ksched.ArgumentError)


def test_a_value_is_refused_only_when_no_scenario_mends_it(base):
    shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
    path = "profiles.default-scheduler.pluginConfig.NodeResourcesFit.args.scoringStrategy." \
           "requestedToCapacityRatio.shape"
    check_grid(base, "schedule", [{"strategy": "RequestedToCapacityRatio", path: shape}])
    refused(check_grid, base, "schedule", [{"strategy": "RequestedToCapacityRatio"}],
            match="strategy: 'RequestedToCapacityRatio': ", error=ksched.ArgumentError)


def test_a_loaded_configuration_cannot_be_varied(base):
    loaded = attrs.evolve(base, config=ksched.load_config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}))
    refused(_sweep, loaded, {"strategy": ["MostAllocated"]},
            match="strategy: the base configuration is a loaded SchedulerConfig",
            error=ksched.ArgumentError)


# ---------------------------------------------------------------------------- parameters


def test_configuration_fields_by_path_and_shorthands():
    document = configured(None, {  # paths first, in order; then the shorthands
        "weights.ImageLocality": 4, "strategy": "MostAllocated",
        "profiles.default-scheduler.pluginConfig.NodeResourcesFit.args.ignoredResources":
            ["example.com/foo"],
        "config.profiles.1.schedulerName": "batch", "percentage_of_nodes_to_score": 30})
    first, second = document["profiles"]
    assert document["percentageOfNodesToScore"] == 30
    assert first["schedulerName"] == "default-scheduler" and second["schedulerName"] == "batch"
    for profile in (first, second):  # the shorthands reach every profile
        assert profile["plugins"]["score"]["enabled"] == [{"name": "ImageLocality", "weight": 4}]
        fit = [c for c in profile["pluginConfig"] if c["name"] == "NodeResourcesFit"]
        assert fit[0]["args"]["scoringStrategy"] == {"type": "MostAllocated"}
    assert first["pluginConfig"][0]["args"]["ignoredResources"] == ["example.com/foo"]
    config = ksched.load_config(document)
    assert [p.weights["ImageLocality"] for p in config.profiles] == [4, 4]
    assert config.profiles[1].args["NodeResourcesFit"].strategy == "MostAllocated"
    assert configured(None, {"seed": 1}) is None  # no configuration change: the default


def test_the_variant_of_a_scenario(base):
    variant = prepare(base, {"weights.NodeResourcesFit": 7, "tie_break": "random", "seed": 4})
    assert variant.config.profiles[0].weights["NodeResourcesFit"] == 7
    assert (variant.tie_break, variant.seed) == ("random", 4)
    assert variant.cluster is base.cluster and variant.displaced is None


def test_node_count_adds_copies_of_the_type_and_removes_the_last_ones(base):
    more = prepare(base, {"node_count.big": 4})
    assert list(more.cluster.node_names)[-2:] == ["big-sweep-0", "big-sweep-1"]
    added = more.cluster.nodes[-1]
    assert added.labels["kubernetes.io/hostname"] == "big-sweep-1"
    assert added.labels[TYPE] == "big" and added.allocatable == base.cluster.nodes[4].allocatable
    fewer = prepare(base, {"node_count.small": 2, "node_count.big": 2})
    assert list(fewer.cluster.node_names) == ["n0", "n1", "n4", "n5"]
    assert fewer.displaced.removed_nodes == ("n2", "n3")
    assert sorted(d.pod for d in fewer.displaced.pods) == ["default/run-2", "default/run-3"]
    assert len(fewer.cluster.pods) == 6  # re-placed on the rest


def test_node_count_of_a_node_type_template(base):
    gpu = Node("gpu-node", labels={TYPE: "p4d"}, allocatable={"cpu": 8000, "pods": 110})
    with_types = attrs.evolve(base, node_types=(gpu,))
    variant = prepare(with_types, {"node_count.gpu-node": 2})
    assert list(variant.cluster.node_names)[-2:] == ["gpu-node-sweep-0", "gpu-node-sweep-1"]


def test_without_removes_nodes_and_replaces_their_pods(base):
    variant = prepare(base, {"without": f"{ZONE}=a"})
    assert variant.displaced.removed_nodes == ("n0", "n3")
    assert "n0" not in variant.cluster.node_index
    row = _sweep(base, {"without": [None, f"{ZONE}=a"]}).rows
    assert row[0].get("displaced") is None and row[1]["displaced"] == 2
    assert row[1]["displaced_pending"] == 0 and row[1]["placed"] == 10


def test_scale_multiplies_pods_workloads_and_created_pods(base):
    variant = prepare(base, {"scale": 2.5})
    names = [p.name for p in variant.pods]
    assert len(names) == 25 and names[10] == "web-0-x1" and names[-1] == "web-4-x2"
    assert [p.name for p in prepare(base, {"scale": 0.3}).pods] == ["web-0", "web-1", "web-2"]
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "api", "namespace": "default"},
                  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "api"}},
                           "template": {"metadata": {"labels": {"app": "api"}},
                                        "spec": {"containers": [{"name": "c"}]}}}}
    loose = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "loose"},
             "spec": {"containers": [{"name": "c"}]}}
    scaled = prepare(attrs.evolve(base, pods=(), workloads=(deployment, loose)), {"scale": 2})
    assert scaled.workloads[0]["spec"]["replicas"] == 6
    assert [p.name for p in scaled.pods[:2]] == ["loose", "loose-x1"] and len(scaled.pods) == 8
    assert [w.kind for w in scaled.cluster.objects["workloads"]] == ["ReplicaSet"]
    events = [ksched.Event(0.0, "create", pod=_pod("a")),
              ksched.Event(5.0, "create", pod=_pod("b")),
              ksched.Event(9.0, "delete", name="default/b")]
    timed = attrs.evolve(base, events=events)
    assert [(e.time, e.kind, e.pod and e.pod.name) for e in prepare(timed, {"scale": 2}).events] \
        == [(0.0, "create", "a"), (0.0, "create", "a-x1"), (5.0, "create", "b"),
            (5.0, "create", "b-x1"), (9.0, "delete", None)]
    assert [e.kind for e in prepare(timed, {"scale": 0.5}).events] == ["create"]


# ---------------------------------------------------------------------------- studies


def test_schedule_study_is_schedule_batch(base):
    row = _sweep(base, {"strategy": ["MostAllocated"], "scale": [3]}).rows[0]
    config = ksched.load_config(configured(None, {"strategy": "MostAllocated"}))
    pods = prepare(base, {"scale": 3}).pods
    result = ksched.schedule_batch(base.cluster, pods, profile=config)
    cpu = result.state.resource_column("cpu")
    used = result.state.requested[:, cpu].sum() / result.state.allocatable[:, cpu].sum()
    assert row["placed"] == len(result.scheduled) == 30 - row["unschedulable"]
    assert row["cpu_utilisation"] == pytest.approx(used, abs=1e-6)
    packed = _sweep(base, {"strategy": ["LeastAllocated", "MostAllocated"]}).column("balance")
    assert packed[1] > packed[0]  # MostAllocated packs: a less even cluster


def test_capacity_headroom_plan_and_simulate_studies(base):
    templates = attrs.evolve(base, pods=base.pods[:1])
    assert _sweep(templates, {}, "capacity").rows[0]["replicas"] == \
        ksched.capacity(base.cluster, base.pods[:1]).replicas == 42
    room = _sweep(templates, {"without": [f"{ZONE}=c"]}, "headroom").rows[0]
    report = ksched.headroom(base.cluster, reference=base.pods[0], without=f"{ZONE}=c")
    assert room["fits"] == report.fits and room["displaced"] == 2
    assert room["cpu_utilisation"] == pytest.approx(report.total.percent["cpu"] / 100, abs=1e-6)
    big = Node("m", labels={TYPE: "m"}, allocatable={"cpu": 4000, "memory": 64 * GI,
                                                       "pods": 110})
    wants = attrs.evolve(base, pods=tuple(_pod(f"big-{i}", 3000) for i in range(20)),
                         node_types=(big,), prices={"m": 2.0})
    planned = _sweep(wants, {}, "plan").rows[0]
    report = ksched.plan(base.cluster, list(wants.pods), [big], prices={"m": 2.0})
    assert planned["nodes"] == report.nodes["m"] == planned["nodes.m"]
    assert planned["cost"] == 2.0 * planned["nodes"] and planned["complete"] is True
    summary = _sweep(base, {"seed": [1]}, "simulate").rows[0]
    assert summary["pods_created"] == summary["pods_scheduled"] == 10
    assert "wall_seconds" not in summary


def study_pods(variant):
    return {"pods": len(variant.pods), "nodes": variant.cluster.num_nodes}


def test_a_users_function_gets_the_variant(base):
    rows = _sweep(base, {"scale": [1, 2], "without": [None, ["n5"]]}, study_pods).rows
    assert [(r["pods"], r["nodes"]) for r in rows] == [(10, 6), (10, 5), (20, 6), (20, 5)]
    bad = _sweep(base, {"seed": [0]}, lambda v: {"x": [1]}).rows[0]
    assert bad["error"] == "ArgumentError: study: metric 'x' is a list, expected a number, " \
                           "a string, a bool or None"
    clash = _sweep(base, {"seed": [0]}, lambda v: {"seed": 1}).rows[0]
    assert "metric 'seed' has the name of a column" in clash["error"]


# ---------------------------------------------------------------------------- the table


def test_result_exports(base, tmp_path):
    pandas = pytest.importorskip("pandas")
    parquet = pytest.importorskip("pyarrow.parquet")
    result = _sweep(base, {"without": [None, ["n1", "n2"]], "scale": [1, 2]})
    assert result.parameters == ("without", "scale")
    assert result.columns == ("scenario", "without", "scale", "placed", "unschedulable",
                              "cpu_utilisation", "memory_utilisation", "balance", "displaced",
                              "displaced_pending", "evicted", "evicted_pending", "unplaced",
                              "error", "seconds")
    frame = result.to_pandas()
    assert list(frame.columns) == list(result.columns) and len(frame) == 4
    assert frame["without"].isna().tolist() == [True, True, False, False]
    assert frame["without"].tolist()[2:] == ['["n1", "n2"]', '["n1", "n2"]']
    assert frame["placed"].tolist() == result.column("placed") == [10, 20, 10, 20]
    result.to_parquet(tmp_path / "r.parquet")
    back = parquet.read_table(tmp_path / "r.parquet").to_pandas()
    pandas.testing.assert_frame_equal(back, frame)
    text = result.to_csv(tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text() == text
    assert text.splitlines()[1].startswith("0,,1,10,0,0.333333,")
    result.save(tmp_path / "r.jsonl")
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert json.loads(lines[2])["without"] == ["n1", "n2"]
    assert "sweep (schedule): 4 scenarios" in str(result)


def test_plot(base, tmp_path):
    pytest.importorskip("matplotlib")
    result = _sweep(base, {"strategy": ["LeastAllocated", "MostAllocated"], "scale": [1, 2, 3]})
    figure = result.plot("balance", x="scale", by="strategy", path=tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    ax = figure.axes[0]
    assert [line.get_label() for line in ax.lines] == ["strategy=LeastAllocated",
                                                      "strategy=MostAllocated"]
    assert list(ax.lines[0].get_xdata()) == [1, 2, 3]
    assert list(ax.lines[1].get_ydata()) == result.column("balance")[3:]
    per_scale = result.plot("balance", x="strategy", path=tmp_path / "p.html")
    assert [line.get_label() for line in per_scale.axes[0].lines] == [
        "scale=1", "scale=2", "scale=3"]  # a line per value of the axis not drawn: no mean
    assert per_scale.axes[0].get_ylabel() == "balance"
    assert (tmp_path / "p.html").read_text().startswith("<!DOCTYPE html>")
    refused(result.plot, "speed", "scale", match="metric: no metric 'speed'",
            error=ksched.ArgumentError)
    refused(result.plot, "balance", "seed", match="x: no parameter 'seed'",
            error=ksched.ArgumentError)
    refused(result.plot, "balance", "scale", path="p.jpg", match="expected a file ending in .png",
            error=ksched.ArgumentError)


def test_the_base_digest_is_the_same_in_another_process(base, tmp_path):
    script = ("import sys; sys.path[:0] = [sys.argv[1]]\n"
              "from tests.sweep.test_sweep_grid import _digest_of_a_fresh_base\n"
              "print(_digest_of_a_fresh_base())")
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", script, here], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    assert out[-1] == _digest_of_a_fresh_base()
    assert digest(attrs.evolve(base, pods=base.pods[:9])) != digest(base)


def _digest_of_a_fresh_base() -> str:
    nodes = [_node(i, "small", 4) for i in range(3)]
    pods = [_pod(f"web-{i}", tolerations=()) for i in range(3)]
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
                  "ignoredResources": ["b", "a"]}}]}]}
    return digest(Scenario(ClusterState.from_records(nodes), pods=pods, config=config))

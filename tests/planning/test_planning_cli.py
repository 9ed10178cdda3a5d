"""``ksched capacity`` and ``ksched headroom``: the library's numbers, every output format,
plots, and one-line refusals."""

from __future__ import annotations

import csv
import io
import json

import pytest

import ksched
from ksched.example import write_example
from ksched.io import read_objects
from ksched.planning import capacity, headroom
from tests.refusals import cli_refused, run_cli

ZONE = "topology.kubernetes.io/zone"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    folder = tmp_path_factory.mktemp("example")
    snapshot, pending = write_example(folder)[:2]
    return str(snapshot), str(pending)


@pytest.fixture(scope="module")
def cluster(example):
    return ksched.cluster_from_objects(read_objects(example[0]))


@pytest.fixture(scope="module")
def web(example):
    return read_objects(example[1]).pods[0]


def _ok(argv):
    status, out, err = run_cli(argv)
    assert status == 0, err
    return out


def test_capacity_json_equals_the_library(example, cluster, web):
    expected = capacity(cluster, web, by=ZONE)
    out = json.loads(_ok(["capacity", *example, "--by", ZONE, "-o", "json"]))
    assert web.name == "web-0"
    assert out["replicas"] == expected.replicas == 3780
    got = out["templates"][0]
    assert got["replicas_on_nodes"] == expected.results[0].replicas_on_nodes
    assert got["by"] == expected.results[0].by
    assert got["stop_reason"] == expected.results[0].stop_reason


def test_capacity_table_and_limit(example):
    out = _ok(["capacity", *example, "--max-limit", "100", "--by", ZONE])
    lines = out.splitlines()
    assert lines[1].split()[:3] == ["shop/web-0", "100", "loop"]
    assert "limit reached" in lines[1]
    assert [line.split() for line in lines[-3:]] == [["us-east-1a", "33"], ["us-east-1b", "33"],
                                                     ["us-east-1c", "34"]]


def test_capacity_csv_parses_back(example, cluster, web):
    rows = list(csv.DictReader(io.StringIO(_ok(["capacity", *example, "--max-limit", "50",
                                                "-o", "csv"]))))
    assert [(r["template"], r["replicas"], r["limit"], r["stop_reason"]) for r in rows] == [
        ("shop/web-0", "50", "50", "limit reached")]
    rows = list(csv.DictReader(io.StringIO(_ok(["capacity", *example, "--max-limit", "50",
                                                "--nodes", "-o", "csv"]))))
    expected = capacity(cluster, web, max_limit=50).results[0].replicas_on_nodes
    assert {r["node"]: int(r["replicas"]) for r in rows} == expected


def test_capacity_all_pods_and_exclude_nodes(example, cluster):
    pods = read_objects(example[1]).pods
    names = list(cluster.node_names[:2])
    argv = ["capacity", *example, "--all-pods", "--max-limit", "3", "--exclude-nodes",
            ",".join(names), "-o", "json"]
    out = json.loads(_ok(argv))
    expected = capacity(cluster, list(pods), max_limit=3, exclude_nodes=names)
    assert [t["replicas"] for t in out["templates"]] == [r.replicas for r in expected.results]
    assert len(out["templates"]) == len(pods) == 92
    assert not any(n in t["replicas_on_nodes"] for t in out["templates"] for n in names)


def test_capacity_cluster_capacity_shape(example):
    review = json.loads(_ok(["capacity", *example, "--max-limit", "7", "-o",
                             "cluster-capacity"]))
    assert set(review) == {"spec", "status"}  # cluster-capacity writes no kind
    assert review["spec"]["replicas"] == 7
    pod = review["status"]["pods"][0]
    assert pod["podName"] == "web-0"
    assert sum(n["replicas"] for n in pod["replicasOnNodes"]) == 7 == review["status"]["replicas"]


def test_headroom_json_and_csv_equal_the_library(example, cluster, web):
    expected = headroom(cluster, by=ZONE, reference=web)
    out = json.loads(_ok(["headroom", example[0], "--by", ZONE, "--reference", example[1],
                          "-o", "json"]))
    assert out["total"] == expected.total.to_record()
    assert out["fits"] == expected.fits and out["fits"] > 0
    assert [g["name"] for g in out["groups"]] == ["us-east-1a", "us-east-1b", "us-east-1c"]
    rows = list(csv.DictReader(io.StringIO(_ok(["headroom", example[0], "--by", ZONE,
                                                "-o", "csv"]))))
    assert len(rows) == 300 + 3 + 1
    assert rows[-1]["name"] == "total"
    cpu = list(cluster.resource_names).index("cpu")
    assert float(rows[-1]["cpu_requested_cores"]) == \
        int(cluster.requested[:, cpu].sum()) / 1000 > 0  # cores, not millicores


def test_headroom_without_a_zone(example, cluster):
    out = _ok(["headroom", example[0], "--by", ZONE, "--without", f"{ZONE}=us-east-1a"])
    expected = headroom(cluster, by=ZONE, without=f"{ZONE}=us-east-1a")
    assert out == str(expected) + "\n"
    assert "without 100 node(s)" in out


def test_headroom_without_node_names(example, cluster):
    names = list(cluster.node_names[:2])
    out = json.loads(_ok(["headroom", example[0], "--without", ",".join(names), "-o",
                          "json"]))
    assert out["displaced"]["removed_nodes"] == names
    assert out["total"]["nodes"] == 298


def test_capacity_remove_nodes_equals_the_library(example, cluster, web):
    lost = f"{ZONE}=us-east-1a"
    expected = capacity(cluster, web, by=ZONE, remove_nodes=lost)
    out = json.loads(_ok(["capacity", *example, "--by", ZONE, "--remove-nodes", lost,
                          "-o", "json"]))
    assert out["replicas"] == expected.replicas
    assert out["templates"][0]["by"] == expected.results[0].by
    assert "us-east-1a" not in out["templates"][0]["by"]
    assert len(out["displaced"]["removed_nodes"]) == 100
    names = ",".join(cluster.node_names[:2])
    out = json.loads(_ok(["capacity", *example, "--remove-nodes", names, "-o", "json"]))
    assert out["displaced"]["removed_nodes"] == list(cluster.node_names[:2])


@pytest.mark.parametrize("suffix", [".png", ".svg", ".html"])
def test_plots_are_written(example, tmp_path, suffix):
    pytest.importorskip("matplotlib")
    for command in (["capacity", *example, "--max-limit", "200", "--by", ZONE],
                    ["headroom", example[0], "--by", ZONE]):
        path = tmp_path / f"{command[0]}{suffix}"
        _ok([*command, "--plot", str(path)])
        data = path.read_bytes()
        assert len(data) > 1000
        if suffix == ".png":
            assert data.startswith(b"\x89PNG\r\n\x1a\n")
        else:
            assert b"<svg" in data


@pytest.mark.parametrize(("argv", "match"), [
    (["capacity", "{s}", "{p}", "--max-limit", "-1"], "--max-limit: must be an integer"),
    (["capacity", "{s}", "{p}", "--order", "random"], "--order: invalid choice"),
    (["capacity", "{s}", "{p}", "-o", "yaml"], "invalid choice"),
    (["capacity", "{s}", "{p}", "--exclude-nodes", "nope"],
     "--exclude-nodes: no node named 'nope'"),
    (["capacity", "{s}", "{p}", "--exclude-nodes", "a,,b"], "expected comma-separated names"),
    (["capacity", "{s}", "{p}", "--by", "no/such-label"], "--by: no node has label"),
    (["capacity", "{s}", "{n}"], "ns.yaml: no pods to use as templates"),
    (["capacity", "{s}", "{p}", "--plot", "{d}/x.gif"], "expected a file ending in .png"),
    (["capacity", "{s}", "{p}", "--plot", "{d}/missing/x.png"], "no such directory"),
    (["capacity", "{s}", "{d}/none.yaml"], "none.yaml"),
    (["capacity", "{s}", "{p}", "--remove-nodes", "nope"],
     "--remove-nodes[0]: node 'nope' not found"),
    (["capacity", "{s}", "{p}", "--remove-nodes", "zone=nowhere"],
     "--remove-nodes: selector 'zone=nowhere' matches no node"),
    (["headroom", "{s}", "--by", "no/such-label"], "--by: no node has label"),
    (["headroom", "{s}", "--without", "zone=nowhere"], "--without: selector 'zone=nowhere'"),
    (["headroom", "{s}", "--without", "nope"], "--without[0]: node 'nope' not found"),
    (["headroom", "{s}", "--reference", "{n}"], "ns.yaml: no pods to use as templates"),
    (["headroom", "{s}", "-o", "cluster-capacity"], "invalid choice"),
])
def test_bad_arguments_one_line_exit_2(example, tmp_path, argv, match):
    namespace = tmp_path / "ns.yaml"
    namespace.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n")
    argv = [a.format(s=example[0], p=example[1], d=tmp_path, n=namespace) for a in argv]
    cli_refused(argv, match)
    assert [p.name for p in tmp_path.iterdir()] == ["ns.yaml"]  # nothing written


def test_a_bound_template_is_cleared_as_cluster_capacity_does(example, tmp_path, capsys):
    """Issue 24: cluster-capacity clears a template's spec.nodeName; so does ksched."""
    bound = tmp_path / "bound.yaml"
    bound.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  nodeName: n1\n"
                     "  containers: [{name: c, image: nginx, resources: {requests: {cpu: 1}}}]\n")
    review = json.loads(_ok(["capacity", example[0], str(bound), "-o", "json"]))
    assert review["replicas"] > 0


def test_failed_run_leaves_an_existing_plot_untouched(example, tmp_path):
    plot = tmp_path / "h.png"
    plot.write_bytes(b"old")
    cli_refused(["headroom", example[0], "--by", "no/such-label", "--plot", str(plot)],
                "--by")
    assert plot.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["h.png"]


NODE_TYPE = """\
apiVersion: v1
kind: Node
metadata: {name: m5-2xl, labels: {topology.kubernetes.io/zone: us-east-1a}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 1500
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "2", memory: 4Gi}}}]}
"""


def test_plan_equals_the_library_and_reads_deployments(example, cluster, tmp_path):
    node_type, deployment = tmp_path / "m5.yaml", tmp_path / "api.yaml"
    node_type.write_text(NODE_TYPE)
    deployment.write_text(DEPLOYMENT)
    out = json.loads(_ok(["plan", example[0], str(deployment),
                          "--node-type", f"{node_type}=0.38", "-o", "json"]))
    report = ksched.plan(cluster, str(deployment), read_objects(node_type).nodes,
                         prices={"m5-2xl": 0.38})
    # 270 untainted nodes take 3 replicas each; the other 690 need 173 nodes of 4 each
    assert out["nodes"] == report.nodes == {"m5-2xl": 173}
    assert out["complete"] and out["scheduled"] == 1500
    status, stdin_out, err = run_cli(["plan", example[0], "-",
                                      "--node-type", str(node_type), "-o", "json"],
                                     stdin=DEPLOYMENT)
    assert status == 0, err
    assert json.loads(stdin_out)["nodes"] == {"m5-2xl": 173}


def test_capacity_add_nodes_equals_the_library(example, cluster, web, tmp_path):
    node_type = tmp_path / "m5.yaml"
    node_type.write_text(NODE_TYPE)
    out = json.loads(_ok(["capacity", *example, "--add-nodes", f"{node_type}=10", "-o", "json"]))
    expected = capacity(cluster, web, add_nodes=[(read_objects(node_type).nodes[0], 10)])
    assert out["templates"][0]["replicas"] == expected.results[0].replicas
    # the web pods spread over zones (maxSkew 1): ten more nodes in one zone add one replica
    assert expected.results[0].replicas == capacity(cluster, web).results[0].replicas + 1
    cli_refused(["capacity", *example, "--add-nodes", f"{node_type}=-1"],
                "--add-nodes")

"""The ``ksched`` command line, run in-process through ``ksched.cli.main``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ksched.cli import main
from tests.refusals import cli_refused, run_cli

TRACES = Path(__file__).parent / "conformance"

CLUSTER_YAML = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3}
spec:
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: default}
spec:
  nodeName: n2
  containers:
  - name: c
    resources: {requests: {cpu: "3", memory: 1Gi}}
"""

PENDING_YAML = """\
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: 500m, memory: 512Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: default}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: "5"}}
"""


@pytest.fixture
def cluster_file(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER_YAML)
    return path


@pytest.fixture
def pending_file(tmp_path: Path) -> Path:
    path = tmp_path / "pending.yaml"
    path.write_text(PENDING_YAML)
    return path


def test_conformance_two_traces(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["conformance", str(TRACES / "resources-1.json.gz"),
               str(TRACES / "taints-1.json.gz")])
    out, err = capsys.readouterr()
    assert rc == 0
    assert out.splitlines() == ["PASS resources-1", "PASS taints-1", "2 passed, 0 failed"]
    assert "Traceback" not in err


def test_conformance_quiet_prints_only_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["conformance", "--quiet", str(TRACES / "taints-1.json.gz")])
    out, _ = capsys.readouterr()
    assert rc == 0
    assert out.splitlines() == ["1 passed, 0 failed"]


def test_schedule_bad_quantity_is_a_clean_error(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '110'}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: default}\n"
        "spec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: 1.5.0}}\n")
    rc = main(["schedule", str(path)])
    out, err = capsys.readouterr()
    assert rc == 2
    assert out == ""
    assert err == ('ksched: pod default/web-1: spec.containers[0].resources.requests.cpu: '
                   'invalid quantity "1.5.0"\n')


def test_schedule_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["schedule", str(tmp_path / "nope.yaml")])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert err == f"ksched: {tmp_path / 'nope.yaml'}: no such file or directory\n"


def test_schedule_a_pod_whose_claim_is_missing_is_left_unplaced(
        cluster_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """DynamicResources' PreEnqueue holds the pod (its claim does not exist), with that
    reason; the batch goes on (issues 14, 25)."""
    pods = tmp_path / "claim.yaml"
    pods.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: claim}\nspec:\n  containers: [{name: c}]\n"
        "  resourceClaims: [{name: gpu, resourceClaimName: gpu}]\n")
    rc = main(["schedule", str(cluster_file), str(pods)])
    out, err = capsys.readouterr()
    assert rc == 0
    assert out == 'default/claim\t-\tresourceclaim.resource.k8s.io "gpu" not found\n'
    assert err.startswith("0 scheduled, 1 unschedulable in ")


def test_schedule_pod_anti_affinity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two pods that avoid each other's hosts and an app=x pod already on n1: the first goes
    to n2, the second finds both hosts taken."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {n}, labels: "
        f"{{kubernetes.io/hostname: {n}}}}}\n"
        "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '110'}}\n---\n"
        for n in ("n1", "n2"))
        + "apiVersion: v1\nkind: Pod\nmetadata: {name: x0, labels: {app: x}}\n"
          "spec: {nodeName: n1, containers: [{name: c}]}\n")
    pods = tmp_path / "affinity.yaml"
    pods.write_text("---\n".join(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {{app: x}}}}\n"
        "spec:\n  containers: [{name: c}]\n"
        "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      - topologyKey: kubernetes.io/hostname\n"
        "        labelSelector: {matchLabels: {app: x}}\n" for name in ("aff-1", "aff-2")))
    rc = main(["schedule", str(cluster), str(pods)])
    out, err = capsys.readouterr()
    assert rc == 0
    assert out.splitlines() == [
        "default/aff-1\tn2\t",
        "default/aff-2\t-\t0/2 nodes are available: 2 node(s) didn't match pod anti-affinity "
        "rules.",
    ]


def test_schedule_prints_placements(cluster_file: Path, pending_file: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["schedule", str(cluster_file), str(pending_file)])
    out, err = capsys.readouterr()
    assert rc == 0
    # web-1 (500m, 512Mi): n1 (2 cpu, 4Gi, empty) scores LeastAllocated (75+87)/2 = 81 and
    # Balanced 93; n2 (4 cpu, 8Gi, 3 cpu + 1Gi used) scores (12+81)/2 = 46 and Balanced
    # 100-|0.875-0.1875|/2*100 = 65; n3 is tainted. huge (5 cpu) fits nowhere.
    assert out.splitlines() == [
        "default/web-1\tn1\t",
        "default/huge\t-\t0/3 nodes are available: 1 node(s) had untolerated taint(s), "
        "2 Insufficient cpu.",
    ]
    assert err.startswith("1 scheduled, 1 unschedulable in ")


def test_schedule_pending_pods_from_the_cluster_file(tmp_path: Path, cluster_file: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    both = tmp_path / "both.yaml"
    both.write_text(CLUSTER_YAML + "---\n" + PENDING_YAML)
    rc = main(["schedule", str(both), "-o", "json"])
    out, _ = capsys.readouterr()
    assert rc == 0
    assert json.loads(out) == [
        {"namespace": "default", "name": "web-1", "node": "n1", "reason": ""},
        {"namespace": "default", "name": "huge", "node": None,
         "reason": "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
                   "2 Insufficient cpu."},
    ]


def test_schedule_random_tie_break_is_reproducible(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    docs = [f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n" for i in range(6)]
    docs += [f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\n"
             "spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\n"
             for i in range(6)]
    path = tmp_path / "c.yaml"
    path.write_text("---\n".join(docs))
    outs = []
    for _ in range(2):
        assert main(["schedule", str(path), "--tie-break", "random", "--seed", "7"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    nodes = [line.split("\t")[1] for line in outs[0].splitlines()]
    assert sorted(nodes) == [f"n{i}" for i in range(6)]  # each pod avoids the used nodes


def test_explain_prints_json(cluster_file: Path, pending_file: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["explain", str(cluster_file), str(pending_file), "--name", "web-1"])
    out, _ = capsys.readouterr()
    assert rc == 0
    doc = json.loads(out)
    assert doc["pod"] == "default/web-1"
    assert doc["chosen"] == "n1"
    assert doc["max_nodes"] == ["n1"]
    assert doc["message"] == ""
    by_node = {n["node"]: n for n in doc["nodes"]}
    assert [n["node"] for n in doc["nodes"]] == ["n1", "n2", "n3"]
    assert by_node["n1"]["feasible"] and by_node["n2"]["feasible"]
    assert by_node["n1"]["scores"]["NodeResourcesFit"] == [81, 81, 81]
    assert by_node["n1"]["scores"]["NodeResourcesBalancedAllocation"] == [93, 93, 93]
    assert by_node["n1"]["scores"]["TaintToleration"] == [0, 100, 300]
    assert by_node["n2"]["scores"]["NodeResourcesFit"] == [46, 46, 46]
    assert by_node["n2"]["scores"]["NodeResourcesBalancedAllocation"] == [65, 65, 65]
    assert (by_node["n1"]["total"], by_node["n2"]["total"]) == (474, 411)
    assert by_node["n3"] == {
        "node": "n3", "feasible": False, "plugin": "TaintToleration",
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) had untolerated taint(s)"], "scores": {}, "total": None}
    assert "NodeAffinity" in doc["pre_filter_skipped"]


def test_explain_first_pod_and_unschedulable(cluster_file: Path, pending_file: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(cluster_file), str(pending_file)]) == 0
    assert json.loads(capsys.readouterr().out)["pod"] == "default/web-1"
    assert main(["explain", str(cluster_file), str(pending_file), "--name", "huge"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["chosen"] is None
    assert doc["message"] == ("0/3 nodes are available: 1 node(s) had untolerated taint(s), "
                              "2 Insufficient cpu.")


def test_explain_without_a_pending_pod(cluster_file: Path, pending_file: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["explain", str(cluster_file), str(pending_file), "--name", "nobody"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert err == f'ksched: no pending pod named "nobody" in {pending_file}\n'


def test_demo(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["demo", "--nodes", "200", "--running", "50", "--pending", "300"])
    out, _ = capsys.readouterr()
    assert rc == 0
    assert "built 200 nodes, 50 running pods, 300 pending pods" in out
    assert "placed 300, unschedulable 0 in " in out


def test_usage_errors_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["schedule", "x.yaml", "--tie-break", "coin"])
    assert rc == 2
    assert capsys.readouterr().err == ("ksched: argument --tie-break: invalid choice: 'coin' "
                                       "(choose from 'round-robin', 'random', 'heap')\n")


def test_schedule_reads_a_piped_snapshot_once(tmp_path: Path) -> None:
    """``cat snap.yaml | ksched schedule /dev/stdin``: the nodes and the pending pods come from
    the one read of the pipe (a second read would find it empty: 0 pods scheduled)."""
    done = subprocess.run([sys.executable, "-m", "ksched.cli", "schedule", "/dev/stdin"],
                          input=CLUSTER_YAML + "---\n" + PENDING_YAML, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "default/web-1\tn1\t",
        "default/huge\t-\t0/3 nodes are available: 1 node(s) had untolerated taint(s), "
        "2 Insufficient cpu.",
    ]
    # (a first line says so when a kernel this path calls is not in numba's cache yet)
    assert done.stderr.splitlines()[-1].startswith("1 scheduled, 1 unschedulable in ")


def test_schedule_dash_reads_standard_input(cluster_file: Path) -> None:
    status, out, err = run_cli(["schedule", str(cluster_file), "-"], stdin=PENDING_YAML)
    assert status == 0, err
    assert out.splitlines()[0] == "default/web-1\tn1\t"
    status, out, err = run_cli(["schedule", "-"], stdin=CLUSTER_YAML + "---\n" + PENDING_YAML)
    assert (status, out.splitlines()[0]) == (0, "default/web-1\tn1\t")


def test_day_of_churn_spans_the_day_it_says(tmp_path: Path) -> None:
    """Arrivals over 24 h run for hours each; the run stops at the day's end (86,400 s), pods
    still running, instead of going on until the last one finishes days later."""
    summary = tmp_path / "summary.json"
    status, _, err = run_cli(["simulate", "day-of-churn", "--nodes", "20", "--arrivals", "300",
                              "--log", str(tmp_path / "log.jsonl"), "--summary", str(summary)])
    assert status == 0, err
    got = json.loads(summary.read_text())
    assert got["virtual_seconds"] == 86_400.0
    assert (got["pods_created"], got["pods_scheduled"]) == (300, 300)
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert max(r["time"] for r in log) <= 86_400.0
    assert sum(r["outcome"] == "finished" for r in log) < 300  # some still run at midnight


def test_simulate_until_overrides_the_day(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    assert run_cli(["simulate", "day-of-churn", "--nodes", "5", "--arrivals", "20",
                    "--until", "3600", "--log", os.devnull, "--summary", str(summary)])[0] == 0
    assert json.loads(summary.read_text())["virtual_seconds"] == 3600.0


def test_outputs_are_written_only_when_the_run_succeeds(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER_YAML + "---\n" + PENDING_YAML)
    log = tmp_path / "log.jsonl"
    log.write_text("previous run\n")
    events = tmp_path / "events.jsonl"
    events.write_text('{"time": 0, "kind": "cordon", "node": "n1"}\n'
                      '{"time": 5, "kind": "cordon", "node": "n9"}\n')
    cli_refused(["simulate", str(cluster), "--events", str(events), "--log", str(log)],
                'event 1: name: nodes "n9" not found')
    assert log.read_text() == "previous run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cluster.yaml", "events.jsonl",
                                                          "log.jsonl"]
    status, _, err = run_cli(["simulate", str(cluster), "--log", str(log), "--samples",
                              str(tmp_path / "samples.jsonl")])
    assert status == 0, err
    assert [json.loads(line)["pod"] for line in log.read_text().splitlines()] == [
        "default/web-1", "default/huge"]
    assert oct(log.stat().st_mode & 0o777) != oct(0o600)  # the temporary file's mode is gone
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "cluster.yaml", "events.jsonl", "log.jsonl", "samples.jsonl"]


def test_interrupts_are_quiet_and_bugs_are_not_hidden(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import ksched.demo

    def interrupted(**kw):
        raise KeyboardInterrupt

    def broken(**kw):
        raise RuntimeError("a bug")

    monkeypatch.setattr(ksched.demo, "run_demo", interrupted)
    assert main(["demo"]) == 130
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(ksched.demo, "run_demo", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["demo"])


def test_snapshot_counts_name_kinds_in_the_plural() -> None:
    from ksched.cli.commands import _plural

    assert [_plural(k, n) for k, n in [("Node", 1), ("Node", 7), ("StorageClass", 2),
                                       ("PriorityClass", 3), ("CSINode", 0)]] == \
        ["Node", "Nodes", "StorageClasses", "PriorityClasses", "CSINodes"]


def test_example_writes_nothing_when_a_later_file_cannot_be_written(tmp_path: Path) -> None:
    """A folder where the fifth file should go is refused before the first file is written."""
    (tmp_path / "r6i-4xlarge.yaml").mkdir()
    (tmp_path / "snapshot.json").write_text("mine\n")
    cli_refused(["example", str(tmp_path), "--nodes", "3", "--running", "1"],
                f"directory: {tmp_path / 'r6i-4xlarge.yaml'}: exists and is not a regular file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r6i-4xlarge.yaml", "snapshot.json"]
    assert (tmp_path / "snapshot.json").read_text() == "mine\n"


def test_example_failing_at_the_last_write_leaves_no_file_and_no_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails on the fifth file (a full disk) replaces none of the others and
    removes the folders it created."""
    import ksched.example
    from ksched.errors import KschedError
    from ksched.files import written_whole

    def full_disk(path, binary=False):
        if Path(path).name == "r6i-4xlarge.yaml":
            raise KschedError(f"{path}: cannot write: No space left on device")
        return written_whole(path, binary)

    monkeypatch.setattr(ksched.example, "written_whole", full_disk)
    (tmp_path / "snapshot.json").write_text("mine\n")
    cli_refused(["example", str(tmp_path), "--nodes", "3", "--running", "1"],
                "r6i-4xlarge.yaml: cannot write: No space left on device")
    assert [p.name for p in tmp_path.iterdir()] == ["snapshot.json"]
    assert (tmp_path / "snapshot.json").read_text() == "mine\n"
    cli_refused(["example", str(tmp_path / "new" / "folder"), "--nodes", "3"],
                "cannot write: No space left on device")
    assert [p.name for p in tmp_path.iterdir()] == ["snapshot.json"]


def test_example_refuses_an_empty_folder_name_and_a_file(tmp_path: Path) -> None:
    from ksched.errors import ArgumentError
    from ksched.example import write_example
    from tests.refusals import refused

    refused(write_example, "", match="directory: expected a folder name, got ''",
            error=ArgumentError)
    (tmp_path / "file").write_text("x")
    refused(write_example, tmp_path / "file", match=f"directory: {tmp_path / 'file'}: "
            "not a directory", error=ArgumentError)
    cli_refused(["example", str(tmp_path / "file" / "sub")],
                f"directory: {tmp_path / 'file' / 'sub'}: cannot create: not a directory")


def test_outputs_are_made_whole_before_any_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One output that cannot be written leaves the others unwritten, standard output too."""
    from ksched.cli.common import write_outputs
    from ksched.errors import KschedError

    first, lost = tmp_path / "first.jsonl", tmp_path / "gone" / "second.jsonl"
    with pytest.raises(KschedError, match="second.jsonl: cannot write"):
        write_outputs([(None, ["to stdout\n"]), (str(first), ["a\n"]), (str(lost), ["b\n"])])
    assert list(tmp_path.iterdir()) == []
    assert capsys.readouterr().out == ""
    write_outputs([(None, ["to stdout\n"]), (str(first), ["a\n"])])
    assert first.read_text() == "a\n"
    assert capsys.readouterr().out == "to stdout\n"


def test_simulate_refuses_two_outputs_in_one_file_before_the_run(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER_YAML + "---\n" + PENDING_YAML)
    out = tmp_path / "out.jsonl"
    cli_refused(["simulate", str(cluster), "--log", str(out), "--samples",
                 str(tmp_path / "." / "out.jsonl")],
                f"--samples {tmp_path / '.' / 'out.jsonl'}: --log writes that file too")
    assert [p.name for p in tmp_path.iterdir()] == ["cluster.yaml"]
    status, _, err = run_cli(["simulate", str(cluster), "--log", os.devnull,
                              "--summary", os.devnull])  # /dev/null may be shared
    assert status == 0, err


def test_a_plot_without_matplotlib_is_refused_before_the_run(
        tmp_path: Path, cluster_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ksched.planning  # noqa: F401 - loads the modules patched below

    def not_run(*args, **kwargs):
        raise AssertionError("the run started")

    for name in ("capacity", "headroom"):
        monkeypatch.setattr(sys.modules[f"ksched.planning.{name}"], name, not_run)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    plot = tmp_path / "c.png"
    for command in (["capacity", str(cluster_file), str(cluster_file)],
                    ["headroom", str(cluster_file)]):
        cli_refused([*command, "--plot", str(plot)],
                    f"--plot {plot}: matplotlib is not installed: pip install 'ksched[plot]'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cluster.yaml"]

"""Replays of the traces recorded from the real kube-scheduler v1.35.4 (tests/conformance)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ksched import conformance

TRACES = conformance.trace_files([Path(__file__).parent / "conformance"])
#: Families whose every case must replay exactly; the others are reported as they progress.
REQUIRED = ("resources", "taints", "affinity", "ports", "images", "config-sampling", "spread",
            "defaultspread", "interpod", "mixed", "large-default", "config-mostallocated",
            "config-rtcr", "config-weights", "config-args", "config-profiles", "config-invalid",
            "batch", "dra")


def _family(path: Path) -> str:
    return path.name.removesuffix(".json.gz").rsplit("-", 1)[0]


@pytest.mark.conformance
@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name.removesuffix(".json.gz"))
def test_trace_replays(path: Path) -> None:
    result = conformance.run_case(path)
    assert result.outcome != conformance.FAIL, result.line()
    if _family(path) in REQUIRED:
        assert result.outcome == conformance.PASS, result.line()
        output = conformance.load_trace(path)["output"]
        results = output.get("results") or output.get("placements") or []
        assert result.decisions == len([r for r in results if not r.get("no_matching_profile")])


def test_every_family_is_present() -> None:
    families = {_family(p) for p in TRACES}
    assert set(REQUIRED) <= families
    assert len(TRACES) == 191


def test_a_changed_trace_fails(tmp_path: Path) -> None:
    """The replay really compares: a trace whose recorded score is altered must fail."""
    import gzip
    import json

    trace = conformance.load_trace(Path(__file__).parent / "conformance" / "resources-1.json.gz")
    first = trace["output"]["results"][0]
    node = first["feasible"][0]
    first["scores"][node]["NodeResourcesFit"] += 1
    path = tmp_path / "resources-altered.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump(trace, f)
    result = conformance.run_case(path)
    assert result.outcome == conformance.FAIL
    assert result.detail.startswith("default/pod-000: scores: got")


def _write(trace: dict, path: Path) -> Path:
    import gzip
    import json

    with gzip.open(path, "wt") as f:
        json.dump(trace, f)
    return path


def test_unschedulable_plugins_are_compared(tmp_path: Path) -> None:
    """The diagnosis set holds the PreFilter plugin whose node subset narrowed the walk
    (NodeAffinity's ``matchFields``) as upstream records it; a trace without it fails."""
    trace = conformance.load_trace(Path(__file__).parent / "conformance" / "affinity-1.json.gz")
    results = trace["output"]["results"]
    i = next(i for i, r in enumerate(results) if r["prefilter_node_names"] is not None)
    assert results[i]["unschedulable_plugins"] == ["NodeAffinity"]
    results[i]["unschedulable_plugins"] = []
    result = conformance.run_case(_write(trace, tmp_path / "affinity-altered.json.gz"))
    assert result.outcome == conformance.FAIL
    assert result.detail == (f"default/{results[i]['pod']}: unschedulable plugins: "
                             "got ['NodeAffinity'], want []")


def _no_score_trace(total: int) -> dict:
    """Two nodes, one pod, ``score.disabled: ['*']``: the walk stops at the first feasible
    node, which is placed without scoring; the trace records its informational total."""
    def node(name: str) -> dict:
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "10"},
                           "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}

    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
           "spec": {"schedulerName": "default-scheduler", "priority": 0, "containers": [
               {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]}}
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1",
              "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 100,
              "profiles": [{"schedulerName": "default-scheduler",
                            "plugins": {"score": {"disabled": [{"name": "*"}]}}}]}
    result = {"pod": "p", "namespace": "default", "feasible": ["n0"], "filter_failures": {},
              "prefilter_status": None, "unschedulable_plugins": [],
              "scores": {"n0": {"total": total}}, "max_nodes": ["n0"], "chosen": "n0",
              "single_feasible_node": True, "evaluated_nodes": ["n0"], "num_nodes_to_find": 1,
              "next_start_node_index_before": 0, "next_start_node_index_after": 1}
    return {"format": "kube-scheduler-oracle/v1", "family": "config-noscore", "seed": 1,
            "meta": {}, "input": {"nodes": [node("n0"), node("n1")], "existing_pods": [],
                                  "pending_pods": [pod], "namespaces": [],
                                  "scheduler_config": config},
            "output": {"results": [result]}}


def test_single_feasible_node_without_score_plugins_totals_zero(tmp_path: Path) -> None:
    """With no Score plugin, the lone feasible node's informational total is 0 (the 1 of
    ``prioritizeNodes`` is for several nodes); the replay compares it."""
    passed = conformance.run_case(_write(_no_score_trace(0), tmp_path / "noscore-0.json.gz"))
    assert passed.outcome == conformance.PASS, passed.line()
    failed = conformance.run_case(_write(_no_score_trace(1), tmp_path / "noscore-1.json.gz"))
    assert failed.outcome == conformance.FAIL
    assert failed.detail == "default/p: scores: got {'n0': {'total': 0}}, want {'n0': {'total': 1}}"


def _first_failing(results: list[dict]) -> tuple[int, str]:
    """The first result with a node that failed a Filter plugin, and that node."""
    i = next(i for i, r in enumerate(results) if r["filter_statuses"])
    return i, sorted(results[i]["filter_statuses"])[0]


def test_a_changed_filter_reason_fails(tmp_path: Path) -> None:
    """Each node's first failure is compared word for word (code, plugin, reasons), not by
    plugin alone: a trace whose reason text was edited fails, naming the node."""
    trace = conformance.load_trace(Path(__file__).parent / "conformance" / "taints-1.json.gz")
    results = trace["output"]["results"]
    i, node = _first_failing(results)
    status = results[i]["filter_statuses"][node]
    reason = status["reasons"][0]
    status["reasons"][0] = reason + " (edited)"
    result = conformance.run_case(_write(trace, tmp_path / "taints-reason.json.gz"))
    assert result.outcome == conformance.FAIL
    got = (status["code"], status["plugin"], [reason])
    want = (status["code"], status["plugin"], [reason + " (edited)"])
    assert result.detail == (f"default/{results[i]['pod']}: filter status of node {node}: "
                             f"got {got!r}, want {want!r}")


def test_a_changed_filter_code_fails(tmp_path: Path) -> None:
    trace = conformance.load_trace(Path(__file__).parent / "conformance" / "taints-1.json.gz")
    results = trace["output"]["results"]
    i, node = _first_failing(results)
    status = results[i]["filter_statuses"][node]
    status["code"] = "Unschedulable" if status["code"] != "Unschedulable" else "Error"
    result = conformance.run_case(_write(trace, tmp_path / "taints-code.json.gz"))
    assert result.outcome == conformance.FAIL
    assert result.detail.startswith(f"default/{results[i]['pod']}: filter status of node "
                                    f"{node}: got ")


def test_a_changed_prefilter_reason_fails(tmp_path: Path) -> None:
    """A PreFilter rejection is compared with its reasons too."""
    path = next(p for p in TRACES if _family(p) == "volumes")
    trace = conformance.load_trace(path)
    results = trace["output"]["results"]
    i = next(i for i, r in enumerate(results) if r["prefilter_status"])
    results[i]["prefilter_status"]["reasons"] = ["something else"]
    result = conformance.run_case(_write(trace, tmp_path / "volumes-reason.json.gz"))
    assert result.outcome == conformance.FAIL
    assert result.detail.startswith(f"{results[i]['namespace']}/{results[i]['pod']}: "
                                    "PreFilter status: got ")
    assert result.detail.endswith("['something else'])")


def test_a_batch_trace_is_compared_pod_for_pod(tmp_path: Path) -> None:
    """A batch trace (``kube-scheduler-batch/v1``) is replayed as one batch with the heap
    tie-break: a recorded placement moved to another tied node fails, naming the pod."""
    trace = conformance.load_trace(Path(__file__).parent / "conformance" / "batch-1.json.gz")
    placements = trace["output"]["placements"]
    first_tie = next(p for p in placements if p["max_nodes_count"] > 1)
    cut = placements.index(first_tie) + 1
    trace["output"]["placements"] = placements[:cut]
    trace["input"]["pending_pods"] = trace["input"]["pending_pods"][:cut]
    assert conformance.run_case(_write(trace, tmp_path / "batch-cut.json.gz")).outcome == \
        conformance.PASS
    wanted = first_tie["node"]
    first_tie["node"] = next(n for n in trace["meta"]["node_order"] if n != wanted)
    failed = conformance.run_case(_write(trace, tmp_path / "batch-moved.json.gz"))
    assert failed.outcome == conformance.FAIL
    assert failed.detail == (f"{first_tie['namespace']}/{first_tie['pod']}: node: got "
                             f"{wanted!r}, want {first_tie['node']!r}")

"""``ksched plan``: budgets, exit status, PriorityClasses of the cluster file, --config."""

from __future__ import annotations

import json

from tests.refusals import run_cli

CLUSTER = """apiVersion: v1
kind: Node
metadata: {name: old}
status: {allocatable: {cpu: "2", memory: 16Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""
WORK = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      priorityClassName: high
      containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"""
TYPE = """apiVersion: v1
kind: Node
metadata: {name: m, labels: {pool: m}}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
"""
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
"""


def _files(tmp_path) -> list[str]:
    paths = []
    for name, text in [("cluster.yaml", CLUSTER), ("work.yaml", WORK), ("m.yaml", TYPE),
                       ("config.yaml", CONFIG)]:
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    return paths


def test_plan_reads_the_cluster_priority_classes_and_config(tmp_path) -> None:
    cluster, work, m, config = _files(tmp_path)
    status, out, err = run_cli(["plan", cluster, work, "--node-type", f"{m}=2",
                                "--config", config, "-o", "json"])
    assert status == 0, err
    report = json.loads(out)
    assert report["status"] == "complete" and report["nodes"] == {"m": 1}
    assert report["scheduled"] == report["pending"] == 6
    assert report["cost"] == 2.0 and report["gap"] == 0.0


def test_plan_out_of_budget_exits_non_zero(tmp_path) -> None:
    cluster, work, m, _ = _files(tmp_path)
    status, out, err = run_cli(["plan", cluster, work, "--node-type", f"{m}=2",
                                "--max-nodes", "0"])
    assert status == 3
    assert "status: out of budget: max_nodes (0) reached with 0 new nodes and 4 pods not " \
           "scheduled" in out
    assert "2/6 pending pods scheduled (4 not for want of budget)" in out
    assert "plan incomplete" in err

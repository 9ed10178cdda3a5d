"""Zone loss (``headroom --without``, the sweep's ``without``): every pod that ends unplaced
is counted, evicted ones included; PodDisruptionBudgets read with the cluster steer
preemption; mirror pods go with their node (issue #24)."""

from __future__ import annotations

import json

import numpy as np

import ksched
from ksched import headroom, load_cluster
from ksched.planning.headroom import displace

HOST = "kubernetes.io/hostname"


def _node(name: str, cpu: str = "2") -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}}}


def _pod(name: str, cpu: str, node: str, priority: int = 0, labels: dict | None = None,
         **meta: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {},
                         **meta},
            "spec": {"nodeName": node, "priority": priority,
                     "containers": [{"name": "c", "image": "x",
                                     "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def _pdb(app: str) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": app, "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}}}


def _objects(with_pdb: bool) -> list[dict]:
    """``hi`` on b1 must preempt one of two pods to fit: ``db`` (priority 0, the cheaper
    victim) or ``cache`` (priority 5). A PDB that allows no disruption protects ``db``."""
    return [_node("a1"), _node("a2"), _node("b1"),
            _pod("db", "1500m", "a1", 0, {"app": "db"}),
            _pod("cache", "1500m", "a2", 5, {"app": "cache"}),
            _pod("hi", "1", "b1", 1000),
            _pod("static-web", "100m", "b1", annotations={"kubernetes.io/config.mirror": "h"}),
            _pod("static-owned", "100m", "b1", ownerReferences=[
                {"apiVersion": "v1", "kind": "Node", "name": "b1", "uid": "u1",
                 "controller": True}]),
            *([_pdb("db")] if with_pdb else [])]


def test_the_loader_keeps_pdbs_and_preemption_respects_them():
    unprotected = headroom(load_cluster(_objects(False)), without=["b1"]).displaced
    assert [v.pod for v in unprotected.victims] == ["default/db"]  # the cheaper victim
    cluster = load_cluster(_objects(True))
    assert [p.name for p in cluster.objects["pdbs"]] == ["db"]
    lost = headroom(cluster, without=["b1"]).displaced
    # hi preempts cache, whom no budget protects; cache, re-created, has no choice but db.
    assert [(v.pod, v.by) for v in lost.victims] == [("default/cache", "default/hi"),
                                                     ("default/db", "default/cache")]
    assert [(p.pod, p.outcome, p.node) for p in lost.pods] == [("default/hi", "placed", "a2")]


def test_the_headline_counts_evicted_pods_that_end_unplaced():
    lost = headroom(load_cluster(_objects(True)), without=["b1"]).displaced
    assert [(p.pod, p.from_node, p.by, p.outcome, p.node) for p in lost.evicted] == [
        ("default/cache", "a2", "default/hi", "placed", "a1"),
        ("default/db", "a1", "default/cache", "pending", None)]
    assert [p.pod for p in lost.unplaced] == ["default/db"]
    text = str(lost)
    assert text.splitlines()[:4] == [
        "without 1 node(s): 1 pod(s) end unplaced",
        "  displaced from the lost nodes: 1, 1 placed again, 0 unplaced",
        "  evicted by preemption to make room: 2, 1 placed again, 1 unplaced",
        "  gone with their nodes (not re-placed): 0 DaemonSet pod(s), 2 mirror (static) "
        "pod(s)"]
    assert "evicted default/db (from a1, by default/cache): 0/2 nodes are available" in text
    assert lost.to_dict()["unplaced"] == 1


def test_mirror_pods_go_with_their_node():
    lost = headroom(load_cluster(_objects(False)), without=["b1"]).displaced
    assert lost.mirror_pods == 2
    assert [p.pod for p in lost.pods] == ["default/hi"]  # the static pods are not re-placed
    assert all("static" not in p.key for p in lost.state.pods)


def test_the_sweep_respects_pdbs_and_counts_the_evicted(tmp_path):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": _objects(True)}))
    rows = ksched.sweep(ksched.Scenario(str(path)), {"without": [None, ["b1"]]}, "schedule",
                        executor="inline", progress=False).rows
    assert [(r["displaced"], r["evicted"], r["evicted_pending"], r["unplaced"])
            for r in rows[1:]] == [(1, 2, 1, 1)]
    assert rows[0].get("unplaced") is None


def test_displace_reads_the_budgets_from_the_cluster():
    """``displace`` (which the sweep's ``node_count`` removals use too) takes the cluster's
    budgets: no argument passes them."""
    cluster = load_cluster(_objects(True))
    lost = displace(cluster, np.array([cluster.node_index["b1"]]))
    assert lost.victims[0].pod == "default/cache"
    assert list(lost.state.node_names) == ["a1", "a2"]

"""Loading a ``kubectl get nodes,pods -A -o json`` snapshot of 5,000 nodes and 50,000 running
pods (target: under 10 s)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ksched
from ksched.workloads import kubectl_snapshot


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("snapshot") / "cluster.json"
    path.write_text(json.dumps(kubectl_snapshot(5000, 50000)))
    return path


def bench_load_kubectl_snapshot(benchmark, snapshot: Path) -> None:
    cluster = benchmark.pedantic(ksched.load_cluster, args=(snapshot,), rounds=3, iterations=1)
    benchmark.extra_info.update(nodes=cluster.num_nodes, pods=len(cluster.pods),
                                megabytes=snapshot.stat().st_size / 1e6)
    assert cluster.num_nodes == 5000 and len(cluster.pods) == 50000

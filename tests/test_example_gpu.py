"""``ksched example DIR --gpu``: the heterogeneous GPU cluster the README plans on."""

from __future__ import annotations

import collections
from pathlib import Path

import ksched
from ksched.config import load_config
from ksched.example import write_example
from ksched.example_gpu import A10G, A100, BINPACK, GPU, PRODUCT, T4
from ksched.io import read_objects
from tests.refusals import run_cli


def test_gpu_example_files(tmp_path: Path) -> None:
    paths = write_example(tmp_path, gpu=True)
    assert [p.name for p in paths] == ["snapshot.json", "pending.yaml", "next-quarter.yaml",
                                       "p4d-24xlarge.yaml", "g5-12xlarge.yaml",
                                       "g4dn-12xlarge.yaml", BINPACK]
    cluster = ksched.load_cluster(tmp_path / "snapshot.json")
    models = collections.Counter(n.labels.get(PRODUCT) for n in cluster.nodes)
    assert models == {A100: 8, A10G: 16, T4: 20, None: 40}
    gpu_nodes = [n for n in cluster.nodes if n.labels.get(PRODUCT)]
    assert all(n.taints[0].key == GPU and n.taints[0].effect == "NoSchedule"
               for n in gpu_nodes)
    column = cluster.resource_column(GPU)
    assert int(cluster.allocatable[:, column].sum()) == 8 * 8 + 16 * 4 + 20 * 4
    assert int(cluster.requested[:, column].sum()) == 8 * 4 + 16 * 3 + 20 * 2
    pending = ksched.load_pods(tmp_path / "pending.yaml")
    assert [p.name for p in pending] == ["vision-new", "llm-new", "train-0"]
    (node_type,) = read_objects(tmp_path / "p4d-24xlarge.yaml").nodes
    assert node_type.labels[PRODUCT] == A100 and node_type.allocatable[GPU] == 8
    profile = load_config(tmp_path / BINPACK).profiles[0]
    assert profile.args["NodeResourcesFit"].strategy == "MostAllocated"


def test_gpu_example_cli(tmp_path: Path) -> None:
    status, out, err = run_cli(["example", str(tmp_path / "gpu"), "--gpu"])
    assert status == 0, err
    assert out.splitlines()[-1] == str(tmp_path / "gpu" / BINPACK)
    status, out, err = run_cli(["example", str(tmp_path / "other"), "--gpu", "--nodes", "5"])
    assert status == 2 and out == ""
    assert err == ("ksched: --nodes: not with --gpu (the GPU example's cluster is fixed: 84 "
                   "nodes)\n")
    assert not (tmp_path / "other").exists()

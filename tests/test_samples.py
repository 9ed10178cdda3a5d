"""A simulation's samples kept as columns (:mod:`ksched.samples`): read as Sample records,
the same whether taken one at a time or a stretch's at once, and as whole columns."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from ksched import ClusterState, Container, Node, Pod
from ksched.decisions import Sample
from ksched.simulator import Event, Simulator

GPU = "nvidia.com/gpu"


def _node(name: str, cpu: int = 4000, gpus: int = 8) -> Node:
    return Node(name, allocatable={"cpu": cpu, "memory": 2**34, "pods": 10, GPU: gpus},
                labels={"kubernetes.io/hostname": name})


def _pod(name: str, cpu: int, gpus: int = 0) -> Pod:
    requests = {"cpu": cpu, **({GPU: gpus} if gpus else {})}
    return Pod(name, containers=[Container("c", requests=requests)])


def _run(batched: bool):
    """Pods every 30 s for 4 minutes on one node, then a second node (no GPUs) added."""
    cluster = ClusterState.from_records([_node("n1")])
    events = [Event(30.0 * k, "create", pod=_pod(f"p{k}", 500, gpus=k % 2), duration=45.0)
              for k in range(8)]
    events.append(Event(250.0, "node-add", node=_node("n2", cpu=4000, gpus=0)))
    events.append(Event(300.0, "create", pod=_pod("last", 1000)))
    return Simulator(cluster, sample_every=60.0, batched=batched).run(events)


def test_samples_read_as_records_whether_batched_or_not():
    batched, one_at_a_time = _run(True), _run(False)
    assert batched.samples == one_at_a_time.samples
    assert list(batched.samples) == list(one_at_a_time.samples)
    assert [s.time for s in batched.samples] == [0.0, 60.0, 120.0, 180.0, 250.0, 300.0, 300.0]
    assert batched.samples[1] == Sample(60.0, 0, 0, 0, 0, 2, 0.25, 0.0, {
        GPU: {"allocatable": 8, "requested": 1, "free": 7}})
    # the first event after 240 s (n2 joins: twice the cpu, the same GPUs), and the end
    assert batched.samples[4].cpu == 500 / 8000
    assert batched.samples[-1].cpu == 1000 / 8000
    assert batched.samples[-1].extended[GPU] == {"allocatable": 8, "requested": 0, "free": 8}


def test_a_sequence_of_records():
    samples = _run(True).samples
    assert len(samples) == 7
    assert samples[-1] == samples[6] == list(samples)[6]
    assert samples[2:4] == tuple(list(samples)[2:4])
    with pytest.raises(IndexError):
        samples[7]
    assert pickle.loads(pickle.dumps(samples)) == samples
    assert samples != list(samples)[:-1]


def test_columns_hold_what_the_records_say():
    samples = _run(True).samples
    columns = samples.columns()
    records = list(samples)
    assert columns["time"].tolist() == [s.time for s in records]
    assert columns["running"].tolist() == [s.running for s in records]
    assert columns["active"].tolist() == [s.active for s in records]
    assert np.allclose(columns["cpu"], [s.cpu for s in records])
    assert columns[f"{GPU}.requested"].tolist() == [
        s.extended[GPU]["requested"] for s in records]
    assert columns[f"{GPU}.free"].tolist() == [s.extended[GPU]["free"] for s in records]

"""The simulator's utilisation: a time average over virtual time and its true peak, kept as
pods come and go (not re-summed over the nodes), with GPUs in the samples and the summary
(issue #24)."""

from __future__ import annotations

import numpy as np
import pytest

from ksched import ClusterState, Container, Node, Pod
from ksched.simulator import Event, Simulator

GPU = "nvidia.com/gpu"


def _node(name: str = "n1", cpu: int = 4000, gpus: int = 8) -> Node:
    return Node(name, allocatable={"cpu": cpu, "memory": 2**34, "pods": 10, GPU: gpus},
                labels={"kubernetes.io/hostname": name})


def _pod(name: str, cpu: int, gpus: int = 0, priority: int = 0) -> Pod:
    requests = {"cpu": cpu, **({GPU: gpus} if gpus else {})}
    return Pod(name, containers=[Container("c", requests=requests)], priority=priority)


@pytest.fixture
def run():
    """Half the cpu and a quarter of the GPUs for 30 s, idle for 60 s, a quarter of the cpu
    and one GPU in eight for the last 30 s: 120 virtual seconds."""
    cluster = ClusterState.from_records([_node()])
    events = [Event(0.0, "create", pod=_pod("a", 2000, gpus=2), duration=30.0),
              Event(90.0, "create", pod=_pod("b", 1000, gpus=1), duration=30.0)]
    return Simulator(cluster, sample_every=60.0).run(events)


def test_mean_is_the_time_average_not_the_mean_of_samples(run):
    summary = run.summary()
    assert summary["virtual_seconds"] == 120.0
    # (0.5 * 30 s + 0 * 60 s + 0.25 * 30 s) / 120 s. The samples (at 0 s before the first
    # pod came, 90 s and 120 s twice) say 0, 0.25, 0, 0: their plain mean, 0.0625, is what
    # the summary used to say, and their maximum, 0.25, missed the peak.
    assert summary["cpu_utilisation_mean"] == pytest.approx(0.1875)
    assert [s.cpu for s in run.samples] == [0.0, 0.25, 0.0, 0.0]
    assert summary["cpu_utilisation_max"] == 0.5


def test_the_peak_between_samples_is_not_missed():
    cluster = ClusterState.from_records([_node()])
    events = [Event(10.0, "create", pod=_pod("burst", 4000), duration=5.0),
              Event(100.0, "create", pod=_pod("later", 1000), duration=1.0)]
    result = Simulator(cluster, sample_every=60.0).run(events)
    assert max(s.cpu for s in result.samples) < 1.0  # no sample fell inside the burst
    assert result.summary()["cpu_utilisation_max"] == 1.0
    assert result.summary()["cpu_utilisation_mean"] == pytest.approx((1.0 * 5 + 0.25) / 101)


def test_gpus_in_samples_and_summary(run):
    assert run.samples[1].time == 90.0
    assert run.samples[1].extended == {GPU: {"allocatable": 8, "requested": 1, "free": 7}}
    assert run.samples[-1].extended[GPU]["free"] == 8
    summary = run.summary()
    assert summary[f"extended.{GPU}.utilisation_mean"] == pytest.approx((2 + 1) * 30 / 8 / 120)
    assert summary[f"extended.{GPU}.utilisation_max"] == 0.25
    assert (summary[f"extended.{GPU}.allocatable"], summary[f"extended.{GPU}.requested"],
            summary[f"extended.{GPU}.free"]) == (8, 0, 8)


def test_running_totals_match_the_cluster_after_preemption_and_node_loss():
    """The totals kept pod by pod equal the nodes' sums after evictions, a removed node
    and a node added."""
    cluster = ClusterState.from_records([_node("n1"), _node("n2")])
    events = [Event(0.0, "create", pod=_pod("low1", 3000)),
              Event(0.0, "create", pod=_pod("low2", 3000)),
              Event(5.0, "create", pod=_pod("high", 3000, gpus=4, priority=100)),
              Event(10.0, "node-remove", name="n2"),
              Event(20.0, "node-add", node=_node("n3", cpu=8000, gpus=0))]
    result = Simulator(cluster).run(events)
    assert any(d.outcome == "preempted" for d in result.decisions)
    state = result.state
    sums = dict(zip(state.resource_names, state.requested.sum(axis=0).tolist()))
    assert {r: result.usage.requested[r] for r in sums} == sums
    alloc = dict(zip(state.resource_names, state.allocatable.sum(axis=0).tolist()))
    assert {r: result.usage.allocatable[r] for r in alloc} == alloc


def test_a_run_that_takes_no_virtual_time_reports_its_final_state():
    cluster = ClusterState.from_records([_node()])
    result = Simulator(cluster).run([Event(0.0, "create", pod=_pod("a", 1000))])
    summary = result.summary()
    assert summary["virtual_seconds"] == 0.0
    assert summary["cpu_utilisation_mean"] == summary["cpu_utilisation_max"] == 0.25
    assert np.isclose(summary[f"extended.{GPU}.utilisation_mean"], 0.0)

"""A simulation's decisions kept as columns (:mod:`ksched.decision_log`): read as Decision
records, the same whether recorded by a stretch or one event at a time."""

from __future__ import annotations

import pickle

import pytest

from ksched import ClusterState, Container, Node, Pod
from ksched.decision_log import DecisionLog, Decisions
from ksched.errors import ArgumentError
from ksched.decisions import BOUND, FINISHED, UNSCHEDULABLE, Decision
from ksched.simulator import Event, Simulator


def _run(batched: bool):
    """Two pods that fit and finish, and one too large for the node, retried as they go."""
    node = Node("n1", allocatable={"cpu": 2000, "memory": 2**34, "pods": 10},
                labels={"kubernetes.io/hostname": "n1"})
    pod = lambda name, cpu: Pod(name, containers=[Container("c", requests={"cpu": cpu})])  # noqa: E731
    events = [Event(0.0, "create", pod=pod("big", 4000)),
              Event(1.0, "create", pod=pod("a", 500), duration=10.0),
              Event(2.0, "create", pod=pod("b", 500), duration=20.0)]
    return Simulator(ClusterState.from_records([node]), batched=batched).run(events)


def test_decisions_read_as_records_whether_batched_or_not():
    batched, one_at_a_time = _run(True), _run(False)
    assert batched.decisions == one_at_a_time.decisions
    records = list(batched.decisions)
    assert records[:3] == [
        Decision(0.0, "default/big", UNSCHEDULABLE, None, records[0].reason, (), 1),
        Decision(1.0, "default/a", BOUND, "n1", "", (), 1),
        Decision(2.0, "default/b", BOUND, "n1", "", (), 1)]
    assert "Insufficient cpu" in records[0].reason
    assert Decision(11.0, "default/a", FINISHED, "n1") in records
    assert batched.summary() == {**one_at_a_time.summary(),
                                 "wall_seconds": batched.summary()["wall_seconds"],
                                 "queue_share": batched.summary()["queue_share"]}


def test_a_sequence_of_records():
    decisions = _run(True).decisions
    records = list(decisions)
    assert isinstance(decisions, Decisions) and len(decisions) == len(records)
    assert decisions[-1] == records[-1] and decisions[1:3] == tuple(records[1:3])
    assert list(reversed(decisions)) == records[::-1]
    assert decisions.column("outcome") == tuple(d.outcome for d in records)
    with pytest.raises(IndexError):
        decisions[len(records)]
    assert pickle.loads(pickle.dumps(decisions)) == decisions
    assert decisions != records[:-1] and decisions == records


def test_the_log_goes_on_after_a_copy():
    log = DecisionLog()
    log.add(0.0, "default/a", BOUND, "n1", "", (), 1)
    copy = log.frozen()
    log.add(5.0, "default/a", FINISHED, "n1")
    assert len(copy) == 1 and len(log) == 2
    assert log[-1] == Decision(5.0, "default/a", FINISHED, "n1")
    assert log[0:] == (copy[0], log[1])
    with pytest.raises(ArgumentError, match="a column per field"):
        Decisions(((1.0,), ("p",)))
    with pytest.raises(ArgumentError, match="column 'node_name': expected one of"):
        copy.column("node_name")

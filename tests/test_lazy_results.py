"""A batch's outcome as columns (:class:`ksched.engine.Result`: node rows and reason codes,
placements made on access), and the cache recording the compiled loop's pods in bulk
(:meth:`ksched.cache.Assumer.record_many`) as it records them one by one."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from ksched import ClusterState, Container, Node, Placement, Pod, schedule_batch
from ksched.api import PodAffinity, PodAffinityTerm
from ksched.cache import Assumer
from ksched.pod_table import PodTable

GI = 1024**3


def web(name: str, cpu: int = 100, **kw) -> Pod:
    return Pod(name, containers=[Container("c", requests={"cpu": cpu})], **kw)


def cluster(count: int = 3, cpu: int = 1000, bound: tuple[Pod, ...] = ()) -> ClusterState:
    return ClusterState.from_records(
        [Node(f"n{i}", labels={"kubernetes.io/hostname": f"n{i}"},
              allocatable={"cpu": cpu, "memory": 8 * GI, "pods": 110}) for i in range(count)],
        bound)


@pytest.fixture(scope="module")
def result():
    pods = [web(f"a{i}", 400) for i in range(6)] + [web("huge", 5000), web("b", 100),
                                                    web("huge2", 5000)]
    return schedule_batch(cluster(), pods)


def test_placements_are_made_on_access_and_equal_the_records(result) -> None:
    placements = result.placements
    made = tuple(placements)
    assert all(type(p) is Placement for p in made)
    assert placements == made and made == placements and list(made) == placements
    assert placements[-1] == made[-1] and placements[2:4] == list(made[2:4])
    assert placements != made[:-1]
    assert sorted(p.node for p in made[:6]) == ["n0", "n0", "n1", "n1", "n2", "n2"]
    assert made[6].node is None and made[6].reason.startswith("0/3 nodes are available")
    assert made[8].reason == made[6].reason and result.reason_codes[8] == result.reason_codes[6]
    assert result.scheduled == tuple(p for p in made if p.scheduled)
    assert result.unschedulable == (made[6], made[8])


def test_the_columns_say_what_the_placements_say(result) -> None:
    made = tuple(result.placements)
    assert result.reasons[0] == ""
    assert result.node_rows.dtype == np.int64 and not result.node_rows.flags.writeable
    assert [result.state.node_names[r] if r >= 0 else None for r in result.node_rows] == \
        [p.node for p in made]
    assert [result.reasons[c] for c in result.reason_codes] == [p.reason for p in made]
    assert result.to_records() == [{"namespace": p.pod.namespace, "name": p.pod.name,
                                    "node": p.node, "reason": p.reason} for p in made]
    columns = result.to_columns()
    assert columns["node"] == [p.node for p in made] and columns["name"][6] == "huge"
    assert result.node_of("default/a1") == made[1].node and result.node_of("default/huge") is None
    with pytest.raises(KeyError):
        result.node_of("default/nope")


def test_one_message_per_failing_class_keeps_its_wording() -> None:
    # The compiled loop words a class's failure once, the framework every time: the same text.
    pods = [web(f"p{i}", 600) for i in range(5)]
    fast = schedule_batch(cluster(2), pods)
    slow = schedule_batch(cluster(2), pods, fast_path=False)
    assert fast.placements == tuple(slow.placements)
    assert len(set(fast.reason_codes[2:].tolist())) == 1 and len(fast.reasons) == 2


def _anti(name: str) -> Pod:
    term = PodAffinityTerm("kubernetes.io/hostname")
    return web(name, pod_anti_affinity=PodAffinity(required=(term,)), labels={"app": "x"})


@pytest.mark.parametrize("built", [(), ("node_pods",), ("node_pods", "rows", "table")])
@pytest.mark.parametrize("with_mask", [True, False])
@pytest.mark.parametrize("lazy", [False, True], ids=["pods", "table-rows"])
def test_bulk_record_equals_one_by_one(built: tuple[str, ...], with_mask: bool,
                                       lazy: bool) -> None:
    bound = (attrs.evolve(web("old", 200), node_name="n1"),
             attrs.evolve(_anti("old-anti"), node_name="n0"))
    state = cluster(4, 4000, bound)
    pods = [web(f"p{i}", 100 + 50 * (i % 3)) for i in range(7)] + [_anti("anti")]
    rows = np.array([2, 0, 2, 1, 3, 3, 0, 1], dtype=np.int64)
    one, bulk = Assumer(state, pods), Assumer(state, pods)
    for assumer in (one, bulk):
        if "node_pods" in built:
            assumer.node_pods()
        if "rows" in built:
            assumer.serial_of("default/old")
        if "table" in built:
            assumer.pod_table()
    for pod, node in zip(pods[:3], rows[:3].tolist()):
        one.record(pod, node)
        bulk.record(pod, node)
    for pod, node in zip(pods[3:], rows[3:].tolist()):
        one.record(pod, node)
    mask = np.array([p.has_pod_affinity for p in pods[3:]]) if with_mask else None
    entries = pods[3:]
    if lazy:  # pods a table has not made yet: logged as (table, row), made when read
        table = PodTable.from_columns(pods, range(len(pods)), [p.name for p in pods])
        entries = table.entries(np.arange(3, len(pods)))
        assert entries[0] == (table, 3)
    bulk.record_many(entries, rows[3:], mask)
    one.sync()
    bulk.sync()
    a, b = one, bulk
    assert list(a.state.pods) == list(b.state.pods)
    assert [p.node_name for p in b.state.pods][-5:] == ["n1", "n3", "n3", "n0", "n1"]
    assert np.array_equal(a.state.pod_node, b.state.pod_node)
    assert a.state.affinity_pods == b.state.affinity_pods == (1, 9)
    assert a.node_pods() == b.node_pods()
    assert np.array_equal(a.serials(), b.serials())
    assert a.serial_of("default/p5") == b.serial_of("default/p5") == 7
    assert (a.affinity_version > 0) == (b.affinity_version > 0)
    if "table" in built:
        ta, tb = one.pod_table(), bulk.pod_table()
        assert np.array_equal(ta.slots, tb.slots) and np.array_equal(ta.request, tb.request)
        assert np.array_equal(ta.counts, tb.counts) and ta.size == tb.size
    # Pods placed in bulk leave as the others do, and the log compacts alike.
    gone = [a.remove(["default/p4", "default/p1"]) for a in (one, bulk)]
    assert gone[0] == gone[1] and gone[0][0].node_name == "n3"
    one.sync()
    bulk.sync()
    assert list(one.state.pods) == list(bulk.state.pods)
    assert np.array_equal(one.state.pod_node, bulk.state.pod_node)
    assert one.state.affinity_pods == bulk.state.affinity_pods
    assert one.node_pods() == bulk.node_pods()
    final = bulk.frozen()
    assert final.pods[-1] == attrs.evolve(pods[-1], node_name="n1")


def test_the_state_of_a_table_batch_binds_each_pod_to_its_node() -> None:
    pods = PodTable.from_columns([web("t", 300)], [0] * 5, [f"r{i}" for i in range(5)])
    done = schedule_batch(cluster(2), pods)
    assert [p.node_name for p in done.state.pods] == [p.node for p in done.placements]
    assert [p.name for p in done.state.pods] == [f"r{i}" for i in range(5)]
    again = schedule_batch(done.state, [web("late", 500)])
    assert again.placements[0].node is None

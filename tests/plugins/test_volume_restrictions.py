"""VolumeRestrictions: the plugin against ``reference_pre_filter`` / ``reference_filter`` on
random clusters with storage, upstream's messages, and ReadWriteOncePod claims across a batch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched import schedule_batch
from ksched.api import Node, PersistentVolume, PersistentVolumeClaim, Volume
from ksched.framework.interfaces import Cycle
from ksched.plugins.reference.volume_restrictions import reference_filter, reference_pre_filter
from ksched.plugins.volume_restrictions import (
    REASON_DISK_CONFLICT,
    REASON_RWOP_CONFLICT,
    VolumeRestrictions,
)
from ksched.state import ClusterState
from ksched.status import Code, unresolvable, unschedulable
from ksched.storage_listers import StorageObjects
from tests.plugins.volume_scenarios import (
    VolumeScenario,
    build_volume_scenario,
    node_subset,
    pod,
    volume_scenarios,
    with_claim_ref,
)
from tests.strategies import assert_filter_equal

SETTINGS = settings(max_examples=150, deadline=None)
PLUGIN = VolumeRestrictions()


def check(s: VolumeScenario, nodes: np.ndarray | None = None) -> None:
    nodes = s.indices if nodes is None else nodes
    cycle = s.cycle()
    want, _ = reference_pre_filter(s.pod, s.storage, s.bound)
    got = PLUGIN.pre_filter(cycle)
    assert got == want
    if want is not None:
        return
    expected = [reference_filter(s.pod, s.infos[i], s.storage, s.bound) for i in nodes]
    assert_filter_equal(PLUGIN.filter(cycle, nodes), expected,
                        [s.nodes[i] for i in nodes])


@SETTINGS
@given(volume_scenarios())
def test_plugin_matches_reference(s: VolumeScenario) -> None:
    check(s)


@SETTINGS
@given(volume_scenarios(), st.randoms(use_true_random=False))
def test_plugin_matches_reference_on_node_subsets(s: VolumeScenario, rng) -> None:
    check(s, node_subset(s.indices, rng))


@SETTINGS
@given(volume_scenarios())
def test_node_static_pods_get_one_verdict_everywhere(s: VolumeScenario) -> None:
    """A pod the plugin calls node-static passes or is rejected alike on every node, in any
    cluster with the same storage."""
    if not PLUGIN.node_static_for(s.pod, s.state):
        return
    assert PLUGIN.judged_by_node_class(s.pod)
    cycle = s.cycle()
    pre = PLUGIN.pre_filter(cycle)
    if pre is None:
        assert PLUGIN.filter(cycle, s.indices).passed.all()


NODES = [Node("a"), Node("b"), Node("c")]


def _claim(name: str, mode: str = "ReadWriteOnce") -> PersistentVolumeClaim:
    return PersistentVolumeClaim(name, access_modes=(mode,), request=1, volume_name=f"pv-{name}",
                                 phase="Bound", bind_completed=True)


def _storage(*claims: PersistentVolumeClaim) -> StorageObjects:
    volumes = [with_claim_ref(PersistentVolume(
        c.volume_name, capacity=1, access_modes=c.access_modes, source="csi",
        driver="csi.example.com", volume_handle=c.volume_name), c) for c in claims]
    return StorageObjects(persistent_volumes=volumes, persistent_volume_claims=claims)


def _claim_volume(claim: str) -> Volume:
    return Volume("data", "persistentVolumeClaim", claim_name=claim)


def test_a_missing_claim_is_rejected_at_pre_filter_with_upstreams_words() -> None:
    s = build_volume_scenario(NODES, [], pod("web", [_claim_volume("does-not-exist")]),
                              _storage())
    assert PLUGIN.pre_filter(s.cycle()) == unresolvable(
        'persistentvolumeclaim "does-not-exist" not found')


def test_a_read_write_once_pod_claim_in_use_rejects_every_node() -> None:
    storage = _storage(_claim("solo", "ReadWriteOncePod"))
    s = build_volume_scenario(NODES, [pod("first", [_claim_volume("solo")], "a")],
                              pod("second", [_claim_volume("solo")]), storage)
    cycle = s.cycle()
    assert PLUGIN.pre_filter(cycle) is None
    result = PLUGIN.filter(cycle, s.indices)
    assert not result.passed.any()
    assert {result.status_at(i) for i in range(3)} == {unschedulable(REASON_RWOP_CONFLICT)}
    assert not PLUGIN.node_static_for(s.pod, s.state)


def test_a_read_write_once_claim_shared_by_pods_is_skipped() -> None:
    storage = _storage(_claim("shared"))
    s = build_volume_scenario(NODES, [pod("first", [_claim_volume("shared")], "a")],
                              pod("second", [_claim_volume("shared")]), storage)
    assert PLUGIN.pre_filter(s.cycle()).is_skip
    assert PLUGIN.node_static_for(s.pod, s.state)


@pytest.mark.parametrize(("mine", "theirs", "conflict"), [
    (Volume("d", "gcePersistentDisk", pd_name="pd"),
     Volume("e", "gcePersistentDisk", pd_name="pd"), True),
    (Volume("d", "gcePersistentDisk", pd_name="pd", read_only=True),
     Volume("e", "gcePersistentDisk", pd_name="pd", read_only=True), False),  # both read-only
    (Volume("d", "awsElasticBlockStore", volume_id="vol-1", read_only=True),
     Volume("e", "awsElasticBlockStore", volume_id="vol-1", read_only=True), True),  # always
    (Volume("d", "awsElasticBlockStore", volume_id="vol-1"),
     Volume("e", "awsElasticBlockStore", volume_id="vol-2"), False),
    (Volume("d", "rbd", monitors=("m1", "m2"), rbd_pool="rbd", rbd_image="i"),
     Volume("e", "rbd", monitors=("m2",), rbd_pool="rbd", rbd_image="i"), True),
    (Volume("d", "rbd", monitors=("m1",), rbd_pool="rbd", rbd_image="i"),
     Volume("e", "rbd", monitors=("m2",), rbd_pool="rbd", rbd_image="i"), False),  # no monitor
    (Volume("d", "iscsi", iqn="iqn.2001-04.com.a:x", read_only=True),
     Volume("e", "iscsi", iqn="iqn.2001-04.com.a:x"), True),
    (Volume("d", "gcePersistentDisk", pd_name="pd"),
     Volume("e", "awsElasticBlockStore", volume_id="pd"), False),  # different kinds
])
def test_in_tree_disk_conflicts(mine: Volume, theirs: Volume, conflict: bool) -> None:
    s = build_volume_scenario(NODES, [pod("there", [theirs], "b")], pod("web", [mine]),
                              _storage())
    cycle = s.cycle()
    assert PLUGIN.pre_filter(cycle) is None
    result = PLUGIN.filter(cycle, s.indices)
    assert result.passed.tolist() == [True, not conflict, True]
    if conflict:
        assert result.status_at(1) == unschedulable(REASON_DISK_CONFLICT)
    assert not PLUGIN.node_static_for(s.pod, s.state)


def test_a_disk_conflict_is_reported_before_a_claim_conflict() -> None:
    disk = Volume("d", "awsElasticBlockStore", volume_id="vol-1")
    storage = _storage(_claim("solo", "ReadWriteOncePod"))
    s = build_volume_scenario(NODES, [pod("there", [disk, _claim_volume("solo")], "b")],
                              pod("web", [disk, _claim_volume("solo")]), storage)
    cycle = s.cycle()
    PLUGIN.pre_filter(cycle)
    result = PLUGIN.filter(cycle, s.indices)
    assert [result.status_at(i).reasons for i in range(3)] == [
        (REASON_RWOP_CONFLICT,), (REASON_DISK_CONFLICT,), (REASON_RWOP_CONFLICT,)]


def test_pods_placed_in_a_batch_use_their_claims() -> None:
    """Two pods of one ReadWriteOncePod claim: the first is placed, the second is not; two
    pods of one EBS volume go to different nodes."""
    storage = _storage(_claim("solo", "ReadWriteOncePod"))
    nodes = [Node("a", allocatable={"cpu": "4", "memory": "8Gi", "pods": 10}),
             Node("b", allocatable={"cpu": "4", "memory": "8Gi", "pods": 10})]
    state = ClusterState.from_records(nodes, [], storage=storage)
    ebs = Volume("ebs", "awsElasticBlockStore", volume_id="vol-9")
    result = schedule_batch(state, [pod("one", [_claim_volume("solo")]),
                                    pod("two", [_claim_volume("solo")]),
                                    pod("three", [ebs]), pod("four", [ebs])])
    one, two, three, four = result.placements
    assert one.node is not None and two.node is None
    assert two.reason == f"0/2 nodes are available: 2 {REASON_RWOP_CONFLICT}."
    assert {three.node, four.node} == {"a", "b"}


def test_the_cycle_status_codes() -> None:
    s = build_volume_scenario(NODES, [], pod("web", [_claim_volume("nope")]), _storage())
    status = PLUGIN.pre_filter(Cycle(s.state, s.pod))
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE

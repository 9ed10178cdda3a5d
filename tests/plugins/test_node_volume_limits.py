"""NodeVolumeLimits: the plugin (its per-node index and kernel) against ``reference_filter`` on
random clusters with CSINodes, in-tree volumes and claims, as pods are placed and claims get
bound; CSI migration; upstream's messages; the count across a ``schedule_batch``."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched import schedule_batch
from ksched.api import (
    CSINode,
    CSINodeDriver,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    Volume,
)
from ksched.cache import Assumer
from ksched.framework.interfaces import Cycle
from ksched.plugins.attached_volumes import counted_volumes
from ksched.plugins.node_volume_limits import REASON, NodeVolumeLimits
from ksched.plugins.reference.node_volume_limits import reference_filter
from ksched.state import ClusterState
from ksched.status import Code, Status, unresolvable, unschedulable
from ksched.storage_listers import StorageObjects
from tests.plugins.volume_scenarios import (
    VOLUME_NAMES,
    VolumeScenario,
    build_volume_scenario,
    node_subset,
    persistent_volumes,
    pod,
    volume_scenarios,
    with_claim_ref,
)
from tests.strategies import assert_filter_equal

SETTINGS = settings(max_examples=150, deadline=None)
PLUGIN = NodeVolumeLimits()


def check(s: VolumeScenario, state: ClusterState | None = None,
          nodes: np.ndarray | None = None) -> list[bool]:
    """The plugin on ``state`` (default: the scenario's) against the reference on the
    scenario's records."""
    state = s.state if state is None else state
    nodes = s.indices if nodes is None else nodes
    cycle = Cycle(state, s.pod)
    pre = PLUGIN.pre_filter(cycle)
    if not counted_volumes(s.pod):
        assert pre is not None and pre.is_skip
        return [True] * len(nodes)
    assert pre is None
    expected = [reference_filter(s.pod, s.infos[i], s.storage) for i in nodes]
    result = PLUGIN.filter(cycle, nodes)
    assert_filter_equal(result, expected, [s.nodes[i] for i in nodes])
    return result.passed.tolist()


@SETTINGS
@given(volume_scenarios())
def test_plugin_matches_reference(s: VolumeScenario) -> None:
    check(s)


@SETTINGS
@given(volume_scenarios(), st.randoms(use_true_random=False))
def test_plugin_matches_reference_on_node_subsets(s: VolumeScenario, rng) -> None:
    check(s, nodes=node_subset(s.indices, rng))


@SETTINGS
@given(volume_scenarios())
def test_the_index_follows_pods_as_they_are_placed(s: VolumeScenario) -> None:
    """Filtering after each placement (the index takes in the placed pods) agrees with the
    reference on the cluster of the pods placed so far."""
    empty = ClusterState.from_records(s.nodes, [], storage=s.storage)
    assumer = Assumer(empty, [s.pod])
    for count, placed in enumerate(s.bound):
        partial = build_volume_scenario(s.nodes, s.bound[:count], s.pod, s.storage)
        check(partial, assumer.state)
        assumer.assume(attrs.evolve(placed, node_name=""), s.state.node_index[placed.node_name])
    check(s, assumer.state)


@st.composite
def rebindings(draw: st.DrawFn, s: VolumeScenario) -> StorageObjects:
    """The scenario's storage with some claims (re)bound or unbound and some volumes
    replaced, as assumed bindings change them."""
    claims = [attrs.evolve(c, volume_name=draw(st.sampled_from(("",) + VOLUME_NAMES)))
              for c in s.storage.persistent_volume_claims if draw(st.booleans())]
    volumes = [draw(persistent_volumes(v.name)) for v in s.storage.persistent_volumes
               if draw(st.integers(0, 4)) == 0]
    return s.storage.updated(volumes=volumes, claims=claims)


@SETTINGS
@given(st.data())
def test_the_index_follows_claims_as_they_are_bound(data: st.DataObject) -> None:
    s = data.draw(volume_scenarios())
    check(s)  # builds the index on the scenario's storage
    storage = data.draw(rebindings(s))
    changed = build_volume_scenario(s.nodes, s.bound, s.pod, storage)
    check(changed, s.state.with_storage(storage))
    check(s)  # and back


@SETTINGS
@given(volume_scenarios())
def test_node_static_pods_get_their_verdict_from_the_node_alone(s: VolumeScenario) -> None:
    """A pod the plugin calls node-static gets the same verdicts without the bound pods."""
    if not PLUGIN.node_static_for(s.pod, s.state):
        assert counted_volumes(s.pod)
        return
    alone = build_volume_scenario(s.nodes, [], s.pod, s.storage)
    assert check(s) == check(alone)


# --------------------------------------------------------------------------- named cases

EBS = "ebs.csi.aws.com"


def _csi_node(name: str, count: int | None, driver: str = EBS,
              migrated: tuple[str, ...] = ()) -> CSINode:
    return CSINode(name, (CSINodeDriver(driver, allocatable=count),), migrated_plugins=migrated)


def _bound_claim(name: str, driver: str = EBS, handle: str = "") -> tuple:
    claim = PersistentVolumeClaim(name, access_modes=("ReadWriteOnce",), request=1,
                                  volume_name=f"pv-{name}", phase="Bound", bind_completed=True)
    pv = with_claim_ref(PersistentVolume(f"pv-{name}", capacity=1,
                                         access_modes=("ReadWriteOnce",), source="csi",
                                         driver=driver, volume_handle=handle or name), claim)
    return claim, pv


def _claim_volume(claim: str, name: str = "data") -> Volume:
    return Volume(name, "persistentVolumeClaim", claim_name=claim)


def _filter(nodes, bound, incoming, storage) -> tuple[list[bool], list[Status]]:
    s = build_volume_scenario(nodes, bound, incoming, storage)
    cycle = s.cycle()
    assert PLUGIN.pre_filter(cycle) is None
    result = PLUGIN.filter(cycle, s.indices)
    check(s)
    return result.passed.tolist(), [result.status_at(i) for i in range(len(nodes))]


def test_in_tree_volumes_count_under_their_csi_driver() -> None:
    """An inline EBS volume counts as ``ebs.csi.aws.com`` where the node has a CSINode;
    the same volume on two pods counts once."""
    ebs = Volume("ebs", "awsElasticBlockStore", volume_id="aws://us-east-1a/vol-1")
    other = Volume("ebs", "awsElasticBlockStore", volume_id="vol-2")
    nodes = [Node("a"), Node("b"), Node("c")]
    storage = StorageObjects(csi_nodes=[_csi_node("a", 1), _csi_node("b", 1)])
    bound = [pod("x", [Volume("ebs", "awsElasticBlockStore", volume_id="vol-1")], "a"),
             pod("y", [other], "b"), pod("z", [other], "c")]
    passed, statuses = _filter(nodes, bound, pod("web", [ebs]), storage)
    assert passed == [True, False, True]  # a: vol-1 already there; c: no CSINode
    assert statuses[1] == unschedulable(REASON)


def test_gce_pd_and_portworx_migration() -> None:
    gce = Volume("pd", "gcePersistentDisk", pd_name="disk")
    pwx = Volume("px", "portworxVolume", volume_id="px-1")
    gce_driver, pwx_driver = "pd.csi.storage.gke.io", "pxd.portworx.com"
    nodes = [Node("a"), Node("b")]
    storage = StorageObjects(csi_nodes=[
        CSINode("a", (CSINodeDriver(gce_driver, allocatable=0),
                      CSINodeDriver(pwx_driver, allocatable=0))),
        CSINode("b", (CSINodeDriver(gce_driver, allocatable=1),
                      CSINodeDriver(pwx_driver, allocatable=0)),
                migrated_plugins=("kubernetes.io/portworx-volume",))])
    assert _filter(nodes, [], pod("web", [gce]), storage)[0] == [False, True]
    # Portworx counts only where the CSINode's annotation says it is migrated.
    assert _filter(nodes, [], pod("web", [pwx]), storage)[0] == [True, False]


def test_unbound_claims_count_under_their_class_provisioner() -> None:
    claim = PersistentVolumeClaim("new", access_modes=("ReadWriteOnce",), request=1,
                                  storage_class="gp3")
    storage = StorageObjects(persistent_volume_claims=[claim],
                             storage_classes=[StorageClass("gp3", provisioner=EBS)],
                             csi_nodes=[_csi_node("a", 0), _csi_node("b", 1)])
    passed, _ = _filter([Node("a"), Node("b")], [], pod("web", [_claim_volume("new")]),
                        storage)
    assert passed == [False, True]


def test_a_missing_claim_is_unresolvable_and_a_foreign_ephemeral_claim_an_error() -> None:
    nodes = [Node("a")]
    storage = StorageObjects(csi_nodes=[_csi_node("a", 5)])
    _, statuses = _filter(nodes, [], pod("web", [Volume("cache", "ephemeral")]), storage)
    assert statuses == [unresolvable('looking up PVC default/web-cache: '
                                     'persistentvolumeclaim "web-cache" not found')]
    foreign = PersistentVolumeClaim("web-cache", access_modes=("ReadWriteOnce",), request=1,
                                    controller_uid="someone-else")
    _, statuses = _filter(nodes, [], pod("web", [Volume("cache", "ephemeral")]),
                          attrs.evolve(storage, persistent_volume_claims=[foreign]))
    assert statuses == [Status(Code.ERROR, ("PVC default/web-cache was not created for pod "
                                            "default/web (pod is not owner)",))]


@pytest.mark.parametrize(("volume", "message"), [
    (Volume("ebs", "awsElasticBlockStore", volume_id="aws://zone/not-a-volume"),
     "converting volume(ebs) from inline to csi: failed to translate Kubernetes ID to EBS "
     "Volume ID Invalid format for AWS volume (aws://zone/not-a-volume)"),
    (Volume("az", "azureDisk", disk_uri="https://a/vhds/d.vhd", disk_kind="Shared"),
     "converting volume(az) from inline to csi: kind(Shared) is not supported in csi "
     "migration"),
])
def test_inline_volumes_that_do_not_translate_are_errors(volume: Volume, message: str) -> None:
    storage = StorageObjects(csi_nodes=[_csi_node("a", 5)])
    _, statuses = _filter([Node("a"), Node("b")], [], pod("web", [volume]), storage)
    assert statuses == [Status(Code.ERROR, (message,)), Status()]  # b: no CSINode, no check


def test_node_static_only_without_counted_volumes_or_limits() -> None:
    storage = StorageObjects(csi_nodes=[_csi_node("a", None)])  # no allocatable.count
    state = ClusterState.from_records([Node("a")], [], storage=storage)
    claimed = pod("web", [_claim_volume("c")])
    assert PLUGIN.node_static_for(pod("plain", []), state)
    assert PLUGIN.node_static_for(claimed, state)
    assert not PLUGIN.node_static_for(pod("eph", [Volume("e", "ephemeral")]), state)
    limited = state.with_storage(StorageObjects(csi_nodes=[_csi_node("a", 3)]))
    assert not PLUGIN.node_static_for(claimed, limited)
    assert not PLUGIN.judged_by_node_class(claimed)


def test_the_count_updates_as_pods_are_placed_in_a_batch() -> None:
    """A node with ``allocatable.count`` 2 takes two pods with one new claim each; the third
    goes elsewhere, and a fourth, with nowhere left, is refused with upstream's reason."""
    nodes = [Node("a", allocatable={"cpu": "8", "memory": "16Gi", "pods": 20}),  # preferred
             Node("b", allocatable={"cpu": "1", "memory": "2Gi", "pods": 20})]
    pairs = [_bound_claim(f"data-{i}") for i in range(4)]
    storage = StorageObjects(persistent_volumes=[pv for _, pv in pairs],
                             persistent_volume_claims=[c for c, _ in pairs],
                             csi_nodes=[_csi_node("a", 2), _csi_node("b", 1)])
    state = ClusterState.from_records(nodes, [], storage=storage)
    pods = [pod(f"web-{i}", [_claim_volume(f"data-{i}")]) for i in range(4)]
    result = schedule_batch(state, pods)
    assert [p.node for p in result.placements] == ["a", "a", "b", None]
    assert result.placements[3].reason == f"0/2 nodes are available: 2 {REASON}."

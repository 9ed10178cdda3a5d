"""VolumeZone: the plugin (its kernel) against ``reference_pre_filter`` / ``reference_filter``
on random clusters with zone-labelled volumes, and upstream's messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import Node, PersistentVolume, PersistentVolumeClaim, StorageClass, Volume
from ksched.constants import LABEL_REGION, LABEL_REGION_BETA, LABEL_ZONE, LABEL_ZONE_BETA
from ksched.plugins.reference.volume_zone import reference_filter, reference_pre_filter
from ksched.plugins.volume_zone import REASON, VolumeZone
from ksched.status import unresolvable
from ksched.storage_listers import StorageObjects
from tests.plugins.volume_scenarios import (
    VolumeScenario,
    build_volume_scenario,
    node_subset,
    pod,
    volume_scenarios,
)
from tests.strategies import assert_filter_equal

SETTINGS = settings(max_examples=200, deadline=None)
PLUGIN = VolumeZone()


def check(s: VolumeScenario, nodes: np.ndarray | None = None) -> None:
    nodes = s.indices if nodes is None else nodes
    cycle = s.cycle()
    want, _ = reference_pre_filter(s.pod, s.storage)
    assert PLUGIN.pre_filter(cycle) == want
    if want is not None:
        return
    expected = [reference_filter(s.pod, s.nodes[i], s.storage) for i in nodes]
    assert_filter_equal(PLUGIN.filter(cycle, nodes), expected, [s.nodes[i] for i in nodes])


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
def test_node_static_means_bound_claims(s: VolumeScenario) -> None:
    """Node-static exactly when no claim of the pod that exists is still unbound, but those
    of WaitForFirstConsumer classes (passed over)."""
    def passed_over(claim) -> bool:
        found = s.storage.storage_class(claim.storage_class) if claim.storage_class else None
        return found is not None and found.volume_binding_mode == "WaitForFirstConsumer"

    unbound = [v for v in s.pod.volumes if v.kind == "persistentVolumeClaim"
               and (c := s.storage.claim("default", v.claim_name)) is not None
               and not c.volume_name and not passed_over(c)]
    assert PLUGIN.node_static_for(s.pod, s.state) == (not unbound)


def _pv(name: str, **labels: str) -> PersistentVolume:
    return PersistentVolume(name, labels=labels, capacity=1, access_modes=("ReadWriteOnce",),
                            source="csi", driver="csi.example.com", volume_handle=name)


def _claim(name: str, volume: str = "", storage_class: str = "") -> PersistentVolumeClaim:
    return PersistentVolumeClaim(name, access_modes=("ReadWriteOnce",), request=1,
                                 volume_name=volume, storage_class=storage_class)


CLASSES = (StorageClass("late", volume_binding_mode="WaitForFirstConsumer"),
           StorageClass("now"))
NODES = [Node("a", labels={LABEL_ZONE: "z1", LABEL_REGION: "r1"}),
         Node("b", labels={LABEL_ZONE_BETA: "z2", LABEL_REGION_BETA: "r1"}),
         Node("c", labels={LABEL_ZONE: "z2"}),
         Node("d")]  # no topology label: fits any volume


def _run(storage: StorageObjects, *claims: str) -> tuple:
    volumes = [Volume(f"v{i}", "persistentVolumeClaim", claim_name=c)
               for i, c in enumerate(claims)]
    s = build_volume_scenario(NODES, [], pod("web", volumes), storage)
    cycle = s.cycle()
    pre = PLUGIN.pre_filter(cycle)
    if pre is not None:
        return pre, None
    return None, PLUGIN.filter(cycle, s.indices).passed.tolist()


@pytest.mark.parametrize(("labels", "passed"), [
    ({LABEL_ZONE: "z1"}, [True, False, False, True]),
    ({LABEL_ZONE_BETA: "z2"}, [False, True, True, True]),  # legacy key, the node's GA key
    ({LABEL_ZONE: "z2"}, [False, False, True, True]),  # a GA key never reads a legacy one
    ({LABEL_ZONE_BETA: "z1__z2"}, [True, True, True, True]),  # a multi-zone volume
    ({LABEL_REGION: "r1"}, [True, False, False, True]),
    ({LABEL_REGION_BETA: "r1"}, [True, True, False, True]),
    ({LABEL_ZONE: "z1__"}, [True, True, True, True]),  # a label that does not parse: ignored
])
def test_zone_labels_against_node_labels(labels: dict, passed: list) -> None:
    storage = StorageObjects(persistent_volumes=[_pv("pv", **labels)],
                             persistent_volume_claims=[_claim("data", "pv")])
    pre, got = _run(storage, "data")
    if labels == {LABEL_ZONE: "z1__"}:
        assert pre is not None and pre.is_skip
    else:
        assert pre is None and got == passed


def test_the_reason_is_unresolvable() -> None:
    storage = StorageObjects(persistent_volumes=[_pv("pv", **{LABEL_ZONE: "z9"})],
                             persistent_volume_claims=[_claim("data", "pv")])
    s = build_volume_scenario(NODES, [], pod("web", [Volume("v", "persistentVolumeClaim",
                                                            claim_name="data")]), storage)
    cycle = s.cycle()
    PLUGIN.pre_filter(cycle)
    result = PLUGIN.filter(cycle, s.indices)
    assert result.passed.tolist() == [False, False, False, True]
    assert result.status_at(0) == unresolvable(REASON)


@pytest.mark.parametrize(("claims", "status"), [
    ([_claim("data")], "PersistentVolumeClaim had no pv name and storageClass name"),
    ([_claim("data", storage_class="gone")], 'storageclass.storage.k8s.io "gone" not found'),
    ([_claim("data", storage_class="now")], "PersistentVolume had no name"),
    ([_claim("data", "pv-gone")], 'persistentvolume "pv-gone" not found'),
    ([], 'persistentvolumeclaim "data" not found'),
])
def test_pre_filter_rejections(claims: list, status: str) -> None:
    storage = StorageObjects(persistent_volume_claims=claims, storage_classes=CLASSES)
    assert _run(storage, "data") == (unresolvable(status), None)


def test_unbound_wait_for_first_consumer_claims_are_passed_over() -> None:
    storage = StorageObjects(persistent_volumes=[_pv("pv", **{LABEL_ZONE: "z1"})],
                             persistent_volume_claims=[_claim("late", storage_class="late"),
                                                       _claim("data", "pv")],
                             storage_classes=CLASSES)
    pre, _ = _run(storage, "late")
    assert pre is not None and pre.is_skip
    assert _run(storage, "late", "data") == (None, [True, False, False, True])
    s = build_volume_scenario(NODES, [], pod("web", [Volume("v", "persistentVolumeClaim",
                                                            claim_name="late")]), storage)
    assert PLUGIN.node_static_for(s.pod, s.state)

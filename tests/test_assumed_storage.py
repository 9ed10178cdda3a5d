"""The volume binder's assume cache as versions of the storage objects (``AssumedStorage``):
each version sees its own objects, the records it was made from are never changed, assuming
one binding costs no rebuild of the cluster's indexes, and the versions say what changed."""

from __future__ import annotations

import copy
import pickle

import attrs
import pytest

from ksched import schedule_batch
from ksched import storage_listers
from ksched.api import ClaimRef, PersistentVolume, PersistentVolumeClaim, StorageClass
from ksched.storage_listers import AssumedStorage, StorageObjects
from ksched.workloads import stateful_set_claims


def _claims(count: int) -> list[PersistentVolumeClaim]:
    return [PersistentVolumeClaim(f"c{i}", storage_class="gp3") for i in range(count)]


BASE = StorageObjects(persistent_volumes=[PersistentVolume("pv-a"), PersistentVolume("pv-b")],
                      persistent_volume_claims=_claims(3),
                      storage_classes=[StorageClass("gp3", "ebs.csi.aws.com")])


def _selected(claim: PersistentVolumeClaim, node: str) -> PersistentVolumeClaim:
    return attrs.evolve(claim, selected_node=node)


def test_each_version_sees_its_own_objects() -> None:
    one = BASE.updated(claims=[_selected(BASE.claim("default", "c0"), "n1")])
    two = one.updated(claims=[_selected(BASE.claim("default", "c1"), "n2")],
                      volumes=[attrs.evolve(BASE.volume("pv-a"),
                                            claim_ref=ClaimRef("default", "c1"))])
    three = two.updated(claims=[_selected(BASE.claim("default", "c0"), "n3")])
    assert isinstance(three, AssumedStorage) and isinstance(three, StorageObjects)
    assert [BASE.claim("default", "c0").selected_node, one.claim("default", "c0").selected_node,
            two.claim("default", "c0").selected_node,
            three.claim("default", "c0").selected_node] == ["", "n1", "n1", "n3"]
    assert one.volume("pv-a").claim_ref is None and two.volume("pv-a").claim_ref.name == "c1"
    assert [c.selected_node for c in three.persistent_volume_claims] == ["n3", "n2", ""]
    assert [c.selected_node for c in one.persistent_volume_claims] == ["n1", "", ""]
    assert [c.selected_node for c in BASE.persistent_volume_claims] == ["", "", ""]
    assert one.persistent_volumes is BASE.persistent_volumes  # untouched kinds are shared
    assert three.storage_classes is BASE.storage_classes
    assert three.storage_class("gp3") is BASE.storage_class("gp3")


def test_objects_not_there_before_are_added_at_the_end_in_order() -> None:
    new = BASE.updated(claims=[PersistentVolumeClaim("z")]).updated(
        claims=[PersistentVolumeClaim("y"), _selected(BASE.claim("default", "c2"), "n")])
    assert [c.name for c in new.persistent_volume_claims] == ["c0", "c1", "c2", "z", "y"]
    assert new.claim("default", "y").name == "y" and BASE.claim("default", "y") is None


def test_a_version_made_from_an_older_one_leaves_the_newer_ones_alone() -> None:
    one = BASE.updated(claims=[_selected(BASE.claim("default", "c0"), "n1")])
    two = one.updated(claims=[_selected(BASE.claim("default", "c1"), "n2")])
    other = one.updated(claims=[_selected(BASE.claim("default", "c1"), "x")])
    assert two.claim("default", "c1").selected_node == "n2"
    assert other.claim("default", "c1").selected_node == "x"
    assert other.claim("default", "c0").selected_node == "n1"


def test_assuming_rebuilds_no_index(monkeypatch) -> None:
    """A thousand assumed bindings, one after another: no lookup table is built again."""
    storage = StorageObjects(persistent_volume_claims=_claims(1000))

    def refuse(*args):
        raise AssertionError("an index was rebuilt")

    monkeypatch.setattr(storage_listers, "_index", refuse)
    version: StorageObjects = storage
    for claim in storage.persistent_volume_claims:
        version = version.updated(claims=[_selected(claim, "n")])
    assert version.claim("default", "c999").selected_node == "n"
    assert storage.claim("default", "c999").selected_node == ""


def test_changes_between_versions() -> None:
    one = BASE.updated(claims=[_selected(BASE.claim("default", "c0"), "n1")])
    two = one.updated(volumes=[attrs.evolve(BASE.volume("pv-b"),
                                            claim_ref=ClaimRef("default", "c0"))])
    assert two.changes_from(one) == ({"pv-b"}, set())
    assert two.changes_from(BASE) == ({"pv-b"}, {("default", "c0")})
    assert one.changes_from(two) == ({"pv-b"}, set())  # backwards: by comparing
    assert BASE.changes_from(two) == ({"pv-b"}, {("default", "c0")})
    assert two.changes_from(two) == (set(), set())
    other = StorageObjects(persistent_volume_claims=BASE.persistent_volume_claims[:2])
    assert other.changes_from(BASE) == ({"pv-a", "pv-b"}, {("default", "c2")})  # by identity


def test_copies_compare_and_pickle_as_plain_storage_objects() -> None:
    version = BASE.updated(claims=[_selected(BASE.claim("default", "c0"), "n1")])
    plain = StorageObjects(persistent_volumes=BASE.persistent_volumes,
                           persistent_volume_claims=version.persistent_volume_claims,
                           storage_classes=BASE.storage_classes)
    assert version == plain and plain == version and hash(version) == hash(plain)
    assert version != BASE
    for copied in (pickle.loads(pickle.dumps(version)), copy.deepcopy(version),
                   attrs.evolve(version)):
        assert type(copied) is StorageObjects and copied == version
    assert type(attrs.evolve(version, csi_nodes=())) is StorageObjects
    with pytest.raises(Exception, match="expected PersistentVolumeClaim records"):
        version.updated(claims=["c0"])


def test_a_batch_leaves_the_cluster_storage_as_it_was() -> None:
    cluster, pods = stateful_set_claims(10, 0, 20)
    before = cluster.storage
    records = before.persistent_volume_claims
    result = schedule_batch(cluster, pods)
    assert cluster.storage is before and before.persistent_volume_claims is records
    assert all(not c.selected_node for c in records)
    assert [c.selected_node for c in result.state.storage.persistent_volume_claims] == \
        [p.node for p in result.placements]

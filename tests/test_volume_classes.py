"""Which claims a pod uses alone, and the class key its volumes make: replicas mounting claims
of their own share one; shared claims, volumes and CSI handles keep their names."""

from __future__ import annotations

import attrs

from ksched.api import (
    ClaimRef,
    Container,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    Volume,
)
from ksched.storage_listers import StorageObjects
from ksched.volume_classes import ClaimUse, has_claims

EBS = "ebs.csi.aws.com"


def _pod(name: str, *claims: str, extra: tuple[Volume, ...] = ()) -> Pod:
    return Pod(name, containers=[Container("c")], volumes=tuple(
        Volume("data" if i == 0 else f"data{i}", "persistentVolumeClaim", claim_name=c)
        for i, c in enumerate(claims)) + extra)


def _bound(name: str, handle: str, **claim) -> tuple[PersistentVolumeClaim, PersistentVolume]:
    pv = PersistentVolume(f"pv-{name}", capacity=1, claim_ref=ClaimRef("default", name),
                          source="csi", driver=EBS, volume_handle=handle)
    return (PersistentVolumeClaim(name, request=1, volume_name=pv.name, bind_completed=True,
                                  **claim), pv)


def _storage(*pairs, claims=()) -> StorageObjects:
    return StorageObjects(persistent_volume_claims=[c for c, _ in pairs] + list(claims),
                          persistent_volumes=[pv for _, pv in pairs])


def test_replicas_with_claims_of_their_own_share_a_key() -> None:
    storage = _storage(_bound("a", "vol-a"), _bound("b", "vol-b"), claims=[
        PersistentVolumeClaim("u1", storage_class="gp3", request=5),
        PersistentVolumeClaim("u2", storage_class="gp3", request=5),
        PersistentVolumeClaim("u3", storage_class="gp3", request=6)])
    pods = [_pod("p1", "a"), _pod("p2", "b"), _pod("q1", "u1"), _pod("q2", "u2"),
            _pod("q3", "u3")]
    use = ClaimUse(pods, storage)
    keys = [use.volume_key(p, storage) for p in pods]
    assert all(use.exclusive(p, storage) for p in pods)
    assert keys[0] == keys[1] and keys[2] == keys[3]
    assert keys[0] != keys[2] and keys[3] != keys[4]  # bound or not; another request
    assert keys[0][0][0] == "alone"


def test_the_claims_state_is_in_the_key() -> None:
    storage = StorageObjects(persistent_volume_claims=[
        PersistentVolumeClaim("u1", storage_class="gp3"),
        PersistentVolumeClaim("u2", storage_class="gp3", selected_node="n1")])
    pods = [_pod("q1", "u1"), _pod("q2", "u2")]
    use = ClaimUse(pods, storage)
    assert use.volume_key(pods[0], storage) != use.volume_key(pods[1], storage)


def test_a_claim_another_pod_mounts_is_not_used_alone() -> None:
    storage = _storage(_bound("a", "vol-a"), _bound("b", "vol-b"))
    pods = [_pod("p1", "a"), _pod("p2", "a"), _pod("p3", "b")]
    bound = [attrs.evolve(_pod("p4", "b"), node_name="n1")]
    use = ClaimUse([*pods, *bound], storage)
    assert not use.exclusive(pods[0], storage) and not use.exclusive(pods[2], storage)
    key = use.volume_key(pods[0], storage)
    assert key[0][0] == "named" and key[0][2].name == "a"
    assert use.volume_key(pods[0], storage) == use.volume_key(pods[1], storage)
    stranger = _pod("p9", "c")  # not among the pods counted
    assert not use.exclusive(stranger, storage)


def test_volumes_or_handles_two_claims_share_are_not_used_alone() -> None:
    a, pv_a = _bound("a", "vol-1")
    b, pv_b = _bound("b", "vol-1")  # another volume with the same CSI volume
    c = PersistentVolumeClaim("c", request=1, volume_name="pv-d", bind_completed=True)
    d, pv_d = _bound("d", "vol-d")  # claims c and d bound to one volume
    e, pv_e = _bound("e", "vol-e")
    storage = _storage((a, pv_a), (b, pv_b), (d, pv_d), (e, pv_e), claims=[c])
    inline = Volume("disk", "awsElasticBlockStore", volume_id="vol-e")
    pods = [_pod("pa", "a"), _pod("pb", "b"), _pod("pc", "c"), _pod("pd", "d"),
            _pod("pe", "e"), attrs.evolve(_pod("x"), volumes=(inline,), node_name="n1")]
    use = ClaimUse(pods, storage)
    assert [use.exclusive(p, storage) for p in pods[:5]] == [False] * 5  # e: the inline disk
    assert not use.exclusive(pods[5], storage)  # an in-tree disk is never counted alone


def test_a_claim_mounted_twice_is_told_from_two_claims() -> None:
    storage = StorageObjects(persistent_volume_claims=[
        PersistentVolumeClaim(n, storage_class="gp3") for n in ("u1", "u2", "u3")])
    twice, two = _pod("p1", "u1", "u1"), _pod("p2", "u2", "u3")
    use = ClaimUse([twice, two], storage)
    assert use.exclusive(twice, storage) and use.exclusive(two, storage)
    assert use.volume_key(twice, storage) != use.volume_key(two, storage)


def test_other_volumes_and_ephemeral_claims() -> None:
    config = Volume("cfg", "configMap")
    storage = StorageObjects(persistent_volume_claims=[PersistentVolumeClaim("e-v")])
    ephemeral = attrs.evolve(_pod("e"), volumes=(Volume("v", "ephemeral"), config))
    use = ClaimUse([ephemeral], storage)
    assert has_claims(ephemeral) and not has_claims(attrs.evolve(ephemeral, volumes=(config,)))
    assert not use.exclusive(ephemeral, storage)
    key = use.volume_key(ephemeral, storage)
    assert key[0][0] == "named" and key[0][2].name == "e-v" and key[1] is config

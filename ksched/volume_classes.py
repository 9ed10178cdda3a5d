"""Pod classes of pods with claims: which claims a pod uses alone, and what its volumes add to
its class signature.

The replicas of a StatefulSet each mount a claim of their own (``data-web-0``, ``data-web-1``,
...), so their specs differ by the claim names. The volume plugins read a claim, the volume
bound to it and its storage class by name; a name matters to their verdicts only through who
else uses the object it names. A pod uses a claim *alone* when no other pod (bound or pending)
mounts it, no other claim is bound to its volume, and no other volume has that volume's CSI
handle (a volume's unique name, :mod:`ksched.plugins.attached_volumes`). Two pods whose claims
they use alone agree but for the names (of the claims, their volumes and handles) get the same
verdict from every plugin, and their Reserve changes what no other pod reads: they share a
class (:meth:`ClaimUse.volume_key`). Other claims stay in the key as they are.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Iterable

import attrs

from ksched.api import PersistentVolume, PersistentVolumeClaim, Pod, Volume
from ksched.csi_translation import (
    IN_TREE_PLUGINS,
    TranslationError,
    inline_volume_handle,
    plugin_of,
    pv_volume_handle,
)
from ksched.storage_listers import StorageObjects

__all__ = ["ClaimUse", "CLAIM_NAMES", "VOLUME_NAMES", "has_claims"]

#: Fields that name a claim or what it is bound to (a claim's namespace is its pod's).
CLAIM_NAMES = frozenset({"name", "namespace", "uid", "volume_name"})
#: Fields that name a PersistentVolume, its claim or its CSI volume.
VOLUME_NAMES = frozenset({"name", "claim_ref", "volume_handle"})


def _all_but(kind: type, left_out: frozenset[str]) -> Callable[[object], tuple]:
    """A getter of every field of ``kind`` but ``left_out``, as a tuple."""
    return operator.attrgetter(*(f.name for f in attrs.fields(kind) if f.name not in left_out))


_claim_fields = _all_but(PersistentVolumeClaim, CLAIM_NAMES)
_pv_fields = _all_but(PersistentVolume, VOLUME_NAMES)
_volume_fields = _all_but(Volume, frozenset({"claim_name"}))


def has_claims(pod: Pod) -> bool:
    """Whether the pod mounts a claim (its own or a generic ephemeral one)."""
    return any(volume.uses_claim for volume in pod.volumes)


def _unique_name(translate: Callable[[object], str], driver: str, source: object
                 ) -> tuple[str, str] | None:
    """An in-tree volume's CSI unique name, ``None`` where it does not translate."""
    try:
        return driver, translate(source)
    except TranslationError:
        return None


class ClaimUse:
    """Who uses which claims, volumes and CSI volumes: ``pods`` (the bound and the pending
    ones) and the claims and volumes of ``storage`` (the names of the claims' volumes and the
    volumes' handles do not change as bindings are assumed)."""

    def __init__(self, pods: Iterable[Pod], storage: StorageObjects) -> None:
        #: Per claim (namespace, name), the key of the one pod that mounts it (``None``:
        #: more than one does).
        self.users: dict[tuple[str, str], str | None] = {}
        users = self.users
        #: CSI unique names: of the volumes, and of the pods' in-tree disks (migrated).
        handles: Counter = Counter()
        for pod in pods:
            for volume in pod.volumes:
                if volume.uses_claim:
                    key = (pod.namespace, volume.claim_for(pod.name))
                    if users.setdefault(key, pod.key) != pod.key:
                        users[key] = None
                elif (plugin := IN_TREE_PLUGINS.get(volume.kind)) is not None:
                    handles[_unique_name(inline_volume_handle, plugin.driver, volume)] += 1
        for pv in storage.persistent_volumes:
            plugin = plugin_of(pv)
            handles[(pv.driver, pv.volume_handle) if pv.source == "csi" else
                    None if plugin is None else
                    _unique_name(pv_volume_handle, plugin.driver, pv)] += 1
        bound = Counter(c.volume_name for c in storage.persistent_volume_claims
                        if c.volume_name)
        #: Volumes more than one claim is bound to, or whose CSI volume another volume or
        #: an in-tree disk of a pod names too.
        self.shared_volumes = {name for name, count in bound.items() if count > 1} | {
            pv.name for pv in storage.persistent_volumes
            if pv.source == "csi" and handles[(pv.driver, pv.volume_handle)] > 1}

    def alone(self, pod: Pod, volume: Volume, storage: StorageObjects
              ) -> tuple[PersistentVolumeClaim, PersistentVolume | None] | None:
        """The claim of a ``persistentVolumeClaim`` volume the pod uses alone (the one pod
        of those counted that mounts it), and its volume (a CSI one, used by this claim
        alone) if bound; ``None`` otherwise."""
        if volume.kind != "persistentVolumeClaim":
            return None
        key = (pod.namespace, volume.claim_name)
        if self.users.get(key) != pod.key:
            return None
        claim = storage.claim(*key)
        if claim is None:
            return None
        if not claim.volume_name:
            return claim, None
        pv = storage.volume(claim.volume_name)
        if pv is None or pv.source != "csi" or pv.name in self.shared_volumes:
            return None
        return claim, pv

    def exclusive(self, pod: Pod, storage: StorageObjects) -> bool:
        """Whether the pod uses each of its claims alone, and mounts no in-tree disk (whose
        CSI volume other pods may name)."""
        return all(self.alone(pod, v, storage) is not None if v.uses_claim
                   else v.kind not in IN_TREE_PLUGINS for v in pod.volumes)

    def volume_key(self, pod: Pod, storage: StorageObjects) -> tuple:
        """What the pod's volumes add to its class: per volume, the volume; for a claim it
        uses alone, the volume, claim and bound volume without their names (and which
        earlier volume of the pod mounts the same claim); for another claim, the volume, the
        claim and its volume as they are."""
        key = []
        first: dict[str, int] = {}
        for at, volume in enumerate(pod.volumes):
            if not volume.uses_claim:
                key.append(volume)
                continue
            found = self.alone(pod, volume, storage)
            if found is None:
                name = volume.claim_for(pod.name)
                claim = storage.claim(pod.namespace, name)
                pv = storage.volume(claim.volume_name) if claim and claim.volume_name else None
                key.append(("named", volume, claim, pv))
                continue
            claim, pv = found
            key.append(("alone", first.setdefault(volume.claim_name, at),
                         _volume_fields(volume), _claim_fields(claim),
                         _pv_fields(pv) if pv is not None else None))
        return tuple(key)

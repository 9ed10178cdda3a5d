"""VolumeZone's reference: a plain transliteration of ``plugins/volumezone/volume_zone.go``
(``getPVbyPod``, ``getPVTopologies``, ``Filter``) over Node records and the storage objects.
The plugin (:mod:`ksched.plugins.volume_zone`) is tested against it.
"""

from __future__ import annotations

from ksched.api import Node, Pod
from ksched.plugins.volume_zone import REASON
from ksched.status import SKIP, SUCCESS, Status, unresolvable
from ksched.storage_listers import StorageObjects

__all__ = ["reference_filter", "reference_pre_filter"]

_TOPOLOGY_LABELS = ["failure-domain.beta.kubernetes.io/zone",
                    "failure-domain.beta.kubernetes.io/region",
                    "topology.kubernetes.io/zone", "topology.kubernetes.io/region"]


def _translate_to_ga_label(label: str) -> str:
    if label == "failure-domain.beta.kubernetes.io/region":
        return "topology.kubernetes.io/region"
    if label == "failure-domain.beta.kubernetes.io/zone":
        return "topology.kubernetes.io/zone"
    return label


def _label_zones_to_set(value: str) -> set[str] | None:
    zones = set()
    for zone in value.split("__"):
        trimmed = zone.strip()
        if trimmed == "":
            return None
        zones.add(trimmed)
    return zones


def reference_pre_filter(pod: Pod, storage: StorageObjects
                         ) -> tuple[Status | None, list[tuple[str, set[str]]]]:
    """``PreFilter``: its status (``None``: go on) and the (key, values) topologies."""
    topologies: list[tuple[str, set[str]]] = []
    for volume in pod.volumes:
        if volume.kind != "persistentVolumeClaim":
            continue
        name = volume.claim_name
        if name == "":
            return unresolvable("PersistentVolumeClaim had no name"), []
        pvc = storage.claim(pod.namespace, name)
        if pvc is None:
            return unresolvable(f'persistentvolumeclaim "{name}" not found'), []
        pv_name = pvc.volume_name
        if pv_name == "":
            sc_name = pvc.storage_class
            if len(sc_name) == 0:
                return unresolvable("PersistentVolumeClaim had no pv name and storageClass "
                                    "name"), []
            sc = storage.storage_class(sc_name)
            if sc is None:
                return unresolvable(f'storageclass.storage.k8s.io "{sc_name}" not found'), []
            if sc.volume_binding_mode == "WaitForFirstConsumer":
                continue
            return unresolvable("PersistentVolume had no name"), []
        pv = storage.volume(pv_name)
        if pv is None:
            return unresolvable(f'persistentvolume "{pv_name}" not found'), []
        for key in _TOPOLOGY_LABELS:
            if key in pv.labels:
                zones = _label_zones_to_set(pv.labels[key])
                if zones is not None:
                    topologies.append((key, zones))
    if not topologies:
        return SKIP, []
    return None, topologies


def reference_filter(pod: Pod, node: Node, storage: StorageObjects) -> Status:
    """``Filter`` on one node (after a PreFilter that let the pod through)."""
    if not pod.volumes:
        return SUCCESS
    _, topologies = reference_pre_filter(pod, storage)
    if not any(label in node.labels for label in _TOPOLOGY_LABELS):
        return SUCCESS
    for key, values in topologies:
        value = node.labels.get(key)
        if value is None:
            value = node.labels.get(_translate_to_ga_label(key))
        if value is None or value not in values:
            return unresolvable(REASON)
    return SUCCESS

"""A pod's volume, reduced to what the volume plugins of the scheduler read (``k8s.io/api/core/v1``
``types.go``: ``Volume`` and its ``VolumeSource``; the claim name of a generic ephemeral volume
as ``k8s.io/component-helpers/storage/ephemeral``'s ``VolumeClaimName`` makes it).

Read from the wire format by :func:`ksched.api.volume_sources.read_volumes`.
"""

from __future__ import annotations

from ksched.api.fields import BOOL, INT32, STR, checked_field, record, strings_field

__all__ = ["CLAIM_SOURCES", "Volume"]

#: The volume sources that name a PersistentVolumeClaim: its own, or the one a generic
#: ephemeral volume has created for the pod.
CLAIM_SOURCES = ("persistentVolumeClaim", "ephemeral")


@record
class Volume:
    """A pod volume: its name, the wire name of its source (``kind``: ``persistentVolumeClaim``,
    ``ephemeral``, ``csi``, ``gcePersistentDisk``, ``configMap``, ...) and the fields of that
    source the volume plugins read (``VolumeRestrictions``' disk conflicts, ``NodeVolumeLimits``'
    CSI migration of in-tree disks, ``VolumeBinding``'s claims); the others stay empty."""

    name: str = checked_field(STR)
    kind: str = checked_field(STR)
    #: ``persistentVolumeClaim.claimName`` (an ephemeral volume's claim: :meth:`claim_for`).
    claim_name: str = checked_field(STR, default="")
    #: The source's ``readOnly`` (persistentVolumeClaim, gcePersistentDisk,
    #: awsElasticBlockStore, rbd, iscsi, csi, azureDisk, cinder, portworxVolume).
    read_only: bool = checked_field(BOOL, default=False)
    #: ``csi.driver`` of an inline CSI volume.
    driver: str = checked_field(STR, default="")
    #: ``gcePersistentDisk.pdName``.
    pd_name: str = checked_field(STR, default="")
    #: ``awsElasticBlockStore.volumeID``, ``cinder.volumeID`` or ``portworxVolume.volumeID``.
    volume_id: str = checked_field(STR, default="")
    #: ``azureDisk.diskURI`` and ``azureDisk.kind`` (``""``: not set; the API server
    #: defaults it to ``Shared``).
    disk_uri: str = checked_field(STR, default="")
    disk_kind: str = checked_field(STR, default="")
    #: ``gcePersistentDisk.partition`` or ``awsElasticBlockStore.partition`` (0: none).
    partition: int = checked_field(INT32, default=0)
    #: ``rbd.monitors``, ``rbd.pool`` (defaulted to ``rbd``) and ``rbd.image``.
    monitors: tuple[str, ...] = strings_field()
    rbd_pool: str = checked_field(STR, default="")
    rbd_image: str = checked_field(STR, default="")
    #: ``iscsi.iqn``, ``iscsi.targetPortal`` and ``iscsi.lun``.
    iqn: str = checked_field(STR, default="")
    target_portal: str = checked_field(STR, default="")
    lun: int = checked_field(INT32, default=0)

    @property
    def uses_claim(self) -> bool:
        """The volume is a PersistentVolumeClaim's: its own or a generic ephemeral one."""
        return self.kind in CLAIM_SOURCES

    def claim_for(self, pod_name: str) -> str:
        """The name of the claim the volume uses in pod ``pod_name``: ``claimName``, or
        ``<pod name>-<volume name>`` for a generic ephemeral volume (``VolumeClaimName``);
        ``""`` for other sources."""
        if self.kind == "ephemeral":
            return f"{pod_name}-{self.name}"
        return self.claim_name

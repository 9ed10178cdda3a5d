"""In-tree volume plugins and their CSI migration, as far as the scheduler reads them
(``k8s.io/csi-translation-lib``: ``translate.go`` and ``plugins/*.go``).

The volume binder translates a bound in-tree PersistentVolume to CSI on a node whose CSINode
says its CSI driver took the plugin over (``tryTranslatePVToCSI`` in ``volumebinding/binder.go``);
the scheduler then checks the translated volume's node affinity, whose zone requirements the
translation rewrites to the CSI driver's topology key. :func:`translated_node_affinity` gives that
node affinity, or the translation's error. NodeVolumeLimits counts a migrated volume under
its CSI driver with the handle the translation gives (:func:`inline_volume_handle`,
:func:`pv_volume_handle`).
"""

from __future__ import annotations

import re

import attrs

from ksched.api import (
    CSINode,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    Volume,
)
from ksched.constants import LABEL_REGION, LABEL_REGION_BETA, LABEL_ZONE, LABEL_ZONE_BETA
from ksched.validation import go_quote

__all__ = ["IN_TREE_PLUGINS", "PLUGINS_BY_NAME", "InTreePlugin", "TranslationError",
           "ebs_volume_handle", "gce_pv_volume_handle", "inline_volume_handle", "migration_on",
           "migrated_on_node", "plugin_of", "pv_volume_handle", "translated_node_affinity"]

#: ``labelMultiZoneDelimiter``: zones of a multi-zone volume in one label value.
MULTI_ZONE_DELIMITER = "__"


class TranslationError(Exception):
    """``TranslateInTreePVToCSI`` failed; the message is upstream's."""


@attrs.frozen
class InTreePlugin:
    """An in-tree plugin: its name, the volume source it serves, its CSI driver and the zone
    key the driver's topology uses (``None``: the translation leaves topology alone)."""

    name: str
    source: str
    driver: str
    topology_key: str | None = None


#: The plugins ``csi-translation-lib`` translates, by the volume source they serve.
IN_TREE_PLUGINS: dict[str, InTreePlugin] = {p.source: p for p in (
    InTreePlugin("kubernetes.io/aws-ebs", "awsElasticBlockStore", "ebs.csi.aws.com",
                 "topology.ebs.csi.aws.com/zone"),
    InTreePlugin("kubernetes.io/gce-pd", "gcePersistentDisk", "pd.csi.storage.gke.io",
                 "topology.gke.io/zone"),
    InTreePlugin("kubernetes.io/cinder", "cinder", "cinder.csi.openstack.org",
                 "topology.cinder.csi.openstack.org/zone"),
    InTreePlugin("kubernetes.io/azure-disk", "azureDisk", "disk.csi.azure.com"),
    InTreePlugin("kubernetes.io/azure-file", "azureFile", "file.csi.azure.com"),
    InTreePlugin("kubernetes.io/vsphere-volume", "vsphereVolume", "csi.vsphere.vmware.com"),
    InTreePlugin("kubernetes.io/portworx-volume", "portworxVolume", "pxd.portworx.com"),
)}

#: ``isCSIMigrationOnForPlugin`` (binder.go) in v1.35: Portworx's gate is locked on since 1.33.
_MIGRATION_ON = frozenset({"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd",
                           "kubernetes.io/azure-disk", "kubernetes.io/cinder",
                           "kubernetes.io/portworx-volume"})
#: ``awsVolumeRegMatch`` (``^vol-[^/]*$``).
_AWS_VOLUME = re.compile(r"vol-[^/]*\Z")


def plugin_of(pv: PersistentVolume) -> InTreePlugin | None:
    """The in-tree plugin that serves the volume (``IsPVMigratable`` /
    ``GetInTreePluginNameFromSpec``); ``None`` for CSI, local and other volumes."""
    return IN_TREE_PLUGINS.get(pv.source)


def migration_on(plugin: InTreePlugin) -> bool:
    """``isCSIMigrationOnForPlugin``: the scheduler translates this plugin's volumes."""
    return plugin.name in _MIGRATION_ON


def migrated_on_node(plugin: InTreePlugin, csi_node: CSINode | None) -> bool:
    """``isPluginMigratedToCSIOnNode``: the node's CSINode lists the plugin in its
    ``storage.alpha.kubernetes.io/migrated-plugins`` annotation."""
    return csi_node is not None and plugin.name in csi_node.migrated_plugins


def translated_node_affinity(pv: PersistentVolume) -> tuple[NodeSelectorTerm, ...] | None:
    """The node affinity of ``TranslateInTreePVToCSI(pv)`` (``pv`` an in-tree volume of a
    plugin :func:`plugin_of` knows); raises :class:`TranslationError` where upstream fails
    (the volume handle's errors, :func:`pv_volume_handle`, come first there)."""
    plugin = plugin_of(pv)
    if plugin is None:
        raise TranslationError(f"could not find in-tree plugin translation logic for "
                               f"{pv.name}")
    pv_volume_handle(pv)
    if plugin.topology_key is None:
        return pv.node_affinity
    return _topology_in_tree_to_csi(pv, plugin.topology_key)


def _topology_in_tree_to_csi(pv: PersistentVolume,
                             csi_key: str) -> tuple[NodeSelectorTerm, ...] | None:
    """``translateTopologyFromInTreeToCSI``: the zone requirements renamed to the CSI key (or
    added from the zone label), beta region requirements renamed to the GA key."""
    terms = pv.node_affinity
    zone_key, region_key = _topology_labels(pv)
    if _values(terms, zone_key):
        terms = _renamed(terms, zone_key, csi_key)
    elif zone_key in pv.labels:
        zones = sorted({z.strip() for z in pv.labels[zone_key].split(MULTI_ZONE_DELIMITER)}
                       - {""})
        if zones:  # ``addTopology``: one In requirement ANDed into every term
            added = NodeSelectorRequirement(csi_key, "In", tuple(zones))
            terms = tuple(attrs.evolve(t, match_expressions=t.match_expressions + (added,))
                          for t in (terms or (NodeSelectorTerm(),)))
    if region_key == LABEL_REGION_BETA and _values(terms, region_key):
        terms = _renamed(terms, region_key, LABEL_REGION)
    return terms


def _topology_labels(pv: PersistentVolume) -> tuple[str, str]:
    """``getTopologyLabel``: the GA keys unless the node affinity, else the labels, use the
    beta zone key."""
    for key in (LABEL_ZONE, LABEL_ZONE_BETA):
        if any(r.key == key for t in pv.node_affinity or () for r in t.match_expressions):
            return (key, LABEL_REGION) if key == LABEL_ZONE else (key, LABEL_REGION_BETA)
    if LABEL_ZONE in pv.labels:
        return LABEL_ZONE, LABEL_REGION
    if LABEL_ZONE_BETA in pv.labels:
        return LABEL_ZONE_BETA, LABEL_REGION_BETA
    return LABEL_ZONE, LABEL_REGION


def _values(terms: tuple[NodeSelectorTerm, ...] | None, key: str) -> bool:
    """Whether ``getTopologyValues`` finds values of ``key`` in the terms."""
    return any(r.values for t in terms or () for r in t.match_expressions if r.key == key)


def _renamed(terms: tuple[NodeSelectorTerm, ...] | None, old: str,
             new: str) -> tuple[NodeSelectorTerm, ...] | None:
    """``replaceTopology``: requirements on ``old`` now on ``new``."""
    if not terms:
        return terms
    return tuple(attrs.evolve(t, match_expressions=tuple(
        attrs.evolve(r, key=new) if r.key == old else r for r in t.match_expressions))
        for t in terms)


# --------------------------------------------------------------------------- volume handles

#: The plugins of :data:`IN_TREE_PLUGINS` by their names (``IsMigratableIntreePluginByName``,
#: ``GetCSINameFromInTreeName``).
PLUGINS_BY_NAME: dict[str, InTreePlugin] = {p.name: p for p in IN_TREE_PLUGINS.values()}
#: ``UnspecifiedValue`` of the GCE PD volume IDs (``volIDZonalFmt``, ``volIDRegionalFmt``).
_UNSPECIFIED = "UNSPECIFIED"
_HEX = "0123456789abcdefABCDEF"


def inline_volume_handle(volume: Volume) -> str:
    """The volume handle of ``TranslateInTreeInlineVolumeToCSI`` for a pod's inline volume
    of a plugin :data:`IN_TREE_PLUGINS` knows (its driver is the plugin's).

    Raises
    ------
    TranslationError
        An EBS volume ID that is not one, an Azure disk that is not a managed one, a source
        without a translation here (Azure File, vSphere: never migrated by the scheduler).
    """
    if volume.kind == "gcePersistentDisk":
        return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{volume.pd_name}"
    if (handle := _shared_handle(volume.kind, volume)) is not None:
        return handle
    raise TranslationError(f"could not find in-tree plugin translation logic for "
                           f"{go_quote(volume.name)}")


def pv_volume_handle(pv: PersistentVolume) -> str:
    """The volume handle of ``TranslateInTreePVToCSI`` for an in-tree PersistentVolume of a
    plugin :data:`IN_TREE_PLUGINS` knows.

    Raises
    ------
    TranslationError
        A GCE PD labelled with zones of several regions, an EBS volume ID that is not one, an
        Azure disk that is not a managed one, a source without a translation here.
    """
    if pv.source == "gcePersistentDisk":
        return gce_pv_volume_handle(pv)
    if (handle := _shared_handle(pv.source, pv)) is not None:
        return handle
    raise TranslationError(f"could not find in-tree plugin translation logic for "
                           f"{go_quote(pv.name)}")


def _shared_handle(kind: str, source: Volume | PersistentVolume) -> str | None:
    """The handle of the sources an inline volume and a PersistentVolume translate alike
    (EBS, managed Azure disk, Cinder, Portworx); ``None`` for the others."""
    if kind == "awsElasticBlockStore":
        return ebs_volume_handle(source.volume_id)
    if kind == "azureDisk":
        _check_managed(source.disk_kind)
        return source.disk_uri
    if kind in ("cinder", "portworxVolume"):
        return source.volume_id
    return None


def _check_managed(disk_kind: str) -> None:
    """Only managed Azure disks migrate (``kind(...) is not supported in csi migration``);
    ``""`` is a kind not set (the API server defaults it to ``Shared``)."""
    if disk_kind and disk_kind.lower() != "managed":
        raise TranslationError(f"kind({disk_kind}) is not supported in csi migration")


def gce_pv_volume_handle(pv: PersistentVolume) -> str:
    """``gcePersistentDiskCSITranslator.TranslateInTreePVToCSI``'s volume ID: the zone of the
    volume's zone label (beta, then GA), the region of several zones, or unspecified."""
    label = pv.labels.get(LABEL_ZONE_BETA, "") or pv.labels.get(LABEL_ZONE, "")
    zones = label.split(MULTI_ZONE_DELIMITER)
    if len(zones) == 1 and zones[0]:
        return f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{pv.pd_name}"
    if len(zones) > 1:
        try:
            region = _gce_region(zones)
        except TranslationError as exc:
            raise TranslationError(f"failed to get region from zones: {exc}") from None
        return f"projects/{_UNSPECIFIED}/regions/{region}/disks/{pv.pd_name}"
    return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pv.pd_name}"


def _gce_region(zones: list[str]) -> str:
    """``gceGetRegionFromZones``: the one region of zones named ``{locale}-{region}-{zone}``."""
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(f"zone in unexpected format, expected: "
                                   f"{{locale}}-{{region}}-{{zone}}, got: {zone}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:  # ``%v`` of a ``sets.String``: its map, keys sorted
        shown = " ".join(f"{r}:{{}}" for r in sorted(regions))
        raise TranslationError(f"multiple or no regions gotten from zones, got: map[{shown}]")
    return regions.pop()


def ebs_volume_handle(kubernetes_id: str) -> str:
    """``KubernetesVolumeIDToEBSVolumeID``, worded as the EBS translator wraps its error: a
    bare ID as it is; ``aws://<zone>/<vol-...>`` to its path's volume ID.

    Raises
    ------
    TranslationError
        An ``aws://`` URL that does not parse or whose path is not a ``vol-`` ID.
    """
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    try:
        path = _url_path(kubernetes_id)
    except ValueError as exc:
        raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID Invalid "
                               f"disk name ({kubernetes_id}): parse {go_quote(kubernetes_id)}: "
                               f"{exc}") from None
    aws_id = path.strip("/")
    if not _AWS_VOLUME.match(aws_id):
        raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID Invalid "
                               f"format for AWS volume ({kubernetes_id})")
    return aws_id


def _url_path(raw: str) -> str:
    """The decoded path of an ``aws://`` URL, as Go's ``url.Parse`` gives it; ``ValueError``
    (with Go's reason) for a control character, a bad escape or a bad port."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise ValueError("net/url: invalid control character in URL")
    rest, _, fragment = raw.partition("#")
    _unescape(fragment)
    authority, slash, path = rest.partition("?")[0][len("aws://"):].partition("/")
    host = authority.rpartition("@")[2]
    if not host.startswith("["):
        port = host.partition(":")[2]
        if port and not port.isdigit():
            raise ValueError(f"invalid port {go_quote(':' + port)} after host")
    return _unescape(slash + path)


def _unescape(text: str) -> str:
    """Go's ``unescape``: every ``%`` followed by two hex digits, decoded as UTF-8 bytes."""
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "%":
            code = text[i + 1:i + 3]
            if len(code) < 2 or code[0] not in _HEX or code[1] not in _HEX:
                raise ValueError(f"invalid URL escape {go_quote(text[i:i + 3])}")
            out.append(int(code, 16))
            i += 3
        else:
            out += text[i].encode()
            i += 1
    return out.decode("utf-8", errors="surrogateescape")

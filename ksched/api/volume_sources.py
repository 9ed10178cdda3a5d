"""Reading volume sources from their wire format as the API server checks them
(``pkg/apis/core/validation/validation.go``): a pod's ``spec.volumes`` (``ValidateVolumes``,
``validateVolumeSource``), the source of a PersistentVolume (``ValidatePersistentVolumeSpec``'s
one-source rule), a claim's spec (``ValidatePersistentVolumeClaimSpec``, also a generic ephemeral
volume's ``volumeClaimTemplate``), with the defaulting of ``pkg/apis/core/v1/defaults.go`` that
reaches scheduling (an RBD pool defaults to ``rbd``, a claim's volume mode to ``Filesystem``).

Each source the scheduler reads is read and checked field by field (persistentVolumeClaim,
ephemeral, gcePersistentDisk, awsElasticBlockStore, rbd, iscsi, csi, azureDisk, cinder,
portworxVolume, local, hostPath); the others are recognised (one source per volume) and left
unread. Errors are raised in the API server's words, the first of its error list; a storage
quantity is kept in whole bytes (``Value``, rounded up).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import attrs

from ksched import quantity as _quantity
from ksched import validation as _v
from ksched.api.affinity import read_label_selector
from ksched.api.fields import assembler, type_name
from ksched.api.pod_volume import Volume
from ksched.api.reader import ManifestReader, annotation_errors, too_long
from ksched.api.records import LabelSelector
from ksched.api.storage import ACCESS_MODES, VOLUME_MODES

__all__ = ["POD_SOURCES", "PV_SOURCES", "access_mode_errors",
           "annotation_errors", "csi_driver_name_errors", "label_selector_errors",
           "read_claim_spec", "read_source", "read_storage", "read_volumes", "too_long"]

#: A pod's volume sources, in the order ``validateVolumeSource`` checks them.
POD_SOURCES = ("emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore",
               "secret", "nfs", "iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd",
               "cinder", "cephfs", "quobyte", "downwardAPI", "fc", "flexVolume", "configMap",
               "azureFile", "vsphereVolume", "photonPersistentDisk", "portworxVolume",
               "azureDisk", "storageos", "projected", "scaleIO", "csi", "ephemeral", "image")
#: A PersistentVolume's sources, in the order ``ValidatePersistentVolumeSpec`` checks them.
PV_SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker",
              "nfs", "rbd", "quobyte", "cephfs", "iscsi", "cinder", "fc", "flexVolume",
              "azureFile", "vsphereVolume", "photonPersistentDisk", "portworxVolume",
              "azureDisk", "scaleIO", "local", "storageos", "csi")
_POD_ORDER = {k: i for i, k in enumerate(POD_SOURCES)}
_PV_ORDER = {k: i for i, k in enumerate(PV_SOURCES)}
#: Where upstream reports a second source (its ``Forbidden`` paths keep these spellings).
_FORBIDDEN_AT = {"cephfs": "cephFS", "downwardAPI": "downwarAPI"}
#: Where upstream reports a source's own errors, when not at the source's wire name.
_CHECKED_AT = {"gcePersistentDisk": "persistentDisk"}
_PARTITION_MSG = _v.inclusive_range_error(1, 255)
_IQN = re.compile(r"iqn\.\d{4}-\d{2}\.([0-9A-Za-z.\-]+)(:[^,;*&$|\t\n\f\r ]+)\Z")
_EUI = re.compile(r"eui.[0-9A-Za-z]{16}\Z")
_NAA = re.compile(r"naa.[0-9A-Za-z]{32}\Z")
_MORE_THAN_ONE = "may not specify more than 1 volume type"

_Errors = list[_v.FieldError]
_Fields = dict[str, Any]


# --------------------------------------------------------------------------- one source


def read_source(r: ManifestReader, spec: Mapping[str, Any], path: str, pv: bool = False,
                volume_name: str = "", node_affinity: bool = True
                ) -> tuple[str, _Fields, _Errors]:
    """The one volume source of a pod volume named ``volume_name`` (``pv=False``) or of the
    spec of a PersistentVolume of that name (with ``node_affinity`` or not): its wire name
    (``""`` if none), the fields the scheduler reads from it, and the errors
    ``validateVolumeSource`` / ``ValidatePersistentVolumeSpec`` give (its own checks, then
    ``may not specify more than 1 volume type`` for every further source, or ``must specify a
    volume type``)."""
    order = _PV_ORDER if pv else _POD_ORDER
    present = [k for k in spec if k in order and spec[k] is not None]
    if len(present) > 1:
        present.sort(key=order.__getitem__)
    if not present:
        return "", {}, [_v.required(path, "must specify a volume type")]
    kind = present[0]
    wire = f"{path}.{kind}"
    src = r.mapping(spec[kind], wire)
    reader = _READERS.get(kind)
    fields, errs = ({}, []) if reader is None else reader(
        r, src, wire, f"{path}.{_CHECKED_AT.get(kind, kind)}", pv, volume_name)
    if kind == "iscsi" and not pv:
        errs += _iscsi_name_errors(src, path, volume_name)
    if kind == "local" and pv and not node_affinity:
        errs.append(_v.required(f"{path}.nodeAffinity", "Local volume requires node affinity"))
    errs += [_v.forbidden(f"{path}.{_FORBIDDEN_AT.get(k, k)}", _MORE_THAN_ONE)
             for k in present[1:] if not (pv and k == "flexVolume")]
    return kind, fields, errs


def _read_only(r: ManifestReader, src: Mapping[str, Any], wire: str) -> bool:
    return r.boolean(src.get("readOnly"), f"{wire}.readOnly")


def _required(r: ManifestReader, src: Mapping[str, Any], key: str, wire: str, path: str,
              errs: _Errors) -> str:
    """A string field that must not be empty (``field.Required``)."""
    value = r.string(src.get(key), f"{wire}.{key}")
    if not value:
        errs.append(_v.required(f"{path}.{key}"))
    return value


def _partition(r: ManifestReader, src: Mapping[str, Any], wire: str, path: str,
               errs: _Errors) -> int:
    partition = r.integer(src.get("partition"), f"{wire}.partition", bits=32)
    if not 0 <= partition <= 255:
        errs.append(_v.invalid(f"{path}.partition", partition, _PARTITION_MSG))
    return partition


def _gce(r: ManifestReader, src: Mapping[str, Any], wire: str, path: str, pv: bool,
         name: str) -> tuple[_Fields, _Errors]:
    """``validateGCEPersistentDiskVolumeSource`` (errors at ``persistentDisk``, as upstream)."""
    errs: _Errors = []
    pd_name = _required(r, src, "pdName", wire, path, errs)
    partition = _partition(r, src, wire, path, errs)
    return {"pd_name": pd_name, "partition": partition,
            "read_only": _read_only(r, src, wire)}, errs


def _aws(r: ManifestReader, src: Mapping[str, Any], wire: str, path: str, pv: bool,
         name: str) -> tuple[_Fields, _Errors]:
    """``validateAWSElasticBlockStoreVolumeSource``."""
    errs: _Errors = []
    volume_id = _required(r, src, "volumeID", wire, path, errs)
    partition = _partition(r, src, wire, path, errs)
    return {"volume_id": volume_id, "partition": partition,
            "read_only": _read_only(r, src, wire)}, errs


def _volume_id(r: ManifestReader, src: Mapping[str, Any], wire: str, path: str, pv: bool,
               name: str) -> tuple[_Fields, _Errors]:
    """``validateCinderVolumeSource`` / ``validatePortworxVolumeSource``: a volume ID."""
    errs: _Errors = []
    volume_id = _required(r, src, "volumeID", wire, path, errs)
    return {"volume_id": volume_id, "read_only": _read_only(r, src, wire)}, errs


def _azure_disk(r: ManifestReader, src: Mapping[str, Any], wire: str, path: str, pv: bool,
                name: str) -> tuple[_Fields, _Errors]:
    """``validateAzureDisk``: a disk name and URI, a supported kind
    (``SetDefaults_AzureDiskVolumeSource``: ``Shared``)."""
    errs: _Errors = []
    _required(r, src, "diskName", wire, path, errs)
    disk_uri = _required(r, src, "diskURI", wire, path, errs)
    kind = r.string(src.get("kind"), f"{wire}.kind", "Shared")
    if kind not in _AZURE_DISK_KINDS:
        errs.append(_v.not_supported(f"{path}.kind", _v.AsJSON(kind), _AZURE_DISK_KINDS))
    return {"disk_uri": disk_uri, "disk_kind": kind, "read_only": _read_only(r, src, wire)}, errs


#: ``supportedDiskKinds``, sorted.
_AZURE_DISK_KINDS = ("Dedicated", "Managed", "Shared")


def _rbd(r: ManifestReader, src: Mapping[str, Any], wire: str, path: str, pv: bool,
         name: str) -> tuple[_Fields, _Errors]:
    """``validateRBDVolumeSource``: monitors and an image; ``SetDefaults_RBDVolumeSource``:
    pool ``rbd``."""
    errs: _Errors = []
    monitors = r.strings(src.get("monitors"), f"{wire}.monitors")
    if not monitors:
        errs.append(_v.required(f"{path}.monitors"))
    image = _required(r, src, "image", wire, path, errs)
    return {"monitors": monitors, "rbd_pool": r.string(src.get("pool"), f"{wire}.pool") or "rbd",
            "rbd_image": image, "read_only": _read_only(r, src, wire)}, errs


def _iqn_errors(value: str, path: str, prefix_msg: str) -> _Errors:
    """An iSCSI qualified name (``iqn``, ``eui`` or ``naa`` format)."""
    if not value.startswith(("iqn", "eui", "naa")):
        return [_v.invalid(path, value, prefix_msg)]
    pattern = _IQN if value.startswith("iqn") else _EUI if value.startswith("eui") else _NAA
    found = pattern.search(value) if pattern is _IQN else pattern.match(value)
    return [] if found else [_v.invalid(path, value, "must be valid format")]


def _iscsi(r: ManifestReader, src: Mapping[str, Any], wire: str, path: str, pv: bool,
           name: str) -> tuple[_Fields, _Errors]:
    """``validateISCSIVolumeSource`` / ``validateISCSIPersistentVolumeSource`` (the volume
    name's length rule of a pod's volume is :func:`_iscsi_name_errors`')."""
    errs: _Errors = []
    portal = _required(r, src, "targetPortal", wire, path, errs)
    initiator = src.get("initiatorName")
    if initiator is not None:
        initiator = r.string(initiator, f"{wire}.initiatorName")
    if pv and initiator is not None and len(f"{name}:{portal}") > 64:
        errs.append(_v.invalid(f"{path}.targetportal", portal, _ISCSI_TOO_LONG))
    iqn = _required(r, src, "iqn", wire, path, errs)
    if iqn:
        errs += _iqn_errors(iqn, f"{path}.iqn", "must be valid format" if pv else
                            "must be valid format starting with iqn, eui, or naa")
    lun = r.integer(src.get("lun"), f"{wire}.lun", bits=32)
    if not 0 <= lun <= 255:
        errs.append(_v.invalid(f"{path}.lun", lun, _v.inclusive_range_error(0, 255)))
    chap = (r.boolean(src.get("chapAuthDiscovery"), f"{wire}.chapAuthDiscovery")
            or r.boolean(src.get("chapAuthSession"), f"{wire}.chapAuthSession"))
    secret = src.get("secretRef")
    if chap and secret is None:
        errs.append(_v.required(f"{path}.secretRef"))
    if pv and secret is not None:
        _required(r, r.mapping(secret, f"{wire}.secretRef"), "name", f"{wire}.secretRef",
                  f"{path}.secretRef", errs)
    if initiator is not None:
        errs += _iqn_errors(initiator, f"{path}.initiatorname", "must be valid format" if pv
                            else "must be valid format starting with iqn, eui, or naa")
    return {"iqn": iqn, "target_portal": portal, "lun": lun,
            "read_only": _read_only(r, src, wire)}, errs


_ISCSI_TOO_LONG = ("Total length of <volume name>:<iscsi.targetPortal> must be under 64 "
                   "characters if iscsi.initiatorName is specified.")


def _iscsi_name_errors(src: Mapping[str, Any], path: str, volume_name: str) -> _Errors:
    """A pod's iSCSI volume with an initiator name: ``<volume name>:<targetPortal>`` under 64
    characters."""
    portal = src.get("targetPortal") or ""
    if src.get("initiatorName") is not None and len(f"{volume_name}:{portal}") > 64:
        return [_v.invalid(f"{path}.name", volume_name, _ISCSI_TOO_LONG)]
    return []


def csi_driver_name_errors(name: str, path: str) -> _Errors:
    """``ValidateCSIDriverName``: set, at most 63 bytes, a DNS subdomain (lower-cased)."""
    errs = [_v.required(path)] if not name else []
    if len(name.encode()) > 63:
        errs.append(too_long(path, 63))
    return errs + [_v.invalid(path, name, msg)
                   for msg in _v.name_is_dns1123_subdomain(name.lower())]


def _csi(r: ManifestReader, src: Mapping[str, Any], wire: str, path: str, pv: bool,
         name: str) -> tuple[_Fields, _Errors]:
    """``validateCSIVolumeSource`` / ``validateCSIPersistentVolumeSource``."""
    driver = r.string(src.get("driver"), f"{wire}.driver")
    errs = csi_driver_name_errors(driver, f"{path}.driver")
    fields: _Fields = {"driver": driver, "read_only": _read_only(r, src, wire)}
    if not pv:
        ref = src.get("nodePublishSecretRef")
        if ref is not None:
            secret = r.string(r.mapping(ref, f"{wire}.nodePublishSecretRef").get("name"),
                              f"{wire}.nodePublishSecretRef.name")
            if not secret:
                errs.append(_v.required(f"{path}.nodePublishSecretRef.name"))
            errs += [_v.invalid(f"{path}.name", secret, msg)  # upstream's path
                     for msg in (_v.name_is_dns1123_subdomain(secret) if secret else ())]
        return fields, errs
    fields["volume_handle"] = _required(r, src, "volumeHandle", wire, path, errs)
    for key in ("controllerPublishSecretRef", "controllerExpandSecretRef",
                "nodePublishSecretRef", "nodeExpandSecretRef"):
        if src.get(key) is not None:
            errs += _secret_reference_errors(r, r.mapping(src[key], f"{wire}.{key}"),
                                             f"{wire}.{key}", f"{path}.{key}")
    return fields, errs


def _secret_reference_errors(r: ManifestReader, ref: Mapping[str, Any], wire: str,
                             path: str) -> _Errors:
    """``validatePVSecretReference``: a DNS-subdomain name and a DNS-label namespace."""
    errs: _Errors = []
    for key, check in (("name", _v.name_is_dns1123_subdomain),
                       ("namespace", _v.is_dns1123_label)):
        value = _required(r, ref, key, wire, path, errs)
        if value:
            errs += [_v.invalid(f"{path}.{key}", value, msg) for msg in check(value)]
    return errs


def _path_source(r: ManifestReader, src: Mapping[str, Any], wire: str, path: str, pv: bool,
                 name: str) -> tuple[_Fields, _Errors]:
    """``validateLocalVolumeSource`` / the path of ``validateHostPathVolumeSource``: a path
    without ``..`` elements."""
    errs: _Errors = []
    value = _required(r, src, "path", wire, path, errs)
    if value and ".." in value.replace("\\", "/").split("/"):
        errs.append(_v.invalid(f"{path}.path", value, "must not contain '..'"))
    return {}, errs


def _claim(r: ManifestReader, src: Mapping[str, Any], wire: str, path: str, pv: bool,
           name: str) -> tuple[_Fields, _Errors]:
    """``validatePersistentClaimVolumeSource``: a claim name."""
    errs: _Errors = []
    claim = _required(r, src, "claimName", wire, path, errs)
    return {"claim_name": claim, "read_only": _read_only(r, src, wire)}, errs


def _ephemeral(r: ManifestReader, src: Mapping[str, Any], wire: str, path: str, pv: bool,
               name: str) -> tuple[_Fields, _Errors]:
    """``validateEphemeralVolumeSource``: a claim template (``ValidatePersistentVolumeClaim
    Template``: labels and annotations only in its metadata, a valid claim spec)."""
    template = src.get("volumeClaimTemplate")
    if template is None:
        return {}, [_v.required(f"{path}.volumeClaimTemplate")]
    wire, path = f"{wire}.volumeClaimTemplate", f"{path}.volumeClaimTemplate"
    template = r.mapping(template, wire)
    meta = r.mapping(template.get("metadata"), f"{wire}.metadata")
    errs = annotation_errors(r, meta.get("annotations"), f"{path}.metadata.annotations")
    errs += _v.labels_errors(r.string_map(meta.get("labels"), f"{wire}.metadata.labels"),
                             f"{path}.metadata.labels")
    errs += [_v.forbidden(f"{path}.metadata.{key}", "cannot be set") for key in _TEMPLATE_META
             if meta.get(key) not in (None, "", 0, [], {})]
    _, spec_errs = read_claim_spec(r, r.mapping(template.get("spec"), f"{wire}.spec"),
                                   f"{path}.spec")
    return {}, errs + spec_errs


#: The ``ObjectMeta`` fields a claim template may not set (``allowedTemplateObjectMetaFields``
#: allows labels and annotations), in the struct's order.
_TEMPLATE_META = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
                  "generation", "creationTimestamp", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "ownerReferences", "finalizers",
                  "managedFields")

_READERS: dict[str, Callable[..., tuple[_Fields, _Errors]]] = {
    "gcePersistentDisk": _gce, "awsElasticBlockStore": _aws, "rbd": _rbd, "iscsi": _iscsi,
    "csi": _csi, "azureDisk": _azure_disk, "cinder": _volume_id, "portworxVolume": _volume_id,
    "local": _path_source, "hostPath": _path_source, "persistentVolumeClaim": _claim,
    "ephemeral": _ephemeral,
}


# --------------------------------------------------------------------------- a pod's volumes

_VOLUME_FIELDS = tuple(a.name for a in attrs.fields(Volume))
_DEFAULTS = {a.name: a.default for a in attrs.fields(Volume) if a.name not in ("name", "kind")}
_assemble_volume = assembler(Volume, _VOLUME_FIELDS)
_PLAIN_TAIL = tuple(_DEFAULTS.values())


def read_volumes(r: ManifestReader, value: Any, path: str,
                 pod_name: str) -> tuple[Volume, ...]:
    """A pod's ``spec.volumes`` (``ValidateVolumes``): each a DNS-label name, unique, with one
    valid source; a claim must not be one that an ephemeral volume of the pod creates."""
    if value is None or value == []:
        return ()
    items = r.seq(value, path)
    out, names = [], set()
    for i, v in enumerate(items):
        volume = _plain_volume(v, names)
        if volume is None:
            volume = _read_volume(r, v, f"{path}[{i}]", pod_name, names, items)
        names.add(volume.name)
        out.append(volume)
    return tuple(out)


#: The sources the scheduler does not read (a pod's service account token, config maps...).
_PLAIN_SOURCES = frozenset(POD_SOURCES) - _READERS.keys()
_DNS1123_LABEL = re.compile(_v.DNS1123_LABEL_FMT + r"\Z")


def _plain_volume(v: Any, names: set[str]) -> Volume | None:
    """The usual volume, read quickly: a new, valid name and one source the scheduler does not
    read; ``None`` for any other (:func:`_read_volume` reads it)."""
    if type(v) is not dict or len(v) != 2:
        return None
    name = v.get("name")
    if type(name) is not str or name in names or len(name) > 63 \
            or not _DNS1123_LABEL.match(name):
        return None
    for kind in v:
        if kind != "name":
            break
    if kind not in _PLAIN_SOURCES or type(v[kind]) is not dict:
        return None
    return _assemble_volume((name, kind, *_PLAIN_TAIL))


def _read_volume(r: ManifestReader, v: Any, path: str, pod_name: str, names: set[str],
                 items: list) -> Volume:
    """One volume of ``items`` (the pod's), every rule of ``ValidateVolumes`` checked."""
    v = r.mapping(v, path)
    name = r.string(v.get("name"), f"{path}.name")
    kind, fields, errs = read_source(r, v, path, volume_name=name)
    if kind == "ephemeral" and pod_name and name:
        claim = f"{pod_name}-{name}"
        errs += [_v.invalid(f"{path}.name", name, f"PVC name {_v.go_quote(claim)}: {msg}")
                 for msg in _v.name_is_dns1123_subdomain(claim)]
    if not name:
        errs.append(_v.required(f"{path}.name"))
    errs += [_v.invalid(f"{path}.name", name, msg)
             for msg in (_v.is_dns1123_label(name) if name else ())]
    if name in names:
        errs.append(_v.duplicate(f"{path}.name", name))
    if kind == "persistentVolumeClaim" and pod_name and fields["claim_name"] in {
            f"{pod_name}-{e.get('name')}" for e in items
            if isinstance(e, Mapping) and e.get("ephemeral") is not None}:
        errs.append(_v.invalid(f"{path}.persistentVolumeClaim.claimName", fields["claim_name"],
                               "must not reference a PVC that gets created for an ephemeral "
                               "volume"))
    r.check(errs)
    return _assemble_volume((name, kind, *{**_DEFAULTS, **fields}.values()))


# --------------------------------------------------------------------------- claims


def read_storage(r: ManifestReader, value: Any, wire: str) -> Fraction:
    """A storage quantity's exact value (as ``SetDefaults_ResourceList`` rounds it, up to
    milli-units); a quantity that does not parse, or whose whole bytes overflow an int64,
    is refused."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        r.fail(wire, f"expected a quantity, got {type_name(value)}")
    try:
        _quantity.scheduler_amount("storage", value)
        return _quantity.round_up_milli(_quantity.parse_quantity(value))
    except _quantity.QuantityError as exc:
        r.fail(wire, str(exc))


def access_mode_errors(modes: tuple[str, ...], path: str) -> _Errors:
    """Supported access modes, ``ReadWriteOncePod`` alone."""
    errs = [_v.not_supported(path, _v.AsJSON(m), ACCESS_MODES) for m in modes
            if m not in ACCESS_MODES]
    if "ReadWriteOncePod" in modes and any(m in ACCESS_MODES and m != "ReadWriteOncePod"
                                           for m in modes):
        errs.append(_v.forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def read_claim_spec(r: ManifestReader, spec: Mapping[str, Any],
                    path: str) -> tuple[_Fields, _Errors]:
    """A claim's spec (``ValidatePersistentVolumeClaimSpec``; ``SetDefaults_Persistent
    VolumeClaimSpec``: volume mode ``Filesystem``), as :class:`PersistentVolumeClaim` fields:
    ``access_modes``, ``selector``, ``request`` (bytes), ``storage_class``, ``volume_mode``,
    ``volume_name``, ``volume_attributes_class``."""
    modes = r.strings(spec.get("accessModes"), f"{path}.accessModes")
    errs = [] if modes else [_v.required(f"{path}.accessModes",
                                         "at least 1 access mode is required")]
    selector = read_label_selector(r, spec.get("selector"), f"{path}.selector", validate=False)
    if selector is not None:
        errs += label_selector_errors(selector, f"{path}.selector")
    errs += access_mode_errors(modes, f"{path}.accessModes")
    resources = r.mapping(spec.get("resources"), f"{path}.resources")
    for part in ("limits", "requests"):  # quantities that must parse (storage: below)
        for name, text in r.mapping(resources.get(part), f"{path}.resources.{part}").items():
            if part == "limits" or name != "storage":
                read_storage(r, text, f"{path}.resources.{part}.{r.key(name, path)}")
    requests = r.mapping(resources.get("requests"), f"{path}.resources.requests")
    request, key = 0, f"{path}.resources[storage]"
    if requests.get("storage") is None:
        errs.append(_v.required(key))
    else:
        exact = read_storage(r, requests["storage"], f"{path}.resources.requests.storage")
        if exact <= 0:
            errs.append(_v.invalid(key, _quantity.canonical(requests["storage"]),
                                   "must be greater than zero"))
        request = _quantity.value(exact)
    storage_class = _class_name(r, spec, "storageClassName", path, errs)
    volume_mode = r.string(spec.get("volumeMode"), f"{path}.volumeMode", "Filesystem")
    if volume_mode not in VOLUME_MODES:
        errs.append(_v.not_supported(f"{path}.volumeMode", _v.AsJSON(volume_mode),
                                     VOLUME_MODES))
    return {"access_modes": modes, "selector": selector, "request": request,
            "storage_class": storage_class, "volume_mode": volume_mode,
            "volume_name": r.string(spec.get("volumeName"), f"{path}.volumeName"),
            "volume_attributes_class": _class_name(r, spec, "volumeAttributesClassName", path,
                                                   errs)}, errs


def _class_name(r: ManifestReader, spec: Mapping[str, Any], key: str, path: str,
                errs: _Errors) -> str:
    """A class name (``ValidateClassName``: a DNS subdomain) when set."""
    name = r.string(spec.get(key), f"{path}.{key}")
    errs += [_v.invalid(f"{path}.{key}", name, msg)
             for msg in (_v.name_is_dns1123_subdomain(name) if name else ())]
    return name


def label_selector_errors(selector: LabelSelector, path: str) -> _Errors:
    """``ValidateLabelSelector`` (label values checked): valid match labels, and each
    requirement's operator, values and key."""
    errs = _v.labels_errors(selector.match_labels, f"{path}.matchLabels")
    for i, req in enumerate(selector.match_expressions):
        rpath = f"{path}.matchExpressions[{i}]"
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(_v.required(f"{rpath}.values",
                                        "must be specified when `operator` is 'In' or 'NotIn'"))
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(_v.forbidden(f"{rpath}.values", "may not be specified when "
                                                            "`operator` is 'Exists' or "
                                                            "'DoesNotExist'"))
        else:
            errs.append(_v.invalid(f"{rpath}.operator", req.operator,
                                   "not a valid selector operator"))
        errs += _v.label_name_errors(req.key, f"{rpath}.key")
        for j, value in enumerate(req.values):
            errs += [_v.invalid(f"{rpath}.values[{j}]", value, msg)
                     for msg in _v.label_value_messages(value)]
    return errs



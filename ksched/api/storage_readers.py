"""Reading the storage kinds from their wire format as the API server validates them:
``ValidatePersistentVolume`` and ``ValidatePersistentVolumeClaim``
(``pkg/apis/core/validation/validation.go``), ``ValidateStorageClass``, ``ValidateCSINode``,
``ValidateCSIDriver`` and ``ValidateCSIStorageCapacity`` (``pkg/apis/storage/validation``),
after the defaulting of ``pkg/apis/core/v1/defaults.go`` and ``pkg/apis/storage/v1/defaults.go``.

Every field read is checked; errors name the object and the field, in the API server's words
(the first of its error list). Status phases are checked against their enums, which the API
server leaves to its controllers.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any

from ksched import quantity as _quantity
from ksched import validation as _v
from ksched.api.affinity import read_label_selector, read_node_selector_term
from ksched.api.fields import FrozenDict
from ksched.api.pod_validation import node_selector_term_errors
from ksched.api.reader import ManifestReader, read_metadata
from ksched.api.records import NodeSelectorTerm
from ksched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_MIGRATED_PLUGINS,
    ANN_SELECTED_NODE,
    ANN_STORAGE_CLASS,
    CLAIM_PHASES,
    FS_GROUP_POLICIES,
    LIFECYCLE_MODES,
    PV_RECLAIM_POLICIES,
    SC_RECLAIM_POLICIES,
    VOLUME_BINDING_MODES,
    VOLUME_MODES,
    VOLUME_PHASES,
    ClaimRef,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorLabelRequirement,
    TopologySelectorTerm,
)
from ksched.api.volume_sources import (
    access_mode_errors,
    annotation_errors,
    csi_driver_name_errors,
    label_selector_errors,
    read_claim_spec,
    read_source,
    read_storage,
    too_long,
)

__all__ = ["read_csi_driver", "read_csi_node", "read_csi_storage_capacity",
           "read_persistent_volume", "read_persistent_volume_claim", "read_storage_class"]

_Errors = list[_v.FieldError]


def _meta(obj: Mapping[str, Any], kind: str, namespaced: bool
          ) -> tuple[ManifestReader, Mapping[str, Any], FrozenDict, FrozenDict]:
    """The reader, metadata, labels and annotations of one object (``ValidateObjectMeta``)."""
    r, meta = read_metadata(obj, kind, namespaced=namespaced)
    labels = r.labels(meta.get("labels"), "metadata.labels")
    r.check(annotation_errors(r, meta.get("annotations"), "metadata.annotations"))
    return r, meta, labels, r.string_map(meta.get("annotations"), "metadata.annotations")


def _enum(r: ManifestReader, value: Any, path: str, allowed: tuple[str, ...], default: str,
          errs: _Errors) -> str:
    """An enum field of a named string type (``field.NotSupported`` prints it as JSON)."""
    text = r.string(value, path, default)
    if text not in allowed:
        errs.append(_v.not_supported(path, _v.AsJSON(text), allowed))
    return text


# --------------------------------------------------------------------------- PersistentVolume


def read_persistent_volume(obj: Mapping[str, Any]) -> PersistentVolume:
    """A PersistentVolume (``ValidatePersistentVolume``; ``SetDefaults_PersistentVolume``:
    ``Retain``, ``Filesystem``, phase ``Pending``): access modes, the storage capacity, the
    reclaim policy, node affinity, one volume source, class and volume mode."""
    r, meta, labels, annotations = _meta(obj, "PersistentVolume", namespaced=False)
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    modes = r.strings(spec.get("accessModes"), "spec.accessModes")
    errs = [] if modes else [_v.required("spec.accessModes")]
    errs += access_mode_errors(modes, "spec.accessModes")
    capacity = _capacity(r, r.mapping(spec.get("capacity"), "spec.capacity"), errs)
    reclaim = _enum(r, spec.get("persistentVolumeReclaimPolicy"),
                    "spec.persistentVolumeReclaimPolicy", PV_RECLAIM_POLICIES, "Retain", errs)
    terms = _volume_node_affinity(r, spec.get("nodeAffinity"), "spec.nodeAffinity", errs)
    source, fields, source_errs = read_source(r, spec, "spec", pv=True,
                                              volume_name=meta["name"],
                                              node_affinity=spec.get("nodeAffinity") is not None)
    errs += source_errs
    errs += _host_path_recycle_errors(spec, reclaim)
    class_name = r.string(spec.get("storageClassName"), "spec.storageClassName")
    errs += [_v.invalid("spec.storageClassName", class_name, msg)
             for msg in (_v.name_is_dns1123_subdomain(class_name) if class_name else ())]
    volume_mode = _enum(r, spec.get("volumeMode"), "spec.volumeMode", VOLUME_MODES,
                        "Filesystem", errs)
    attributes_class = _volume_attributes_class(r, spec, errs)
    phase = _enum(r, status.get("phase") or None, "status.phase", VOLUME_PHASES, "Pending", errs)
    r.check(errs)
    return PersistentVolume(
        name=meta["name"], labels=labels, capacity=capacity, access_modes=modes,
        volume_mode=volume_mode, storage_class=annotations.get(ANN_STORAGE_CLASS, class_name),
        reclaim_policy=reclaim, node_affinity=terms,
        claim_ref=_claim_ref(r, spec.get("claimRef"), "spec.claimRef"), phase=phase,
        deleting=meta.get("deletionTimestamp") is not None,
        volume_attributes_class=attributes_class, source=source, **fields)


def _capacity(r: ManifestReader, capacity: Mapping[str, Any], errs: _Errors) -> int:
    """``spec.capacity``: exactly ``storage``, a positive quantity; in bytes."""
    if not capacity:
        errs.append(_v.required("spec.capacity"))
    if "storage" not in capacity or len(capacity) > 1:
        shown = {r.key(k, "spec.capacity"): _canonical(r, v, f"spec.capacity.{k}")
                 for k, v in capacity.items()}
        errs.append(_v.not_supported("spec.capacity", _v.AsJSON(dict(sorted(shown.items()))),
                                     ["storage"]))
    for name, text in capacity.items():
        exact = read_storage(r, text, f"spec.capacity.{name}")
        if _quantity.value(exact) < 0:
            errs.append(_v.invalid(f"spec.capacity[{name}]", _quantity.value(exact),
                                   "must be a valid resource quantity"))
        if exact <= 0:
            errs.append(_v.invalid(f"spec.capacity[{name}]", _quantity.canonical(text),
                                   "must be greater than zero"))
    storage = capacity.get("storage")
    return 0 if storage is None else _quantity.value(read_storage(r, storage,
                                                                  "spec.capacity.storage"))


def _canonical(r: ManifestReader, text: Any, path: str) -> str:
    read_storage(r, text, path)
    return _quantity.canonical(text)


def _volume_node_affinity(r: ManifestReader, value: Any, path: str, errs: _Errors
                          ) -> tuple[NodeSelectorTerm, ...] | None:
    """``validateVolumeNodeAffinity``: the terms of ``required`` (``ValidateNodeSelector``,
    label values checked); ``None`` without node affinity."""
    if value is None:
        return None
    required = r.mapping(value, path).get("required")
    if required is None:
        errs.append(_v.required(f"{path}.required", "must specify required node constraints"))
        return ()
    tpath = f"{path}.required.nodeSelectorTerms"
    terms = tuple(read_node_selector_term(r, t, f"{tpath}[{i}]") for i, t in enumerate(
        r.seq(r.mapping(required, f"{path}.required").get("nodeSelectorTerms"), tpath)))
    if not terms:
        errs.append(_v.required(tpath, "must have at least one node selector term"))
    for i, term in enumerate(terms):
        errs += node_selector_term_errors(term, f"{tpath}[{i}]", check_values=True)
    return terms


def _host_path_recycle_errors(spec: Mapping[str, Any], reclaim: str) -> _Errors:
    """A hostPath volume of ``/`` may not be recycled."""
    host_path = spec.get("hostPath")
    path = host_path.get("path") if isinstance(host_path, Mapping) else None
    if reclaim == "Recycle" and isinstance(path, str) \
            and posixpath.normpath(re.sub("^/+", "/", path)) == "/":  # Go's path.Clean
        return [_v.forbidden("spec.persistentVolumeReclaimPolicy",
                             "may not be 'recycle' for a hostPath mount of '/'")]
    return []


def _volume_attributes_class(r: ManifestReader, spec: Mapping[str, Any], errs: _Errors) -> str:
    """``volumeAttributesClassName`` (VolumeAttributesClass is on): not empty when set, a
    DNS subdomain, on a CSI volume."""
    if spec.get("volumeAttributesClassName") is None:
        return ""
    name = r.string(spec["volumeAttributesClassName"], "spec.volumeAttributesClassName")
    if not name:
        errs.append(_v.required("spec.volumeAttributesClassName", "an empty string is "
                                                                  "disallowed"))
    errs += [_v.invalid("spec.volumeAttributesClassName", name, msg)
             for msg in (_v.name_is_dns1123_subdomain(name) if name else ())]
    if spec.get("csi") is None:
        errs.append(_v.required("spec.csi", "has to be specified when using "
                                            "volumeAttributesClassName"))
    return name


def _claim_ref(r: ManifestReader, value: Any, path: str) -> ClaimRef | None:
    if value is None:
        return None
    ref = r.mapping(value, path)
    return ClaimRef(*(r.string(ref.get(k), f"{path}.{k}") for k in ("namespace", "name", "uid")))


# --------------------------------------------------------------------------- claims


def read_persistent_volume_claim(obj: Mapping[str, Any]) -> PersistentVolumeClaim:
    """A PersistentVolumeClaim (``ValidatePersistentVolumeClaim``; ``SetDefaults_Persistent
    VolumeClaim``: phase ``Pending``), with the annotations the volume binder reads."""
    r, meta, _, annotations = _meta(obj, "PersistentVolumeClaim", namespaced=True)
    fields, errs = read_claim_spec(r, r.mapping(obj.get("spec"), "spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    phase = _enum(r, status.get("phase") or None, "status.phase", CLAIM_PHASES, "Pending", errs)
    r.check(errs)
    if ANN_STORAGE_CLASS in annotations:
        fields["storage_class"] = annotations[ANN_STORAGE_CLASS]
    return PersistentVolumeClaim(
        name=meta["name"], namespace=meta.get("namespace") or "default",
        uid=r.string(meta.get("uid"), "metadata.uid"), phase=phase,
        deleting=meta.get("deletionTimestamp") is not None,
        bind_completed=ANN_BIND_COMPLETED in annotations,
        selected_node=annotations.get(ANN_SELECTED_NODE, ""),
        controller_uid=_controller_uid(r, meta.get("ownerReferences"),
                                       "metadata.ownerReferences"), **fields)


def _controller_uid(r: ManifestReader, value: Any, path: str) -> str | None:
    """The uid of the first owner reference with ``controller: true`` (``GetControllerOf``)."""
    for i, ref in enumerate(r.seq(value, path)):
        ref = r.mapping(ref, f"{path}[{i}]")
        if r.boolean(ref.get("controller"), f"{path}[{i}].controller"):
            return r.string(ref.get("uid"), f"{path}[{i}].uid")
    return None


# --------------------------------------------------------------------------- StorageClass

#: ``maxProvisionerParameterLen`` and ``maxProvisionerParameterSize``.
_MAX_PARAMETERS, _MAX_PARAMETER_BYTES = 512, 256 * (1 << 10)


def read_storage_class(obj: Mapping[str, Any]) -> StorageClass:
    """A StorageClass (``ValidateStorageClass``; ``SetDefaults_StorageClass``: ``Delete``,
    ``Immediate``): a provisioner that is a qualified name, parameters, the reclaim policy,
    the binding mode and the allowed topologies."""
    r, meta, _, _ = _meta(obj, "StorageClass", namespaced=False)
    provisioner = r.string(obj.get("provisioner"), "provisioner")
    errs = [] if provisioner else [_v.required("provisioner")]
    errs += [_v.invalid("provisioner", provisioner.lower(), msg)
             for msg in (_v.label_key_messages(provisioner.lower()) if provisioner else ())]
    parameters = r.string_map(obj.get("parameters"), "parameters")
    if len(parameters) > _MAX_PARAMETERS:
        errs.append(too_long("parameters", _MAX_PARAMETERS))
    else:
        errs += [_v.invalid("parameters", k, "field can not be empty.") for k in parameters
                 if not k]
        if sum(len(k) + len(v) for k, v in parameters.items()) > _MAX_PARAMETER_BYTES:
            errs.append(too_long("parameters", _MAX_PARAMETER_BYTES))
    reclaim = r.string(obj.get("reclaimPolicy"), "reclaimPolicy", "Delete")
    if reclaim and reclaim not in SC_RECLAIM_POLICIES:
        errs.append(_v.not_supported("reclaimPolicy", _v.AsJSON(reclaim), SC_RECLAIM_POLICIES))
    mode = _enum(r, obj.get("volumeBindingMode"), "volumeBindingMode", VOLUME_BINDING_MODES,
                 "Immediate", errs)
    topologies = _allowed_topologies(r, obj.get("allowedTopologies"), "allowedTopologies", errs)
    r.check(errs)
    return StorageClass(meta["name"], provisioner, mode, reclaim, topologies, parameters)


def _allowed_topologies(r: ManifestReader, value: Any, path: str,
                        errs: _Errors) -> tuple[TopologySelectorTerm, ...]:
    """``validateAllowedTopologies``: each term's requirements (``ValidateTopologySelector
    Term``: a label-name key given once, distinct values), no term twice."""
    terms, seen = [], []
    for i, term in enumerate(r.seq(value, path)):
        tpath = f"{path}[{i}]"
        term = r.mapping(term, tpath)
        reqs, by_key = [], {}
        epath = f"{tpath}.matchLabelExpressions"
        for j, req in enumerate(r.seq(term.get("matchLabelExpressions"), epath)):
            rpath = f"{epath}[{j}]"
            req = r.mapping(req, rpath)
            key = r.string(req.get("key"), f"{rpath}.key")
            values = r.strings(req.get("values"), f"{rpath}.values")
            if not values:
                errs.append(_v.required(f"{rpath}.values"))
            errs += [_v.duplicate(f"{rpath}.values[{k}]", v) for k, v in enumerate(values)
                     if v in values[:k]]
            errs += _v.label_name_errors(key, f"{rpath}.key")
            if key in by_key:
                errs.append(_v.duplicate(f"{rpath}.key", key))
            by_key[key] = frozenset(values)
            reqs.append(TopologySelectorLabelRequirement(key, values))
        if by_key in seen:
            errs.append(_v.duplicate(epath, ""))
        seen.append(by_key)
        terms.append(TopologySelectorTerm(tuple(reqs)))
    return tuple(terms)


# --------------------------------------------------------------------------- CSI objects

#: ``csiNodeIDLongerMaxLength`` (the API server allows long node IDs).
_MAX_NODE_ID = 256


def read_csi_node(obj: Mapping[str, Any]) -> CSINode:
    """A CSINode (``ValidateCSINode``): its drivers, each a CSI driver name given once, a node
    ID, distinct qualified-name topology keys and a non-negative ``allocatable.count``."""
    r, meta, _, annotations = _meta(obj, "CSINode", namespaced=False)
    spec = r.mapping(obj.get("spec"), "spec")
    drivers, names = [], set()
    for i, d in enumerate(r.seq(spec.get("drivers"), "spec.drivers")):
        dpath = f"spec.drivers[{i}]"
        d = r.mapping(d, dpath)
        name = r.string(d.get("name"), f"{dpath}.name")
        node_id = r.string(d.get("nodeID"), f"{dpath}.nodeID")
        keys = r.strings(d.get("topologyKeys"), f"{dpath}.topologyKeys")
        count = r.integer(r.mapping(d.get("allocatable"), f"{dpath}.allocatable").get("count"),
                          f"{dpath}.allocatable.count", None, bits=32)
        errs = csi_driver_name_errors(name, f"{dpath}.name")
        errs += [] if node_id else [_v.required(f"{dpath}.nodeID")]
        if len(node_id.encode()) > _MAX_NODE_ID:
            errs.append(_v.invalid(f"{dpath}.nodeID", node_id,
                                   f"must be {_MAX_NODE_ID} characters or less"))
        if count is not None and count < 0:
            errs.append(_v.invalid(f"{dpath}.allocatable.count", count,
                                   "must be greater than or equal to 0"))
        if name in names:
            errs.append(_v.duplicate(f"{dpath}.name", name))
        names.add(name)
        for k, key in enumerate(keys):
            errs += [] if key else [_v.required(dpath)]
            errs += [_v.duplicate(dpath, key)] if key in keys[:k] else []
            errs += _v.label_name_errors(key, dpath)
        r.check(errs)
        drivers.append(CSINodeDriver(name, node_id, keys, count))
    migrated = annotations.get(ANN_MIGRATED_PLUGINS, "")
    return CSINode(meta["name"], tuple(drivers), tuple(migrated.split(",")) if migrated else ())


def read_csi_driver(obj: Mapping[str, Any]) -> CSIDriver:
    """A CSIDriver (``ValidateCSIDriver``; ``SetDefaults_CSIDriver``: attach required, no pod
    info, no capacity tracking, ``ReadWriteOnceWithFSType``, ``Persistent`` volumes)."""
    r, meta, _, _ = _meta(obj, "CSIDriver", namespaced=False)
    spec = r.mapping(obj.get("spec"), "spec")
    flags = {}
    for key, default in (("attachRequired", True), ("podInfoOnMount", False),
                         ("storageCapacity", False), ("requiresRepublish", False),
                         ("seLinuxMount", False)):
        value = spec.get(key)
        flags[key] = default if value is None else r.boolean(value, f"spec.{key}")
    errs: _Errors = []
    policy = _enum(r, spec.get("fsGroupPolicy"), "spec.fsGroupPolicy", FS_GROUP_POLICIES,
                   "ReadWriteOnceWithFSType", errs)
    errs += _token_request_errors(r, spec.get("tokenRequests"), "spec.tokenRequests")
    modes = r.strings(spec.get("volumeLifecycleModes"), "spec.volumeLifecycleModes")
    errs += [_v.not_supported("spec.volumeLifecycleModes", _v.AsJSON(m), LIFECYCLE_MODES)
             for m in modes if m not in LIFECYCLE_MODES]
    period = r.integer(spec.get("nodeAllocatableUpdatePeriodSeconds"),
                       "spec.nodeAllocatableUpdatePeriodSeconds", None)
    if period is not None and period < 10:
        errs.append(_v.invalid("spec.nodeAllocatableUpdatePeriodSeconds", period,
                               "must be greater than or equal to 10 seconds"))
    r.check(errs)
    return CSIDriver(meta["name"], flags["attachRequired"], flags["podInfoOnMount"],
                     flags["storageCapacity"], policy, modes or ("Persistent",),
                     flags["requiresRepublish"])


def _token_request_errors(r: ManifestReader, value: Any, path: str) -> _Errors:
    """``validateTokenRequests``: distinct audiences, expirations of 10 minutes to 2^32 s."""
    errs, audiences = [], set()
    for i, request in enumerate(r.seq(value, path)):
        request = r.mapping(request, f"{path}[{i}]")
        audience = r.string(request.get("audience"), f"{path}[{i}].audience")
        if audience in audiences:
            errs.append(_v.duplicate(f"{path}[{i}].audience", audience))
            continue
        audiences.add(audience)
        seconds = r.integer(request.get("expirationSeconds"), f"{path}[{i}].expirationSeconds",
                            None)
        if seconds is not None and seconds < 600:
            errs.append(_v.invalid(f"{path}[{i}].expirationSeconds", seconds,
                                   "may not specify a duration less than 10 minutes"))
        if seconds is not None and seconds > 1 << 32:
            errs.append(_v.invalid(f"{path}[{i}].expirationSeconds", seconds,
                                   "may not specify a duration larger than 2^32 seconds"))
    return errs


def read_csi_storage_capacity(obj: Mapping[str, Any]) -> CSIStorageCapacity:
    """A CSIStorageCapacity (``ValidateCSIStorageCapacity``): a valid node topology selector,
    a class name, a non-negative capacity."""
    r, meta, _, _ = _meta(obj, "CSIStorageCapacity", namespaced=True)
    topology = read_label_selector(r, obj.get("nodeTopology"), "nodeTopology", validate=False)
    errs = [] if topology is None else label_selector_errors(topology, "nodeTopology")
    class_name = r.string(obj.get("storageClassName"), "storageClassName")
    errs += [_v.invalid("storageClassName", class_name, msg)
             for msg in _v.name_is_dns1123_subdomain(class_name)]
    sizes = {}
    for key in ("capacity", "maximumVolumeSize"):
        exact = None if obj.get(key) is None else read_storage(r, obj[key], key)
        if key == "capacity" and exact is not None and exact < 0:
            errs.append(_v.invalid(key, _quantity.canonical(obj[key]),
                                   "must be greater than or equal to 0"))
        sizes[key] = None if exact is None else _quantity.value(exact)
    r.check(errs)
    return CSIStorageCapacity(meta["name"], meta.get("namespace") or "default", class_name,
                              topology, sizes["capacity"], sizes["maximumVolumeSize"])

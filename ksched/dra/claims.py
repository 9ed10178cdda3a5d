"""resource.k8s.io/v1 ResourceClaim and ResourceClaimTemplate, read and checked by the rules
of v1.35's ``pkg/apis/resource/validation`` (``ValidateResourceClaim``, with the status rules,
and ``ValidateResourceClaimTemplate``): unique DNS-label request names, exactly one of
``exactly`` and ``firstAvailable``, allocation modes and counts, selectors that compile,
constraints and configs naming requests of the claim, ``matchAttribute`` fully qualified.

Claims keep their wire ``status.allocation`` (``allocation``) for output and a parsed view of it
(``results``, ``node_selector``) for the scheduler.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ksched import validation as _v
from ksched.api import NodeSelectorTerm
from ksched.api.affinity import read_node_selector_term
from ksched.api.pod_validation import node_selector_term_errors
from ksched.api.reader import ManifestReader, read_metadata
from ksched.dra.cel import CelSelector
from ksched.dra.fields import (
    CONFIG_MAX,
    CONSTRAINTS_MAX,
    FIRST_AVAILABLE_MAX,
    REQUESTS_MAX,
    RESERVED_FOR_MAX,
    RESULTS_MAX,
    dns_label,
    dns_subdomain,
    driver_name,
    fully_qualified_name,
    gated,
    opaque_configs,
    pool_name,
    read_selectors,
    request_ref,
    too_many,
)

__all__ = ["AllocationResult", "ClaimSpec", "DeviceRequest", "DeviceResult", "ExactRequest",
           "FINALIZER", "ResourceClaim", "ResourceClaimTemplate", "read_claim_spec",
           "read_resource_claim", "read_resource_claim_template", "request_names"]

#: ``resourceapi.Finalizer``: set by the scheduler on the claims it allocates.
FINALIZER = "resource.kubernetes.io/delete-protection"
#: ``validateDeviceAllocationMode``'s supported values, in its order.
_MODES = ("All", "ExactCount")


@attrs.frozen(eq=False)
class ExactRequest:
    """An exact request or a ``firstAvailable`` subrequest (``name`` is the subrequest's)."""

    name: str
    device_class: str
    selectors: tuple[CelSelector, ...] = ()
    mode: str = "ExactCount"
    count: int = 1
    admin_access: bool = False


@attrs.frozen(eq=False)
class DeviceRequest:
    """A claim's request: ``exactly`` or, in priority order, ``first_available``."""

    name: str
    exactly: ExactRequest | None = None
    first_available: tuple[ExactRequest, ...] = ()


@attrs.frozen(eq=False)
class ClaimSpec:
    """``DeviceClaim``: requests, ``matchAttribute`` constraints ((requests, attribute)) and
    opaque config in wire form."""

    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[tuple[frozenset[str], str], ...] = ()
    config: tuple[dict, ...] = ()


@attrs.frozen
class DeviceResult:
    """``DeviceRequestAllocationResult``."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False

    def wire(self) -> dict:
        out = {"request": self.request, "driver": self.driver, "pool": self.pool,
               "device": self.device}
        if self.admin_access:
            out["adminAccess"] = True
        return out


@attrs.frozen(eq=False)
class AllocationResult:
    """``AllocationResult``: the devices, the config and the node selector (wire form;
    ``None``: usable from every node), with the selector's terms parsed."""

    results: tuple[DeviceResult, ...]
    config: tuple[dict, ...] = ()
    node_selector_wire: dict | None = None
    node_selector: tuple[NodeSelectorTerm, ...] | None = None

    def wire(self) -> dict:
        devices: dict[str, Any] = {"results": [d.wire() for d in self.results]}
        if self.config:
            devices["config"] = [dict(c) for c in self.config]
        out: dict[str, Any] = {"devices": devices}
        if self.node_selector_wire is not None:
            out["nodeSelector"] = self.node_selector_wire
        return out


@attrs.frozen(eq=False)
class ResourceClaim:
    """A ResourceClaim: its spec, allocation and reservations (``reserved_for``: (resource,
    name, uid) of each consumer)."""

    name: str
    namespace: str
    uid: str = ""
    spec: ClaimSpec = ClaimSpec()
    allocation: AllocationResult | None = None
    reserved_for: tuple[tuple[str, str, str], ...] = ()
    finalizers: tuple[str, ...] = ()
    #: The controlling owner as (kind, name, uid), if any.
    owner: tuple[str, str, str] | None = None
    deleting: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def is_reserved_for(self, uid: str) -> bool:
        return any(r[2] == uid for r in self.reserved_for)


@attrs.frozen(eq=False)
class ResourceClaimTemplate:
    name: str
    namespace: str
    spec: ClaimSpec = ClaimSpec()


def _exact(r: ManifestReader, value: Any, path: str, name: str, sub: bool) -> ExactRequest:
    """``validateExactDeviceRequest`` / ``validateDeviceSubRequest``: a class name, selectors,
    the allocation mode and its count (defaults: ``ExactCount``, one device)."""
    req = r.mapping(value, path)
    gated(r, req, ("tolerations", "capacity"), path)
    if sub and req.get("adminAccess") is not None:
        r.fail(f"{path}.adminAccess", 'unknown field "adminAccess" (subrequests have none)')
    cls = r.string(req.get("deviceClassName"), f"{path}.deviceClassName")
    dns_subdomain(r, cls, f"{path}.deviceClassName")
    selectors = read_selectors(r, req.get("selectors"), f"{path}.selectors")
    mode = r.string(req.get("allocationMode"), f"{path}.allocationMode") or "ExactCount"
    count = r.integer(req.get("count"), f"{path}.count", default=None)
    if mode == "All":
        if count not in (None, 0):
            r.check([_v.invalid(f"{path}.count", count,
                                "must not be specified when allocationMode is 'All'")])
        count = 0
    elif mode == "ExactCount":
        count = 1 if count is None else count
        if count <= 0:
            r.check([_v.invalid(f"{path}.count", count, "must be greater than zero")])
    else:
        r.check([_v.not_supported(f"{path}.allocationMode", mode, list(_MODES))])
    return ExactRequest(name, cls, selectors, mode, count,
                        r.boolean(req.get("adminAccess"), f"{path}.adminAccess"))


def _request(r: ManifestReader, value: Any, path: str) -> DeviceRequest:
    """``validateDeviceRequest``: a DNS-label name and exactly one of ``exactly`` and
    ``firstAvailable`` (at most 8 subrequests with unique names)."""
    req = r.mapping(value, path)
    name = r.string(req.get("name"), f"{path}.name")
    dns_label(r, name, f"{path}.name")
    exactly = req.get("exactly")
    first = r.seq(req.get("firstAvailable"), f"{path}.firstAvailable")
    if exactly is None and not first:
        r.check([_v.required(path, "exactly one of `exactly` or `firstAvailable` is required")])
    if exactly is not None and first:
        r.check([_v.invalid(path, None, "exactly one of `exactly` or `firstAvailable` is "
                                        "required, but multiple fields are set")])
    if exactly is not None:
        return DeviceRequest(name, _exact(r, exactly, f"{path}.exactly", name, False))
    if len(first) > FIRST_AVAILABLE_MAX:
        r.check([too_many(f"{path}.firstAvailable", len(first), FIRST_AVAILABLE_MAX)])
    subs = []
    for j, item in enumerate(first):
        spath = f"{path}.firstAvailable[{j}]"
        sub_name = r.string(r.mapping(item, spath).get("name"), f"{spath}.name")
        dns_label(r, sub_name, f"{spath}.name")
        subs.append(_exact(r, item, spath, sub_name, True))
    for j, s in enumerate(subs):
        if any(t.name == s.name for t in subs[:j]):
            r.check([_v.duplicate(f"{path}.firstAvailable[{j}]", s.name)])
    return DeviceRequest(name, None, tuple(subs))


def request_names(requests: tuple[DeviceRequest, ...]) -> dict[str, frozenset[str]]:
    """``gatherRequestNames``: request name -> its subrequest names."""
    return {q.name: frozenset(s.name for s in q.first_available) for q in requests}


def read_claim_spec(r: ManifestReader, value: Any, path: str) -> ClaimSpec:
    """``validateDeviceClaim``: at most 32 requests with unique names, constraints and
    configs naming requests of the claim, ``matchAttribute`` a fully qualified name."""
    spec = r.mapping(value, path)
    dpath = f"{path}.devices"
    devices = r.mapping(spec.get("devices"), dpath)
    raw = r.seq(devices.get("requests"), f"{dpath}.requests")
    if len(raw) > REQUESTS_MAX:
        r.check([too_many(f"{dpath}.requests", len(raw), REQUESTS_MAX)])
    requests = tuple(_request(r, item, f"{dpath}.requests[{i}]") for i, item in enumerate(raw))
    for i, q in enumerate(requests):
        if any(p.name == q.name for p in requests[:i]):
            r.check([_v.duplicate(f"{dpath}.requests[{i}]", q.name)])
    names = request_names(requests)
    raw = r.seq(devices.get("constraints"), f"{dpath}.constraints")
    if len(raw) > CONSTRAINTS_MAX:
        r.check([too_many(f"{dpath}.constraints", len(raw), CONSTRAINTS_MAX)])
    constraints = []
    for i, item in enumerate(raw):
        cpath = f"{dpath}.constraints[{i}]"
        c = r.mapping(item, cpath)
        gated(r, c, ("distinctAttribute",), cpath)
        listed = r.strings(c.get("requests"), f"{cpath}.requests")
        if len(listed) > REQUESTS_MAX:
            r.check([too_many(f"{cpath}.requests", len(listed), REQUESTS_MAX)])
        for j, ref in enumerate(listed):
            request_ref(r, ref, f"{cpath}.requests[{j}]", names)
            if ref in listed[:j]:
                r.check([_v.duplicate(f"{cpath}.requests[{j}]", ref)])
        attribute = c.get("matchAttribute")
        if attribute is None:
            r.check([_v.required(f"{cpath}.matchAttribute")])
        attribute = r.string(attribute, f"{cpath}.matchAttribute")
        fully_qualified_name(r, attribute, f"{cpath}.matchAttribute")
        constraints.append((frozenset(listed), attribute))
    config = opaque_configs(r, devices.get("config"), f"{dpath}.config", names)
    return ClaimSpec(requests, tuple(constraints), config)


def _allocation(r: ManifestReader, value: Any, path: str,
                names: Mapping[str, frozenset]) -> AllocationResult | None:
    """``validateAllocationResult``: at most 32 results naming requests of the claim, with
    driver, pool and device names; configs with their source; a valid node selector."""
    if value is None:
        return None
    alloc = r.mapping(value, path)
    devices = r.mapping(alloc.get("devices"), f"{path}.devices")
    items = r.seq(devices.get("results"), f"{path}.devices.results")
    if len(items) > RESULTS_MAX:
        r.check([too_many(f"{path}.devices.results", len(items), RESULTS_MAX)])
    results = []
    for i, item in enumerate(items):
        rpath = f"{path}.devices.results[{i}]"
        d = r.mapping(item, rpath)
        gated(r, d, ("tolerations", "bindingConditions", "bindingFailureConditions",
                     "shareID", "consumedCapacity"), rpath)
        request, driver, pool, device = (r.string(d.get(k), f"{rpath}.{k}")
                                         for k in ("request", "driver", "pool", "device"))
        request_ref(r, request, f"{rpath}.request", names)
        driver_name(r, driver, f"{rpath}.driver")
        pool_name(r, pool, f"{rpath}.pool")
        dns_label(r, device, f"{rpath}.device")
        results.append(DeviceResult(request, driver, pool, device,
                                    r.boolean(d.get("adminAccess"), f"{rpath}.adminAccess")))
    configs = r.seq(devices.get("config"), f"{path}.devices.config")
    if len(configs) > 2 * CONFIG_MAX:
        r.check([too_many(f"{path}.devices.config", len(configs), 2 * CONFIG_MAX)])
    for i, item in enumerate(configs):
        source = r.string(r.mapping(item, f"{path}.devices.config[{i}]").get("source"),
                          f"{path}.devices.config[{i}].source")
        if not source:
            r.check([_v.required(f"{path}.devices.config[{i}].source")])
        if source not in ("FromClaim", "FromClass"):
            r.check([_v.not_supported(f"{path}.devices.config[{i}].source", source,
                                      ["FromClaim", "FromClass"])])
    opaque_configs(r, [{k: v for k, v in c.items() if k != "source"} for c in configs],
                   f"{path}.devices.config", names)
    selector = alloc.get("nodeSelector")
    terms = None
    if selector is not None:
        spath = f"{path}.nodeSelector.nodeSelectorTerms"
        raw = r.seq(r.mapping(selector, f"{path}.nodeSelector").get("nodeSelectorTerms"), spath)
        if not raw:
            r.check([_v.required(spath, "must have at least one node selector term")])
        terms = tuple(read_node_selector_term(r, t, f"{spath}[{i}]") for i, t in enumerate(raw))
        for i, term in enumerate(terms):
            r.check(node_selector_term_errors(term, f"{spath}[{i}]", True))
    return AllocationResult(tuple(results), tuple(dict(c) for c in configs),
                            dict(selector) if selector else None, terms)


def _owner(r: ManifestReader, meta: Mapping[str, Any]) -> tuple[str, str, str] | None:
    for i, ref in enumerate(r.seq(meta.get("ownerReferences"), "metadata.ownerReferences")):
        ref = r.mapping(ref, f"metadata.ownerReferences[{i}]")
        if ref.get("controller") is True:
            return (r.string(ref.get("kind"), f"metadata.ownerReferences[{i}].kind"),
                    r.string(ref.get("name"), f"metadata.ownerReferences[{i}].name"),
                    r.string(ref.get("uid"), f"metadata.ownerReferences[{i}].uid"))
    return None


def _reserved_for(r: ManifestReader, value: Any) -> tuple[tuple[str, str, str], ...]:
    """``status.reservedFor``: at most 256 consumers with resource, name and a unique uid."""
    items = r.seq(value, "status.reservedFor")
    if len(items) > RESERVED_FOR_MAX:
        r.check([too_many("status.reservedFor", len(items), RESERVED_FOR_MAX)])
    reserved: list[tuple[str, str, str]] = []
    for i, item in enumerate(items):
        rpath = f"status.reservedFor[{i}]"
        ref = r.mapping(item, rpath)
        entry = tuple(r.string(ref.get(k), f"{rpath}.{k}") for k in ("resource", "name", "uid"))
        r.check([_v.required(f"{rpath}.{k}") for k, text in zip(("resource", "name", "uid"),
                                                                 entry) if not text])
        reserved.append(entry)
    for i, entry in enumerate(reserved):
        if any(e[2] == entry[2] for e in reserved[:i]):
            r.check([_v.duplicate(f"status.reservedFor[{i}]", entry[2])])
    return tuple(reserved)


def read_resource_claim(obj: Mapping[str, Any]) -> ResourceClaim:
    """``ValidateResourceClaim``, with the status rules of ``ValidateResourceClaimStatusUpdate``
    (reservations only when allocated, results naming requests of the claim)."""
    r, meta = read_metadata(obj, "ResourceClaim", namespaced=True)
    spec = read_claim_spec(r, obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    reserved = _reserved_for(r, status.get("reservedFor"))
    gated(r, status, ("devices",), "status")
    if reserved and status.get("allocation") is None:
        r.check([_v.forbidden("status.reservedFor", "may not be specified when `allocated` is "
                                                    "not set")])
    allocation = _allocation(r, status.get("allocation"), "status.allocation",
                             request_names(spec.requests))
    return ResourceClaim(meta["name"], meta.get("namespace") or "default",
                         r.string(meta.get("uid"), "metadata.uid"), spec, allocation, reserved,
                         r.strings(meta.get("finalizers"), "metadata.finalizers"),
                         _owner(r, meta), meta.get("deletionTimestamp") is not None)


def read_resource_claim_template(obj: Mapping[str, Any]) -> ResourceClaimTemplate:
    """``ValidateResourceClaimTemplate``: its ``spec.spec`` as a claim's spec."""
    r, meta = read_metadata(obj, "ResourceClaimTemplate", namespaced=True)
    spec = r.mapping(obj.get("spec"), "spec")
    r.mapping(spec.get("metadata"), "spec.metadata")
    return ResourceClaimTemplate(meta["name"], meta.get("namespace") or "default",
                                 read_claim_spec(r, spec.get("spec"), "spec.spec"))

"""Field rules shared by the resource.k8s.io readers (:mod:`ksched.dra.devices`,
:mod:`ksched.dra.claims`), worded as v1.35's ``pkg/apis/resource/validation``: list sizes
(``validateSlice``/``validateSet``: ``Too many``), driver, pool, device and request names,
qualified attribute names (``validateQualifiedName``), CEL selectors (``validateSelector``) and
opaque configuration (``validateOpaqueConfiguration``).

The readers raise the first error of a field list, naming the object and the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ksched import validation as _v
from ksched.api.reader import ManifestReader, too_long
from ksched.api.volume_sources import csi_driver_name_errors
from ksched.dra.cel import CelSelector, compile_selector
from ksched.errors import InvalidObjectError, UnsupportedFeatureError

__all__ = ["ATTRIBUTES_MAX", "CEL_MAX_LENGTH", "CONFIG_MAX", "CONSTRAINTS_MAX",
           "DEVICES_MAX", "FIRST_AVAILABLE_MAX", "REQUESTS_MAX", "RESERVED_FOR_MAX",
           "RESULTS_MAX", "SELECTORS_MAX", "check_unique", "dns_label", "dns_subdomain",
           "driver_name", "fully_qualified_name", "gated", "opaque_configs", "pool_name",
           "qualified_name", "read_selectors", "request_ref", "too_many"]

#: ``resourceapi`` limits: ``AllocationResultsMaxSize``, ``DeviceRequestsMaxSize``,
#: ``FirstAvailableDeviceRequestMaxSize``, ``ResourceSliceMaxAttributesAndCapacitiesPerDevice``,
#: ``DeviceSelectorsMaxSize``, ``ResourceClaimReservedForMaxSize``, ``DeviceConfigMaxSize``,
#: ``DeviceConstraintsMaxSize``, ``ResourceSliceMaxDevices``, ``CELSelectorExpressionMaxLength``.
RESULTS_MAX = 32
REQUESTS_MAX = 32
FIRST_AVAILABLE_MAX = 8
ATTRIBUTES_MAX = 32
SELECTORS_MAX = 32
RESERVED_FOR_MAX = 256
CONFIG_MAX = 32
CONSTRAINTS_MAX = 32
DEVICES_MAX = 128
CEL_MAX_LENGTH = 10 * 1024
#: ``DeviceMaxIDLength``, ``PoolNameMaxLength``, ``OpaqueParametersMaxLength``.
_ID_MAX = 32
_POOL_MAX = 253
_PARAMETERS_MAX = 10 * 1024
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_C_IDENTIFIER_MSG = ("a valid C identifier must start with alphabetic character or '_', "
                     "followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  "
                     "or 'MY_NAME',  or 'MyName', regex used for validation is "
                     "'[A-Za-z_][A-Za-z0-9_]*')")
REQUEST_REF_MSG = ("must be the name of a request in the claim or the name of a request and a "
                   "subrequest separated by '/'")


def too_many(path: str, count: int, limit: int) -> _v.FieldError:
    """``field.TooMany``."""
    return _v.FieldError("Too many", path, count, f"must have at most {limit} items")


def gated(r: ManifestReader, obj: Mapping[str, Any], fields: Iterable[str], path: str) -> None:
    """Fields of feature gates that are off in v1.35.4: refused, naming the field."""
    for name in fields:
        if obj.get(name) is not None:
            raise UnsupportedFeatureError(f"{r.obj}: {path}.{name}: its feature gate is off in "
                                          "v1.35.4 (not modelled)")


def dns_subdomain(r: ManifestReader, value: str, path: str) -> None:
    """Required, then ``ValidateDNS1123Subdomain``."""
    if not value:
        r.check([_v.required(path)])
    r.check([_v.invalid(path, value, m) for m in _v.is_dns1123_subdomain(value)])


def dns_label(r: ManifestReader, value: str, path: str) -> None:
    """Required, then ``ValidateDNS1123Label`` (device, request and subrequest names)."""
    if not value:
        r.check([_v.required(path)])
    r.check([_v.invalid(path, value, m) for m in _v.is_dns1123_label(value)])


def driver_name(r: ManifestReader, value: str, path: str) -> None:
    """``validateDriverName`` (``ValidateCSIDriverName``)."""
    r.check(csi_driver_name_errors(value, path))


def pool_name(r: ManifestReader, value: str, path: str) -> None:
    """``validatePoolName``: at most 253 bytes, each ``/``-separated part a DNS subdomain."""
    if not value:
        r.check([_v.required(path)])
    if len(value.encode()) > _POOL_MAX:
        r.check([too_long(path, _POOL_MAX)])
    for part in value.split("/"):
        r.check([_v.invalid(path, part, m) for m in _v.is_dns1123_subdomain(part)])


def _c_identifier(r: ManifestReader, ident: str, path: str) -> None:
    if len(ident) > _ID_MAX:
        r.check([too_long(path, _ID_MAX)])
    if not _C_IDENTIFIER.match(ident):
        r.check([_v.invalid(path, ident, _C_IDENTIFIER_MSG)])


def qualified_name(r: ManifestReader, name: str, path: str) -> None:
    """``validateQualifiedName``: ``[domain/]id``, the domain a driver name, the id a C
    identifier of at most 32 characters."""
    parts = name.split("/")
    if len(parts) > 2:
        r.check([_v.invalid(path, name, "must not contain more than one slash")])
    if len(parts) == 1:
        _c_identifier(r, name, path)
        return
    if not parts[0]:
        r.check([_v.invalid(path, "", "the domain must not be empty")])
    driver_name(r, parts[0], path)
    if not parts[1]:
        r.check([_v.invalid(path, "", "the name must not be empty")])
    _c_identifier(r, parts[1], path)


def fully_qualified_name(r: ManifestReader, name: str, path: str) -> None:
    """``validateFullyQualifiedName``: a qualified name with a domain."""
    qualified_name(r, name, path)
    if "/" not in name:
        r.check([_v.invalid(path, name, "a fully qualified name must be a domain and a name "
                                        "separated by a slash")])


def request_ref(r: ManifestReader, name: str, path: str, names: Mapping[str, frozenset]) -> None:
    """``validateRequestNameRef``: a request, or a request and a subrequest, of the claim
    (``names``: request name -> its subrequest names)."""
    segments = name.split("/")
    if len(segments) <= 2:
        for segment in segments:
            dns_label(r, segment, path)
        if segments[0] in names and (len(segments) == 1 or segments[1] in names[segments[0]]):
            return
    r.check([_v.invalid(path, name, REQUEST_REF_MSG)])


def read_selectors(r: ManifestReader, value: Any, path: str) -> tuple[CelSelector, ...]:
    """``validateSelectorSlice``: at most 32, each a CEL expression that compiles in the DRA
    environment (a compile error is refused naming the field, as the API server does)."""
    out = []
    items = r.seq(value, path)
    if len(items) > SELECTORS_MAX:
        r.check([too_many(path, len(items), SELECTORS_MAX)])
    for i, item in enumerate(items):
        spath = f"{path}[{i}]"
        cel = r.mapping(item, spath).get("cel")
        if cel is None:
            r.check([_v.required(f"{spath}.cel")])
        expression = r.string(r.mapping(cel, f"{spath}.cel").get("expression"),
                              f"{spath}.cel.expression")
        if len(expression) > CEL_MAX_LENGTH:
            r.check([too_long(f"{spath}.cel.expression", CEL_MAX_LENGTH)])
        selector = compile_selector(expression)
        if selector.error is not None:
            r.check([_v.invalid(f"{spath}.cel.expression", expression, selector.error)])
        out.append(selector)
    return tuple(out)


def opaque_configs(r: ManifestReader, value: Any, path: str,
                   names: Mapping[str, frozenset] | None) -> tuple[dict, ...]:
    """Class or claim ``config`` entries (``validateDeviceConfiguration``; the requests they
    name checked against ``names`` for a claim), kept in wire form."""
    out = []
    items = r.seq(value, path)
    if len(items) > CONFIG_MAX:
        r.check([too_many(path, len(items), CONFIG_MAX)])
    for i, item in enumerate(items):
        cpath = f"{path}[{i}]"
        entry = r.mapping(item, cpath)
        if names is not None:
            listed = r.strings(entry.get("requests"), f"{cpath}.requests")
            for j, name in enumerate(listed):
                request_ref(r, name, f"{cpath}.requests[{j}]", names)
                if name in listed[:j]:
                    r.check([_v.duplicate(f"{cpath}.requests[{j}]", name)])
        if entry.get("opaque") is None:
            r.check([_v.required(f"{cpath}.opaque")])
        opaque = r.mapping(entry.get("opaque"), f"{cpath}.opaque")
        driver_name(r, r.string(opaque.get("driver"), f"{cpath}.opaque.driver"),
                    f"{cpath}.opaque.driver")
        parameters = opaque.get("parameters")
        ppath = f"{cpath}.opaque.parameters"
        if parameters is None:
            r.check([_v.required(ppath)])
        if not isinstance(parameters, Mapping):
            r.check([_v.invalid(ppath, "<value omitted>", "must be a valid JSON object")])
        if len(repr(parameters)) > _PARAMETERS_MAX and len(_json(parameters)) > _PARAMETERS_MAX:
            r.check([too_long(ppath, _PARAMETERS_MAX)])
        out.append(dict(entry))
    return tuple(out)


def _json(value: Any) -> bytes:
    import json

    return json.dumps(value, separators=(",", ":")).encode()


def check_unique(kind: str, items: Iterable[Any], key: Any) -> None:
    """A name given twice is refused."""
    seen = set()
    for item in items:
        k = key(item)
        if k in seen:
            raise InvalidObjectError(f"{kind} {k if isinstance(k, str) else '/'.join(k)}",
                                     "metadata.name", "Duplicate value: given twice")
        seen.add(k)

"""resource.k8s.io/v1 DeviceClass and ResourceSlice, read and checked by the rules of v1.35's
``pkg/apis/resource/validation`` (``ValidateDeviceClass``, ``ValidateResourceSlice``): names,
selectors that compile, opaque configs, driver and pool names, generation and slice count,
exactly one node selection, devices with unique DNS-label names, qualified attribute names,
typed attribute values (versions semver) and capacities. Fields of alpha gates that v1.35.4
has off (device taints, consumable capacity, partitionable devices, binding conditions) are
refused as unsupported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from ksched import validation as _v
from ksched.api import NodeSelectorTerm
from ksched.api.affinity import read_node_selector_term
from ksched.api.pod_validation import node_selector_term_errors
from ksched.api.reader import ManifestReader, read_metadata, too_long
from ksched.dra.cel import CelSelector
from ksched.dra.fields import (
    ATTRIBUTES_MAX,
    DEVICES_MAX,
    dns_label,
    driver_name,
    gated,
    opaque_configs,
    pool_name,
    qualified_name,
    read_selectors,
    too_many,
)
from ksched.quantity import QuantityError, parse_quantity

__all__ = ["Device", "DeviceClass", "ResourceSlice", "read_device_class", "read_resource_slice"]

_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
                     r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
                     r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")
#: ``DeviceAttributeMaxValueLength``.
_VALUE_MAX = 64


@attrs.frozen(eq=False)
class DeviceClass:
    """A DeviceClass: its selectors (all must match) and opaque config, in wire form."""

    name: str
    uid: str = ""
    selectors: tuple[CelSelector, ...] = ()
    config: tuple[dict, ...] = ()


def read_device_class(obj: Mapping[str, Any]) -> DeviceClass:
    """``ValidateDeviceClass``: a DNS-subdomain name, compiled selectors, opaque configs."""
    r, meta = read_metadata(obj, "DeviceClass", namespaced=False)
    spec = r.mapping(obj.get("spec"), "spec")
    gated(r, spec, ("extendedResourceName",), "spec")
    return DeviceClass(meta["name"], r.string(meta.get("uid"), "metadata.uid"),
                       read_selectors(r, spec.get("selectors"), "spec.selectors"),
                       opaque_configs(r, spec.get("config"), "spec.config", None))


@attrs.frozen(eq=False)
class Device:
    """One device of a slice. ``attributes`` maps a name (bare: the driver's domain) to a
    ``(type, value)`` pair (``"string"``, ``"int"``, ``"bool"``, ``"version"``);
    ``capacity`` maps a name to its quantity, as written."""

    name: str
    attributes: Mapping[str, tuple[str, Any]] = attrs.field(factory=dict)
    capacity: Mapping[str, str] = attrs.field(factory=dict)
    #: Selector verdicts, per compiled selector (filled by :meth:`matches`).
    _verdicts: dict = attrs.field(factory=dict, repr=False)

    def matches(self, selector: CelSelector, driver: str) -> bool:
        """The selector's verdict on this device (evaluated once; a runtime error raises
        :class:`~ksched.dra.cel.CelRuntimeError` every time)."""
        found = self._verdicts.get(selector)
        if found is None:
            found = self._verdicts[selector] = selector.evaluate(driver, self.attributes,
                                                                 self.capacity)
        if isinstance(found, Exception):
            raise found
        return found

    def attribute(self, qualified: str, driver: str) -> tuple[str, Any] | None:
        """``lookupAttribute``: by the full name, else the bare ID when the domain is the
        driver's."""
        found = self.attributes.get(qualified)
        if found is not None:
            return found
        domain, sep, ident = qualified.partition("/")
        if not sep or domain != driver:
            return None
        return self.attributes.get(ident)


@attrs.frozen(eq=False)
class ResourceSlice:
    """A ResourceSlice: its pool and the node(s) it serves (exactly one of ``node_name``,
    ``all_nodes``, ``node_selector``)."""

    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    devices: tuple[Device, ...] = ()
    node_name: str = ""
    all_nodes: bool = False
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    #: The selector in wire form (for allocation results).
    node_selector_wire: dict | None = None



def _attribute(r: ManifestReader, value: Any, path: str) -> tuple[str, Any]:
    """``validateDeviceAttribute``: exactly one typed value; strings and versions at most 64
    bytes, versions semver."""
    attr = r.mapping(value, path)
    found = [k for k in ("int", "bool", "string", "version") if attr.get(k) is not None]
    gated(r, attr, ("ints", "bools", "strings", "versions"), path)
    if len(found) != 1:
        r.check([_v.invalid(path, dict(attr) if found else "",
                            "exactly one value must be specified")])
    kind = found[0]
    raw = attr[kind]
    if kind == "int":
        return kind, r.integer(raw, f"{path}.int")
    if kind == "bool":
        return kind, r.boolean(raw, f"{path}.bool")
    text = r.string(raw, f"{path}.{kind}")
    if kind == "version" and not _SEMVER.match(text):
        r.check([_v.invalid(f"{path}.version", text,
                            "must be a string compatible with semver.org spec 2.0.0")])
    if len(text.encode()) > _VALUE_MAX:
        r.check([too_long(f"{path}.{kind}", _VALUE_MAX)])
    return kind, text


def _device(r: ManifestReader, value: Any, path: str) -> Device:
    """``validateDevice``."""
    dev = r.mapping(value, path)
    gated(r, dev, ("consumesCounters", "nodeName", "nodeSelector", "allNodes", "taints",
                   "bindsToNode", "bindingConditions", "bindingFailureConditions",
                   "allowMultipleAllocations"), path)
    name = r.string(dev.get("name"), f"{path}.name")
    dns_label(r, name, f"{path}.name")
    raw_attributes = r.mapping(dev.get("attributes"), f"{path}.attributes")
    raw_capacity = r.mapping(dev.get("capacity"), f"{path}.capacity")
    total = len(raw_attributes) + len(raw_capacity)
    if total > ATTRIBUTES_MAX:
        r.check([_v.invalid(path, total, "the total number of attributes and capacities must "
                                         f"not exceed {ATTRIBUTES_MAX}")])
    attributes, capacity = {}, {}
    for key, item in raw_attributes.items():
        qualified_name(r, r.key(key, f"{path}.attributes"), f"{path}.attributes")
        attributes[key] = _attribute(r, item, f"{path}.attributes[{key}]")
    for key, item in raw_capacity.items():
        cpath = f"{path}.capacity[{key}]"
        qualified_name(r, r.key(key, f"{path}.capacity"), f"{path}.capacity")
        entry = r.mapping(item, cpath)
        gated(r, entry, ("requestPolicy",), cpath)
        text = r.string(entry.get("value"), f"{cpath}.value")
        try:
            parse_quantity(text)
        except (QuantityError, ValueError):
            r.check([_v.invalid(f"{cpath}.value", text, "quantities must match the regular "
                                "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")])
        capacity[key] = text
    return Device(name, attributes, capacity)


def _node_selection(r: ManifestReader, spec: Mapping[str, Any]
                    ) -> tuple[str, bool, tuple[NodeSelectorTerm, ...] | None]:
    """Exactly one of ``nodeName`` (a node name), ``nodeSelector`` (one valid term) and
    ``allNodes`` (true)."""
    chosen = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        node_name = r.string(node_name, "spec.nodeName")
        if not node_name:
            r.check([_v.invalid("spec.nodeName", "", "must be either unset or set to a "
                                                     "non-empty string")])
        chosen.append("`nodeName`")
        r.check([_v.invalid("spec.nodeName", node_name, m)
                 for m in _v.is_dns1123_subdomain(node_name)])
    terms = None
    selector = spec.get("nodeSelector")
    if selector is not None:
        chosen.append("`nodeSelector`")
        path = "spec.nodeSelector.nodeSelectorTerms"
        raw = r.seq(r.mapping(selector, "spec.nodeSelector").get("nodeSelectorTerms"), path)
        if not raw:
            r.check([_v.required(path, "must have at least one node selector term")])
        terms = tuple(read_node_selector_term(r, t, f"{path}[{i}]") for i, t in enumerate(raw))
        for i, term in enumerate(terms):
            r.check(node_selector_term_errors(term, f"{path}[{i}]", True))
        if len(raw) != 1:
            r.check([_v.invalid(path, list(raw), "must have exactly one node selector term")])
    all_nodes = spec.get("allNodes")
    if all_nodes is not None:
        if not r.boolean(all_nodes, "spec.allNodes"):
            r.check([_v.invalid("spec.allNodes", False, "must be either unset or set to true")])
        chosen.append("`allNodes`")
    detail = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` " \
             "is required"
    if not chosen:
        r.check([_v.required("spec", detail)])
    if len(chosen) > 1:
        r.check([_v.invalid("spec", "{" + ", ".join(chosen) + "}",
                            f"{detail}, but multiple fields are set")])
    return node_name or "", all_nodes is not None, terms


def read_resource_slice(obj: Mapping[str, Any]) -> ResourceSlice:
    """``ValidateResourceSlice``: driver and pool names, generation and slice count, exactly
    one of ``nodeName``, ``nodeSelector`` (one term) and ``allNodes``, at most 128 devices
    with unique DNS-label names and typed attributes."""
    r, meta = read_metadata(obj, "ResourceSlice", namespaced=False)
    spec = r.mapping(obj.get("spec"), "spec")
    gated(r, spec, ("perDeviceNodeSelection", "sharedCounters"), "spec")
    driver = r.string(spec.get("driver"), "spec.driver")
    driver_name(r, driver, "spec.driver")
    pool = r.mapping(spec.get("pool"), "spec.pool")
    name = r.string(pool.get("name"), "spec.pool.name")
    pool_name(r, name, "spec.pool.name")
    count = r.integer(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount")
    if count <= 0:
        r.check([_v.invalid("spec.pool.resourceSliceCount", count, "must be greater than zero")])
    generation = r.integer(pool.get("generation"), "spec.pool.generation")
    if generation < 0:
        r.check([_v.invalid("spec.pool.generation", generation,
                            "must be greater than or equal to zero")])
    node_name, all_nodes, terms = _node_selection(r, spec)
    items = r.seq(spec.get("devices"), "spec.devices")
    if len(items) > DEVICES_MAX:
        r.check([too_many("spec.devices", len(items), DEVICES_MAX)])
    devices = tuple(_device(r, item, f"spec.devices[{i}]") for i, item in enumerate(items))
    seen: set[str] = set()
    for i, device in enumerate(devices):
        if device.name in seen:
            r.check([_v.duplicate(f"spec.devices[{i}]", device.name)])
        seen.add(device.name)
    selector = spec.get("nodeSelector")
    return ResourceSlice(meta["name"], driver, name, generation, count, devices, node_name,
                         all_nodes, terms, dict(selector) if selector is not None else None)

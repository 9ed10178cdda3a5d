"""kubernetes-client objects as the wire format: model objects (``V1Pod``, ``V1PersistentVolume``,
...) through their ``attribute_map`` (``ApiClient.sanitize_for_serialization``'s walk), and the
snake_case dicts their ``to_dict()`` writes, renamed through the models' ``openapi_types``."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from ksched.errors import InvalidObjectError

__all__ = ["is_client_model", "is_snake_case", "snake_to_wire", "to_wire", "wire_form"]


def is_client_model(obj: Any) -> bool:
    """Whether ``obj`` is a kubernetes-client model (``V1Pod``, ...)."""
    return hasattr(obj, "openapi_types") and hasattr(obj, "attribute_map")


def to_wire(obj: Any) -> Any:
    """A kubernetes-client model (or anything holding them) as wire-format JSON values."""
    if is_client_model(obj):
        out = {}
        for attr, wire_name in obj.attribute_map.items():
            value = getattr(obj, attr)
            if value is not None:
                out[wire_name] = to_wire(value)
        return out
    if isinstance(obj, Mapping):
        return {k: to_wire(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_wire(v) for v in obj]
    if isinstance(obj, datetime.datetime | datetime.date):
        return obj.isoformat()
    return obj


def is_snake_case(obj: Mapping[str, Any]) -> bool:
    """Whether an object dict is in the snake_case form the kubernetes client's ``to_dict()``
    writes: a key with ``_`` at the top, in metadata, spec, status or a container (wire
    field names never have one; free-form maps such as labels are not looked at)."""
    levels = [obj] + [obj.get(part) for part in ("metadata", "spec", "status")]
    spec = obj.get("spec")
    if isinstance(spec, Mapping):
        for field in ("containers", "initContainers", "init_containers"):
            items = spec.get(field)
            if isinstance(items, list):
                levels += items
    return any(isinstance(key, str) and "_" in key
               for level in levels if isinstance(level, Mapping) for key in level)


_LIST_TYPE = re.compile(r"(?:List|list)\[(?P<item>.+)\]\Z")
_DICT_TYPE = re.compile(r"(?:Dict\[|dict\()str, (?P<item>.+)[\])]\Z")


def snake_to_wire(obj: Mapping[str, Any], model: str, label: str) -> dict[str, Any]:
    """The wire (camelCase) form of a snake_case dict of kubernetes-client model ``model``.

    Walks the client's ``openapi_types`` / ``attribute_map`` from ``model`` down: field names
    are renamed, the keys of free-form maps (labels, nodeSelector, requests) are left as they
    are, ``None`` values (unset fields) dropped. Needs the kubernetes package.
    """
    try:
        from kubernetes.client import models
    except ImportError:
        raise InvalidObjectError(label, "", (
            "a snake_case dict (the kubernetes client's to_dict()) needs the kubernetes "
            "package to be read: pip install kubernetes, or pass the camelCase wire form "
            "(ApiClient().sanitize_for_serialization(obj))")) from None
    return _to_wire_as(obj, model, models)


def _to_wire_as(value: Any, type_name: str, models: Any) -> Any:
    """``value`` as the wire form of the client type ``type_name``."""
    match = _LIST_TYPE.match(type_name)
    if match and isinstance(value, list | tuple):
        return [_to_wire_as(v, match["item"], models) for v in value]
    match = _DICT_TYPE.match(type_name)
    if match and isinstance(value, Mapping):
        return {k: _to_wire_as(v, match["item"], models) for k, v in value.items()}
    cls = getattr(models, type_name, None)
    if cls is None or not isinstance(value, Mapping) or not hasattr(cls, "openapi_types"):
        return to_wire(value)
    types, wire_names = cls.openapi_types, cls.attribute_map
    attr_of_wire = {wire: attr for attr, wire in wire_names.items()}
    out = {}
    for key, item in value.items():
        if item is None:
            continue
        attr = key if key in types else attr_of_wire.get(key)
        if attr is None:  # a field the client does not know: left for the reader to judge
            out[key] = to_wire(item)
        else:
            out[wire_names[attr]] = _to_wire_as(item, types[attr], models)
    return out


def wire_form(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    """An object dict of ``kind`` in the wire form: itself, or the wire form of a snake_case
    dict (read as the client model ``V1<kind>``)."""
    if not is_snake_case(obj):
        return obj
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name, namespace = meta.get("name"), meta.get("namespace")
    shown = name if isinstance(name, str) and name else "<unnamed>"
    if isinstance(namespace, str) and namespace:
        shown = f"{namespace}/{shown}"
    return snake_to_wire(obj, f"V1{kind}", f"{kind.lower()} {shown}")

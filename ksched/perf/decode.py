"""Objects decoded as Go's ``encoding/json`` decodes them into Kubernetes types.

scheduler_perf reads a rendered template with ``sigs.k8s.io/yaml``: YAML to JSON, then
``encoding/json``, which matches a key to a struct field case-insensitively when no field has
exactly that name (a template spells ``NodeAffinityPolicy`` and gets
``nodeAffinityPolicy``). :func:`canonical_fields` renames such keys to the API's own spelling,
type by type, from the field lists in ``ksched/api/schema.json`` (Kubernetes v1.35's
OpenAPI), so that the strict reader afterwards sees the fields the API server saw. A key that
matches no field in any case stays as it is (the strict reader refuses it).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ksched.api.schema import schema_data

__all__ = ["canonical_fields"]


class _Type:
    """One API type: the exact field names, the folded ones, and each object field's type
    with its shape (``""`` one object, ``"["`` a list, ``"{"`` a map of them)."""

    __slots__ = ("exact", "folded", "nested")

    def __init__(self) -> None:
        self.exact: frozenset[str] = frozenset()
        self.folded: dict[str, str] = {}
        self.nested: dict[str, tuple[_Type, str]] = {}


@functools.cache
def _kinds() -> dict[str, _Type]:
    data = schema_data()
    types = {name: _Type() for name in data["types"]}
    for name, fields in data["types"].items():
        t = types[name]
        t.exact = frozenset(fields)
        for field, child in fields.items():
            t.folded.setdefault(field.lower(), field)
            if child:
                shape = child[0] if child[0] in "[{" else ""
                t.nested[field] = (types[child.lstrip("[{")], shape)
    return {kind: types[name] for kind, name in data["kinds"].items()}


def canonical_fields(obj: Mapping[str, Any], kind: str) -> Any:
    """``obj`` (a manifest of ``kind``) with each key that matches a field of its type only
    case-insensitively renamed to the field's name, recursively. Kinds without a schema are
    returned unchanged.

    Examples
    --------
    >>> canonical_fields({"spec": {"topologySpreadConstraints": [
    ...     {"NodeAffinityPolicy": "Honor"}]}}, "Pod")["spec"]
    {'topologySpreadConstraints': [{'nodeAffinityPolicy': 'Honor'}]}
    """
    t = _kinds().get(kind)
    return obj if t is None else _canonical(obj, t)


def _canonical(value: Mapping[str, Any], t: _Type) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = key if key in t.exact else t.folded.get(key.lower(), key)
        child = t.nested.get(name)
        if child is not None:
            item = _nested(item, *child)
        out[name] = item
    return out


def _nested(item: Any, t: _Type, shape: str) -> Any:
    if shape == "" and isinstance(item, Mapping):
        return _canonical(item, t)
    if shape == "[" and isinstance(item, list):
        return [_canonical(x, t) if isinstance(x, Mapping) else x for x in item]
    if shape == "{" and isinstance(item, Mapping):
        return {k: _canonical(x, t) if isinstance(x, Mapping) else x for k, x in item.items()}
    return item

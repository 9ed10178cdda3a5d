"""Unknown fields, refused as kubectl refuses them (``kubectl apply`` validates strictly by
default: the API server's strict decoding, ``sigs.k8s.io/json``): a field name that the
object's API type does not have, compared case-sensitively, is an error naming the object and
the field's full path in kubectl's words::

    pod default/web: strict decoding error: unknown field
    "spec.topologySpreadConstraints[0].NodeAffinityPolicy"

Without this a misspelt or wrongly capitalised field would silently change the answer (that
spread constraint would read as ``Ignore``). Every field of the API is known, whether ksched
reads it or not (``managedFields``, probes, volumes of every kind, ``status.conditions``...);
inside maps (labels, annotations, resource lists) and free-form values (``RawExtension``,
``fieldsV1``, ``IntOrString``) nothing is checked.

The field names come from ``schema.json`` beside this module, written by
:mod:`ksched.api.schema_gen` from the kubernetes Python client 35.0.0 (Kubernetes v1.35's
OpenAPI), so ksched does not need that package at run time. A field added after v1.35 is
unknown here as it is to a v1.35 API server.

``strict_fields(False)`` (``load_cluster(..., strict_fields=False)``, the CLI's
``--no-strict-fields``) turns the error into a :class:`UnknownFieldWarning` and reads the
object, its unknown fields ignored, as older ksched releases did.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import warnings
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any

from ksched.errors import InvalidObjectError, KschedWarning

__all__ = ["NAMESPACED", "SCHEMA_CLIENT", "FieldChecker", "UnknownFieldError",
           "UnknownFieldWarning", "check_fields", "has_schema", "schema_data", "strict_fields",
           "unknown_fields"]


class UnknownFieldError(InvalidObjectError):
    """An object has fields its API type does not have; ``fields`` lists their paths."""

    def __init__(self, obj: str, fields: list[str]) -> None:
        self.fields = tuple(fields)
        super().__init__(obj, "", _problem(fields) + _HINT)
        self.path = fields[0]


class UnknownFieldWarning(KschedWarning):
    """An object's unknown fields were ignored (``strict_fields(False)``)."""


def _problem(fields: list[str]) -> str:
    return "strict decoding error: " + ", ".join(f'unknown field "{f}"' for f in fields)


_HINT = " (strict=False, or --no-strict-fields, reads it with a warning)"

#: Whether unknown fields are refused (True) or only warned about (False).
_STRICT: contextvars.ContextVar[bool] = contextvars.ContextVar("ksched_strict_fields",
                                                               default=True)


@contextlib.contextmanager
def strict_fields(strict: bool = True) -> Iterator[None]:
    """Within the block, objects read with unknown fields are refused (``strict``, the
    default) or read with an :class:`UnknownFieldWarning` (``strict=False``)."""
    token = _STRICT.set(bool(strict))
    try:
        yield
    finally:
        _STRICT.reset(token)


# ----------------------------------------------------------------------------- the schema

_OBJECT, _LIST, _MAP = 0, 1, 2


class _Type:
    """One API type: its field names, and for the fields holding API objects, the child
    type and whether the field holds one object, a list or a map of them."""

    __slots__ = ("allowed", "nested")

    def __init__(self) -> None:
        self.allowed: frozenset[str] = frozenset()
        self.nested: dict[str, tuple[_Type, int]] = {}


@functools.cache
def schema_data() -> dict[str, Any]:
    """``schema.json`` as written by :mod:`ksched.api.schema_gen`: ``client``, ``kinds``
    (kind -> type) and ``types`` (type -> {field: child}); read once."""
    return json.loads(resources.files("ksched.api").joinpath("schema.json").read_text())


def _load() -> tuple[str, dict[str, _Type]]:
    data = schema_data()
    types = {name: _Type() for name in data["types"]}
    for name, fields in data["types"].items():
        t = types[name]
        t.allowed = frozenset(fields)
        for field, child in fields.items():
            if child:
                shape = {"[": _LIST, "{": _MAP}.get(child[0], _OBJECT)
                t.nested[field] = (types[child.lstrip("[{")], shape)
    return data["client"], {kind: types[name] for kind, name in data["kinds"].items()}


#: The kubernetes client version the schema was generated from; the type of each kind.
SCHEMA_CLIENT, _KINDS = _load()


# ----------------------------------------------------------------------------- checking


def _clean(value: Mapping[str, Any], t: _Type) -> bool:
    """Whether ``value`` (an object of type ``t``) and every object in it have only known
    fields (the fast test: no paths are built)."""
    if not t.allowed.issuperset(value):
        return False
    nested = t.nested
    for key in nested.keys() & value.keys():
        child, shape = nested[key]
        item = value[key]
        if shape == _OBJECT:
            if isinstance(item, Mapping) and not _clean(item, child):
                return False
        elif shape == _LIST:
            if type(item) is list or isinstance(item, tuple):
                for x in item:
                    if isinstance(x, Mapping) and not _clean(x, child):
                        return False
        elif isinstance(item, Mapping):
            for x in item.values():
                if isinstance(x, Mapping) and not _clean(x, child):
                    return False
    return True


def _paths(value: Mapping[str, Any], t: _Type, path: str, out: list[str]) -> None:
    """Append the path of every unknown field of ``value`` (type ``t``) to ``out``."""
    nested = t.nested
    for key, item in value.items():
        here = f"{path}{key}"
        if key not in t.allowed:
            out.append(here)
            continue
        child, shape = nested.get(key, (None, None))
        if child is None:
            continue
        if shape == _OBJECT and isinstance(item, Mapping):
            _paths(item, child, f"{here}.", out)
        elif shape == _LIST and isinstance(item, list | tuple):
            for i, x in enumerate(item):
                if isinstance(x, Mapping):
                    _paths(x, child, f"{here}[{i}].", out)
        elif shape == _MAP and isinstance(item, Mapping):
            for k, x in item.items():
                if isinstance(x, Mapping):
                    _paths(x, child, f"{here}.{k}.", out)


def unknown_fields(obj: Mapping[str, Any], kind: str) -> list[str]:
    """The paths of the fields of ``obj`` (a manifest of ``kind``) that its API type does
    not have, in the manifest's order; ``[]`` for a kind ksched has no schema of."""
    t = _KINDS.get(kind)
    if t is None or _clean(obj, t):
        return []
    out: list[str] = []
    _paths(obj, t, "", out)
    return out


#: The kinds whose objects live in a namespace (errors name them ``namespace/name``).
NAMESPACED = frozenset({"Pod", "Service", "ReplicationController", "ReplicaSet",
                        "StatefulSet", "Deployment", "DaemonSet", "Job",
                        "PodDisruptionBudget", "PersistentVolumeClaim", "CSIStorageCapacity"})


def check_fields(obj: Mapping[str, Any], kind: str, owner: str | None = None) -> bool:
    """Refuse ``obj`` (a ``kind`` manifest, named ``owner`` in errors) when it has unknown
    fields; under ``strict_fields(False)`` warn instead. Returns whether it had none."""
    t = _KINDS.get(kind)
    if t is None or _clean(obj, t):
        return True
    fields = unknown_fields(obj, kind)
    if owner is None:
        from ksched.api.reader import object_label

        owner = object_label(obj, kind, kind in NAMESPACED)
    if _STRICT.get():
        raise UnknownFieldError(owner, fields)
    warnings.warn(f"{owner}: {_problem(fields)} (ignored)", UnknownFieldWarning, stacklevel=3)
    return False


class FieldChecker:
    """:func:`check_fields` over the objects of one load, one object per skeleton (the hash
    of its keys and brackets, :mod:`ksched.kernels.json_skeleton`) and kind checked: objects
    of one shape have the same fields."""

    __slots__ = ("_clean",)

    def __init__(self) -> None:
        self._clean: set[tuple[str, bytes]] = set()

    def check(self, obj: Mapping[str, Any], skeleton: bytes | None = None) -> None:
        kind = obj.get("kind")
        if type(kind) is not str or kind not in _KINDS:
            return
        if skeleton is None:
            check_fields(obj, kind)
        elif (kind, skeleton) not in self._clean and check_fields(obj, kind):
            self._clean.add((kind, skeleton))

    @staticmethod
    def check_list(obj: Mapping[str, Any]) -> bool:
        """Whether a List's own fields are all known (items not looked at)."""
        kind = obj.get("kind")
        return not unknown_fields(obj, kind if kind in _KINDS else "List")


def has_schema(kind: str) -> bool:
    """Whether ksched knows the fields of ``kind``."""
    return kind in _KINDS

"""One pod or node from what a user passes: a record as it is, a wire dict (camelCase, or the
snake_case form of the kubernetes client's ``to_dict()``) read by the record's
``from_manifest``, or a kubernetes-client model (``V1Pod``, ``V1Node``); anything else refused
with an :class:`~ksched.errors.ArgumentError` naming the argument.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import attrs

from ksched.api import Node, Pod
from ksched.api.schema import check_fields
from ksched.client_wire import is_client_model, is_snake_case, snake_to_wire, to_wire
from ksched.constants import LABEL_HOSTNAME
from ksched.errors import ArgumentError
from ksched.validation import bad_value

__all__ = ["POD_HINT", "as_node", "as_pod", "described", "is_snake_case", "node_from_template",
           "snake_to_wire"]

POD_HINT = "a Pod, a Pod manifest dict or a kubernetes-client V1Pod"


def as_pod(obj: Any, where: str = "pod") -> Pod:
    """One pod from a record, a wire dict (camelCase, or the client's snake_case
    ``to_dict()``) or a kubernetes-client ``V1Pod``; ``where`` names the argument in errors.
    Unknown fields are refused (or warned about) as the file readers do
    (:func:`~ksched.api.schema.check_fields`, under :func:`~ksched.api.schema.strict_fields`).

    Examples
    --------
    >>> as_pod({"metadata": {"name": "web"}, "spec": {"containers": [{"name": "c"}]}}).key
    'default/web'
    """
    if isinstance(obj, Pod):
        return obj
    if isinstance(obj, Mapping):
        return _pod_of_dict(obj, where)
    if is_client_model(obj):
        if type(obj).__name__ != "V1Pod":
            raise ArgumentError(f"{where}: expected a Pod, got a kubernetes-client "
                                f"{type(obj).__name__}")
        return _read(Pod.from_manifest, to_wire(obj), "Pod")
    raise ArgumentError(f"{where}: expected {POD_HINT}, got {described(obj)}")


def as_node(obj: Any, where: str = "node") -> Node:
    """One node from a record, a v1 Node manifest (its ``kind`` may be left out) or a
    kubernetes-client ``V1Node``; ``where`` names the argument in errors. Unknown fields:
    as :func:`as_pod`'s."""
    if isinstance(obj, Node):
        return obj
    if is_client_model(obj):
        obj = to_wire(obj)
    if isinstance(obj, Mapping) and obj.get("kind", "Node") == "Node":
        return _read(Node.from_manifest, {"kind": "Node", "apiVersion": "v1", **obj}, "Node")
    raise ArgumentError(f"{where}: expected a Node record or a v1 Node manifest, "
                        f"got {described(obj)}")


def node_from_template(template: Node, name: str) -> Node:
    """A new node made from ``template``: its labels, taints and allocatable, named ``name``
    with the hostname label the kubelet gives it."""
    return attrs.evolve(template, name=name, labels={**template.labels, LABEL_HOSTNAME: name})


def _pod_of_dict(obj: Mapping[str, Any], where: str) -> Pod:
    kind = obj.get("kind")
    if kind is not None and kind != "Pod":
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        named = f" {bad_value(name)}" if isinstance(name, str) else ""
        shown = f"a {kind}{named}" if isinstance(kind, str) else f"kind {described(kind)}"
        raise ArgumentError(f"{where}: expected a Pod, got {shown}")
    if is_snake_case(obj):
        obj = snake_to_wire(obj, "V1Pod", _object_label(obj))
    return _read(Pod.from_manifest, obj, "Pod")


def _read(read: Any, obj: Mapping[str, Any], kind: str) -> Any:
    """``read(obj)`` once ``obj`` (a ``kind`` manifest) passed the unknown-field check."""
    if isinstance(obj, Mapping):  # not a mapping: ``read`` refuses it, naming the object
        check_fields(obj, kind)
    return read(obj)


def _object_label(obj: Mapping[str, Any]) -> str:
    """``pod <namespace>/<name>`` as the manifest reader names a pod."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name")
    return f"pod {meta.get('namespace') or 'default'}/{name if isinstance(name, str) else ''}"


def described(value: Any) -> str:
    """How an unexpected argument is named in an error: its type, and short values."""
    kind = type(value).__name__
    if value is None:
        return "None"
    if isinstance(value, bool | numbers.Number):
        return f"{kind} {value!r}"
    if isinstance(value, str):
        return f"str {value[:80]!r}"
    return kind

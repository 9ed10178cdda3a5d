"""One way in: whatever a user passes as pods, a cluster or an option, checked and turned into
records.

Every public function that takes pods (``schedule_batch``, ``explain``, the simulator's
events, ...) calls :func:`as_pods` / :func:`as_pod`; every one that takes a cluster calls
:func:`as_cluster`; options go through the ``check_*`` functions. Accepted as pods: ``Pod``
records, Kubernetes dicts (the camelCase wire form, or the snake_case form of the kubernetes
client's ``to_dict()``), kubernetes-client objects (``V1Pod``, ``V1PodList``), ``v1 List`` /
``PodList`` dicts, a path (read as :func:`ksched.load_pods` reads it: the pending pods), a
single pod or any iterable of these. Anything else is refused with a
:class:`~ksched.errors.KschedError` naming the argument, never a raw Python error.
"""

from __future__ import annotations

import numbers
import operator
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.api import Node, Pod
from ksched.constants import LABEL_HOSTNAME
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.framework.tiebreak import TIE_BREAKS
from ksched.io import is_client_model, iter_manifests, to_wire
from ksched.profile import Profile
from ksched.state import ClusterState, check_unique, pod_specs
from ksched.validation import bad_value, go_quote, invalid, not_supported

_POD_HINT = "a Pod, a Pod manifest dict or a kubernetes-client V1Pod"
_SOURCE_HINT = ("a Pod, a Pod manifest dict, a kubernetes-client V1Pod, a path or an iterable "
                "of these")


# =========================================================================== pods


def as_pod(obj: Any, where: str = "pod") -> Pod:
    """One pod from a record, a wire dict (camelCase, or the client's snake_case
    ``to_dict()``) or a kubernetes-client ``V1Pod``; ``where`` names the argument in errors.

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
        return Pod.from_manifest(to_wire(obj))
    raise ArgumentError(f"{where}: expected {_POD_HINT}, got {_described(obj)}")


def as_node(obj: Any, where: str = "node") -> Node:
    """One node from a record, a v1 Node manifest (its ``kind`` may be left out) or a
    kubernetes-client ``V1Node``; ``where`` names the argument in errors."""
    if isinstance(obj, Node):
        return obj
    if is_client_model(obj):
        obj = to_wire(obj)
    if isinstance(obj, Mapping) and obj.get("kind", "Node") == "Node":
        return Node.from_manifest({"kind": "Node", "apiVersion": "v1", **obj})
    raise ArgumentError(f"{where}: expected a Node record or a v1 Node manifest, "
                        f"got {_described(obj)}")


def node_from_template(template: Node, name: str) -> Node:
    """A new node made from ``template``: its labels, taints and allocatable, named ``name``
    with the hostname label the kubelet gives it."""
    return attrs.evolve(template, name=name, labels={**template.labels, LABEL_HOSTNAME: name})


def as_pods(source: Any, where: str = "pods") -> tuple[Pod, ...]:
    """The pods of ``source``, in order (a single pod gives a 1-tuple); two with one
    namespace/name are refused (``metadata.name: Duplicate value``).

    A tuple or list of ``Pod`` records is taken as it is (one ``isinstance`` per pod).
    """
    if isinstance(source, tuple | list) and all(isinstance(p, Pod) for p in source):
        pods = tuple(source)
    elif isinstance(source, Pod):
        pods = (source,)
    elif isinstance(source, str | os.PathLike):
        pods = _pods_of_path(source, where)
    elif isinstance(source, Mapping) or is_client_model(source):
        pods = tuple(_pods_of_object(source, where))
    elif isinstance(source, Iterable) and not isinstance(source, bytes | bytearray):
        pods = tuple(pod for i, item in enumerate(source)
                     for pod in _pods_of_item(item, f"{where}[{i}]"))
    else:
        raise ArgumentError(f"{where}: expected {_SOURCE_HINT}, got {_described(source)}")
    check_unique(pods)
    return pods


def _pods_of_item(item: Any, where: str) -> Sequence[Pod]:
    """The pods one element of an iterable stands for (a path or a List may hold several)."""
    if isinstance(item, Pod):
        return (item,)
    if isinstance(item, str | os.PathLike):
        return _pods_of_path(item, where)
    if isinstance(item, Mapping) or is_client_model(item):
        return tuple(_pods_of_object(item, where))
    raise ArgumentError(f"{where}: expected {_POD_HINT} or a path, got {_described(item)}")


def _pods_of_path(path: str | os.PathLike, where: str) -> tuple[Pod, ...]:
    """``load_pods(path)``: the pending pods of a file or directory."""
    from ksched.io import read_objects

    if not os.path.exists(path):
        raise ArgumentError(f"{where}: {os.fspath(path)!s}: no such file or directory "
                            f"(expected {_SOURCE_HINT})")
    return read_objects(path).pending_pods


def _pods_of_object(obj: Any, where: str) -> Iterable[Pod]:
    """A pod dict or ``V1Pod``, or every pod of a ``List`` / ``PodList`` (dict or model)."""
    listed = obj.get("items") if isinstance(obj, Mapping) else getattr(obj, "items", None)
    if not isinstance(listed, list):
        yield as_pod(obj, where)
        return
    for i, item in enumerate(iter_manifests(obj)):
        yield as_pod(item, f"{where}.items[{i}]")


def _pod_of_dict(obj: Mapping[str, Any], where: str) -> Pod:
    kind = obj.get("kind")
    if kind is not None and kind != "Pod":
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        named = f" {bad_value(name)}" if isinstance(name, str) else ""
        shown = f"a {kind}{named}" if isinstance(kind, str) else f"kind {_described(kind)}"
        raise ArgumentError(f"{where}: expected a Pod, got {shown}")
    if is_snake_case(obj):
        obj = snake_to_wire(obj, "V1Pod", _object_label(obj))
    return Pod.from_manifest(obj)


def check_not_running(pods: Sequence[Pod], cluster: ClusterState) -> None:
    """Refuse a pending pod whose namespace/name is already bound in ``cluster``. Names are
    compared first (a set of the smaller side's); keys only when a name is on both sides."""
    bound = pod_specs(cluster.pods, 0, len(cluster.pods))
    small, large = (bound, pods) if len(bound) <= len(pods) else (pods, bound)
    if {p.name for p in small}.isdisjoint(map(_NAME, large)):
        return
    keys = {(p.namespace, p.name) for p in pods}
    for row, running in enumerate(bound):
        if (running.namespace, running.name) in keys:
            node = cluster.node_names[int(cluster.pod_node[row])]
            raise InvalidObjectError(
                f"pod {running.namespace}/{running.name}", "metadata.name",
                f"Duplicate value: {go_quote(running.name)}: already bound to node "
                f"{go_quote(node)}")


_NAME = operator.attrgetter("name")


def _object_label(obj: Mapping[str, Any]) -> str:
    """``pod <namespace>/<name>`` as the manifest reader names a pod."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name")
    return f"pod {meta.get('namespace') or 'default'}/{name if isinstance(name, str) else ''}"


def _described(value: Any) -> str:
    """How an unexpected argument is named in an error: its type, and short values."""
    kind = type(value).__name__
    if value is None:
        return "None"
    if isinstance(value, bool | numbers.Number):
        return f"{kind} {value!r}"
    if isinstance(value, str):
        return f"str {value[:80]!r}"
    return kind


# =========================================================================== snake_case


def is_snake_case(obj: Mapping[str, Any]) -> bool:
    """Whether a pod dict is in the snake_case form the kubernetes client's ``to_dict()``
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
            "(ApiClient().sanitize_for_serialization(pod))")) from None
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


# =========================================================================== clusters


def as_cluster(source: Any, where: str = "cluster") -> ClusterState:
    """A ``ClusterState``: itself, or whatever :func:`ksched.load_cluster` reads (a path,
    wire dicts, kubernetes-client objects, or an iterable of these)."""
    if isinstance(source, ClusterState):
        return source
    if isinstance(source, str | os.PathLike):
        if not os.path.exists(source):
            raise ArgumentError(f"{where}: {os.fspath(source)!s}: no such file or directory")
    elif isinstance(source, Pod) or not (isinstance(source, Mapping | Iterable)
                                         or is_client_model(source)) \
            or isinstance(source, bytes | bytearray):
        raise ArgumentError(f"{where}: expected a ClusterState, a path, Kubernetes object "
                            f"dicts or kubernetes-client objects, got {_described(source)}")
    import ksched

    try:
        return ksched.load_cluster(source)
    except ArgumentError as exc:  # iter_manifests: an element that is no source of objects
        raise ArgumentError(f"{where}: {exc}") from None


# =========================================================================== options


def check_percentage(value: Any, where: str = "percentage_of_nodes_to_score") -> int | None:
    """``None`` or an integer in [0, 100] (``validatePercentageOfNodesToScore``)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentError(f"{where}: must be an integer from 0 to 100 or None, got "
                            f"{_described(value)}")
    if not 0 <= value <= 100:
        raise ArgumentError(str(invalid(where, int(value), "not in valid range [0-100]")))
    return int(value)


def check_tie_break(value: Any) -> str:
    """One of :data:`~ksched.framework.tiebreak.TIE_BREAKS`."""
    if not isinstance(value, str):
        raise ArgumentError(f"tie_break: must be one of {', '.join(TIE_BREAKS)}, got "
                            f"{_described(value)}")
    if value not in TIE_BREAKS:
        raise ArgumentError(str(not_supported("tie_break", value, TIE_BREAKS)))
    return value


def check_seed(value: Any) -> int | np.random.Generator | None:
    """``None``, a non-negative integer or a ``numpy.random.Generator``."""
    if value is None or isinstance(value, np.random.Generator):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentError(f"seed: must be None, a non-negative integer or a "
                            f"numpy.random.Generator, got {_described(value)}")
    if value < 0:
        raise ArgumentError(str(invalid("seed", int(value), "must be non-negative")))
    return int(value)


def check_progress(value: Any) -> Any:
    """``None`` or a callable taking a count of pods done."""
    if value is not None and not callable(value):
        raise ArgumentError(f"progress: must be a callable (e.g. a tqdm bar's update) or "
                            f"None, got {_described(value)}")
    return value


def check_profile(value: Any) -> Any:
    """``None``, a :class:`~ksched.profile.Profile` or a loaded
    :class:`~ksched.config.SchedulerConfig`."""
    from ksched.config import SchedulerConfig

    if value is not None and not isinstance(value, Profile | SchedulerConfig):
        hint = " (load it with ksched.load_config)" if isinstance(
            value, Mapping | str | os.PathLike) else ""
        raise ArgumentError(f"profile: must be a Profile, a SchedulerConfig or None, got "
                            f"{_described(value)}{hint}")
    return value


def check_registry(value: Any) -> Any:
    """``None`` or a plugin registry (a mapping of plugin names to factories)."""
    if value is not None and not isinstance(value, Mapping):
        raise ArgumentError(f"registry: must be a Registry (plugin name -> factory) or None, "
                            f"got {_described(value)}")
    return value


def check_flag(value: Any, where: str) -> bool:
    """A ``bool`` option."""
    if not isinstance(value, bool | np.bool_):
        raise ArgumentError(f"{where}: must be True or False, got {_described(value)}")
    return bool(value)


__all__ = ["as_pod", "as_pods", "as_cluster", "check_unique", "check_not_running",
           "check_percentage", "check_tie_break", "check_seed", "check_progress",
           "check_profile", "check_registry", "check_flag", "is_snake_case", "snake_to_wire"]

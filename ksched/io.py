"""Kubernetes objects in: files, directories, dicts and kubernetes-client models.

Accepted everywhere a "source" is taken:

- a path to a JSON or YAML file (one object, a ``v1 List`` as ``kubectl get -o json`` writes
  it, or multi-document YAML), optionally gzip-compressed (``.gz``);
- a path to a directory (every ``.json``, ``.yaml``, ``.yml`` file in it, sorted by name);
- a dict in the wire format, or a list of such dicts;
- kubernetes-client model objects (``V1Node``, ``V1Pod``, ``V1PodList``, ...).
"""

from __future__ import annotations

import datetime
import gzip
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from ksched.api import (
    SELECTING_KINDS,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    Workload,
)
from ksched.errors import InvalidObjectError

try:  # a faster JSON parser when the environment has one; the standard library otherwise
    from orjson import loads as _json_loads
except ImportError:  # pragma: no cover - depends on the environment
    _json_loads = json.loads

_SUFFIXES = (".json", ".yaml", ".yml", ".json.gz", ".yaml.gz", ".yml.gz")
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@attrs.frozen
class Objects:
    """The objects of a source, by kind, in input order."""

    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    namespaces: tuple[Namespace, ...] = ()
    workloads: tuple[Workload, ...] = ()
    priority_classes: tuple[PriorityClass, ...] = ()
    pod_disruption_budgets: tuple[PodDisruptionBudget, ...] = ()

    @property
    def bound_pods(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if p.node_name)

    @property
    def pending_pods(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.pods if not p.node_name and not p.terminal)


def read_objects(source: Any) -> Objects:
    """Parse every Node, Pod, Namespace, Service, ReplicaSet, StatefulSet,
    ReplicationController, PriorityClass and PodDisruptionBudget of ``source``; other kinds
    are ignored. Pods go through :func:`admit_priorities` with the source's PriorityClasses."""
    nodes, pods, namespaces, workloads, classes, pdbs = [], [], [], [], [], []
    for obj in iter_manifests(source):
        kind = obj.get("kind")
        if kind == "Node":
            nodes.append(Node.from_manifest(obj))
        elif kind == "Pod":
            pods.append(Pod.from_manifest(obj))
        elif kind == "Namespace":
            namespaces.append(Namespace.from_manifest(obj))
        elif kind in SELECTING_KINDS:
            workloads.append(Workload.from_manifest(obj))
        elif kind == "PriorityClass":
            classes.append(PriorityClass.from_manifest(obj))
        elif kind == "PodDisruptionBudget":
            pdbs.append(PodDisruptionBudget.from_manifest(obj))
    return Objects(tuple(nodes), admit_priorities(pods, classes), tuple(namespaces),
                   tuple(workloads), tuple(classes), tuple(pdbs))


#: The classes every API server creates (``pkg/apis/scheduling`` ``SystemPriorityClasses``).
BUILTIN_PRIORITY_CLASSES = (PriorityClass("system-node-critical", 2000001000),
                            PriorityClass("system-cluster-critical", 2000000000))


def admit_priorities(pods: Iterable[Pod],
                     priority_classes: Iterable[PriorityClass]) -> tuple[Pod, ...]:
    """The pods as the Priority admission plugin (plugin/pkg/admission/priority) creates them.

    A pod without ``spec.priority`` takes the value of its ``priorityClassName`` (an unknown
    name is an error) or else of the global default class (the lowest-valued one if several),
    else 0; the class's preemption policy applies unless the pod states one. Pods that have
    ``spec.priority`` (or records made with a non-zero ``priority``) were admitted already and
    come back unchanged.
    """
    classes = {pc.name: pc for pc in BUILTIN_PRIORITY_CLASSES}
    classes.update((pc.name, pc) for pc in priority_classes)
    default = min((pc for pc in classes.values() if pc.global_default),
                  key=lambda pc: pc.value, default=None)
    return tuple(_admit_priority(pod, classes, default) for pod in pods)


def _admit_priority(pod: Pod, classes: Mapping[str, PriorityClass],
                    default: PriorityClass | None) -> Pod:
    if pod.priority_set or pod.priority:  # a record made with a priority states it
        return pod
    pc = default
    if pod.priority_class_name:
        pc = classes.get(pod.priority_class_name)
        if pc is None:
            raise InvalidObjectError(f"pod {pod.key}", "spec.priorityClassName",
                                     f"no PriorityClass with name {pod.priority_class_name} "
                                     "was found")
    if pc is None:
        return attrs.evolve(pod, priority=0, priority_set=True)
    policy = pod.preemption_policy if pod.preemption_policy_set else pc.preemption_policy
    return attrs.evolve(pod, priority=pc.value, priority_class_name=pc.name, priority_set=True,
                        preemption_policy=policy, preemption_policy_set=True)


def iter_manifests(source: Any) -> Iterator[Mapping[str, Any]]:
    """Every object of ``source`` as a wire-format dict, Lists flattened."""
    if isinstance(source, str | os.PathLike):
        yield from _iter_path(Path(source))
    elif isinstance(source, Mapping):
        yield from _flatten(to_wire(source))
    elif _is_client_model(source):
        wire = to_wire(source)
        kind = _model_kind(source)
        if kind:
            wire["kind"] = kind
        yield from _flatten(wire)
    elif isinstance(source, Iterable):
        for item in source:
            yield from iter_manifests(item)
    else:
        raise TypeError(f"cannot read Kubernetes objects from {type(source).__name__}")


def _iter_path(path: Path) -> Iterator[Mapping[str, Any]]:
    if path.is_dir():
        for child in sorted(path.iterdir()):
            if child.is_file() and child.name.endswith(_SUFFIXES):
                yield from _iter_path(child)
        return
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or directory")
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read()
    name = path.name.removesuffix(".gz")
    try:
        if name.endswith(".json"):
            documents = [_json_loads(text)]
        else:
            documents = list(yaml.load_all(text, Loader=_YAML_LOADER))
    except (ValueError, TypeError, yaml.YAMLError) as exc:
        raise InvalidObjectError(f"file {path}", "", f"cannot parse: {exc}") from None
    for doc in documents:
        if doc is not None:
            yield from _flatten(doc, where=str(path))


def _flatten(obj: Any, where: str = "input") -> Iterator[Mapping[str, Any]]:
    if isinstance(obj, list):
        for item in obj:
            yield from _flatten(item, where)
        return
    if not isinstance(obj, Mapping):
        raise InvalidObjectError(where, "",
                                 f"expected a Kubernetes object, got {type(obj).__name__}")
    kind = obj.get("kind")
    if isinstance(obj.get("items"), list) and (kind is None or str(kind).endswith("List")):
        for item in obj["items"]:
            if _is_client_model(item):
                item = to_wire(item)
            if isinstance(item, Mapping) and "kind" not in item and kind and kind != "List":
                item = {**item, "kind": kind.removesuffix("List")}
            yield from _flatten(item, where)
        return
    yield obj


_MODEL_CLASS = re.compile(r"V\d+(?:(?:alpha|beta)\d+)?(?P<kind>[A-Z]\w*)\Z")


def _model_kind(obj: Any) -> str | None:
    """The kind of a top-level client model that leaves ``kind`` unset (``V1Node`` -> Node)."""
    if "kind" not in obj.attribute_map or getattr(obj, "kind", None):
        return None
    match = _MODEL_CLASS.match(type(obj).__name__)
    return match["kind"] if match else None


def _is_client_model(obj: Any) -> bool:
    return hasattr(obj, "openapi_types") and hasattr(obj, "attribute_map")


def to_wire(obj: Any) -> Any:
    """A kubernetes-client model (or anything holding them) as wire-format JSON values."""
    if _is_client_model(obj):
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

"""Reading the kinds besides pods from their wire format, as the API server validates them
(``pkg/apis/core/validation``: ``ValidateNode``, ``ValidateNamespace``, the controllers'
selectors; ``pkg/apis/scheduling/validation``: ``ValidatePriorityClass``;
``pkg/apis/policy/validation``: ``ValidatePodDisruptionBudgetSpec``).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ksched import validation as _v
from ksched.api.affinity import read_label_selector
from ksched.api.fields import assembler, type_name
from ksched.api.reader import NO_MEMO, ManifestReader, Memo, read_metadata
from ksched.api.records import (
    HIGHEST_USER_DEFINABLE_PRIORITY,
    LABEL_METADATA_NAME,
    PREEMPTION_POLICIES,
    SYSTEM_PRIORITY_CLASSES,
    TAINT_EFFECTS,
    ContainerImage,
    LabelSelector,
    Namespace,
    Node,
    PodDisruptionBudget,
    PriorityClass,
    Taint,
    Workload,
)
from ksched.errors import InvalidObjectError

__all__ = ["NODE_PARTS", "check_priority_classes", "read_namespace", "read_node",
           "read_node_parts", "read_pdb",
           "read_priority_class", "read_workload"]

#: The fields of a :class:`Node` read from its spec and status (nodes of one pool share
#: them; :func:`read_node_parts`).
NODE_PARTS = ("unschedulable", "taints", "allocatable", "images")
_assemble_node = assembler(Node, ("name", "labels"), NODE_PARTS)
_node_part_values = operator.attrgetter(*NODE_PARTS)


def read_node(obj: Mapping[str, Any], memo: Memo | None = None) -> Node:
    """``ValidateNode``: name, labels, taints and the capacity and allocatable quantities.
    ``memo``: what the load read before (nodes of one pool share all but name and labels)."""
    memo = memo or NO_MEMO
    r, meta = read_metadata(obj, "Node", namespaced=False)
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    labels = memo.labels(r, meta.get("labels"), "metadata.labels")
    key = memo.key([spec.get("taints"), spec.get("unschedulable"), status.get("capacity"),
                    status.get("allocatable"), status.get("images")])
    shared = memo.node_parts.get(key) if key is not None else None
    if shared is not None:
        return _assemble_node((meta["name"], labels), shared)
    node = Node(name=meta["name"], labels=labels, **read_node_parts(r, spec, status))
    if key is not None:
        memo.remember(memo.node_parts, key, _node_part_values(node))
    return node


def read_node_parts(r: ManifestReader, spec: Mapping[str, Any], status: Mapping[str, Any]
                ) -> dict[str, Any]:
    """A node's taints, allocatable resources (``SetDefaults_NodeStatus``: capacity when
    absent), images and ``unschedulable``, read from ``spec.taints``, ``spec.unschedulable``,
    ``status.capacity``, ``status.allocatable`` and ``status.images`` only."""
    taints = _taints(r, spec.get("taints"), "spec.taints")
    capacity = r.resources(status.get("capacity"), "status.capacity")
    allocatable = status.get("allocatable")
    if allocatable is None:  # SetDefaults_NodeStatus: allocatable defaults to capacity
        allocatable = capacity
    else:
        allocatable = r.resources(allocatable, "status.allocatable")
    images = []
    for i, img in enumerate(r.seq(status.get("images"), "status.images")):
        img = r.mapping(img, f"status.images[{i}]")
        images.append(ContainerImage(
            r.strings(img.get("names"), f"status.images[{i}].names"),
            r.integer(img.get("sizeBytes"), f"status.images[{i}].sizeBytes"),
        ))
    unschedulable = r.boolean(spec.get("unschedulable"), "spec.unschedulable")
    return {"unschedulable": unschedulable, "taints": taints, "allocatable": allocatable,
            "images": tuple(images)}


def _taints(r: ManifestReader, value: Any, path: str) -> tuple[Taint, ...]:
    """``validateNodeTaints``: key a label name, value a label value, a known effect, unique
    by key and effect."""
    taints, seen = [], set()
    for i, t in enumerate(r.seq(value, path)):
        tpath = f"{path}[{i}]"
        t = r.mapping(t, tpath)
        key = r.string(t.get("key"), f"{tpath}.key")
        taint_value = r.string(t.get("value"), f"{tpath}.value")
        r.check([_v.invalid(f"{tpath}.key", key, msg) for msg in _v.label_key_messages(key)])
        if messages := _v.label_value_messages(taint_value):
            r.check([_v.invalid(f"{tpath}.value", taint_value, ";".join(messages))])
        effect = r.choice(t.get("effect"), f"{tpath}.effect", TAINT_EFFECTS)
        if (key, effect) in seen:
            # core.Taint as JSON (value is omitempty)
            shown = {"key": key, **({"value": taint_value} if taint_value else {}),
                     "effect": effect}
            r.check([attrs.evolve(_v.duplicate(tpath, _v.AsJSON(shown)),
                                  detail="taints must be unique by key and effect pair")])
        seen.add((key, effect))
        taints.append(Taint(key, taint_value, effect))
    return tuple(taints)



def read_namespace(obj: Mapping[str, Any]) -> Namespace:
    """A Namespace (``ValidateNamespace``); ``SetDefaults_Namespace`` labels it
    ``kubernetes.io/metadata.name: <name>``."""
    r, meta = read_metadata(obj, "Namespace", namespaced=False, name_check=_v.is_dns1123_label)
    labels = r.labels(meta.get("labels"), "metadata.labels")
    if labels.get(LABEL_METADATA_NAME) != meta["name"]:
        labels = {**labels, LABEL_METADATA_NAME: meta["name"]}
    return Namespace(meta["name"], labels)


def read_workload(obj: Mapping[str, Any]) -> Workload:
    """A Service, ReplicationController, ReplicaSet or StatefulSet: its name, selector and
    replicas. A ReplicationController without a selector selects its template's labels
    (``SetDefaults_ReplicationController``)."""
    kind = obj.get("kind") if isinstance(obj, Mapping) else None
    check = _v.is_dns1035_label if kind == "Service" else _v.name_is_dns1123_subdomain
    r, meta = read_metadata(obj, str(kind), namespaced=True, name_check=check)
    r.labels(meta.get("labels"), "metadata.labels")
    spec = r.mapping(obj.get("spec"), "spec")
    raw = spec.get("selector")
    if kind == "ReplicationController" and not raw:
        template = r.mapping(spec.get("template"), "spec.template")
        raw = r.mapping(template.get("metadata"), "spec.template.metadata").get("labels") or raw
    if raw is None:
        selector = None
    elif kind in ("Service", "ReplicationController"):
        selector = LabelSelector(r.labels(raw, "spec.selector"))
    else:
        selector = read_label_selector(r, raw, "spec.selector")
    replicas = None
    if kind != "Service":
        replicas = r.integer(spec.get("replicas"), "spec.replicas", 1, bits=32)
        if replicas < 0:
            r.check([_v.invalid("spec.replicas", replicas, "must be greater than or equal to 0")])
    return Workload(str(kind), meta["name"], meta.get("namespace") or "default", selector,
                    replicas)


def read_priority_class(obj: Mapping[str, Any]) -> PriorityClass:
    """``ValidatePriorityClass``: a DNS-subdomain name, ``system-`` names only for the
    built-in classes, user values at most 1,000,000,000."""
    r, meta = read_metadata(obj, "PriorityClass", namespaced=False)
    r.labels(meta.get("labels"), "metadata.labels")  # ValidateObjectMeta
    value = r.integer(obj.get("value"), "value", None, bits=32)
    if value is None:
        r.check([_v.required("value")])
    global_default = r.boolean(obj.get("globalDefault"), "globalDefault")
    name = meta["name"]
    if name.startswith("system-"):
        known = SYSTEM_PRIORITY_CLASSES.get(name)
        problem = (f"{name} is not a known system priority class" if known is None else
                   f"value of {name} PriorityClass must be {known}" if value != known else
                   f"globalDefault of {name} PriorityClass must be false" if global_default
                   else None)
        if problem:
            r.check([_v.forbidden("metadata.name", "priority class names with 'system-' prefix "
                                                   f"are reserved for system use only. error: "
                                                   f"{problem}")])
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        r.check([_v.forbidden("value", "maximum allowed value of a user defined priority is "
                                       f"{HIGHEST_USER_DEFINABLE_PRIORITY}")])
    return PriorityClass(name, value, global_default,
                         r.choice(obj.get("preemptionPolicy"), "preemptionPolicy",
                                  PREEMPTION_POLICIES, "PreemptLowerPriority"))


def check_priority_classes(classes: Iterable[PriorityClass]) -> None:
    """The PriorityClasses of one input as the API server creates them: no name twice
    (``AlreadyExists``, worded as a duplicate name) and at most one ``globalDefault``
    (the Priority admission plugin's ``validatePriorityClass``)."""
    names: set[str] = set()
    default = None
    for pc in classes:
        where = f"priorityclass {pc.name}"
        if pc.name in names:
            raise InvalidObjectError(where, "metadata.name",
                                     f"Duplicate value: {_v.go_quote(pc.name)}")
        names.add(pc.name)
        if pc.global_default and default is not None:
            raise InvalidObjectError(where, "globalDefault",
                                     f"PriorityClass {default} is already marked "
                                     "as default. Only one default can exist")
        default = pc.name if pc.global_default else default


def _int_or_percent(r: ManifestReader, value: Any, path: str) -> int | str | None:
    """An IntOrString budget, checked as ``ValidatePositiveIntOrPercent`` and
    ``IsNotMoreThan100Percent`` (pkg/apis/apps/validation) do."""
    if value is None:
        return None
    if isinstance(value, str):
        r.check([_v.invalid(path, value, msg) for msg in _v.is_valid_percent(value)])
        if int(value[:-1]) > 100:
            r.check([_v.invalid(path, value, "must not be greater than 100%")])
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        r.fail(path, f"expected an integer or a percentage, got {type_name(value)}")
    value = r.integer(value, path, bits=32)
    if value < 0:
        r.check([_v.invalid(path, value, "must be greater than or equal to 0")])
    return value


#: ``supportedUnhealthyPodEvictionPolicies`` (``pkg/apis/policy/validation``), sorted.
_UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")


def read_pdb(obj: Mapping[str, Any]) -> PodDisruptionBudget:
    """``ValidatePodDisruptionBudgetSpec`` (a valid label selector, a supported
    ``unhealthyPodEvictionPolicy``) and ``ValidatePodDisruptionBudgetStatusUpdate``'s
    non-negative counts."""
    r, meta = read_metadata(obj, "PodDisruptionBudget", namespaced=True)
    r.labels(meta.get("labels"), "metadata.labels")  # ValidateObjectMeta
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        shown = {k: spec[k] for k in ("minAvailable", "maxUnavailable")}
        r.check([_v.invalid("spec", _v.AsJSON(shown),
                            "minAvailable and maxUnavailable cannot be both set")])
    min_available = _int_or_percent(r, spec.get("minAvailable"), "spec.minAvailable")
    max_unavailable = _int_or_percent(r, spec.get("maxUnavailable"), "spec.maxUnavailable")
    selector = read_label_selector(r, spec.get("selector"), "spec.selector")
    if spec.get("unhealthyPodEvictionPolicy") is not None:
        r.choice(spec["unhealthyPodEvictionPolicy"], "spec.unhealthyPodEvictionPolicy",
                 _UNHEALTHY_POD_EVICTION_POLICIES, required=False)
    return PodDisruptionBudget(
        name=meta["name"],
        namespace=meta.get("namespace") or "default",
        selector=selector,
        min_available=min_available,
        max_unavailable=max_unavailable,
        disruptions_allowed=r.count(status.get("disruptionsAllowed"),
                                    "status.disruptionsAllowed"),
        current_healthy=r.count(status.get("currentHealthy"), "status.currentHealthy"),
        desired_healthy=r.count(status.get("desiredHealthy"), "status.desiredHealthy"),
        expected_pods=r.count(status.get("expectedPods"), "status.expectedPods"),
        disrupted_pods=frozenset(r.mapping(status.get("disruptedPods"), "status.disruptedPods")),
    )

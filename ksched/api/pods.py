"""Reading a pod from its wire format as the API server creates it: ``SetDefaults_Pod``
(``pkg/apis/core/v1/defaults.go``, applied by the records) and the checks of
``ValidatePodCreate`` (``pkg/apis/core/validation/validation.go``) that reach scheduling, field by
field here, across fields in :mod:`ksched.api.pod_validation`.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

from ksched import validation as _v
from ksched.api.affinity import (
    read_node_affinity,
    read_pod_affinity,
    read_spread_constraints,
)
from ksched.api.fields import ResourceList, assembler
from ksched.api.pod_validation import check_affinities, check_pod, merge_label_keys
from ksched.api.reader import NO_MEMO, ManifestReader, Memo, check_name, read_metadata
from ksched.api.records import (
    CONTAINER_RESTART_POLICIES,
    PREEMPTION_POLICIES,
    PROTOCOLS,
    TAINT_EFFECTS,
    Container,
    ContainerPort,
    NodeAffinity,
    Pod,
    PodAffinity,
    Toleration,
    interned,
)
from ksched.api.resource_validation import (
    container_resource_name_errors,
    pod_resource_name_errors,
    resource_requirements_errors,
)
from ksched.api.volume_sources import read_volumes
from ksched.constants import DEFAULT_SCHEDULER_NAME

__all__ = ["CONTAINER_KEYS", "MIRROR_ANNOTATION", "POD_SPEC_KEYS", "read_pod", "read_pod_spec"]

#: The annotation the kubelet puts on the mirror pod of a static pod; the reader gives such
#: a pod its Node as controller, as the kubelet's ownerReference does.
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def read_pod(obj: Mapping[str, Any], memo: Memo | None = None) -> Pod:
    """Read a pod as the API server stores it: ``SetDefaults_Pod`` (through the records) and
    the checks of ``ValidatePodCreate`` that reach scheduling: its metadata, its spec (but
    for ``nodeName``, volumes and affinity), its affinity, its ``nodeName``, volumes and
    status, then the rules across fields. ``memo``: the spec and the affinity of earlier pods
    of the load, read, defaulted and checked once (:class:`ManifestMemo`)."""
    memo = memo or NO_MEMO
    r, meta = read_metadata(obj, "Pod", namespaced=True)
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    labels = memo.labels(r, meta.get("labels"), "metadata.labels")
    uid = r.string(meta.get("uid"), "metadata.uid")
    controller = memo.controller(r, meta.get("ownerReferences"), "metadata.ownerReferences")
    if controller is None and MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        controller = ("v1", "Node", spec.get("nodeName") or "")  # a mirror pod: its node's
    created = memo.timestamp(r, meta.get("creationTimestamp"), "metadata.creationTimestamp")
    spec_key = memo.pod_spec_key(spec)
    shared = memo.pod_specs.get(spec_key) if spec_key is not None else None
    spec_fields = read_pod_spec(r, spec) if shared is None else None
    affinity_key = memo.key(spec.get("affinity"))  # apart: a DaemonSet's pods differ in it
    affinities = memo.affinities.get(affinity_key) if affinity_key is not None else None
    fresh_affinities = affinities is None
    if fresh_affinities:
        affinities = _affinities(r, spec.get("affinity"), "spec.affinity")
    own = (meta["name"], meta.get("namespace") or "default", labels, uid, controller, created,
           meta.get("deletionTimestamp") is not None,  # an RFC 3339 time (read_metadata)
           memo.subdomain(r, spec.get("nodeName"), "spec.nodeName"),
           read_volumes(r, spec.get("volumes"), "spec.volumes", meta["name"]),
           r.string(status.get("phase"), "status.phase"),
           memo.timestamp(r, status.get("startTime"), "status.startTime"),
           memo.subdomain(r, status.get("nominatedNodeName"), "status.nominatedNodeName"),
           _ready(r, status.get("conditions"), "status.conditions"),
           _claim_statuses(r, status.get("resourceClaimStatuses"),
                           "status.resourceClaimStatuses"))
    if shared is None:  # the record defaults the spec; then every check runs
        pod = Pod(**dict(zip(_POD_OWN_FIELDS, own)), **spec_fields,
                  **dict(zip(_AFFINITY_FIELDS, affinities)))
        pod = _created(pod)
        check_pod(r, pod)
        if spec_key is not None and not any(c.match_label_keys
                                            for c in pod.topology_spread_constraints):
            memo.remember(memo.pod_specs, spec_key, _spec_values(pod))
    else:  # defaulted and checked when first read
        pod = _assemble_pod(own, shared, affinities)
        if fresh_affinities:
            pod = _created(pod)
            check_affinities(r, pod)
    if fresh_affinities and affinity_key is not None and not _affinities_read_labels(pod):
        memo.remember(memo.affinities, affinity_key, _affinity_values(pod))
    return pod


def _created(pod: Pod) -> Pod:
    """The pod as the API server creates it: its affinity terms' label keys merged when it
    has no uid yet (:func:`merge_label_keys`)."""
    if not pod.uid and (pod.pod_affinity or pod.pod_anti_affinity):
        return merge_label_keys(pod)
    return pod


#: The fields of a :class:`Pod` of its own (read by :func:`read_pod` in this order).
_POD_OWN_FIELDS = ("name", "namespace", "labels", "uid", "controller", "creation_time",
                   "deleting", "node_name", "volumes", "phase", "start_time",
                   "nominated_node_name", "ready", "claim_statuses")
#: The fields of a :class:`Pod` that come from its spec alone but for ``nodeName``,
#: ``volumes`` and ``affinity``: what the pods of one template share, in their final form
#: (the pod's labels and uid reach them only through spread constraints'
#: ``matchLabelKeys``, :mod:`ksched.api.pod_validation`).
_SPEC_FIELDS = ("host_network", "containers", "init_containers", "resource_claims",
                "claim_sources",
                "pod_requests", "pod_limits", "node_selector", "scheduler_name",
                "priority_class_name", "priority", "priority_set", "overhead", "tolerations",
                "topology_spread_constraints", "preemption_policy", "preemption_policy_set",
                "scheduling_gates")
#: The fields of a :class:`Pod` that come from ``spec.affinity`` (:func:`_affinities`).
_AFFINITY_FIELDS = ("node_affinity", "pod_affinity", "pod_anti_affinity")
_spec_values = operator.attrgetter(*_SPEC_FIELDS)
_affinity_values = operator.attrgetter(*_AFFINITY_FIELDS)
_assemble_pod = assembler(Pod, _POD_OWN_FIELDS, _SPEC_FIELDS, _AFFINITY_FIELDS)
#: The spec fields (and container fields) :func:`read_pod_spec` reads.
POD_SPEC_KEYS = ("hostNetwork", "containers", "initContainers", "resources",
                  "resourceClaims", "nodeSelector", "schedulerName", "priorityClassName",
                  "priority", "overhead", "tolerations", "topologySpreadConstraints",
                  "preemptionPolicy", "schedulingGates")
CONTAINER_KEYS = ("name", "image", "resources", "ports", "restartPolicy")


def read_pod_spec(r: ManifestReader, spec: Mapping[str, Any]) -> dict[str, Any]:
    """The :data:`_SPEC_FIELDS` of a pod read from its spec (reading only
    :data:`POD_SPEC_KEYS`), each checked; the API server's defaulting is left to the
    record."""
    host_network = r.boolean(spec.get("hostNetwork"), "spec.hostNetwork")
    containers = _containers(r, spec.get("containers"), "spec.containers",
                             host_network=host_network)
    if not containers:  # validateContainers (a null spec has none either)
        r.check([_v.required("spec.containers")])
    init_containers = _containers(r, spec.get("initContainers"), "spec.initContainers",
                                  taken={c.name for c in containers}, host_network=host_network)
    pod_resources = r.mapping(spec.get("resources"), "spec.resources")
    claims, claim_sources = _resource_claims(r, spec.get("resourceClaims"),
                                             "spec.resourceClaims")
    pod_requests, pod_limits = _pod_level_resources(r, pod_resources, "spec.resources")
    node_selector = None
    if spec.get("nodeSelector") is not None:
        node_selector = r.labels(spec.get("nodeSelector"), "spec.nodeSelector")
    scheduler_name = r.string(spec.get("schedulerName"), "spec.schedulerName")
    check_name(r, scheduler_name, "spec.schedulerName", _v.name_is_dns1123_subdomain)
    class_name = r.string(spec.get("priorityClassName"), "spec.priorityClassName")
    check_name(r, class_name, "spec.priorityClassName", _v.name_is_dns1123_subdomain)
    return {
        "host_network": host_network,
        "containers": containers,
        "init_containers": init_containers,
        "resource_claims": claims,
        "claim_sources": claim_sources,
        "pod_requests": pod_requests,
        "pod_limits": pod_limits,
        "node_selector": node_selector,
        "scheduler_name": scheduler_name or DEFAULT_SCHEDULER_NAME,
        "priority_class_name": class_name,
        "priority": r.integer(spec.get("priority"), "spec.priority", bits=32),
        "priority_set": spec.get("priority") is not None,
        "overhead": r.resources(spec.get("overhead"), "spec.overhead",
                                container_resource_name_errors),
        "tolerations": _tolerations(r, spec.get("tolerations"), "spec.tolerations"),
        "topology_spread_constraints": read_spread_constraints(
            r, spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints"),
        "preemption_policy": r.choice(spec.get("preemptionPolicy"), "spec.preemptionPolicy",
                                      PREEMPTION_POLICIES, "PreemptLowerPriority"),
        "preemption_policy_set": spec.get("preemptionPolicy") is not None,
        "scheduling_gates": _scheduling_gates(r, spec.get("schedulingGates"),
                                              "spec.schedulingGates"),
    }


def _affinities(r: ManifestReader, value: Any, path: str
                ) -> tuple[NodeAffinity | None, PodAffinity | None, PodAffinity | None]:
    """The :data:`_AFFINITY_FIELDS` read from ``spec.affinity``, each field checked (the
    rules across fields are :func:`check_affinities`')."""
    affinity = r.mapping(value, path)
    return (read_node_affinity(r, affinity.get("nodeAffinity"), f"{path}.nodeAffinity"),
            read_pod_affinity(r, affinity.get("podAffinity"), f"{path}.podAffinity"),
            read_pod_affinity(r, affinity.get("podAntiAffinity"), f"{path}.podAntiAffinity"))


def _affinities_read_labels(pod: Pod) -> bool:
    """Whether the pod's labels (and uid) reach its affinity: a pod (anti-)affinity term with
    ``matchLabelKeys`` or ``mismatchLabelKeys`` (merged at creation, :func:`merge_label_keys`)."""
    return any(t.match_label_keys or t.mismatch_label_keys
               for a in (pod.pod_affinity, pod.pod_anti_affinity) if a is not None
               for t in a.required + tuple(w.term for w in a.preferred))




def _resource_claims(r: ManifestReader, value: Any, path: str
                     ) -> tuple[tuple[str, ...], tuple[tuple[str, str, str], ...]]:
    """``validatePodResourceClaims``: names set, unique, DNS labels; each entry names exactly
    one of ``resourceClaimName`` and ``resourceClaimTemplateName`` (DNS subdomains). Returns
    the names and (name, claim name, template name) per entry."""
    names: list[str] = []
    sources: list[tuple[str, str, str]] = []
    for i, c in enumerate(r.seq(value, path)):
        npath = f"{path}[{i}].name"
        entry = r.mapping(c, f"{path}[{i}]")
        name = r.string(entry.get("name"), npath)
        if not name:
            r.check([_v.required(npath)])
        if name in names:
            r.check([_v.duplicate(npath, name)])
        r.check([_v.invalid(npath, name, msg) for msg in _v.is_dns1123_label(name)])
        claim = r.string(entry.get("resourceClaimName"), f"{path}[{i}].resourceClaimName")
        template = r.string(entry.get("resourceClaimTemplateName"),
                            f"{path}[{i}].resourceClaimTemplateName")
        if bool(claim) == bool(template):
            r.check([_v.invalid(f"{path}[{i}]", name, "at most one of `resourceClaimName` or "
                                "`resourceClaimTemplateName` may be set") if claim else
                     _v.required(f"{path}[{i}]", "must specify one of: `resourceClaimName`, "
                                 "`resourceClaimTemplateName`")])
        for field, text in (("resourceClaimName", claim),
                            ("resourceClaimTemplateName", template)):
            if text:
                r.check([_v.invalid(f"{path}[{i}].{field}", text, msg)
                         for msg in _v.is_dns1123_subdomain(text)])
        names.append(name)
        sources.append((name, claim, template))
    return interned(tuple(names)), interned(tuple(sources))


def _claim_statuses(r: ManifestReader, value: Any, path: str) -> tuple[tuple[str, str], ...]:
    """``status.resourceClaimStatuses``: (pod claim name, generated claim name or ``""``)."""
    out = []
    for i, c in enumerate(r.seq(value, path)):
        entry = r.mapping(c, f"{path}[{i}]")
        out.append((r.string(entry.get("name"), f"{path}[{i}].name"),
                    r.string(entry.get("resourceClaimName"), f"{path}[{i}].resourceClaimName")))
    return tuple(out)


def _scheduling_gates(r: ManifestReader, value: Any, path: str) -> tuple[str, ...]:
    """``validateSchedulingGates``: qualified names, no duplicates."""
    gates: list[str] = []
    for i, g in enumerate(r.seq(value, path)):
        name = r.string(r.mapping(g, f"{path}[{i}]").get("name"), f"{path}[{i}].name")
        r.check([_v.invalid(f"{path}[{i}]", name, msg) for msg in _v.label_key_messages(name)])
        if name in gates:
            r.check([_v.duplicate(f"{path}[{i}]", name)])
        gates.append(name)
    return tuple(gates)


def _pod_level_resources(r: ManifestReader, resources: Mapping[str, Any], path: str
                         ) -> tuple[ResourceList | None, ResourceList | None]:
    """Pod-level ``spec.resources`` (``validatePodResources``); ``None`` where absent."""
    if resources.get("claims") is not None:
        r.check([_v.forbidden(f"{path}.claims", "claims may not be set for Resources at "
                                                "pod-level")])
    out = []
    quantities = {}
    for field in ("limits", "requests"):
        if field in resources and resources[field] is not None:
            quantities[field] = r.quantities(resources[field], f"{path}.{field}",
                                             pod_resource_name_errors)
    r.check(resource_requirements_errors(quantities.get("requests", {}),
                                         quantities.get("limits", {}), path))
    for field in ("requests", "limits"):
        found = quantities.get(field)
        out.append(None if found is None else
                   ResourceList({n: amount for n, (amount, _) in found.items()}))
    return out[0], out[1]


def _ready(r: ManifestReader, value: Any, path: str) -> bool:
    """``podutil.IsPodReady``: the first ``Ready`` condition has status ``True``."""
    for i, c in enumerate(r.seq(value, path)):
        c = r.mapping(c, f"{path}[{i}]")
        if r.string(c.get("type"), f"{path}[{i}].type") == "Ready":
            return r.string(c.get("status"), f"{path}[{i}].status") == "True"
    return False


def _containers(r: ManifestReader, value: Any, path: str, taken: set[str] | None = None,
                host_network: bool = False) -> tuple[Container, ...]:
    """Containers (``validateContainerCommon``): a DNS-label name unique among the pod's
    containers, valid ports (``validateContainerPorts``), a supported restart policy, and
    resources (``ValidateContainerResourceRequirements``); host ports (with host networking,
    the container ports they default to) unique per list (per init container for init
    containers, given the ``taken`` names: they run one by one)."""
    out = []
    names = set(taken or ())
    host_ports: set[tuple[str, str, int]] = set()
    for i, c in enumerate(r.seq(value, path)):
        cpath = f"{path}[{i}]"
        c = r.mapping(c, cpath)
        name = r.string(c.get("name"), f"{cpath}.name")
        if not name:
            r.check([_v.required(f"{cpath}.name")])
        r.check([_v.invalid(f"{cpath}.name", name, msg) for msg in _v.is_dns1123_label(name)])
        if name in names:
            r.check([_v.duplicate(f"{cpath}.name", name)])
        names.add(name)
        restart_policy = r.string(c.get("restartPolicy"), f"{cpath}.restartPolicy")
        if restart_policy and restart_policy not in CONTAINER_RESTART_POLICIES:
            r.check([_v.not_supported(f"{cpath}.restartPolicy", restart_policy,
                                      CONTAINER_RESTART_POLICIES)])
        ports = _ports(r, c.get("ports"), f"{cpath}.ports")
        if taken is not None:  # init containers: conflicts within each one only
            host_ports = set()
        for j, p in enumerate(ports):
            host_port = p.host_port or (p.container_port if host_network else 0)
            if host_port:
                key = (p.protocol, p.host_ip, host_port)
                if key in host_ports:
                    r.check([_v.duplicate(f"{cpath}.ports[{j}].hostPort",
                                          f"{p.protocol}/{p.host_ip}/{host_port}")])
                host_ports.add(key)
        resources = r.mapping(c.get("resources"), f"{cpath}.resources")
        limits = r.quantities(resources.get("limits"), f"{cpath}.resources.limits",
                              container_resource_name_errors)
        requests = r.quantities(resources.get("requests"), f"{cpath}.resources.requests",
                                container_resource_name_errors)
        r.check(resource_requirements_errors(requests, limits, f"{cpath}.resources"))
        image = r.string(c.get("image"), f"{cpath}.image")
        key = (name, image, tuple(requests.items()), tuple(limits.items()), ports,
               restart_policy)
        container = _CONTAINERS.get(key)
        if container is None:  # pods of one controller repeat their containers
            if len(_CONTAINERS) >= 4096:
                _CONTAINERS.clear()
            container = _CONTAINERS[key] = Container(
                name=name,
                image=image,
                requests=ResourceList({n: amount for n, (amount, _) in requests.items()}),
                ports=ports,
                restart_policy=restart_policy,
                limits=ResourceList({n: amount for n, (amount, _) in limits.items()}),
            )
        out.append(container)
    return interned(tuple(out))


#: Containers read lately, by what their manifests state.
_CONTAINERS: dict[tuple, Container] = {}


def _ports(r: ManifestReader, value: Any, path: str) -> tuple[ContainerPort, ...]:
    """``validateContainerPorts`` (the port names are not read)."""
    ports = []
    for j, p in enumerate(r.seq(value, path)):
        ppath = f"{path}[{j}]"
        p = r.mapping(p, ppath)
        container_port = r.integer(p.get("containerPort"), f"{ppath}.containerPort", bits=32)
        host_port = r.integer(p.get("hostPort"), f"{ppath}.hostPort", bits=32)
        if container_port == 0:
            r.check([_v.required(f"{ppath}.containerPort")])
        r.check([_v.invalid(f"{ppath}.containerPort", container_port, msg)
                 for msg in _v.is_valid_port_num(container_port)])
        if host_port:
            r.check([_v.invalid(f"{ppath}.hostPort", host_port, msg)
                     for msg in _v.is_valid_port_num(host_port)])
        ports.append(ContainerPort(
            container_port=container_port,
            host_port=host_port,
            protocol=r.choice(p.get("protocol"), f"{ppath}.protocol", PROTOCOLS, "TCP",
                              shown=("SCTP", "TCP", "UDP")),
            host_ip=r.string(p.get("hostIP"), f"{ppath}.hostIP"),
        ))
    return tuple(ports)


def _tolerations(r: ManifestReader, value: Any, path: str) -> tuple[Toleration, ...]:
    """``ValidateTolerations`` (``TaintTolerationComparisonOperators`` off, as by default)."""
    out = []
    for i, t in enumerate(r.seq(value, path)):
        tpath = f"{path}[{i}]"
        t = r.mapping(t, tpath)
        key = r.string(t.get("key"), f"{tpath}.key")
        op = r.string(t.get("operator"), f"{tpath}.operator")
        value_ = r.string(t.get("value"), f"{tpath}.value")
        effect = r.string(t.get("effect"), f"{tpath}.effect")
        seconds = r.integer(t.get("tolerationSeconds"), f"{tpath}.tolerationSeconds", None)
        errs = []
        if key:
            errs += [_v.invalid(f"{tpath}.key", key, msg) for msg in _v.label_key_messages(key)]
        if not key and op != "Exists":
            errs.append(_v.invalid(f"{tpath}.operator", op, "operator must be Exists when `key` "
                                   "is empty, which means \"match all values and all keys\""))
        if seconds is not None and effect != "NoExecute":
            errs.append(_v.invalid(f"{tpath}.effect", effect,
                                   "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("Equal", ""):
            if messages := _v.label_value_messages(value_):
                errs.append(_v.invalid(f"{tpath}.operator", value_, ";".join(messages)))
        elif op == "Exists":
            if value_:
                errs.append(_v.invalid(f"{tpath}.operator", value_,
                                       "value must be empty when `operator` is 'Exists'"))
        elif op in ("Lt", "Gt"):
            errs.append(_v.not_supported(f"{tpath}.operator", op,
                                         ["Equal", "Exists", "Lt", "Gt"]))
        else:
            errs.append(_v.not_supported(f"{tpath}.operator", op, ["Equal", "Exists"]))
        if effect and effect not in TAINT_EFFECTS:
            errs.append(_v.not_supported(f"{tpath}.effect", effect, TAINT_EFFECTS))
        r.check(errs)
        out.append(Toleration(key, op, value_, effect))
    return tuple(out)

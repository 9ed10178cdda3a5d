"""Frozen records of the Kubernetes objects the scheduler reads.

Each record is built from the wire format (``kubectl get -o json``) by a ``from_manifest``
constructor that checks every field it reads and raises :class:`~ksched.errors.InvalidObjectError`
naming the object and the field path. Resource quantities are stored as exact integers in the
units the scheduler uses: cpu in milli-cores, everything else in units (both rounded up, as
apimachinery's ``MilliValue`` / ``Value`` do).
"""

from __future__ import annotations

import datetime
import operator
import re
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from ksched import quantity as _quantity
from ksched.constants import CPU, DEFAULT_SCHEDULER_NAME

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("", "Equal", "Exists")
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
PROTOCOLS = ("TCP", "UDP", "SCTP")
UNSATISFIABLE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
INCLUSION_POLICIES = ("Honor", "Ignore")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class FrozenDict(Mapping[str, Any]):
    """An immutable, hashable mapping (labels, resource lists)."""

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data = dict(data or {})
        self._hash: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


def _frozen_dict(value: Mapping[str, Any] | None) -> FrozenDict:
    return value if isinstance(value, FrozenDict) else FrozenDict(value)


def _optional_frozen_dict(value: Mapping[str, Any] | None) -> FrozenDict | None:
    return None if value is None else _frozen_dict(value)


def _tuple(value: Any) -> tuple:
    return tuple(value or ())


# --------------------------------------------------------------------------- records


@attrs.frozen
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"


@attrs.frozen
class Toleration:
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """Mirror of ``Toleration.ToleratesTaint`` (k8s.io/api/core/v1/toleration.go)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


@attrs.frozen
class NodeSelectorRequirement:
    key: str
    operator: str
    values: tuple[str, ...] = attrs.field(default=(), converter=_tuple)


@attrs.frozen
class NodeSelectorTerm:
    match_expressions: tuple[NodeSelectorRequirement, ...] = attrs.field(default=(),
                                                                         converter=_tuple)
    match_fields: tuple[NodeSelectorRequirement, ...] = attrs.field(default=(), converter=_tuple)


@attrs.frozen
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


@attrs.frozen
class NodeAffinity:
    #: ``None`` when the pod states no required node affinity.
    required: tuple[NodeSelectorTerm, ...] | None = None
    #: ``None`` when the field is absent (an explicit empty list is not skipped upstream).
    preferred: tuple[PreferredSchedulingTerm, ...] | None = None


@attrs.frozen
class LabelSelectorRequirement:
    key: str
    operator: str
    values: tuple[str, ...] = attrs.field(default=(), converter=_tuple)


@attrs.frozen
class LabelSelector:
    """A ``metav1.LabelSelector``; the empty selector matches everything."""

    match_labels: FrozenDict = attrs.field(factory=FrozenDict, converter=_frozen_dict)
    match_expressions: tuple[LabelSelectorRequirement, ...] = attrs.field(default=(),
                                                                          converter=_tuple)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Mirror of ``metav1.LabelSelectorAsSelector(...).Matches``."""
        for key, value in self.match_labels.items():
            if labels.get(key) != value:
                return False
        for req in self.match_expressions:
            present = req.key in labels
            if req.operator == "In" and not (present and labels[req.key] in req.values):
                return False
            if req.operator == "NotIn" and present and labels[req.key] in req.values:
                return False
            if req.operator == "Exists" and not present:
                return False
            if req.operator == "DoesNotExist" and present:
                return False
        return True


@attrs.frozen
class PodAffinityTerm:
    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    mismatch_label_keys: tuple[str, ...] = attrs.field(default=(), converter=_tuple)


@attrs.frozen
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@attrs.frozen
class PodAffinity:
    """Pod affinity or anti-affinity: required and preferred terms."""

    required: tuple[PodAffinityTerm, ...] = attrs.field(default=(), converter=_tuple)
    preferred: tuple[WeightedPodAffinityTerm, ...] = attrs.field(default=(), converter=_tuple)


@attrs.frozen
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = attrs.field(default=(), converter=_tuple)


@attrs.frozen
class ContainerPort:
    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@attrs.frozen
class Container:
    name: str
    image: str = ""
    #: Only the resources the manifest states (the non-zero scoring rule needs to know).
    requests: FrozenDict = attrs.field(factory=FrozenDict, converter=_frozen_dict)
    ports: tuple[ContainerPort, ...] = attrs.field(default=(), converter=_tuple)
    #: ``restartPolicy: Always`` on an init container makes it a sidecar.
    restart_policy: str = ""

    @property
    def is_sidecar(self) -> bool:
        return self.restart_policy == "Always"


@attrs.frozen
class Volume:
    """A pod volume, reduced to what the volume plugins look at."""

    name: str
    kind: str
    claim_name: str = ""


@attrs.frozen
class Pod:
    name: str
    namespace: str = "default"
    uid: str = ""
    labels: FrozenDict = attrs.field(factory=FrozenDict, converter=_frozen_dict)
    node_name: str = ""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    priority: int = 0
    containers: tuple[Container, ...] = attrs.field(default=(), converter=_tuple)
    init_containers: tuple[Container, ...] = attrs.field(default=(), converter=_tuple)
    overhead: FrozenDict = attrs.field(factory=FrozenDict, converter=_frozen_dict)
    #: Pod-level ``spec.resources.requests``; ``None`` when absent.
    pod_requests: FrozenDict | None = attrs.field(default=None, converter=_optional_frozen_dict)
    #: ``None`` when absent; an explicit ``{}`` stops NodeAffinity's PreFilter from skipping.
    node_selector: FrozenDict | None = attrs.field(default=None, converter=_optional_frozen_dict)
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None
    tolerations: tuple[Toleration, ...] = attrs.field(default=(), converter=_tuple)
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = attrs.field(
        default=(), converter=_tuple
    )
    volumes: tuple[Volume, ...] = attrs.field(default=(), converter=_tuple)
    resource_claims: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    #: The controlling owner reference as (apiVersion, kind, name), if any.
    controller: tuple[str, str, str] | None = None
    phase: str = ""
    deleting: bool = False
    preemption_policy: str = "PreemptLowerPriority"
    priority_class_name: str = ""
    #: ``status.startTime`` and ``metadata.creationTimestamp`` as POSIX seconds (UTC).
    start_time: float | None = None
    creation_time: float | None = None
    nominated_node_name: str = ""
    scheduling_gates: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    #: The pod's ``Ready`` condition is ``True`` (``podutil.IsPodReady``).
    ready: bool = False
    #: ``spec.priority`` / ``spec.preemptionPolicy`` are set (Priority admission leaves them).
    priority_set: bool = False
    preemption_policy_set: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def has_pod_affinity(self) -> bool:
        """Pod affinity or anti-affinity is set (``NodeInfo.PodsWithAffinity`` membership)."""
        return self.pod_affinity is not None or self.pod_anti_affinity is not None

    @property
    def terminal(self) -> bool:
        """Succeeded and Failed pods hold no resources (upstream's cache skips them)."""
        return self.phase in ("Succeeded", "Failed")

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Pod:
        """Build a Pod from its wire-format dict, checking every field read."""
        return _parse_pod(obj)

    def with_status(self, start_time: float | None, nominated_node_name: str) -> Pod:
        """A copy with new ``status.startTime`` and ``status.nominatedNodeName``: what the
        scheduler changes on every cycle, so copied without running the fields' converters
        again (``attrs.evolve`` would; the other fields are already in their final form)."""
        copy = object.__new__(Pod)
        for name, value in zip(_POD_FIELDS, _pod_values(self)):
            object.__setattr__(copy, name, value)
        object.__setattr__(copy, "start_time", start_time)
        object.__setattr__(copy, "nominated_node_name", nominated_node_name)
        return copy


_POD_FIELDS = tuple(f.name for f in attrs.fields(Pod))
_pod_values = operator.attrgetter(*_POD_FIELDS)


@attrs.frozen
class ContainerImage:
    names: tuple[str, ...] = attrs.field(converter=_tuple)
    size_bytes: int = 0


@attrs.frozen
class Node:
    name: str
    labels: FrozenDict = attrs.field(factory=FrozenDict, converter=_frozen_dict)
    unschedulable: bool = False
    taints: tuple[Taint, ...] = attrs.field(default=(), converter=_tuple)
    allocatable: FrozenDict = attrs.field(factory=FrozenDict, converter=_frozen_dict)
    images: tuple[ContainerImage, ...] = attrs.field(default=(), converter=_tuple)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Node:
        """Build a Node from its wire-format dict, checking every field read."""
        return _parse_node(obj)


@attrs.frozen
class Namespace:
    name: str
    labels: FrozenDict = attrs.field(factory=FrozenDict, converter=_frozen_dict)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Namespace:
        r, meta = _metadata(obj, "Namespace", namespaced=False)
        return cls(meta["name"], r.string_map(meta.get("labels"), "metadata.labels"))


#: Kinds whose pod selector feeds PodTopologySpread's default constraints, with the
#: apiVersion a controller reference must carry (``helper/spread.go``).
SELECTING_KINDS = {"Service": "v1", "ReplicationController": "v1", "ReplicaSet": "apps/v1",
                   "StatefulSet": "apps/v1"}


@attrs.frozen
class Workload:
    """A Service, ReplicationController, ReplicaSet or StatefulSet, reduced to its selector.

    ``selector`` is ``None`` when the object has none (a Service without one selects nothing).
    Services and ReplicationControllers have plain label maps (``match_labels`` only).
    """

    kind: str
    name: str
    namespace: str = "default"
    selector: LabelSelector | None = None
    #: ``spec.replicas`` of a ReplicaSet, StatefulSet or ReplicationController (default 1);
    #: the disruption controller's expected pod count.
    replicas: int | None = None

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Workload:
        kind = obj.get("kind") if isinstance(obj, Mapping) else None
        r, meta = _metadata(obj, str(kind), namespaced=True)
        spec = r.mapping(obj.get("spec"), "spec")
        raw = spec.get("selector")
        if raw is None:
            selector = None
        elif kind in ("Service", "ReplicationController"):
            selector = LabelSelector(r.string_map(raw, "spec.selector"))
        else:
            selector = _label_selector(r, raw, "spec.selector")
        replicas = None
        if kind != "Service":
            replicas = r.integer(spec.get("replicas"), "spec.replicas", 1)
        return cls(str(kind), meta["name"], meta.get("namespace") or "default", selector,
                   replicas)


@attrs.frozen
class PriorityClass:
    """A scheduling.k8s.io/v1 PriorityClass (cluster-scoped)."""

    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> PriorityClass:
        """Build a PriorityClass from its wire-format dict, checking every field read."""
        r, meta = _metadata(obj, "PriorityClass", namespaced=False)
        value = r.integer(obj.get("value"), "value", None)
        if value is None:
            r.fail("value", "required value")
        if not INT32_MIN <= value <= INT32_MAX:
            r.fail("value", f"must be a 32-bit integer, got {value}")
        return cls(meta["name"], value, r.boolean(obj.get("globalDefault"), "globalDefault"),
                   r.choice(obj.get("preemptionPolicy"), "preemptionPolicy", PREEMPTION_POLICIES,
                            "PreemptLowerPriority"))


@attrs.frozen
class PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget: its spec and the disruption controller's status.

    ``min_available`` / ``max_unavailable`` hold an int or a percentage string ("50%").
    """

    name: str
    namespace: str = "default"
    #: ``None`` when ``spec.selector`` is absent (the budget then matches nothing).
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    #: The pod names of ``status.disruptedPods``.
    disrupted_pods: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def matches(self, pod: Pod) -> bool:
        """Whether the budget covers ``pod``, as ``filterPodsWithPDBViolation``
        (defaultpreemption) matches: a labelled pod in the same namespace, and a non-nil,
        non-empty, valid selector that selects it. ``disrupted_pods`` is left to the caller."""
        sel = self.selector
        if not pod.labels or pod.namespace != self.namespace or sel is None:
            return False
        if not sel.match_labels and not sel.match_expressions:
            return False  # labels.Everything(): "a nil or empty selector matches nothing"
        if any((req.operator in ("In", "NotIn")) != bool(req.values)
               for req in sel.match_expressions):
            return False  # LabelSelectorAsSelector fails: an invalid selector matches nothing
        return sel.matches(pod.labels)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> PodDisruptionBudget:
        """Build a PodDisruptionBudget from its wire-format dict, checking every field read."""
        return _parse_pdb(obj)


# --------------------------------------------------------------------------- parsing

_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?"
                      r"(Z|[+-]\d{2}:[0-5]\d)\Z")


def parse_time(text: str) -> float:
    """POSIX seconds (UTC) of an RFC 3339 timestamp, as ``metav1.Time`` unmarshals it
    (``time.RFC3339``: ``Z`` or a ``+hh:mm`` offset, optional fractional seconds).

    Raises ``ValueError`` for anything else.
    """
    match = _RFC3339.match(text) if isinstance(text, str) else None
    try:
        if match is None:
            raise ValueError
        zone = match[8]
        offset = 0 if zone == "Z" else int(zone[1:3]) * 60 + int(zone[4:6])
        tz = datetime.timezone(datetime.timedelta(minutes=-offset if zone[0] == "-" else offset))
        moment = datetime.datetime(*(int(g) for g in match.groups()[:6]), tzinfo=tz)
    except ValueError:
        raise ValueError(f'invalid RFC 3339 timestamp "{text}"') from None
    return moment.timestamp() + float(match[7] or 0)


class _Reader:
    """Typed access to one manifest, raising errors that name the object and field."""

    def __init__(self, obj: str) -> None:
        self.obj = obj

    def fail(self, path: str, problem: str) -> None:
        from ksched.errors import InvalidObjectError

        raise InvalidObjectError(self.obj, path, problem)

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.fail(path, f"expected an object, got {_type_name(value)}")
        return value

    def seq(self, value: Any, path: str) -> list:
        if value is None:
            return []
        if not isinstance(value, list | tuple):
            self.fail(path, f"expected a list, got {_type_name(value)}")
        return list(value)

    def string(self, value: Any, path: str, default: str = "") -> str:
        if value is None:
            return default
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {_type_name(value)}")
        return value

    def integer(self, value: Any, path: str, default: int | None = 0) -> int | None:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, f"expected an integer, got {_type_name(value)}")
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            self.fail(path, f"expected a boolean, got {_type_name(value)}")
        return value

    def choice(self, value: Any, path: str, allowed: tuple[str, ...], default: str = "") -> str:
        text = self.string(value, path, default)
        if text not in allowed:
            options = ", ".join(f'"{a}"' for a in allowed if a)
            self.fail(path, f'unsupported value "{text}": supported values: {options}')
        return text

    def timestamp(self, value: Any, path: str) -> float | None:
        """An RFC 3339 timestamp as POSIX seconds; ``None`` when absent."""
        if value is None:
            return None
        text = self.string(value, path)
        try:
            return parse_time(text)
        except ValueError as exc:
            self.fail(path, str(exc))

    def string_map(self, value: Any, path: str) -> FrozenDict:
        out = {}
        for key, item in self.mapping(value, path).items():
            out[key] = self.string(item, f"{path}.{key}")
        return FrozenDict(out)

    def strings(self, value: Any, path: str) -> tuple[str, ...]:
        return tuple(self.string(v, f"{path}[{i}]") for i, v in enumerate(self.seq(value, path)))

    def resources(self, value: Any, path: str) -> FrozenDict:
        """A ResourceList: cpu in milli-cores, everything else in units, both rounded up."""
        out = {}
        for name, text in self.mapping(value, path).items():
            if isinstance(text, bool) or not isinstance(text, str | int | float):
                self.fail(f"{path}.{name}", f"expected a quantity, got {_type_name(text)}")
            try:
                amount = _quantity.parse_quantity(text)
            except _quantity.QuantityError as exc:
                self.fail(f"{path}.{name}", str(exc))
            if amount < 0:
                self.fail(f"{path}.{name}", f'must be a non-negative quantity, got "{text}"')
            convert = _quantity.milli_value if name == CPU else _quantity.value
            out[name] = convert(amount)
        return FrozenDict(out)


_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
               int: "an integer", float: "a number", type(None): "null"}


def _type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _metadata(obj: Mapping[str, Any], kind: str, namespaced: bool) -> tuple[_Reader, Mapping]:
    if not isinstance(obj, Mapping):
        from ksched.errors import InvalidObjectError

        raise InvalidObjectError(kind.lower(), "", f"expected an object, got {_type_name(obj)}")
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    namespace = (meta.get("namespace") or "default") if isinstance(meta, Mapping) else "default"
    label = f"{namespace}/{name}" if namespaced else f"{name}"
    reader = _Reader(f"{kind.lower()} {label if isinstance(name, str) and name else '<unnamed>'}")
    meta = reader.mapping(meta, "metadata")
    if not isinstance(name, str) or not name:
        reader.fail("metadata.name", "required value")
    if namespaced:
        reader.string(meta.get("namespace"), "metadata.namespace")
    return reader, meta


def _parse_node(obj: Mapping[str, Any]) -> Node:
    r, meta = _metadata(obj, "Node", namespaced=False)
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    taints = []
    for i, t in enumerate(r.seq(spec.get("taints"), "spec.taints")):
        path = f"spec.taints[{i}]"
        t = r.mapping(t, path)
        key = r.string(t.get("key"), f"{path}.key")
        if not key:
            r.fail(f"{path}.key", "required value")
        effect = r.choice(t.get("effect"), f"{path}.effect", TAINT_EFFECTS)
        taints.append(Taint(key, r.string(t.get("value"), f"{path}.value"), effect))
    allocatable = status.get("allocatable")
    alloc_path = "status.allocatable"
    if allocatable is None:  # SetDefaults_NodeStatus: allocatable defaults to capacity
        allocatable, alloc_path = status.get("capacity"), "status.capacity"
    images = []
    for i, img in enumerate(r.seq(status.get("images"), "status.images")):
        img = r.mapping(img, f"status.images[{i}]")
        images.append(ContainerImage(
            r.strings(img.get("names"), f"status.images[{i}].names"),
            r.integer(img.get("sizeBytes"), f"status.images[{i}].sizeBytes"),
        ))
    return Node(
        name=meta["name"],
        labels=r.string_map(meta.get("labels"), "metadata.labels"),
        unschedulable=r.boolean(spec.get("unschedulable"), "spec.unschedulable"),
        taints=tuple(taints),
        allocatable=r.resources(allocatable, alloc_path),
        images=tuple(images),
    )


def _parse_pod(obj: Mapping[str, Any]) -> Pod:
    r, meta = _metadata(obj, "Pod", namespaced=True)
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    containers = _containers(r, spec.get("containers"), "spec.containers")
    init_containers = _containers(r, spec.get("initContainers"), "spec.initContainers")
    affinity = r.mapping(spec.get("affinity"), "spec.affinity")
    pod_resources = r.mapping(spec.get("resources"), "spec.resources")
    controller = None
    for i, ref in enumerate(r.seq(meta.get("ownerReferences"), "metadata.ownerReferences")):
        path = f"metadata.ownerReferences[{i}]"
        ref = r.mapping(ref, path)
        if r.boolean(ref.get("controller"), f"{path}.controller") and controller is None:
            controller = (r.string(ref.get("apiVersion"), f"{path}.apiVersion"),
                          r.string(ref.get("kind"), f"{path}.kind"),
                          r.string(ref.get("name"), f"{path}.name"))
    claims = tuple(
        r.string(r.mapping(c, f"spec.resourceClaims[{i}]").get("name"),
                 f"spec.resourceClaims[{i}].name")
        for i, c in enumerate(r.seq(spec.get("resourceClaims"), "spec.resourceClaims"))
    )
    return Pod(
        name=meta["name"],
        namespace=meta.get("namespace") or "default",
        uid=r.string(meta.get("uid"), "metadata.uid"),
        labels=r.string_map(meta.get("labels"), "metadata.labels"),
        node_name=r.string(spec.get("nodeName"), "spec.nodeName"),
        scheduler_name=r.string(spec.get("schedulerName"), "spec.schedulerName",
                                DEFAULT_SCHEDULER_NAME) or DEFAULT_SCHEDULER_NAME,
        priority=r.integer(spec.get("priority"), "spec.priority"),
        containers=containers,
        init_containers=init_containers,
        overhead=r.resources(spec.get("overhead"), "spec.overhead"),
        pod_requests=(r.resources(pod_resources.get("requests"), "spec.resources.requests")
                      if "requests" in pod_resources else None),
        node_selector=(r.string_map(spec.get("nodeSelector"), "spec.nodeSelector")
                       if spec.get("nodeSelector") is not None else None),
        node_affinity=_node_affinity(r, affinity.get("nodeAffinity"), "spec.affinity.nodeAffinity"),
        pod_affinity=_pod_affinity(r, affinity.get("podAffinity"), "spec.affinity.podAffinity"),
        pod_anti_affinity=_pod_affinity(r, affinity.get("podAntiAffinity"),
                                        "spec.affinity.podAntiAffinity"),
        tolerations=_tolerations(r, spec.get("tolerations"), "spec.tolerations"),
        topology_spread_constraints=_spread_constraints(
            r, spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints"),
        volumes=_volumes(r, spec.get("volumes"), "spec.volumes"),
        resource_claims=claims,
        controller=controller,
        phase=r.string(status.get("phase"), "status.phase"),
        deleting=meta.get("deletionTimestamp") is not None,
        preemption_policy=r.choice(spec.get("preemptionPolicy"), "spec.preemptionPolicy",
                                   PREEMPTION_POLICIES, "PreemptLowerPriority"),
        priority_class_name=r.string(spec.get("priorityClassName"), "spec.priorityClassName"),
        start_time=r.timestamp(status.get("startTime"), "status.startTime"),
        creation_time=r.timestamp(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
        nominated_node_name=r.string(status.get("nominatedNodeName"), "status.nominatedNodeName"),
        scheduling_gates=tuple(
            r.string(r.mapping(g, f"spec.schedulingGates[{i}]").get("name"),
                     f"spec.schedulingGates[{i}].name")
            for i, g in enumerate(r.seq(spec.get("schedulingGates"), "spec.schedulingGates"))),
        ready=_ready(r, status.get("conditions"), "status.conditions"),
        priority_set=spec.get("priority") is not None,
        preemption_policy_set=spec.get("preemptionPolicy") is not None,
    )


def _ready(r: _Reader, value: Any, path: str) -> bool:
    """``podutil.IsPodReady``: the first ``Ready`` condition has status ``True``."""
    for i, c in enumerate(r.seq(value, path)):
        c = r.mapping(c, f"{path}[{i}]")
        if r.string(c.get("type"), f"{path}[{i}].type") == "Ready":
            return r.string(c.get("status"), f"{path}[{i}].status") == "True"
    return False


_PERCENT = re.compile(r"[0-9]+%\Z")


def _int_or_percent(r: _Reader, value: Any, path: str) -> int | str | None:
    """An IntOrString budget, checked as ``ValidatePositiveIntOrPercent`` and
    ``IsNotMoreThan100Percent`` (pkg/apis/policy/validation) do."""
    if value is None:
        return None
    if isinstance(value, str):
        if not _PERCENT.match(value):
            r.fail(path, f'invalid value "{value}": must be an integer or percentage (e.g. "5%")')
        if int(value[:-1]) > 100:
            r.fail(path, f'invalid value "{value}": must not be greater than 100%')
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        r.fail(path, f"expected an integer or a percentage, got {_type_name(value)}")
    if value < 0:
        r.fail(path, f"must be greater than or equal to 0, got {value}")
    return value


def _parse_pdb(obj: Mapping[str, Any]) -> PodDisruptionBudget:
    r, meta = _metadata(obj, "PodDisruptionBudget", namespaced=True)
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    min_available = _int_or_percent(r, spec.get("minAvailable"), "spec.minAvailable")
    max_unavailable = _int_or_percent(r, spec.get("maxUnavailable"), "spec.maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        r.fail("spec", "minAvailable and maxUnavailable are mutually exclusive")
    return PodDisruptionBudget(
        name=meta["name"],
        namespace=meta.get("namespace") or "default",
        selector=_label_selector(r, spec.get("selector"), "spec.selector"),
        min_available=min_available,
        max_unavailable=max_unavailable,
        disruptions_allowed=r.integer(status.get("disruptionsAllowed"),
                                      "status.disruptionsAllowed"),
        current_healthy=r.integer(status.get("currentHealthy"), "status.currentHealthy"),
        desired_healthy=r.integer(status.get("desiredHealthy"), "status.desiredHealthy"),
        expected_pods=r.integer(status.get("expectedPods"), "status.expectedPods"),
        disrupted_pods=frozenset(r.mapping(status.get("disruptedPods"), "status.disruptedPods")),
    )


def _containers(r: _Reader, value: Any, path: str) -> tuple[Container, ...]:
    out = []
    for i, c in enumerate(r.seq(value, path)):
        cpath = f"{path}[{i}]"
        c = r.mapping(c, cpath)
        resources = r.mapping(c.get("resources"), f"{cpath}.resources")
        ports = []
        for j, p in enumerate(r.seq(c.get("ports"), f"{cpath}.ports")):
            ppath = f"{cpath}.ports[{j}]"
            p = r.mapping(p, ppath)
            ports.append(ContainerPort(
                container_port=r.integer(p.get("containerPort"), f"{ppath}.containerPort"),
                host_port=r.integer(p.get("hostPort"), f"{ppath}.hostPort"),
                protocol=r.choice(p.get("protocol"), f"{ppath}.protocol", PROTOCOLS, "TCP"),
                host_ip=r.string(p.get("hostIP"), f"{ppath}.hostIP"),
            ))
        out.append(Container(
            name=r.string(c.get("name"), f"{cpath}.name"),
            image=r.string(c.get("image"), f"{cpath}.image"),
            requests=r.resources(resources.get("requests"), f"{cpath}.resources.requests"),
            ports=tuple(ports),
            restart_policy=r.string(c.get("restartPolicy"), f"{cpath}.restartPolicy"),
        ))
    return _interned(tuple(out))


#: Container lists seen lately: pods of one controller share one (so do caches keyed by it).
_INTERNED: dict[tuple[Container, ...], tuple[Container, ...]] = {}


def _interned(containers: tuple[Container, ...]) -> tuple[Container, ...]:
    """An equal container list seen before, else this one (remembered)."""
    found = _INTERNED.get(containers)
    if found is None:
        if len(_INTERNED) >= 4096:
            _INTERNED.clear()
        found = _INTERNED[containers] = containers
    return found


def _tolerations(r: _Reader, value: Any, path: str) -> tuple[Toleration, ...]:
    out = []
    for i, t in enumerate(r.seq(value, path)):
        tpath = f"{path}[{i}]"
        t = r.mapping(t, tpath)
        out.append(Toleration(
            key=r.string(t.get("key"), f"{tpath}.key"),
            operator=r.choice(t.get("operator"), f"{tpath}.operator", TOLERATION_OPERATORS),
            value=r.string(t.get("value"), f"{tpath}.value"),
            effect=r.choice(t.get("effect"), f"{tpath}.effect", ("",) + TAINT_EFFECTS),
        ))
    return tuple(out)


def _node_selector_term(r: _Reader, value: Any, path: str) -> NodeSelectorTerm:
    term = r.mapping(value, path)
    parts = {}
    for field in ("matchExpressions", "matchFields"):
        reqs = []
        for i, req in enumerate(r.seq(term.get(field), f"{path}.{field}")):
            rpath = f"{path}.{field}[{i}]"
            req = r.mapping(req, rpath)
            reqs.append(NodeSelectorRequirement(
                key=r.string(req.get("key"), f"{rpath}.key"),
                operator=r.choice(req.get("operator"), f"{rpath}.operator",
                                  NODE_SELECTOR_OPERATORS),
                values=r.strings(req.get("values"), f"{rpath}.values"),
            ))
        parts[field] = tuple(reqs)
    return NodeSelectorTerm(parts["matchExpressions"], parts["matchFields"])


def _node_affinity(r: _Reader, value: Any, path: str) -> NodeAffinity | None:
    if value is None:
        return None
    value = r.mapping(value, path)
    required = None
    req = value.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        rpath = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
        req = r.mapping(req, rpath)
        required = tuple(
            _node_selector_term(r, t, f"{rpath}.nodeSelectorTerms[{i}]")
            for i, t in enumerate(r.seq(req.get("nodeSelectorTerms"), f"{rpath}.nodeSelectorTerms"))
        )
    preferred = None
    pfield = "preferredDuringSchedulingIgnoredDuringExecution"
    if value.get(pfield) is not None:
        preferred = []
        ppath = f"{path}.{pfield}"
        for i, t in enumerate(r.seq(value.get(pfield), ppath)):
            t = r.mapping(t, f"{ppath}[{i}]")
            preferred.append(PreferredSchedulingTerm(
                weight=r.integer(t.get("weight"), f"{ppath}[{i}].weight"),
                preference=_node_selector_term(r, t.get("preference"), f"{ppath}[{i}].preference"),
            ))
        preferred = tuple(preferred)
    return NodeAffinity(required, preferred)


def _label_selector(r: _Reader, value: Any, path: str) -> LabelSelector | None:
    if value is None:
        return None
    value = r.mapping(value, path)
    reqs = []
    for i, req in enumerate(r.seq(value.get("matchExpressions"), f"{path}.matchExpressions")):
        rpath = f"{path}.matchExpressions[{i}]"
        req = r.mapping(req, rpath)
        reqs.append(LabelSelectorRequirement(
            key=r.string(req.get("key"), f"{rpath}.key"),
            operator=r.choice(req.get("operator"), f"{rpath}.operator", LABEL_SELECTOR_OPERATORS),
            values=r.strings(req.get("values"), f"{rpath}.values"),
        ))
    return LabelSelector(r.string_map(value.get("matchLabels"), f"{path}.matchLabels"), tuple(reqs))


def _pod_affinity_term(r: _Reader, value: Any, path: str) -> PodAffinityTerm:
    value = r.mapping(value, path)
    return PodAffinityTerm(
        topology_key=r.string(value.get("topologyKey"), f"{path}.topologyKey"),
        label_selector=_label_selector(r, value.get("labelSelector"), f"{path}.labelSelector"),
        namespaces=r.strings(value.get("namespaces"), f"{path}.namespaces"),
        namespace_selector=_label_selector(r, value.get("namespaceSelector"),
                                           f"{path}.namespaceSelector"),
        match_label_keys=r.strings(value.get("matchLabelKeys"), f"{path}.matchLabelKeys"),
        mismatch_label_keys=r.strings(value.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys"),
    )


def _pod_affinity(r: _Reader, value: Any, path: str) -> PodAffinity | None:
    if value is None:
        return None
    value = r.mapping(value, path)
    rfield = "requiredDuringSchedulingIgnoredDuringExecution"
    pfield = "preferredDuringSchedulingIgnoredDuringExecution"
    required = tuple(_pod_affinity_term(r, t, f"{path}.{rfield}[{i}]")
                     for i, t in enumerate(r.seq(value.get(rfield), f"{path}.{rfield}")))
    preferred = []
    for i, t in enumerate(r.seq(value.get(pfield), f"{path}.{pfield}")):
        tpath = f"{path}.{pfield}[{i}]"
        t = r.mapping(t, tpath)
        preferred.append(WeightedPodAffinityTerm(
            weight=r.integer(t.get("weight"), f"{tpath}.weight"),
            term=_pod_affinity_term(r, t.get("podAffinityTerm"), f"{tpath}.podAffinityTerm"),
        ))
    return PodAffinity(required, tuple(preferred))


def _spread_constraints(r: _Reader, value: Any, path: str) -> tuple[TopologySpreadConstraint, ...]:
    out = []
    for i, c in enumerate(r.seq(value, path)):
        cpath = f"{path}[{i}]"
        c = r.mapping(c, cpath)
        max_skew = r.integer(c.get("maxSkew"), f"{cpath}.maxSkew", None)
        if max_skew is None or max_skew <= 0:
            r.fail(f"{cpath}.maxSkew", "must be greater than zero")
        key = r.string(c.get("topologyKey"), f"{cpath}.topologyKey")
        if not key:
            r.fail(f"{cpath}.topologyKey", "required value")
        out.append(TopologySpreadConstraint(
            max_skew=max_skew,
            topology_key=key,
            when_unsatisfiable=r.choice(c.get("whenUnsatisfiable"), f"{cpath}.whenUnsatisfiable",
                                        UNSATISFIABLE_ACTIONS),
            label_selector=_label_selector(r, c.get("labelSelector"), f"{cpath}.labelSelector"),
            min_domains=r.integer(c.get("minDomains"), f"{cpath}.minDomains", None),
            node_affinity_policy=(r.choice(c.get("nodeAffinityPolicy"),
                                           f"{cpath}.nodeAffinityPolicy", INCLUSION_POLICIES)
                                  if c.get("nodeAffinityPolicy") is not None else None),
            node_taints_policy=(r.choice(c.get("nodeTaintsPolicy"), f"{cpath}.nodeTaintsPolicy",
                                         INCLUSION_POLICIES)
                                if c.get("nodeTaintsPolicy") is not None else None),
            match_label_keys=r.strings(c.get("matchLabelKeys"), f"{cpath}.matchLabelKeys"),
        ))
    return tuple(out)


_VOLUME_SOURCES = ("persistentVolumeClaim", "ephemeral", "gcePersistentDisk",
                   "awsElasticBlockStore", "rbd", "iscsi", "csi", "azureDisk", "cinder")


def _volumes(r: _Reader, value: Any, path: str) -> tuple[Volume, ...]:
    out = []
    for i, v in enumerate(r.seq(value, path)):
        v = r.mapping(v, f"{path}[{i}]")
        kind = next((k for k in _VOLUME_SOURCES if v.get(k) is not None), "local")
        claim = ""
        if kind == "persistentVolumeClaim":
            src = r.mapping(v.get(kind), f"{path}[{i}].{kind}")
            claim = r.string(src.get("claimName"), f"{path}[{i}].{kind}.claimName")
        out.append(Volume(r.string(v.get("name"), f"{path}[{i}].name"), kind, claim))
    return tuple(out)

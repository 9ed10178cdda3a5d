"""Frozen records of the Kubernetes objects the scheduler reads (``k8s.io/api/core/v1``
``types.go`` and the policy and scheduling groups), with the API server's defaulting that reaches
scheduling (``pkg/apis/core/v1/defaults.go``).

Records check themselves (:mod:`ksched.api.fields`): every field's type is checked at
construction, resource lists take quantities or ints in scheduler units, a container's requests
default to its limits, a ``host_network`` pod's ports to host ports, pod-level requests to the
containers' and the pod's limits. Each record kind is built from the wire format by its
``from_manifest`` constructor, which runs the reader registered for it in
:data:`MANIFEST_READERS` (:mod:`ksched.api.pods`, :mod:`ksched.api.kinds`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ksched.api.fields import (
    BOOL,
    INT,
    INT32,
    INT_OR_PERCENT,
    OPT_INT,
    OPT_RESOURCES,
    OPT_STRING_MAP,
    OPT_TIME,
    RESOURCES,
    SEQ,
    STR,
    STRING_MAP,
    FrozenDict,
    ResourceList,
    assembler,
    checked_field,
    instance_of,
    items_of,
    one_of,
    optional_of,
    record,
    strings_field,
    tuple_of,
)
from ksched.api.pod_volume import Volume
from ksched.constants import CPU, DEFAULT_SCHEDULER_NAME, MEMORY
from ksched.errors import ArgumentError
from ksched.labels import requirements_match
from ksched.resources import pod_requests as aggregate_requests

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("", "Equal", "Exists")
PROTOCOLS = ("TCP", "UDP", "SCTP")
UNSATISFIABLE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
INCLUSION_POLICIES = ("Honor", "Ignore")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")
#: ``scheduling.HighestUserDefinablePriority``.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
#: ``scheduling.SystemPriorityClasses()``: name -> value (neither is the global default).
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000,
                           "system-cluster-critical": 2000000000}
#: ``v1.LabelMetadataName``: the label ``SetDefaults_Namespace`` gives every namespace.
LABEL_METADATA_NAME = "kubernetes.io/metadata.name"
#: The prefix of hugepages resources (``v1.ResourceHugePagesPrefix``).
HUGEPAGES_PREFIX = "hugepages-"

#: Record class -> the function reading it from its wire format, behind ``from_manifest``.
#: :mod:`ksched.api` fills it with the manifest readers (they build records, so the records
#: cannot import them).
MANIFEST_READERS: dict[type, Callable[[Mapping[str, Any]], Any]] = {}


# --------------------------------------------------------------------------- records


@record
class Taint:
    key: str = checked_field(STR)
    value: str = checked_field(STR, default="")
    effect: str = checked_field(one_of(*TAINT_EFFECTS), default="NoSchedule")


@record
class Toleration:
    key: str = checked_field(STR, default="")
    #: ``""`` means ``Equal``.
    operator: str = checked_field(one_of(*TOLERATION_OPERATORS), default="")
    value: str = checked_field(STR, default="")
    #: ``""`` matches every effect.
    effect: str = checked_field(one_of("", *TAINT_EFFECTS), default="")

    def tolerates(self, taint: Taint) -> bool:
        """Mirror of ``Toleration.ToleratesTaint`` (k8s.io/api/core/v1/toleration.go)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


@record
class NodeSelectorRequirement:
    """A node selector requirement; an invalid one (bad key, operator or values) is kept:
    NodeAffinity treats it as matching nothing."""

    key: str = checked_field(STR)
    operator: str = checked_field(STR)
    values: tuple[str, ...] = strings_field()


@record
class NodeSelectorTerm:
    match_expressions: tuple[NodeSelectorRequirement, ...] = tuple_of(NodeSelectorRequirement)
    match_fields: tuple[NodeSelectorRequirement, ...] = tuple_of(NodeSelectorRequirement)


@record
class PreferredSchedulingTerm:
    weight: int = checked_field(INT32)
    preference: NodeSelectorTerm = checked_field(instance_of(NodeSelectorTerm))


@record
class NodeAffinity:
    #: ``None`` when the pod states no required node affinity.
    required: tuple[NodeSelectorTerm, ...] | None = tuple_of(NodeSelectorTerm, optional=True)
    #: ``None`` when the field is absent (an explicit empty list is not skipped upstream).
    preferred: tuple[PreferredSchedulingTerm, ...] | None = tuple_of(PreferredSchedulingTerm,
                                                                      optional=True)


@record
class LabelSelectorRequirement:
    """A label selector requirement; its syntax is left to the selector's user (upstream's
    ``LabelSelectorAsSelector`` fails on an invalid one)."""

    key: str = checked_field(STR)
    operator: str = checked_field(STR)
    values: tuple[str, ...] = strings_field()


@record
class LabelSelector:
    """A ``metav1.LabelSelector``; the empty selector matches everything."""

    match_labels: FrozenDict = attrs.field(factory=FrozenDict, converter=STRING_MAP)
    match_expressions: tuple[LabelSelectorRequirement, ...] = tuple_of(LabelSelectorRequirement)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Mirror of ``metav1.LabelSelectorAsSelector(...).Matches``."""
        for key, value in self.match_labels.items():
            if labels.get(key) != value:
                return False
        return not self.match_expressions or requirements_match(
            labels, [(r.key, r.operator, r.values) for r in self.match_expressions])


_OPT_SELECTOR = optional_of(LabelSelector)


@record
class PodAffinityTerm:
    topology_key: str = checked_field(STR)
    label_selector: LabelSelector | None = checked_field(_OPT_SELECTOR, default=None)
    namespaces: tuple[str, ...] = strings_field()
    namespace_selector: LabelSelector | None = checked_field(_OPT_SELECTOR, default=None)
    match_label_keys: tuple[str, ...] = strings_field()
    mismatch_label_keys: tuple[str, ...] = strings_field()


@record
class WeightedPodAffinityTerm:
    weight: int = checked_field(INT32)
    term: PodAffinityTerm = checked_field(instance_of(PodAffinityTerm))


@record
class PodAffinity:
    """Pod affinity or anti-affinity: required and preferred terms."""

    required: tuple[PodAffinityTerm, ...] = tuple_of(PodAffinityTerm)
    preferred: tuple[WeightedPodAffinityTerm, ...] = tuple_of(WeightedPodAffinityTerm)


_POLICY = one_of(*INCLUSION_POLICIES, optional=True)


@record
class TopologySpreadConstraint:
    """A topology spread constraint. ``None`` policies and ``min_domains`` are the
    scheduler's defaults (``Honor``, ``Ignore``, 1)."""

    max_skew: int = checked_field(INT32)
    topology_key: str = checked_field(STR)
    when_unsatisfiable: str = checked_field(one_of(*UNSATISFIABLE_ACTIONS))
    label_selector: LabelSelector | None = checked_field(_OPT_SELECTOR, default=None)
    min_domains: int | None = checked_field(OPT_INT, default=None)
    node_affinity_policy: str | None = checked_field(_POLICY, default=None)
    node_taints_policy: str | None = checked_field(_POLICY, default=None)
    match_label_keys: tuple[str, ...] = strings_field()


@record
class ContainerPort:
    container_port: int = checked_field(INT32)
    #: 0: none (a ``host_network`` pod's ports default to host ports, see :class:`Pod`).
    host_port: int = checked_field(INT32, default=0)
    protocol: str = checked_field(one_of(*PROTOCOLS), default="TCP")
    host_ip: str = checked_field(STR, default="")


@record
class Container:
    """A container. ``requests`` and ``limits`` take quantities (strings such as ``"500m"``
    or ``"1Gi"``, or floats: ``0.5`` cpu is half a core) or ints in scheduler units (cpu
    milli-cores, the rest units); a resource with a limit and no request requests its limit
    (``SetDefaults_Pod``)."""

    name: str = checked_field(STR)
    image: str = checked_field(STR, default="")
    #: Only the resources the manifest states, or its limits give (the non-zero scoring rule
    #: needs to know).
    requests: ResourceList = attrs.field(factory=ResourceList, converter=RESOURCES)
    ports: tuple[ContainerPort, ...] = tuple_of(ContainerPort)
    #: ``restartPolicy: Always`` on an init container makes it a sidecar.
    restart_policy: str = checked_field(STR, default="")
    limits: ResourceList = attrs.field(factory=ResourceList, converter=RESOURCES)

    def __attrs_post_init__(self) -> None:
        """``SetDefaults_Pod``: requests default to limits, per resource."""
        if self.limits and not self.limits.keys() <= self.requests.keys():
            object.__setattr__(self, "requests", ResourceList({**self.limits, **self.requests}))

    @property
    def is_sidecar(self) -> bool:
        return self.restart_policy == "Always"


@record
class Pod:
    """A pod. Resource lists take quantity strings or ints in scheduler units (as
    :class:`Container`); ``host_network`` pods' container ports default to host ports and
    ``pod_limits`` default the pod-level requests, as the API server's ``SetDefaults_Pod``
    does."""

    name: str = checked_field(STR)
    namespace: str = checked_field(STR, default="default")
    uid: str = checked_field(STR, default="")
    labels: FrozenDict = attrs.field(factory=FrozenDict, converter=STRING_MAP)
    node_name: str = checked_field(STR, default="")
    scheduler_name: str = checked_field(STR, default=DEFAULT_SCHEDULER_NAME)
    priority: int = checked_field(INT32, default=0)
    containers: tuple[Container, ...] = tuple_of(Container)
    init_containers: tuple[Container, ...] = tuple_of(Container)
    overhead: FrozenDict = attrs.field(factory=ResourceList, converter=RESOURCES)
    #: Pod-level ``spec.resources.requests``; ``None`` when absent.
    pod_requests: FrozenDict | None = attrs.field(default=None, converter=OPT_RESOURCES)
    #: ``None`` when absent; an explicit ``{}`` stops NodeAffinity's PreFilter from skipping.
    node_selector: FrozenDict | None = attrs.field(default=None, converter=OPT_STRING_MAP)
    node_affinity: NodeAffinity | None = checked_field(optional_of(NodeAffinity), default=None)
    pod_affinity: PodAffinity | None = checked_field(optional_of(PodAffinity), default=None)
    pod_anti_affinity: PodAffinity | None = checked_field(optional_of(PodAffinity), default=None)
    tolerations: tuple[Toleration, ...] = tuple_of(Toleration)
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = tuple_of(
        TopologySpreadConstraint)
    volumes: tuple[Volume, ...] = tuple_of(Volume)
    resource_claims: tuple[str, ...] = strings_field()
    #: Per ``spec.resourceClaims`` entry: (name, resourceClaimName, resourceClaimTemplateName).
    claim_sources: tuple[tuple[str, str, str], ...] = attrs.field(default=(), converter=tuple)
    #: ``status.resourceClaimStatuses``: (name, resourceClaimName or "").
    claim_statuses: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=tuple)
    #: The controlling owner reference as (apiVersion, kind, name), if any.
    controller: tuple[str, str, str] | None = tuple_of(str, optional=True)
    phase: str = checked_field(STR, default="")
    deleting: bool = checked_field(BOOL, default=False)
    preemption_policy: str = checked_field(one_of(*PREEMPTION_POLICIES),
                                           default="PreemptLowerPriority")
    priority_class_name: str = checked_field(STR, default="")
    #: ``status.startTime`` and ``metadata.creationTimestamp`` as POSIX seconds (UTC).
    start_time: float | None = checked_field(OPT_TIME, default=None)
    creation_time: float | None = checked_field(OPT_TIME, default=None)
    nominated_node_name: str = checked_field(STR, default="")
    scheduling_gates: tuple[str, ...] = strings_field()
    #: The pod's ``Ready`` condition is ``True`` (``podutil.IsPodReady``).
    ready: bool = checked_field(BOOL, default=False)
    #: ``spec.priority`` / ``spec.preemptionPolicy`` are set (Priority admission leaves them).
    priority_set: bool = checked_field(BOOL, default=False)
    preemption_policy_set: bool = checked_field(BOOL, default=False)
    #: ``spec.hostNetwork``: every container port without a host port takes its container
    #: port as host port (``defaultHostNetworkPorts``).
    host_network: bool = checked_field(BOOL, default=False)
    #: Pod-level ``spec.resources.limits``; ``None`` when absent. They default the pod-level
    #: requests (``defaultPodRequests``).
    pod_limits: FrozenDict | None = attrs.field(default=None, converter=OPT_RESOURCES)

    def __attrs_post_init__(self) -> None:
        if self.host_network:
            _default_host_ports(self)
        if self.pod_limits is not None or self.pod_requests is not None:
            _default_pod_requests(self)

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
        """Build a Pod from its wire-format dict: every field read is checked, the API
        server's defaulting applied and its validation run."""
        return MANIFEST_READERS[cls](obj)

    def with_status(self, start_time: float | None, nominated_node_name: str) -> Pod:
        """A copy with new ``status.startTime`` and ``status.nominatedNodeName``: what the
        scheduler changes on every cycle, so copied without running the fields' converters
        again (``attrs.evolve`` would; the other fields are already in their final form)."""
        values = list(_pod_values(self))
        values[_START_TIME], values[_NOMINATED_NODE_NAME] = start_time, nominated_node_name
        return _copy_pod(values)

    def renamed(self, name: str) -> Pod:
        """A copy named ``name`` (copies of a template: cluster-capacity's ``<name>-<k>``),
        the other fields shared without running their converters again."""
        return self._with_string(_NAME, "name", name)

    def bound_to(self, node_name: str) -> Pod:
        """A copy with ``spec.nodeName`` set (what binding changes), the other fields shared
        without running their converters again."""
        return self._with_string(_NODE_NAME, "node_name", node_name)

    def _with_string(self, index: int, field: str, value: str) -> Pod:
        if type(value) is not str:
            raise ArgumentError(f"{field}: expected a string, got {type(value).__name__}")
        values = list(_pod_values(self))
        values[index] = value
        return _copy_pod(values)


_POD_FIELDS = tuple(f.name for f in attrs.fields(Pod))
_pod_values = operator.attrgetter(*_POD_FIELDS)
_NAME, _NODE_NAME, _START_TIME, _NOMINATED_NODE_NAME = (
    _POD_FIELDS.index(name) for name in ("name", "node_name", "start_time",
                                         "nominated_node_name"))


_copy_pod = assembler(Pod, _POD_FIELDS)


#: Container lists and other tuples of pod fields seen lately: pods of one controller share
#: one (so do caches keyed by it, or by its identity).
_INTERNED: dict[tuple, tuple] = {}


def interned(value: tuple) -> tuple:
    """An equal tuple (of a pod field) seen before, else this one (remembered)."""
    found = _INTERNED.get(value)
    if found is None:
        if len(_INTERNED) >= 4096:
            _INTERNED.clear()
        found = _INTERNED[value] = value
    return found


def _default_host_ports(pod: Pod) -> None:
    """``defaultHostNetworkPorts``: with host networking every container port (of app and
    init containers) without a host port is exposed on its container port."""
    for field in ("containers", "init_containers"):
        containers = getattr(pod, field)
        if any(p.host_port == 0 for c in containers for p in c.ports):
            object.__setattr__(pod, field, interned(tuple(
                attrs.evolve(c, ports=tuple(
                    attrs.evolve(p, host_port=p.container_port) if p.host_port == 0 else p
                    for p in c.ports)) if c.ports else c
                for c in containers)))


def is_pod_level_resource(name: str) -> bool:
    """``IsSupportedPodLevelResource``: cpu, memory and hugepages."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def _default_pod_requests(pod: Pod) -> None:
    """``defaultHugePagePodLimits`` then ``defaultPodRequests`` (PodLevelResources, on by
    default in v1.35): with pod-level limits, each pod-level request not stated defaults to
    the containers' aggregated request (cpu, memory) or else to the pod-level limit.
    Hugepage limits default to the containers' aggregate (their requests, which equal their
    limits in a valid pod) when the pod states pod-level resources at all."""
    limits = dict(pod.pod_limits or {})
    requests = dict(pod.pod_requests or {})
    if not limits and not (requests and any(
            n.startswith(HUGEPAGES_PREFIX) and n not in requests
            for c in pod.containers + pod.init_containers for n in c.requests)):
        return  # nothing to default (this runs again on every attrs.evolve)
    containers = aggregate_requests(Pod(pod.name, containers=pod.containers,
                                        init_containers=pod.init_containers),
                                    use_pod_level=False)
    for name, amount in containers.items():
        if name.startswith(HUGEPAGES_PREFIX) and name not in requests and name not in limits:
            limits[name] = amount
    if not limits:
        return
    for name, amount in containers.items():
        if name not in requests and name in (CPU, MEMORY):
            requests[name] = amount
    for name, amount in limits.items():
        if name not in requests and is_pod_level_resource(name):
            requests[name] = amount
    if limits != pod.pod_limits:
        object.__setattr__(pod, "pod_limits", ResourceList(limits))
    if requests and requests != (pod.pod_requests or {}):
        object.__setattr__(pod, "pod_requests", ResourceList(requests))


@record
class ContainerImage:
    names: tuple[str, ...] = checked_field(items_of(str, "a string"), converter=SEQ)
    size_bytes: int = checked_field(INT, default=0)


@record
class Node:
    """A node. ``allocatable`` takes quantities (``{"cpu": "8", "memory": "32Gi"}``: 8 cores)
    or ints in scheduler units (``{"cpu": 8000}``: cpu in milli-cores, the rest in units)."""

    name: str = checked_field(STR)
    labels: FrozenDict = attrs.field(factory=FrozenDict, converter=STRING_MAP)
    unschedulable: bool = checked_field(BOOL, default=False)
    taints: tuple[Taint, ...] = tuple_of(Taint)
    allocatable: FrozenDict = attrs.field(factory=ResourceList, converter=RESOURCES)
    images: tuple[ContainerImage, ...] = tuple_of(ContainerImage)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Node:
        """Build a Node from its wire-format dict, checking every field read."""
        return MANIFEST_READERS[cls](obj)


@record
class Namespace:
    name: str = checked_field(STR)
    labels: FrozenDict = attrs.field(factory=FrozenDict, converter=STRING_MAP)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Namespace:
        """Build a Namespace (``ValidateNamespace``); ``SetDefaults_Namespace`` labels it
        ``kubernetes.io/metadata.name: <name>``."""
        return MANIFEST_READERS[cls](obj)


#: Kinds whose pod selector feeds PodTopologySpread's default constraints, with the
#: apiVersion a controller reference must carry (``helper/spread.go``).
SELECTING_KINDS = {"Service": "v1", "ReplicationController": "v1", "ReplicaSet": "apps/v1",
                   "StatefulSet": "apps/v1"}


@record
class Workload:
    """A Service, ReplicationController, ReplicaSet or StatefulSet, reduced to its selector.

    ``selector`` is ``None`` when the object has none (a Service without one selects nothing).
    Services and ReplicationControllers have plain label maps (``match_labels`` only).
    """

    kind: str = checked_field(STR)
    name: str = checked_field(STR)
    namespace: str = checked_field(STR, default="default")
    selector: LabelSelector | None = checked_field(_OPT_SELECTOR, default=None)
    #: ``spec.replicas`` of a ReplicaSet, StatefulSet or ReplicationController (default 1);
    #: the disruption controller's expected pod count.
    replicas: int | None = checked_field(OPT_INT, default=None)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Workload:
        return MANIFEST_READERS[cls](obj)


@record
class PriorityClass:
    """A scheduling.k8s.io/v1 PriorityClass (cluster-scoped)."""

    name: str = checked_field(STR)
    value: int = checked_field(INT32)
    global_default: bool = checked_field(BOOL, default=False)
    preemption_policy: str = checked_field(one_of(*PREEMPTION_POLICIES),
                                           default="PreemptLowerPriority")

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> PriorityClass:
        """Build a PriorityClass from its wire-format dict (``ValidatePriorityClass``)."""
        return MANIFEST_READERS[cls](obj)


@record
class PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget: its spec and the disruption controller's status.

    ``min_available`` / ``max_unavailable`` hold an int or a percentage string ("50%").
    """

    name: str = checked_field(STR)
    namespace: str = checked_field(STR, default="default")
    #: ``None`` when ``spec.selector`` is absent (the budget then matches nothing).
    selector: LabelSelector | None = checked_field(_OPT_SELECTOR, default=None)
    min_available: int | str | None = checked_field(INT_OR_PERCENT, default=None)
    max_unavailable: int | str | None = checked_field(INT_OR_PERCENT, default=None)
    disruptions_allowed: int = checked_field(INT, default=0)
    current_healthy: int = checked_field(INT, default=0)
    desired_healthy: int = checked_field(INT, default=0)
    expected_pods: int = checked_field(INT, default=0)
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
        return MANIFEST_READERS[cls](obj)

"""Frozen records of the Kubernetes objects the scheduler reads.

Records check themselves: every field's type is checked at construction (``Node(unschedulable=
"false")`` raises :class:`~ksched.errors.InvalidObjectError`), resource lists take quantity
strings where users write them (``Node(allocatable={"cpu": "8", "memory": "32Gi"})`` is 8 cores)
and integers in the units the scheduler uses (cpu in milli-cores, everything else in units), and
the API server's defaulting that reaches scheduling is applied (a container's requests default
to its limits, a ``host_network`` pod's ports to host ports, pod-level requests to the
containers' and the pod's limits).

Each record is built from the wire format (``kubectl get -o json``) by a ``from_manifest``
constructor that checks every field it reads, applies the API server's defaulting
(``pkg/apis/core/v1/defaults.go``) and its v1.35 validation (``pkg/apis/core/validation``) for
the fields that reach scheduling, and raises :class:`~ksched.errors.InvalidObjectError` naming
the object and the field path, in the API server's words (``Invalid value: 0: must be between 1
and 65535, inclusive``). Resource quantities are stored as exact integers in the units the
scheduler uses: cpu in milli-cores, everything else in units (both rounded up, as
apimachinery's ``MilliValue`` / ``Value`` do); a quantity whose amount does not fit an int64 is
refused (upstream's ``MilliValue`` would overflow, see :mod:`ksched.quantity`).

Deliberately lenient, as the scheduler sees such objects from older API servers: label
selectors of pod (anti-)affinity terms and topology spread constraints are not checked for
label syntax here (the scheduler's plugins report them), nor are PodDisruptionBudget selectors
(an invalid one matches nothing); pods without containers are accepted.
"""

from __future__ import annotations

import datetime
import functools
import numbers
import operator
import re
import types
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any

import attrs
import orjson

from ksched import quantity as _quantity
from ksched import validation as _v
from ksched.constants import CPU, DEFAULT_SCHEDULER_NAME, MEMORY
from ksched.errors import InvalidObjectError

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("", "Equal", "Exists")
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
PROTOCOLS = ("TCP", "UDP", "SCTP")
UNSATISFIABLE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
INCLUSION_POLICIES = ("Honor", "Ignore")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: ``scheduling.HighestUserDefinablePriority``.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
#: ``scheduling.SystemPriorityClasses()``: name -> value (neither is the global default).
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000,
                           "system-cluster-critical": 2000000000}
#: ``v1.LabelMetadataName``: the label ``SetDefaults_Namespace`` gives every namespace.
LABEL_METADATA_NAME = "kubernetes.io/metadata.name"
_HUGEPAGES = "hugepages-"


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


class _StringMap(FrozenDict):
    """A :class:`FrozenDict` already checked to map strings to strings."""

    __slots__ = ()


class ResourceList(FrozenDict):
    """A checked resource list: name -> amount in scheduler units (cpu in milli-cores,
    everything else in units), each amount an int in ``[0, 2**63 - 1]``."""

    __slots__ = ()


_EMPTY_STRINGS = _StringMap()
_EMPTY_RESOURCES = ResourceList()


# --------------------------------------------------------------------------- record checks

_TYPE_NAMES = {dict: "an object", list: "a list", tuple: "a list", str: "a string",
               bool: "a boolean", int: "an integer", float: "a number", type(None): "null"}


def _type_name(value: Any) -> str:
    name = _TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _owner(record: Any) -> str:
    """How errors name a record: ``pod default/web``, ``node n1``, ``container c``, ``taint``."""
    kind = type(record).__name__.lower()
    name = getattr(record, "name", None)
    if not isinstance(name, str):
        return kind
    namespace = getattr(record, "namespace", None)
    return f"{kind} {namespace}/{name}" if isinstance(namespace, str) else f"{kind} {name}"


def _refuse(record: Any, path: str, problem: str) -> None:
    raise InvalidObjectError(_owner(record), path, problem)


def _is_int(value: Any) -> bool:
    return type(value) is int or (isinstance(value, numbers.Integral)
                                  and not isinstance(value, bool))


def _is_real(value: Any) -> bool:
    return type(value) is float or _is_int(value) or (isinstance(value, numbers.Real)
                                                      and not isinstance(value, bool))


@attrs.frozen
class _Check:
    """How a record checks one field: ``fast``, a Python expression over ``{v}`` (the value)
    true for the common valid values, by exact type; and ``slow(record, name, value)``, which
    raises the error when the value is invalid after all. ``env`` names what ``fast`` uses
    (as ``{K}`` and ``{A}``)."""

    fast: str
    slow: Callable[[Any, str, Any], None]
    env: Mapping[str, Any] = attrs.field(factory=dict)


def _simple(fast: str, what: str, test: Callable[[Any], bool]) -> _Check:
    def slow(record: Any, name: str, value: Any) -> None:
        if not test(value):
            _refuse(record, name, f"expected {what}, got {_type_name(value)}")
    return _Check(fast, slow)


_STR = _simple("type({v}) is str", "a string", lambda v: isinstance(v, str))
_BOOL = _simple("{v} is True or {v} is False", "a boolean", lambda v: isinstance(v, bool))
_INT = _simple("type({v}) is int", "an integer", _is_int)
_INT32 = _Check("type({v}) is int and -2147483648 <= {v} <= 2147483647",
                lambda record, name, value: _check_int32(record, name, value))
_OPT_INT = _simple("{v} is None or type({v}) is int", "an integer or null",
                   lambda v: v is None or _is_int(v))
_OPT_TIME = _simple("{v} is None or type({v}) is float or type({v}) is int",
                    "a number of seconds or null", lambda v: v is None or _is_real(v))


def _check_int32(record: Any, name: str, value: Any) -> None:
    """An ``int32`` field of the API (ports, weights, priorities, skews)."""
    _INT.slow(record, name, value)
    if not INT32_MIN <= value <= INT32_MAX:
        _refuse(record, name, f"Invalid value: {value}: must be a 32-bit integer")


def _instance(kind: type) -> _Check:
    """A field holding a ``kind`` record."""
    return _Check("type({v}) is {K}", _simple("", f"a {kind.__name__}",
                                              lambda v: isinstance(v, kind)).slow, {"K": kind})


_INT_OR_PERCENT = _simple("{v} is None or type({v}) is int or type({v}) is str",
                          "an integer, a percentage or null",
                          lambda v: v is None or _is_int(v) or isinstance(v, str))


def _items(kind: type, what: str) -> _Check:
    """A tuple field (or ``None``): every item of type ``kind``."""
    def slow(record: Any, name: str, value: Any) -> None:
        for i, item in enumerate(value or ()):
            if not isinstance(item, kind):
                _refuse(record, f"{name}[{i}]", f"expected {what}, got {_type_name(item)}")
    return _Check("not {v} or all([type(x) is {K} for x in {v}])", slow, {"K": kind})


def _optional(kind: type) -> _Check:
    """A field holding a ``kind`` record or ``None``."""
    return _Check("{v} is None or type({v}) is {K}",
                  _simple("", f"a {kind.__name__} or null",
                          lambda v: v is None or isinstance(v, kind)).slow, {"K": kind})


def _one_of(*allowed: str, optional: bool = False) -> _Check:
    """An enum field, its errors worded as ``field.NotSupported``."""
    shown = [a for a in allowed if a]
    accepted = frozenset(allowed)

    def slow(record: Any, name: str, value: Any) -> None:
        if value is None and optional:
            return
        if not isinstance(value, str):
            _refuse(record, name, f"expected a string, got {_type_name(value)}")
        if value not in accepted:
            _refuse(record, name, _body(_v.not_supported(name, value, shown)))
    fast = "type({v}) is str and {v} in {A}"
    return _Check("{v} is None or " + fast if optional else fast, slow, {"A": accepted})


def _field(check: _Check, **kw: Any) -> Any:
    """An attrs field checked by ``check`` (see :func:`_record`)."""
    return attrs.field(metadata={"check": check}, **kw)


#: The compiled check of each record class.
_CHECKS: dict[type, Callable[[Any], None]] = {}


def _compile_checks(cls: type) -> Callable[[Any], None]:
    """One function testing every checked field of ``cls`` in one expression (the common
    case costs a few attribute loads), running the fields' slow checks only when it fails."""
    fields = [f for f in attrs.fields(cls) if "check" in f.metadata]
    env: dict[str, Any] = {}
    tests = []
    for i, f in enumerate(fields):
        check = f.metadata["check"]
        env.update({f"{key}{i}": value for key, value in check.env.items()})
        tests.append("(" + check.fast.format(v=f"r.{f.name}", K=f"K{i}", A=f"A{i}") + ")")
    exec("def fast(r):\n    return " + (" and ".join(tests) or "True"), env)  # noqa: S102
    fast = env["fast"]

    def check(record: Any) -> None:
        if not fast(record):
            for f in fields:
                f.metadata["check"].slow(record, f.name, getattr(record, f.name))
    return check


def _record(cls: type) -> type:
    """``attrs.frozen``, the fields checked after ``__init__`` (by :func:`_compile_checks`),
    before the class's own ``__attrs_post_init__`` (its defaulting)."""
    own = cls.__dict__.get("__attrs_post_init__")

    def __attrs_post_init__(self: Any) -> None:
        _CHECKS[type(self)](self)
        if own is not None:
            own(self)

    cls.__attrs_post_init__ = __attrs_post_init__
    record = attrs.frozen(cls)
    _CHECKS[record] = _compile_checks(record)
    return record


def _assembler(cls: type, *groups: tuple[str, ...]) -> Callable[..., Any]:
    """A constructor of ``cls`` from its fields' values in their final form, no converter,
    check or defaulting run again (the values come from records of ``cls``, or were read
    and checked as its constructor would): ``assemble(values_1, values_2, ...)``, a
    sequence per group of field names, in the group's order (every field in one group)."""
    names = [f.name for f in attrs.fields(cls)]
    if sorted(sum(groups, ())) != sorted(names):
        raise ValueError(f"{cls.__name__}: every field in one group")
    lines = [f"    set(record, {name!r}, values_{g}[{i}])"
             for g, group in enumerate(groups) for i, name in enumerate(group)]
    source = (f"def assemble({', '.join(f'values_{g}' for g in range(len(groups)))}):\n"
              "    record = new(cls)\n" + "\n".join(lines) + "\n    return record\n")
    env = {"new": object.__new__, "set": object.__setattr__, "cls": cls}
    exec(source, env)  # noqa: S102
    return env["assemble"]


def _body(err: _v.FieldError) -> str:
    """A field error's text after its path (``ErrorBody``)."""
    return str(err)[len(err.field) + 2:]


def _seq(value: Any, record: Any, field: Any) -> tuple:
    """Converter: any iterable (not a string or mapping) to a tuple; ``None`` to ``()``."""
    if value is None:
        return ()
    if type(value) is tuple:
        return value
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__iter__"):
        _refuse(record, field.name, f"expected a list, got {_type_name(value)}")
    return tuple(value)


def _opt_seq(value: Any, record: Any, field: Any) -> tuple | None:
    return None if value is None else _seq(value, record, field)


_SEQ = attrs.Converter(_seq, takes_self=True, takes_field=True)
_OPT_SEQ = attrs.Converter(_opt_seq, takes_self=True, takes_field=True)


def _string_map(value: Any, record: Any, field: Any) -> _StringMap:
    """Converter: a mapping of strings to strings, checked once (a checked map passes)."""
    if type(value) is _StringMap:
        return value
    if value is None:
        return _EMPTY_STRINGS
    if not isinstance(value, Mapping):
        _refuse(record, field.name, f"expected an object, got {_type_name(value)}")
    for key, item in value.items():
        if not isinstance(key, str):
            _refuse(record, field.name, f"expected string keys, got {_type_name(key)}")
        if not isinstance(item, str):
            _refuse(record, f"{field.name}.{key}", f"expected a string, got {_type_name(item)}")
    return _StringMap(value)


def _opt_string_map(value: Any, record: Any, field: Any) -> _StringMap | None:
    return None if value is None else _string_map(value, record, field)


_STRING_MAP = attrs.Converter(_string_map, takes_self=True, takes_field=True)
_OPT_STRING_MAP = attrs.Converter(_opt_string_map, takes_self=True, takes_field=True)


def _amount(name: str, value: Any, record: Any, path: str) -> int:
    """One resource amount: an int in scheduler units as it is, a quantity (string or float)
    converted (cpu to milli-cores, the rest to units, rounded up)."""
    if type(value) is int and 0 <= value <= INT64_MAX:
        return value
    if _is_int(value):
        if not 0 <= value <= INT64_MAX:
            shown = _v.invalid(path, int(value), "must be greater than or equal to 0"
                               if value < 0 else f"must be at most {INT64_MAX}")
            _refuse(record, path, _body(shown))
        return int(value)
    if isinstance(value, str | float) and not isinstance(value, bool):
        try:
            if _quantity.parse_quantity(value) < 0:
                _refuse(record, path, _body(_v.invalid(path, _quantity.canonical(value),
                                                       "must be greater than or equal to 0")))
            return _quantity.scheduler_amount(name, value)
        except _quantity.QuantityError as exc:
            _refuse(record, path, str(exc))
    _refuse(record, path, f"expected a quantity, got {_type_name(value)}")


def _resource_list(value: Any, record: Any, field: Any) -> ResourceList:
    """Converter: a resource list in scheduler units, checked once (a checked list passes)."""
    if type(value) is ResourceList:
        return value
    if value is None:
        return _EMPTY_RESOURCES
    if not isinstance(value, Mapping):
        _refuse(record, field.name, f"expected an object, got {_type_name(value)}")
    out = {}
    for name, amount in value.items():
        if not isinstance(name, str):
            _refuse(record, field.name, f"expected string keys, got {_type_name(name)}")
        out[name] = _amount(name, amount, record, f"{field.name}.{name}")
    return ResourceList(out)


def _opt_resource_list(value: Any, record: Any, field: Any) -> ResourceList | None:
    return None if value is None else _resource_list(value, record, field)


_RESOURCES = attrs.Converter(_resource_list, takes_self=True, takes_field=True)
_OPT_RESOURCES = attrs.Converter(_opt_resource_list, takes_self=True, takes_field=True)


def _tuple_of(kind: type, optional: bool = False) -> Any:
    """A tuple field of ``kind`` items, from any iterable (``None`` if ``optional``)."""
    what = "a string" if kind is str else f"a {kind.__name__}"
    if optional:
        return _field(_items(kind, what), default=None, converter=_OPT_SEQ)
    return _field(_items(kind, what), default=(), converter=_SEQ)


def _strings_field(**kw: Any) -> Any:
    return _field(_items(str, "a string"), default=(), converter=_SEQ, **kw)


# --------------------------------------------------------------------------- records


@_record
class Taint:
    key: str = _field(_STR)
    value: str = _field(_STR, default="")
    effect: str = _field(_one_of(*TAINT_EFFECTS), default="NoSchedule")


@_record
class Toleration:
    key: str = _field(_STR, default="")
    #: ``""`` means ``Equal``.
    operator: str = _field(_one_of(*TOLERATION_OPERATORS), default="")
    value: str = _field(_STR, default="")
    #: ``""`` matches every effect.
    effect: str = _field(_one_of("", *TAINT_EFFECTS), default="")

    def tolerates(self, taint: Taint) -> bool:
        """Mirror of ``Toleration.ToleratesTaint`` (k8s.io/api/core/v1/toleration.go)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


@_record
class NodeSelectorRequirement:
    """A node selector requirement; an invalid one (bad key, operator or values) is kept:
    NodeAffinity treats it as matching nothing."""

    key: str = _field(_STR)
    operator: str = _field(_STR)
    values: tuple[str, ...] = _strings_field()


@_record
class NodeSelectorTerm:
    match_expressions: tuple[NodeSelectorRequirement, ...] = _tuple_of(NodeSelectorRequirement)
    match_fields: tuple[NodeSelectorRequirement, ...] = _tuple_of(NodeSelectorRequirement)


@_record
class PreferredSchedulingTerm:
    weight: int = _field(_INT32)
    preference: NodeSelectorTerm = _field(_instance(NodeSelectorTerm))


@_record
class NodeAffinity:
    #: ``None`` when the pod states no required node affinity.
    required: tuple[NodeSelectorTerm, ...] | None = _tuple_of(NodeSelectorTerm, optional=True)
    #: ``None`` when the field is absent (an explicit empty list is not skipped upstream).
    preferred: tuple[PreferredSchedulingTerm, ...] | None = _tuple_of(PreferredSchedulingTerm,
                                                                      optional=True)


@_record
class LabelSelectorRequirement:
    """A label selector requirement; its syntax is left to the selector's user (upstream's
    ``LabelSelectorAsSelector`` fails on an invalid one)."""

    key: str = _field(_STR)
    operator: str = _field(_STR)
    values: tuple[str, ...] = _strings_field()


@_record
class LabelSelector:
    """A ``metav1.LabelSelector``; the empty selector matches everything."""

    match_labels: FrozenDict = attrs.field(factory=FrozenDict, converter=_STRING_MAP)
    match_expressions: tuple[LabelSelectorRequirement, ...] = _tuple_of(LabelSelectorRequirement)

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


_OPT_SELECTOR = _optional(LabelSelector)


@_record
class PodAffinityTerm:
    topology_key: str = _field(_STR)
    label_selector: LabelSelector | None = _field(_OPT_SELECTOR, default=None)
    namespaces: tuple[str, ...] = _strings_field()
    namespace_selector: LabelSelector | None = _field(_OPT_SELECTOR, default=None)
    match_label_keys: tuple[str, ...] = _strings_field()
    mismatch_label_keys: tuple[str, ...] = _strings_field()


@_record
class WeightedPodAffinityTerm:
    weight: int = _field(_INT32)
    term: PodAffinityTerm = _field(_instance(PodAffinityTerm))


@_record
class PodAffinity:
    """Pod affinity or anti-affinity: required and preferred terms."""

    required: tuple[PodAffinityTerm, ...] = _tuple_of(PodAffinityTerm)
    preferred: tuple[WeightedPodAffinityTerm, ...] = _tuple_of(WeightedPodAffinityTerm)


_POLICY = _one_of(*INCLUSION_POLICIES, optional=True)


@_record
class TopologySpreadConstraint:
    """A topology spread constraint. ``None`` policies and ``min_domains`` are the
    scheduler's defaults (``Honor``, ``Ignore``, 1)."""

    max_skew: int = _field(_INT32)
    topology_key: str = _field(_STR)
    when_unsatisfiable: str = _field(_one_of(*UNSATISFIABLE_ACTIONS))
    label_selector: LabelSelector | None = _field(_OPT_SELECTOR, default=None)
    min_domains: int | None = _field(_OPT_INT, default=None)
    node_affinity_policy: str | None = _field(_POLICY, default=None)
    node_taints_policy: str | None = _field(_POLICY, default=None)
    match_label_keys: tuple[str, ...] = _strings_field()


@_record
class ContainerPort:
    container_port: int = _field(_INT32)
    #: 0: none (a ``host_network`` pod's ports default to host ports, see :class:`Pod`).
    host_port: int = _field(_INT32, default=0)
    protocol: str = _field(_one_of(*PROTOCOLS), default="TCP")
    host_ip: str = _field(_STR, default="")


@_record
class Container:
    """A container. ``requests`` and ``limits`` take quantities (strings such as ``"500m"``
    or ``"1Gi"``, or floats: ``0.5`` cpu is half a core) or ints in scheduler units (cpu
    milli-cores, the rest units); a resource with a limit and no request requests its limit
    (``SetDefaults_Pod``)."""

    name: str = _field(_STR)
    image: str = _field(_STR, default="")
    #: Only the resources the manifest states, or its limits give (the non-zero scoring rule
    #: needs to know).
    requests: ResourceList = attrs.field(factory=ResourceList, converter=_RESOURCES)
    ports: tuple[ContainerPort, ...] = _tuple_of(ContainerPort)
    #: ``restartPolicy: Always`` on an init container makes it a sidecar.
    restart_policy: str = _field(_STR, default="")
    limits: ResourceList = attrs.field(factory=ResourceList, converter=_RESOURCES)

    def __attrs_post_init__(self) -> None:
        """``SetDefaults_Pod``: requests default to limits, per resource."""
        if self.limits and not self.limits._data.keys() <= self.requests._data.keys():
            object.__setattr__(self, "requests", ResourceList({**self.limits, **self.requests}))

    @property
    def is_sidecar(self) -> bool:
        return self.restart_policy == "Always"


@_record
class Volume:
    """A pod volume, reduced to what the volume plugins look at."""

    name: str = _field(_STR)
    kind: str = _field(_STR)
    claim_name: str = _field(_STR, default="")


_assemble_volume = _assembler(Volume, ("name", "kind", "claim_name"))


@_record
class Pod:
    """A pod. Resource lists take quantity strings or ints in scheduler units (as
    :class:`Container`); ``host_network`` pods' container ports default to host ports and
    ``pod_limits`` default the pod-level requests, as the API server's ``SetDefaults_Pod``
    does."""

    name: str = _field(_STR)
    namespace: str = _field(_STR, default="default")
    uid: str = _field(_STR, default="")
    labels: FrozenDict = attrs.field(factory=FrozenDict, converter=_STRING_MAP)
    node_name: str = _field(_STR, default="")
    scheduler_name: str = _field(_STR, default=DEFAULT_SCHEDULER_NAME)
    priority: int = _field(_INT32, default=0)
    containers: tuple[Container, ...] = _tuple_of(Container)
    init_containers: tuple[Container, ...] = _tuple_of(Container)
    overhead: FrozenDict = attrs.field(factory=ResourceList, converter=_RESOURCES)
    #: Pod-level ``spec.resources.requests``; ``None`` when absent.
    pod_requests: FrozenDict | None = attrs.field(default=None, converter=_OPT_RESOURCES)
    #: ``None`` when absent; an explicit ``{}`` stops NodeAffinity's PreFilter from skipping.
    node_selector: FrozenDict | None = attrs.field(default=None, converter=_OPT_STRING_MAP)
    node_affinity: NodeAffinity | None = _field(_optional(NodeAffinity), default=None)
    pod_affinity: PodAffinity | None = _field(_optional(PodAffinity), default=None)
    pod_anti_affinity: PodAffinity | None = _field(_optional(PodAffinity), default=None)
    tolerations: tuple[Toleration, ...] = _tuple_of(Toleration)
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = _tuple_of(
        TopologySpreadConstraint)
    volumes: tuple[Volume, ...] = _tuple_of(Volume)
    resource_claims: tuple[str, ...] = _strings_field()
    #: The controlling owner reference as (apiVersion, kind, name), if any.
    controller: tuple[str, str, str] | None = _tuple_of(str, optional=True)
    phase: str = _field(_STR, default="")
    deleting: bool = _field(_BOOL, default=False)
    preemption_policy: str = _field(_one_of(*PREEMPTION_POLICIES), default="PreemptLowerPriority")
    priority_class_name: str = _field(_STR, default="")
    #: ``status.startTime`` and ``metadata.creationTimestamp`` as POSIX seconds (UTC).
    start_time: float | None = _field(_OPT_TIME, default=None)
    creation_time: float | None = _field(_OPT_TIME, default=None)
    nominated_node_name: str = _field(_STR, default="")
    scheduling_gates: tuple[str, ...] = _strings_field()
    #: The pod's ``Ready`` condition is ``True`` (``podutil.IsPodReady``).
    ready: bool = _field(_BOOL, default=False)
    #: ``spec.priority`` / ``spec.preemptionPolicy`` are set (Priority admission leaves them).
    priority_set: bool = _field(_BOOL, default=False)
    preemption_policy_set: bool = _field(_BOOL, default=False)
    #: ``spec.hostNetwork``: every container port without a host port takes its container
    #: port as host port (``defaultHostNetworkPorts``).
    host_network: bool = _field(_BOOL, default=False)
    #: Pod-level ``spec.resources.limits``; ``None`` when absent. They default the pod-level
    #: requests (``defaultPodRequests``).
    pod_limits: FrozenDict | None = attrs.field(default=None, converter=_OPT_RESOURCES)

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
        return _parse_pod(obj)

    def with_status(self, start_time: float | None, nominated_node_name: str) -> Pod:
        """A copy with new ``status.startTime`` and ``status.nominatedNodeName``: what the
        scheduler changes on every cycle, so copied without running the fields' converters
        again (``attrs.evolve`` would; the other fields are already in their final form)."""
        values = list(_pod_values(self))
        values[_START_TIME], values[_NOMINATED_NODE_NAME] = start_time, nominated_node_name
        return _copy_pod(values)


_POD_FIELDS = tuple(f.name for f in attrs.fields(Pod))
_pod_values = operator.attrgetter(*_POD_FIELDS)
_START_TIME, _NOMINATED_NODE_NAME = (_POD_FIELDS.index(name)
                                     for name in ("start_time", "nominated_node_name"))


_copy_pod = _assembler(Pod, _POD_FIELDS)


def _default_host_ports(pod: Pod) -> None:
    """``defaultHostNetworkPorts``: with host networking every container port (of app and
    init containers) without a host port is exposed on its container port."""
    for field in ("containers", "init_containers"):
        containers = getattr(pod, field)
        if any(p.host_port == 0 for c in containers for p in c.ports):
            object.__setattr__(pod, field, _interned(tuple(
                attrs.evolve(c, ports=tuple(
                    attrs.evolve(p, host_port=p.container_port) if p.host_port == 0 else p
                    for p in c.ports)) if c.ports else c
                for c in containers)))


def _is_pod_level_resource(name: str) -> bool:
    """``IsSupportedPodLevelResource``: cpu, memory and hugepages."""
    return name in (CPU, MEMORY) or name.startswith(_HUGEPAGES)


def _default_pod_requests(pod: Pod) -> None:
    """``defaultHugePagePodLimits`` then ``defaultPodRequests`` (PodLevelResources, on by
    default in v1.35): with pod-level limits, each pod-level request not stated defaults to
    the containers' aggregated request (cpu, memory) or else to the pod-level limit.
    Hugepage limits default to the containers' aggregate (their requests, which equal their
    limits in a valid pod) when the pod states pod-level resources at all."""
    from ksched.resources import pod_requests as aggregate

    limits = dict(pod.pod_limits or {})
    requests = dict(pod.pod_requests or {})
    if not limits and not (requests and any(
            n.startswith(_HUGEPAGES) and n not in requests
            for c in pod.containers + pod.init_containers for n in c.requests)):
        return  # nothing to default (this runs again on every attrs.evolve)
    containers = aggregate(Pod(pod.name, containers=pod.containers,
                               init_containers=pod.init_containers), use_pod_level=False)
    for name, amount in containers.items():
        if name.startswith(_HUGEPAGES) and name not in requests and name not in limits:
            limits[name] = amount
    if not limits:
        return
    for name, amount in containers.items():
        if name not in requests and name in (CPU, MEMORY):
            requests[name] = amount
    for name, amount in limits.items():
        if name not in requests and _is_pod_level_resource(name):
            requests[name] = amount
    if limits != pod.pod_limits:
        object.__setattr__(pod, "pod_limits", ResourceList(limits))
    if requests and requests != (pod.pod_requests or {}):
        object.__setattr__(pod, "pod_requests", ResourceList(requests))


@_record
class ContainerImage:
    names: tuple[str, ...] = _field(_items(str, "a string"), converter=_SEQ)
    size_bytes: int = _field(_INT, default=0)


@_record
class Node:
    """A node. ``allocatable`` takes quantities (``{"cpu": "8", "memory": "32Gi"}``: 8 cores)
    or ints in scheduler units (``{"cpu": 8000}``: cpu in milli-cores, the rest in units)."""

    name: str = _field(_STR)
    labels: FrozenDict = attrs.field(factory=FrozenDict, converter=_STRING_MAP)
    unschedulable: bool = _field(_BOOL, default=False)
    taints: tuple[Taint, ...] = _tuple_of(Taint)
    allocatable: FrozenDict = attrs.field(factory=ResourceList, converter=_RESOURCES)
    images: tuple[ContainerImage, ...] = _tuple_of(ContainerImage)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Node:
        """Build a Node from its wire-format dict, checking every field read."""
        return _parse_node(obj)


#: The fields of a :class:`Node` read from its spec and status (nodes of one pool share
#: them; :func:`_node_parts`).
_NODE_PARTS = ("unschedulable", "taints", "allocatable", "images")
_assemble_node = _assembler(Node, ("name", "labels"), _NODE_PARTS)
_node_part_values = operator.attrgetter(*_NODE_PARTS)


@_record
class Namespace:
    name: str = _field(_STR)
    labels: FrozenDict = attrs.field(factory=FrozenDict, converter=_STRING_MAP)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Namespace:
        """Build a Namespace (``ValidateNamespace``); ``SetDefaults_Namespace`` labels it
        ``kubernetes.io/metadata.name: <name>``."""
        r, meta = _metadata(obj, "Namespace", namespaced=False, name_check=_v.is_dns1123_label)
        labels = r.labels(meta.get("labels"), "metadata.labels")
        if labels.get(LABEL_METADATA_NAME) != meta["name"]:
            labels = {**labels, LABEL_METADATA_NAME: meta["name"]}
        return cls(meta["name"], labels)


#: Kinds whose pod selector feeds PodTopologySpread's default constraints, with the
#: apiVersion a controller reference must carry (``helper/spread.go``).
SELECTING_KINDS = {"Service": "v1", "ReplicationController": "v1", "ReplicaSet": "apps/v1",
                   "StatefulSet": "apps/v1"}


@_record
class Workload:
    """A Service, ReplicationController, ReplicaSet or StatefulSet, reduced to its selector.

    ``selector`` is ``None`` when the object has none (a Service without one selects nothing).
    Services and ReplicationControllers have plain label maps (``match_labels`` only).
    """

    kind: str = _field(_STR)
    name: str = _field(_STR)
    namespace: str = _field(_STR, default="default")
    selector: LabelSelector | None = _field(_OPT_SELECTOR, default=None)
    #: ``spec.replicas`` of a ReplicaSet, StatefulSet or ReplicationController (default 1);
    #: the disruption controller's expected pod count.
    replicas: int | None = _field(_OPT_INT, default=None)

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Workload:
        return _parse_workload(obj)


@_record
class PriorityClass:
    """A scheduling.k8s.io/v1 PriorityClass (cluster-scoped)."""

    name: str = _field(_STR)
    value: int = _field(_INT32)
    global_default: bool = _field(_BOOL, default=False)
    preemption_policy: str = _field(_one_of(*PREEMPTION_POLICIES), default="PreemptLowerPriority")

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> PriorityClass:
        """Build a PriorityClass from its wire-format dict (``ValidatePriorityClass``)."""
        return _parse_priority_class(obj)


@_record
class PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget: its spec and the disruption controller's status.

    ``min_available`` / ``max_unavailable`` hold an int or a percentage string ("50%").
    """

    name: str = _field(_STR)
    namespace: str = _field(_STR, default="default")
    #: ``None`` when ``spec.selector`` is absent (the budget then matches nothing).
    selector: LabelSelector | None = _field(_OPT_SELECTOR, default=None)
    min_available: int | str | None = _field(_INT_OR_PERCENT, default=None)
    max_unavailable: int | str | None = _field(_INT_OR_PERCENT, default=None)
    disruptions_allowed: int = _field(_INT, default=0)
    current_healthy: int = _field(_INT, default=0)
    desired_healthy: int = _field(_INT, default=0)
    expected_pods: int = _field(_INT, default=0)
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


class ManifestReader:
    """Typed access to one manifest, raising errors that name the object and field."""

    def __init__(self, obj: str) -> None:
        self.obj = obj

    def fail(self, path: str, problem: str) -> None:
        raise InvalidObjectError(self.obj, path, problem)

    def check(self, errors: list[_v.FieldError]) -> None:
        """Raise the first of ``errors`` (a ``field.ErrorList``), if any."""
        if errors:
            self.fail(errors[0].field, _body(errors[0]))

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if type(value) is dict:
            return value
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.fail(path, f"expected an object, got {_type_name(value)}")
        return value

    def seq(self, value: Any, path: str) -> list:
        if type(value) is list:
            return value
        if value is None:
            return []
        if not isinstance(value, list | tuple):
            self.fail(path, f"expected a list, got {_type_name(value)}")
        return list(value)

    def string(self, value: Any, path: str, default: str = "") -> str:
        if type(value) is str:
            return value
        if value is None:
            return default
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {_type_name(value)}")
        return value

    def integer(self, value: Any, path: str, default: int | None = 0,
                bits: int = 64) -> int | None:
        """An integer field (``int32`` / ``int64`` upstream: larger values do not decode)."""
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, f"expected an integer, got {_type_name(value)}")
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            self.fail(path, f"must be a {bits}-bit integer, got {value}")
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            self.fail(path, f"expected a boolean, got {_type_name(value)}")
        return value

    def count(self, value: Any, path: str, default: int | None = 0) -> int | None:
        """A non-negative ``int32`` (``ValidateNonnegativeField``)."""
        value = self.integer(value, path, default, bits=32)
        if value is not None and value < 0:
            self.fail(path, f"Invalid value: {value}: must be greater than or equal to 0")
        return value

    def choice(self, value: Any, path: str, allowed: tuple[str, ...], default: str = "",
               shown: tuple[str, ...] | None = None, required: bool = True) -> str:
        """An enum field: ``field.Required`` when empty (if ``required`` and ``""`` is not
        allowed), else ``field.NotSupported`` listing ``shown`` (upstream's order; default
        ``allowed``)."""
        text = self.string(value, path, default)
        if text not in allowed:
            if not text and required:
                self.check([_v.required(path)])
            self.check([_v.not_supported(path, text, shown or [a for a in allowed if a])])
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
            out[self.key(key, path)] = self.string(item, f"{path}.{key}")
        return _StringMap(out)

    def key(self, key: Any, path: str) -> str:
        """A mapping's key (YAML allows keys that are not strings; JSON does not)."""
        if not isinstance(key, str):
            self.fail(path, f"expected string keys, got {_type_name(key)} {key!r}")
        return key

    def labels(self, value: Any, path: str) -> FrozenDict:
        """A label map, checked as ``ValidateLabels`` does."""
        labels = self.string_map(value, path)
        self.check(_v.labels_errors(labels, path))
        return labels

    def strings(self, value: Any, path: str) -> tuple[str, ...]:
        return tuple(self.string(v, f"{path}[{i}]") for i, v in enumerate(self.seq(value, path)))

    def resources(self, value: Any, path: str,
                  names: Callable[[str, str], list[_v.FieldError]] | None = None) -> ResourceList:
        """A ResourceList: cpu in milli-cores, everything else in units, both rounded up."""
        return ResourceList({n: amount for n, (amount, _) in
                             self.quantities(value, path, names).items()})

    def quantities(self, value: Any, path: str,
                   names: Callable[[str, str], list[_v.FieldError]] | None = None
                   ) -> dict[str, tuple[int, str | int | float]]:
        """A ResourceList as name -> (amount in scheduler units, the text as written), each
        checked: its name by ``names`` (``validateContainerResourceName``, ...), its value by
        ``ValidateResourceQuantityValue`` (not negative; whole for integer resources),
        hugepages by ``validateResourceQuantityHugePageValue``, and its amount against int64."""
        out = {}
        for name, text in self.mapping(value, path).items():
            qpath = f"{path}.{self.key(name, path)}"
            if isinstance(text, bool) or not isinstance(text, str | int | float):
                self.fail(qpath, f"expected a quantity, got {_type_name(text)}")
            amount, error = _checked_quantity(name, text, qpath, names)
            if error is not None:
                self.fail(*error)
            out[name] = (amount, text)
        return out


@functools.lru_cache(maxsize=65536)
def _checked_quantity(name: str, text: str | float, path: str,
                      names: Callable[[str, str], list[_v.FieldError]] | None
                      ) -> tuple[int, tuple[str, str] | None]:
    """One quantity of a resource list checked (memoized: pods repeat them): its amount in
    scheduler units, or the (path, problem) of its first error."""
    try:
        exact = _quantity.parse_quantity(text)
    except _quantity.QuantityError as exc:
        return 0, (path, str(exc))
    errors = (names(name, path) if names is not None else []) + _quantity_value_errors(
        name, text, exact, path)
    if errors:
        return 0, (errors[0].field, _body(errors[0]))
    try:
        return _quantity.scheduler_amount(name, text), None
    except _quantity.QuantityError as exc:
        return 0, (path, str(exc))


def _quantity_value_errors(name: str, text: str | float, exact: Fraction,
                           path: str) -> list[_v.FieldError]:
    """``ValidateResourceQuantityValue`` and ``validateResourceQuantityHugePageValue``."""
    if exact < 0:
        return [_v.invalid(path, _quantity.canonical(text), "must be greater than or equal to 0")]
    if _is_integer_resource(name) and (exact * 1000).__ceil__() % 1000:
        return [_v.invalid(path, _quantity.canonical(text), "must be an integer")]
    if name.startswith(_HUGEPAGES) and not _hugepages_divisible(name, exact):
        shown = _quantity.canonical(text)
        return [_v.invalid(path, shown, f"{shown} is not positive integer multiple of {name}")]
    return []


def _hugepages_divisible(name: str, exact: Fraction) -> bool:
    """``IsHugePageResourceValueDivisible``: a whole number of pages of the name's size."""
    try:
        size = _quantity.parse_quantity(name[len(_HUGEPAGES):])
    except _quantity.QuantityError:
        return False
    if size <= 0 or size.denominator != 1:
        return False
    return _quantity.value(exact) % int(size) == 0


#: ``integerResources`` of ``pkg/apis/core/helper`` (besides extended resources).
_INTEGER_RESOURCES = frozenset({"pods", "resourcequotas", "services", "replicationcontrollers",
                                "secrets", "configmaps", "persistentvolumeclaims",
                                "services.nodeports", "services.loadbalancers"})
_STANDARD_CONTAINER_RESOURCES = frozenset({CPU, MEMORY, "ephemeral-storage"})
#: ``standardResources`` of ``pkg/apis/core/helper``.
_STANDARD_RESOURCES = frozenset({
    CPU, MEMORY, "ephemeral-storage", "requests.cpu", "requests.memory",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
    "services.loadbalancers"})


def _is_native_resource(name: str) -> bool:
    """``IsNativeResource``: no domain, or in ``kubernetes.io/``."""
    return "/" not in name or "kubernetes.io/" in name


def _is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``."""
    if _is_native_resource(name) or name.startswith("requests."):
        return False
    return not _v.label_key_messages("requests." + name)


def _is_integer_resource(name: str) -> bool:
    """``IsIntegerResourceName``."""
    return name in _INTEGER_RESOURCES or _is_extended_resource(name)


def _overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native and not hugepages."""
    return _is_native_resource(name) and not name.startswith(_HUGEPAGES)


def _resource_name_errors(name: str, path: str) -> list[_v.FieldError]:
    """``validateResourceName``."""
    errs = [_v.invalid(path, name, msg) for msg in _v.label_key_messages(name)]
    if not errs and "/" not in name and not (name in _STANDARD_RESOURCES
                                             or name.startswith((_HUGEPAGES,
                                                                 "requests.hugepages-"))):
        errs.append(_v.invalid(path, name, "must be a standard resource type or fully qualified"))
    return errs


def _container_resource_name_errors(name: str, path: str) -> list[_v.FieldError]:
    """``validateContainerResourceName``."""
    errs = _resource_name_errors(name, path)
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER_RESOURCES or name.startswith(_HUGEPAGES)):
            errs.append(_v.invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native_resource(name) and not _is_extended_resource(name):
        errs.append(_v.invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def _pod_resource_name_errors(name: str, path: str) -> list[_v.FieldError]:
    """``validatePodResourceName``."""
    errs = _resource_name_errors(name, path)
    if not errs and not _is_pod_level_resource(name):
        errs.append(_v.not_supported(path, name, ["cpu", "hugepages-", "memory"]))
    return errs


@functools.lru_cache(maxsize=65536)
def _milli(text: str | float) -> Fraction:
    """A quantity as the API server compares it: rounded up to milli-units
    (``SetDefaults_ResourceList``)."""
    return _quantity._round_up_milli(_quantity.parse_quantity(text))


_OVERCOMMITTED_NATIVE = frozenset({CPU, MEMORY, "ephemeral-storage"})


def _requirements_errors(requests: Mapping[str, tuple[int, Any]],
                         limits: Mapping[str, tuple[int, Any]],
                         path: str) -> list[_v.FieldError]:
    """The cross-field rules of ``validateResourceRequirements``: a request at most its limit
    (equal for resources that cannot be overcommitted, which need a limit), and hugepages
    only beside cpu or memory."""
    if not limits and requests.keys() <= _OVERCOMMITTED_NATIVE:
        return []  # the common case: nothing to compare
    errs = []
    for name, (_, text) in requests.items():
        if name in limits:
            limit = limits[name][1]
            request_q, limit_q = _milli(text), _milli(limit)
            if request_q != limit_q and not _overcommit_allowed(name):
                errs.append(_v.invalid(f"{path}.requests", _quantity.canonical(text),
                                       f"must be equal to {name} limit of "
                                       f"{_quantity.canonical(limit)}"))
            elif request_q > limit_q:
                errs.append(_v.invalid(f"{path}.requests", _quantity.canonical(text),
                                       f"must be less than or equal to {name} limit of "
                                       f"{_quantity.canonical(limit)}"))
        elif not _overcommit_allowed(name):
            errs.append(_v.required(f"{path}.limits",
                                    "Limit must be set for non overcommitable resources"))
    names = requests.keys() | limits.keys()
    if not names & {CPU, MEMORY} and any(n.startswith(_HUGEPAGES) for n in names):
        errs.append(_v.forbidden(path, "HugePages require cpu or memory"))
    return errs


def _metadata(obj: Mapping[str, Any], kind: str, namespaced: bool,
              name_check: Callable[[str], list[str]] = _v.name_is_dns1123_subdomain
              ) -> tuple[ManifestReader, Mapping]:
    """The reader of one object and its ``metadata``, checked as ``ValidateObjectMeta``
    does: a name (``name_check``), a namespace that is a DNS label, valid labels (by the
    caller, who reads them)."""
    if type(obj) is not dict and not isinstance(obj, Mapping):
        raise InvalidObjectError(kind.lower(), "", f"expected an object, got {_type_name(obj)}")
    meta = obj.get("metadata")
    is_map = type(meta) is dict or isinstance(meta, Mapping)
    name = meta.get("name") if is_map else None
    namespace = (meta.get("namespace") or "default") if is_map else "default"
    if not isinstance(namespace, str):
        namespace = "default"
    label = f"{namespace}/{name}" if namespaced else f"{name}"
    shown = label if isinstance(name, str) and name else "<unnamed>"
    reader = ManifestReader(f"{kind.lower()} {shown}")
    meta = reader.mapping(meta, "metadata")
    name = reader.string(meta.get("name"), "metadata.name")
    if not name:
        reader.check([_v.required("metadata.name", "name or generateName is required")])
    _check_name(reader, name, "metadata.name", name_check)
    if namespaced:
        namespace = reader.string(meta.get("namespace"), "metadata.namespace")
        _check_name(reader, namespace, "metadata.namespace", _v.is_dns1123_label)
    return reader, meta


class _Memo:
    """How a manifest's parts are read when nothing is remembered: afresh, every time (the
    interface of :class:`ManifestMemo`)."""

    pod_specs: Mapping[bytes, tuple] = types.MappingProxyType({})
    affinities: Mapping[bytes, tuple] = types.MappingProxyType({})
    node_parts: Mapping[bytes, tuple] = types.MappingProxyType({})

    def key(self, value: Any) -> bytes | None:
        """What tells ``value`` apart from every other value (``None``: nothing does)."""
        return None

    def pod_spec_key(self, spec: Mapping[str, Any]) -> bytes | None:
        return None

    def remember(self, table: dict, key: Any, value: Any) -> None:
        pass

    def labels(self, r: ManifestReader, value: Any, path: str) -> FrozenDict:
        return r.labels(value, path)

    def controller(self, r: ManifestReader, value: Any, path: str) -> tuple[str, str, str] | None:
        return _controller(r, value, path)

    def timestamp(self, r: ManifestReader, value: Any, path: str) -> float | None:
        return r.timestamp(value, path)

    def subdomain(self, r: ManifestReader, value: Any, path: str) -> str:
        """A string field naming an object by a DNS subdomain, when set (``spec.nodeName``)."""
        name = r.string(value, path)
        _check_name(r, name, path, _v.name_is_dns1123_subdomain)
        return name


_NO_MEMO = _Memo()
_MISSING = object()


class ManifestMemo(_Memo):
    """The parts of manifests that one load has read, so that the objects repeating them
    (pods of one controller, nodes of one pool) are read once: a pod's spec but for its
    ``nodeName``, volumes and affinity, its affinity (apart: a DaemonSet's pods differ in
    it), a node's taints, resources and images, label maps, owner
    references, timestamps, node names. Only parts read without an error are remembered, in
    their final form (checked and defaulted); a part with an error is read afresh each time,
    so its error names the object that has it, as it would have without the memo.

    Only for manifests that ``orjson.loads`` made (dicts, lists, strings, 64-bit integers,
    finite floats, booleans and ``None``; see :data:`ksched.stream.PLAIN_VALUES`): a part is
    recognised by its ``orjson.dumps`` bytes, which for such values are equal only when the
    values are equal, of the same types and in the same order (``1``, ``1.0`` and ``true``
    differ). Other Python values could serialise alike (``NaN`` as ``null``, an enum as its
    value, a tuple as a list) and must not be given. Each table is bounded (emptied when
    full)."""

    __slots__ = ("_controllers", "_label_keys", "_label_values", "_labels", "_subdomains",
                 "_times", "affinities", "node_parts", "pod_specs")

    #: Entries a table holds before it is emptied.
    SIZE = 8192

    def __init__(self) -> None:
        self.pod_specs: dict[bytes, tuple] = {}
        self.affinities: dict[bytes, tuple] = {}
        self.node_parts: dict[bytes, tuple] = {}
        self._subdomains: set[str] = set()
        self._labels: dict[tuple, FrozenDict] = {}
        self._label_keys: set[str] = set()
        self._label_values: set[str] = set()
        self._controllers: dict[bytes, tuple[str, str, str] | None] = {}
        self._times: dict[str, float | None] = {}

    def pod(self, obj: Mapping[str, Any]) -> Pod:
        """:meth:`Pod.from_manifest`, remembering."""
        return _parse_pod(obj, self)

    def node(self, obj: Mapping[str, Any]) -> Node:
        """:meth:`Node.from_manifest`, remembering."""
        return _parse_node(obj, self)

    def key(self, value: Any) -> bytes | None:
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:  # nested too deeply for orjson
            return None

    def pod_spec_key(self, spec: Mapping[str, Any]) -> bytes | None:
        """The key of what :func:`_pod_spec` reads: :data:`_POD_SPEC_KEYS`, of each container
        :data:`_CONTAINER_KEYS` (``None``: a container that is not an object)."""
        parts = [spec.get(name) for name in _POD_SPEC_KEYS]
        for i in (1, 2):  # containers, initContainers
            listed = parts[i]
            if listed is not None:
                if type(listed) is not list:
                    return None
                for c in listed:
                    if type(c) is not dict:
                        return None
                parts[i] = [[c.get(name) for name in _CONTAINER_KEYS] for c in listed]
        return self.key(parts)

    def remember(self, table: dict, key: Any, value: Any) -> None:
        if len(table) >= self.SIZE:
            table.clear()
        table[key] = value

    def labels(self, r: ManifestReader, value: Any, path: str) -> FrozenDict:
        """``ValidateLabels``' map: one seen before as it was; else valid when its keys and
        values were each seen valid before."""
        if type(value) is not dict:
            return r.labels(value, path)
        try:
            items = tuple(value.items())
            found = self._labels.get(items)
        except TypeError:  # a value that is no string (a list): refused below
            return r.labels(value, path)
        if found is None:
            found = _StringMap(value) if self._valid_labels(items) else r.labels(value, path)
            self.remember(self._labels, items, found)
        return found

    def _valid_labels(self, items: tuple[tuple[Any, Any], ...]) -> bool:
        """Whether every key is a string and a valid label key, every value a string and a
        valid label value (``ValidateLabels`` passes, and ``r.labels`` would change nothing)."""
        keys, values = self._label_keys, self._label_values
        if len(values) >= 8 * self.SIZE:
            keys.clear()
            values.clear()
        for key, value in items:
            if key not in keys:
                if type(key) is not str or _v.label_key_messages(key):
                    return False
                keys.add(key)
            if value not in values:
                if type(value) is not str or _v.label_value_messages(value):
                    return False
                values.add(value)
        return True

    def controller(self, r: ManifestReader, value: Any, path: str) -> tuple[str, str, str] | None:
        key = self.key(value)
        found = self._controllers.get(key, _MISSING) if key is not None else _MISSING
        if found is _MISSING:
            found = _controller(r, value, path)
            if key is not None:
                self.remember(self._controllers, key, found)
        return found

    def timestamp(self, r: ManifestReader, value: Any, path: str) -> float | None:
        if type(value) is not str:
            return r.timestamp(value, path)
        found = self._times.get(value, _MISSING)
        if found is _MISSING:
            found = r.timestamp(value, path)
            self.remember(self._times, value, found)
        return found

    def subdomain(self, r: ManifestReader, value: Any, path: str) -> str:
        if type(value) is str and value in self._subdomains:
            return value
        name = super().subdomain(r, value, path)
        if len(self._subdomains) >= 8 * self.SIZE:
            self._subdomains.clear()
        self._subdomains.add(name)
        return name


def _parse_node(obj: Mapping[str, Any], memo: _Memo | None = None) -> Node:
    """``ValidateNode``: name, labels, taints and the capacity and allocatable quantities.
    ``memo``: what the load read before (nodes of one pool share all but name and labels)."""
    memo = memo or _NO_MEMO
    r, meta = _metadata(obj, "Node", namespaced=False)
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    labels = memo.labels(r, meta.get("labels"), "metadata.labels")
    key = memo.key([spec.get("taints"), spec.get("unschedulable"), status.get("capacity"),
                    status.get("allocatable"), status.get("images")])
    shared = memo.node_parts.get(key) if key is not None else None
    if shared is not None:
        return _assemble_node((meta["name"], labels), shared)
    node = Node(name=meta["name"], labels=labels, **_node_parts(r, spec, status))
    if key is not None:
        memo.remember(memo.node_parts, key, _node_part_values(node))
    return node


def _node_parts(r: ManifestReader, spec: Mapping[str, Any], status: Mapping[str, Any]
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


def _parse_pod(obj: Mapping[str, Any], memo: _Memo | None = None) -> Pod:
    """Read a pod as the API server stores it: ``SetDefaults_Pod`` (through the records) and
    the checks of ``ValidatePodCreate`` that reach scheduling: its metadata, its spec (but
    for ``nodeName``, volumes and affinity), its affinity, its ``nodeName``, volumes and
    status, then the rules across fields. ``memo``: the spec and the affinity of earlier pods
    of the load, read, defaulted and checked once (:class:`ManifestMemo`)."""
    memo = memo or _NO_MEMO
    r, meta = _metadata(obj, "Pod", namespaced=True)
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    labels = memo.labels(r, meta.get("labels"), "metadata.labels")
    uid = r.string(meta.get("uid"), "metadata.uid")
    controller = memo.controller(r, meta.get("ownerReferences"), "metadata.ownerReferences")
    created = memo.timestamp(r, meta.get("creationTimestamp"), "metadata.creationTimestamp")
    spec_key = memo.pod_spec_key(spec)
    shared = memo.pod_specs.get(spec_key) if spec_key is not None else None
    spec_fields = _pod_spec(r, spec) if shared is None else None
    affinity_key = memo.key(spec.get("affinity"))  # apart: a DaemonSet's pods differ in it
    affinities = memo.affinities.get(affinity_key) if affinity_key is not None else None
    fresh_affinities = affinities is None
    if fresh_affinities:
        affinities = _affinities(r, spec.get("affinity"), "spec.affinity")
    own = (meta["name"], meta.get("namespace") or "default", labels, uid, controller, created,
           meta.get("deletionTimestamp") is not None,
           memo.subdomain(r, spec.get("nodeName"), "spec.nodeName"),
           _volumes(r, spec.get("volumes"), "spec.volumes"),
           r.string(status.get("phase"), "status.phase"),
           memo.timestamp(r, status.get("startTime"), "status.startTime"),
           r.string(status.get("nominatedNodeName"), "status.nominatedNodeName"),
           _ready(r, status.get("conditions"), "status.conditions"))
    if shared is None:  # the record defaults the spec; then every check runs
        pod = Pod(**dict(zip(_POD_OWN_FIELDS, own)), **spec_fields,
                  **dict(zip(_AFFINITY_FIELDS, affinities)))
        pod = _created(pod)
        _check_pod(r, pod)
        if spec_key is not None and not any(c.match_label_keys
                                            for c in pod.topology_spread_constraints):
            memo.remember(memo.pod_specs, spec_key, _spec_values(pod))
    else:  # defaulted and checked when first read
        pod = _assemble_pod(own, shared, affinities)
        if fresh_affinities:
            pod = _created(pod)
            _check_affinities(r, pod)
    if fresh_affinities and affinity_key is not None and not _affinities_read_labels(pod):
        memo.remember(memo.affinities, affinity_key, _affinity_values(pod))
    return pod


def _created(pod: Pod) -> Pod:
    """The pod as the API server creates it: its affinity terms' label keys merged when it
    has no uid yet (:func:`_merge_label_keys`)."""
    if not pod.uid and (pod.pod_affinity or pod.pod_anti_affinity):
        return _merge_label_keys(pod)
    return pod


#: The fields of a :class:`Pod` of its own (read by :func:`_parse_pod` in this order).
_POD_OWN_FIELDS = ("name", "namespace", "labels", "uid", "controller", "creation_time",
                   "deleting", "node_name", "volumes", "phase", "start_time",
                   "nominated_node_name", "ready")
#: The fields of a :class:`Pod` that come from its spec alone but for ``nodeName``,
#: ``volumes`` and ``affinity``: what the pods of one template share, in their final form
#: (the pod's labels and uid reach them only through spread constraints'
#: ``matchLabelKeys``, :func:`_spread_errors`).
_SPEC_FIELDS = ("host_network", "containers", "init_containers", "resource_claims",
                "pod_requests", "pod_limits", "node_selector", "scheduler_name",
                "priority_class_name", "priority", "priority_set", "overhead", "tolerations",
                "topology_spread_constraints", "preemption_policy", "preemption_policy_set",
                "scheduling_gates")
#: The fields of a :class:`Pod` that come from ``spec.affinity`` (:func:`_affinities`).
_AFFINITY_FIELDS = ("node_affinity", "pod_affinity", "pod_anti_affinity")
_spec_values = operator.attrgetter(*_SPEC_FIELDS)
_affinity_values = operator.attrgetter(*_AFFINITY_FIELDS)
_assemble_pod = _assembler(Pod, _POD_OWN_FIELDS, _SPEC_FIELDS, _AFFINITY_FIELDS)
#: The spec fields (and container fields) :func:`_pod_spec` reads.
_POD_SPEC_KEYS = ("hostNetwork", "containers", "initContainers", "resources",
                  "resourceClaims", "nodeSelector", "schedulerName", "priorityClassName",
                  "priority", "overhead", "tolerations", "topologySpreadConstraints",
                  "preemptionPolicy", "schedulingGates")
_CONTAINER_KEYS = ("name", "image", "resources", "ports", "restartPolicy")


def _pod_spec(r: ManifestReader, spec: Mapping[str, Any]) -> dict[str, Any]:
    """The :data:`_SPEC_FIELDS` of a pod read from its spec (reading only
    :data:`_POD_SPEC_KEYS`), each checked; the API server's defaulting is left to the
    record."""
    host_network = r.boolean(spec.get("hostNetwork"), "spec.hostNetwork")
    containers = _containers(r, spec.get("containers"), "spec.containers",
                             host_network=host_network)
    init_containers = _containers(r, spec.get("initContainers"), "spec.initContainers",
                                  taken={c.name for c in containers}, host_network=host_network)
    pod_resources = r.mapping(spec.get("resources"), "spec.resources")
    claims = tuple(
        r.string(r.mapping(c, f"spec.resourceClaims[{i}]").get("name"),
                 f"spec.resourceClaims[{i}].name")
        for i, c in enumerate(r.seq(spec.get("resourceClaims"), "spec.resourceClaims"))
    )
    pod_requests, pod_limits = _pod_level_resources(r, pod_resources, "spec.resources")
    node_selector = None
    if spec.get("nodeSelector") is not None:
        node_selector = r.labels(spec.get("nodeSelector"), "spec.nodeSelector")
    scheduler_name = r.string(spec.get("schedulerName"), "spec.schedulerName")
    _check_name(r, scheduler_name, "spec.schedulerName", _v.name_is_dns1123_subdomain)
    class_name = r.string(spec.get("priorityClassName"), "spec.priorityClassName")
    _check_name(r, class_name, "spec.priorityClassName", _v.name_is_dns1123_subdomain)
    return {
        "host_network": host_network,
        "containers": containers,
        "init_containers": init_containers,
        "resource_claims": claims,
        "pod_requests": pod_requests,
        "pod_limits": pod_limits,
        "node_selector": node_selector,
        "scheduler_name": scheduler_name or DEFAULT_SCHEDULER_NAME,
        "priority_class_name": class_name,
        "priority": r.integer(spec.get("priority"), "spec.priority", bits=32),
        "priority_set": spec.get("priority") is not None,
        "overhead": r.resources(spec.get("overhead"), "spec.overhead",
                                _container_resource_name_errors),
        "tolerations": _tolerations(r, spec.get("tolerations"), "spec.tolerations"),
        "topology_spread_constraints": _spread_constraints(
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
    rules across fields are :func:`_check_affinities`')."""
    affinity = r.mapping(value, path)
    return (_node_affinity(r, affinity.get("nodeAffinity"), f"{path}.nodeAffinity"),
            _pod_affinity(r, affinity.get("podAffinity"), f"{path}.podAffinity"),
            _pod_affinity(r, affinity.get("podAntiAffinity"), f"{path}.podAntiAffinity"))


def _affinities_read_labels(pod: Pod) -> bool:
    """Whether the pod's labels (and uid) reach its affinity: a pod (anti-)affinity term with
    ``matchLabelKeys`` or ``mismatchLabelKeys`` (merged at creation, :func:`_merge_label_keys`)."""
    return any(t.match_label_keys or t.mismatch_label_keys
               for a in (pod.pod_affinity, pod.pod_anti_affinity) if a is not None
               for t in a.required + tuple(w.term for w in a.preferred))


def _controller(r: ManifestReader, value: Any, path: str) -> tuple[str, str, str] | None:
    """The first owner reference with ``controller: true``, as (apiVersion, kind, name)."""
    controller = None
    for i, ref in enumerate(r.seq(value, path)):
        rpath = f"{path}[{i}]"
        ref = r.mapping(ref, rpath)
        if r.boolean(ref.get("controller"), f"{rpath}.controller") and controller is None:
            controller = (r.string(ref.get("apiVersion"), f"{rpath}.apiVersion"),
                          r.string(ref.get("kind"), f"{rpath}.kind"),
                          r.string(ref.get("name"), f"{rpath}.name"))
    return controller


def _check_name(r: ManifestReader, name: str, path: str, check: Callable[[str], list[str]]) -> None:
    """An optional name field: checked when set."""
    if name and (messages := check(name)):
        r.check([_v.invalid(path, name, msg) for msg in messages])


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
                                             _pod_resource_name_errors)
    r.check(_requirements_errors(quantities.get("requests", {}), quantities.get("limits", {}),
                                 path))
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
                              _container_resource_name_errors)
        requests = r.quantities(resources.get("requests"), f"{cpath}.resources.requests",
                                _container_resource_name_errors)
        r.check(_requirements_errors(requests, limits, f"{cpath}.resources"))
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
    return _interned(tuple(out))


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


def _node_selector_term(r: ManifestReader, value: Any, path: str) -> NodeSelectorTerm:
    term = r.mapping(value, path)
    parts = {}
    for field in ("matchExpressions", "matchFields"):
        reqs = []
        for i, req in enumerate(r.seq(term.get(field), f"{path}.{field}")):
            rpath = f"{path}.{field}[{i}]"
            req = r.mapping(req, rpath)
            reqs.append(NodeSelectorRequirement(
                key=r.string(req.get("key"), f"{rpath}.key"),
                operator=r.string(req.get("operator"), f"{rpath}.operator"),
                values=r.strings(req.get("values"), f"{rpath}.values"),
            ))
        parts[field] = tuple(reqs)
    return NodeSelectorTerm(parts["matchExpressions"], parts["matchFields"])


def _node_affinity(r: ManifestReader, value: Any, path: str) -> NodeAffinity | None:
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
                weight=r.integer(t.get("weight"), f"{ppath}[{i}].weight", bits=32),
                preference=_node_selector_term(r, t.get("preference"), f"{ppath}[{i}].preference"),
            ))
        preferred = tuple(preferred)
    return NodeAffinity(required, preferred)


def _label_selector(r: ManifestReader, value: Any, path: str,
                    operators: tuple[str, ...] | None = LABEL_SELECTOR_OPERATORS
                    ) -> LabelSelector | None:
    """A ``metav1.LabelSelector``; with ``operators=None`` any operator is kept (for the
    selectors whose errors the scheduler reports)."""
    if value is None:
        return None
    value = r.mapping(value, path)
    reqs = []
    for i, req in enumerate(r.seq(value.get("matchExpressions"), f"{path}.matchExpressions")):
        rpath = f"{path}.matchExpressions[{i}]"
        req = r.mapping(req, rpath)
        op = r.string(req.get("operator"), f"{rpath}.operator")
        if operators is not None and op not in operators:
            r.check([_v.invalid(f"{rpath}.operator", op, "not a valid selector operator")])
        reqs.append(LabelSelectorRequirement(
            key=r.string(req.get("key"), f"{rpath}.key"),
            operator=op,
            values=r.strings(req.get("values"), f"{rpath}.values"),
        ))
    return LabelSelector(r.string_map(value.get("matchLabels"), f"{path}.matchLabels"), tuple(reqs))


def _pod_affinity_term(r: ManifestReader, value: Any, path: str) -> PodAffinityTerm:
    """A pod affinity term (``validatePodAffinityTerm``, but for its selectors' syntax, which
    InterPodAffinity reports): a topology key that is a label name, namespaces that are DNS
    labels."""
    value = r.mapping(value, path)
    key = r.string(value.get("topologyKey"), f"{path}.topologyKey")
    if not key:
        r.check([_v.required(f"{path}.topologyKey", "can not be empty")])
    r.check([_v.invalid(f"{path}.topologyKey", key, msg) for msg in _v.label_key_messages(key)])
    namespaces = r.strings(value.get("namespaces"), f"{path}.namespaces")
    for i, ns in enumerate(namespaces):
        r.check([_v.invalid(f"{path}.namespaces[{i}]", ns, msg)
                 for msg in _v.is_dns1123_label(ns)])
    return PodAffinityTerm(
        topology_key=key,
        label_selector=_label_selector(r, value.get("labelSelector"), f"{path}.labelSelector",
                                       None),
        namespaces=namespaces,
        namespace_selector=_label_selector(r, value.get("namespaceSelector"),
                                           f"{path}.namespaceSelector", None),
        match_label_keys=r.strings(value.get("matchLabelKeys"), f"{path}.matchLabelKeys"),
        mismatch_label_keys=r.strings(value.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys"),
    )


def _pod_affinity(r: ManifestReader, value: Any, path: str) -> PodAffinity | None:
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
        weight = r.integer(t.get("weight"), f"{tpath}.weight", bits=32)
        r.check(_weight_errors(weight, f"{tpath}.weight"))
        preferred.append(WeightedPodAffinityTerm(
            weight=weight,
            term=_pod_affinity_term(r, t.get("podAffinityTerm"), f"{tpath}.podAffinityTerm"),
        ))
    return PodAffinity(required, tuple(preferred))


def _weight_errors(weight: int, path: str) -> list[_v.FieldError]:
    """The weight of a preferred term (``ValidatePreferredSchedulingTerms``,
    ``validateWeightedPodAffinityTerms``)."""
    return [] if 1 <= weight <= 100 else [_v.invalid(path, weight, "must be in the range 1-100")]


def _spread_constraints(r: ManifestReader, value: Any,
                        path: str) -> tuple[TopologySpreadConstraint, ...]:
    """Topology spread constraints, each field checked as ``validateTopologySpreadConstraints``
    does (the rules across constraints and fields are :func:`_spread_errors`'; the label
    selector's syntax PodTopologySpread reports)."""
    out = []
    for i, c in enumerate(r.seq(value, path)):
        cpath = f"{path}[{i}]"
        c = r.mapping(c, cpath)
        max_skew = r.integer(c.get("maxSkew"), f"{cpath}.maxSkew", bits=32)
        if max_skew <= 0:
            r.check([_v.invalid(f"{cpath}.maxSkew", max_skew, "must be greater than zero")])
        key = r.string(c.get("topologyKey"), f"{cpath}.topologyKey")
        if not key:
            r.check([_v.required(f"{cpath}.topologyKey", "can not be empty")])
        policies = {}
        for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if c.get(field) is not None:
                policies[field] = r.choice(c.get(field), f"{cpath}.{field}", INCLUSION_POLICIES,
                                           required=False)
        out.append(TopologySpreadConstraint(
            max_skew=max_skew,
            topology_key=key,
            when_unsatisfiable=r.choice(c.get("whenUnsatisfiable"), f"{cpath}.whenUnsatisfiable",
                                        UNSATISFIABLE_ACTIONS, shown=UNSATISFIABLE_ACTIONS),
            label_selector=_label_selector(r, c.get("labelSelector"), f"{cpath}.labelSelector",
                                           None),
            min_domains=r.integer(c.get("minDomains"), f"{cpath}.minDomains", None, bits=32),
            node_affinity_policy=policies.get("nodeAffinityPolicy"),
            node_taints_policy=policies.get("nodeTaintsPolicy"),
            match_label_keys=r.strings(c.get("matchLabelKeys"), f"{cpath}.matchLabelKeys"),
        ))
    return tuple(out)


_VOLUME_SOURCES = ("persistentVolumeClaim", "ephemeral", "gcePersistentDisk",
                   "awsElasticBlockStore", "rbd", "iscsi", "csi", "azureDisk", "cinder")


def _volumes(r: ManifestReader, value: Any, path: str) -> tuple[Volume, ...]:
    out = []
    for i, v in enumerate(r.seq(value, path)):
        v = r.mapping(v, f"{path}[{i}]")
        kind = next((k for k in _VOLUME_SOURCES if v.get(k) is not None), "local")
        claim = ""
        if kind == "persistentVolumeClaim":
            src = r.mapping(v.get(kind), f"{path}[{i}].{kind}")
            claim = r.string(src.get("claimName"), f"{path}[{i}].{kind}.claimName")
        out.append(_assemble_volume((r.string(v.get("name"), f"{path}[{i}].name"), kind,
                                     claim)))
    return tuple(out)


# --------------------------------------------------------------------------- pod checks

_NODE_AFFINITY = "spec.affinity.nodeAffinity"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _check_pod(r: ManifestReader, pod: Pod) -> None:
    """The rules of ``ValidatePodSpec`` that span fields, on the defaulted record."""
    r.check(_host_network_errors(pod))
    _check_affinities(r, pod)
    r.check(_spread_errors(pod, "spec.topologySpreadConstraints"))
    r.check(_pod_resource_consistency_errors(pod, "spec.resources"))


def _check_affinities(r: ManifestReader, pod: Pod) -> None:
    """The rules of ``ValidatePodSpec`` across the fields of ``spec.affinity``."""
    if pod.node_affinity is not None:
        r.check(_node_affinity_errors(pod.node_affinity))
    for field, affinity in (("podAffinity", pod.pod_affinity),
                            ("podAntiAffinity", pod.pod_anti_affinity)):
        if affinity is not None:
            r.check(_pod_affinity_errors(affinity, f"spec.affinity.{field}"))


def _host_network_errors(pod: Pod) -> list[_v.FieldError]:
    """``validatePodHostNetworkDeps``: with host networking a port's host port (defaulted to
    its container port) must be its container port."""
    if not pod.host_network:
        return []
    return [_v.invalid(f"spec.containers[{i}].ports[{j}].hostPort", p.host_port,
                       "must match `containerPort` when `hostNetwork` is true")
            for i, c in enumerate(pod.containers) for j, p in enumerate(c.ports)
            if p.host_port != p.container_port]


def _node_affinity_errors(affinity: NodeAffinity) -> list[_v.FieldError]:
    """``validateNodeAffinity``: at least one required term; every requirement well formed
    (required terms' values valid label values; preferred ones may not be); weights 1-100."""
    errs = []
    if affinity.required is not None:
        path = f"{_NODE_AFFINITY}.{_REQUIRED}.nodeSelectorTerms"
        if not affinity.required:
            errs.append(_v.required(path, "must have at least one node selector term"))
        for i, term in enumerate(affinity.required):
            errs += _node_selector_term_errors(term, f"{path}[{i}]", check_values=True)
    for i, term in enumerate(affinity.preferred or ()):
        path = f"{_NODE_AFFINITY}.{_PREFERRED}[{i}]"
        errs += _weight_errors(term.weight, f"{path}.weight")
        errs += _node_selector_term_errors(term.preference, f"{path}.preference",
                                           check_values=False)
    return errs


def _node_selector_term_errors(term: NodeSelectorTerm, path: str, check_values: bool
                               ) -> list[_v.FieldError]:
    """``ValidateNodeSelectorTerm``."""
    errs = []
    for j, req in enumerate(term.match_expressions):
        errs += _node_selector_requirement_errors(req, f"{path}.matchExpressions[{j}]",
                                                  check_values)
    for j, req in enumerate(term.match_fields):
        errs += _node_field_requirement_errors(req, f"{path}.matchFields[{j}]")
    return errs


def _node_selector_requirement_errors(req: NodeSelectorRequirement, path: str,
                                      check_values: bool) -> list[_v.FieldError]:
    """``ValidateNodeSelectorRequirement``."""
    errs = []
    if req.operator in ("In", "NotIn"):
        if not req.values:
            errs.append(_v.required(f"{path}.values",
                                    "must be specified when `operator` is 'In' or 'NotIn'"))
    elif req.operator in ("Exists", "DoesNotExist"):
        if req.values:
            errs.append(_v.forbidden(f"{path}.values", "may not be specified when `operator` is "
                                                       "'Exists' or 'DoesNotExist'"))
    elif req.operator in ("Gt", "Lt"):
        if len(req.values) != 1:
            errs.append(_v.required(f"{path}.values", "must be specified single value when "
                                                      "`operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(_v.invalid(f"{path}.operator", req.operator, "not a valid selector operator"))
    errs += [_v.invalid(f"{path}.key", req.key, msg) for msg in _v.label_key_messages(req.key)]
    if check_values:
        for i, value in enumerate(req.values):
            errs += [_v.invalid(f"{path}.values[{i}]", value, msg)
                     for msg in _v.label_value_messages(value)]
    return errs


def _node_field_requirement_errors(req: NodeSelectorRequirement, path: str
                                   ) -> list[_v.FieldError]:
    """``ValidateNodeFieldSelectorRequirement``: ``metadata.name In/NotIn [one node name]``."""
    errs = []
    if req.operator in ("In", "NotIn"):
        if len(req.values) != 1:
            errs.append(_v.required(f"{path}.values", "must be only one value when `operator` is "
                                                      "'In' or 'NotIn' for node field selector"))
    else:
        errs.append(_v.invalid(f"{path}.operator", req.operator, "not a valid selector operator"))
    if req.key != "metadata.name":
        errs.append(_v.invalid(f"{path}.key", req.key, "not a valid field selector key"))
    else:
        for i, value in enumerate(req.values):
            errs += [_v.invalid(f"{path}.values[{i}]", value, msg)
                     for msg in _v.name_is_dns1123_subdomain(value)]
    return errs


def _pod_affinity_errors(affinity: PodAffinity, path: str) -> list[_v.FieldError]:
    """``ValidateMatchLabelKeysAndMismatchLabelKeys`` for every term (the other rules of
    ``validatePodAffinityTerm`` are checked while reading)."""
    errs = []
    for i, term in enumerate(affinity.required):
        errs += _label_keys_errors(term.match_label_keys, term.mismatch_label_keys,
                                   term.label_selector, f"{path}.{_REQUIRED}[{i}]", 0)
    for i, weighted in enumerate(affinity.preferred):
        term = weighted.term
        errs += _label_keys_errors(term.match_label_keys, term.mismatch_label_keys,
                                   term.label_selector,
                                   f"{path}.{_PREFERRED}[{i}].podAffinityTerm", 0)
    return errs


def _label_keys_errors(match: tuple[str, ...], mismatch: tuple[str, ...],
                       selector: LabelSelector | None, path: str,
                       merged: Callable[[str], int] | int) -> list[_v.FieldError]:
    """``ValidateMatchLabelKeysAndMismatchLabelKeys``: label-name keys, a label selector to
    merge into, no key of ``matchLabelKeys`` twice in the (merged) selector, none in both
    lists. ``merged(key)`` counts the requirements the API server's merge would still add."""
    errs = []
    for field, keys in (("matchLabelKeys", match), ("mismatchLabelKeys", mismatch)):
        if not keys:
            continue
        if selector is None:
            errs.append(_v.forbidden(f"{path}.{field}",
                                     "must not be specified when labelSelector is not set"))
            continue
        for i, key in enumerate(keys):
            errs += [_v.invalid(f"{path}.{field}[{i}]", key, msg)
                     for msg in _v.label_key_messages(key)]
    if selector is not None:
        keys = list(selector.match_labels) + [req.key for req in selector.match_expressions]
        for i, key in enumerate(match):
            count = keys.count(key) + (merged(key) if callable(merged) else merged)
            if count >= 2:
                errs.append(_v.invalid(f"{path}.matchLabelKeys[{i}]", key,
                                       "exists in both matchLabelKeys and labelSelector"))
    mismatched = set(mismatch)
    errs += [_v.invalid(f"{path}.matchLabelKeys[{i}]", key,
                        "exists in both matchLabelKeys and mismatchLabelKeys")
             for i, key in enumerate(match) if key in mismatched]
    return errs


def _spread_errors(pod: Pod, path: str) -> list[_v.FieldError]:
    """The rules of ``validateTopologySpreadConstraints`` across constraints and fields:
    one constraint per ``{topologyKey, whenUnsatisfiable}``, ``minDomains`` positive and only
    with ``DoNotSchedule``, and ``matchLabelKeys`` (merged at creation as the API server does
    since v1.34, counted as such)."""
    errs = []
    constraints = pod.topology_spread_constraints
    creating = not pod.uid
    for i, c in enumerate(constraints):
        cpath = f"{path}[{i}]"
        for other in constraints[i + 1:]:
            if (other.topology_key, other.when_unsatisfiable) == (c.topology_key,
                                                                  c.when_unsatisfiable):
                errs.append(_v.duplicate(f"{cpath}.{{topologyKey, whenUnsatisfiable}}",
                                         f"{{{c.topology_key}, {c.when_unsatisfiable}}}"))
                break
        if c.min_domains is not None:
            if c.min_domains <= 0:
                errs.append(_v.invalid(f"{cpath}.minDomains", c.min_domains,
                                       "must be greater than zero"))
            if c.when_unsatisfiable != "DoNotSchedule":
                errs.append(_v.invalid(f"{cpath}.minDomains", c.min_domains,
                                       "can only use minDomains if whenUnsatisfiable="
                                       f"DoNotSchedule, not {c.when_unsatisfiable}"))
        errs += _label_keys_errors(
            c.match_label_keys, (), c.label_selector, cpath,
            lambda key: int(creating and key in pod.labels))
    return errs


def _pod_resource_consistency_errors(pod: Pod, path: str) -> list[_v.FieldError]:
    """``validatePodResourceConsistency``: pod-level requests at least the containers'
    aggregate, in scheduler units (the API server compares milli-rounded quantities)."""
    if not pod.pod_requests:
        return []
    from ksched.resources import pod_requests as aggregate

    containers = aggregate(Pod(pod.name, containers=pod.containers,
                               init_containers=pod.init_containers), use_pod_level=False)
    errs = []
    for name, amount in containers.items():
        stated = pod.pod_requests.get(name)
        if stated is not None and amount > stated:
            errs.append(_v.invalid(f"{path}.requests.{name}", _shown(name, stated),
                                   "must be greater than or equal to aggregate container "
                                   f"requests of {_shown(name, amount)}"))
    return errs


def _shown(name: str, amount: int) -> str:
    """An amount in scheduler units as ``Quantity.String()`` prints it."""
    return _quantity.canonical(f"{amount}m" if name == CPU else str(amount))


def _merge_label_keys(pod: Pod) -> Pod:
    """The API server's ``mutatePodAffinity`` at creation (``MatchLabelKeysInPodAffinity``,
    GA): each term's ``matchLabelKeys`` (``mismatchLabelKeys``) present in the pod's labels
    join its label selector as ``key In (value)`` (``key NotIn (value)``). Only for pods not
    created yet (no ``metadata.uid``): a stored pod has them merged already."""
    def term(t: PodAffinityTerm) -> PodAffinityTerm:
        if t.label_selector is None or not (t.match_label_keys or t.mismatch_label_keys):
            return t
        extra = [LabelSelectorRequirement(k, "In", (pod.labels[k],))
                 for k in t.match_label_keys if k in pod.labels]
        extra += [LabelSelectorRequirement(k, "NotIn", (pod.labels[k],))
                  for k in t.mismatch_label_keys if k in pod.labels]
        if not extra:
            return t
        selector = attrs.evolve(t.label_selector,
                                match_expressions=t.label_selector.match_expressions + tuple(extra))
        return attrs.evolve(t, label_selector=selector)

    def affinity(a: PodAffinity | None) -> PodAffinity | None:
        if a is None:
            return None
        return PodAffinity(tuple(term(t) for t in a.required),
                           tuple(attrs.evolve(w, term=term(w.term)) for w in a.preferred))

    return attrs.evolve(pod, pod_affinity=affinity(pod.pod_affinity),
                        pod_anti_affinity=affinity(pod.pod_anti_affinity))


# --------------------------------------------------------------------------- other kinds


def _parse_workload(obj: Mapping[str, Any]) -> Workload:
    """A Service, ReplicationController, ReplicaSet or StatefulSet: its name, selector and
    replicas. A ReplicationController without a selector selects its template's labels
    (``SetDefaults_ReplicationController``)."""
    kind = obj.get("kind") if isinstance(obj, Mapping) else None
    check = _v.is_dns1035_label if kind == "Service" else _v.name_is_dns1123_subdomain
    r, meta = _metadata(obj, str(kind), namespaced=True, name_check=check)
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
        selector = _label_selector(r, raw, "spec.selector")
    replicas = None
    if kind != "Service":
        replicas = r.integer(spec.get("replicas"), "spec.replicas", 1, bits=32)
        if replicas < 0:
            r.check([_v.invalid("spec.replicas", replicas, "must be greater than or equal to 0")])
    return Workload(str(kind), meta["name"], meta.get("namespace") or "default", selector,
                    replicas)


def _parse_priority_class(obj: Mapping[str, Any]) -> PriorityClass:
    """``ValidatePriorityClass``: a DNS-subdomain name, ``system-`` names only for the
    built-in classes, user values at most 1,000,000,000."""
    r, meta = _metadata(obj, "PriorityClass", namespaced=False)
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
        r.fail(path, f"expected an integer or a percentage, got {_type_name(value)}")
    value = r.integer(value, path, bits=32)
    if value < 0:
        r.check([_v.invalid(path, value, "must be greater than or equal to 0")])
    return value


def _parse_pdb(obj: Mapping[str, Any]) -> PodDisruptionBudget:
    """``ValidatePodDisruptionBudgetSpec`` (the selector's syntax is left to the matcher: an
    invalid selector matches nothing)."""
    r, meta = _metadata(obj, "PodDisruptionBudget", namespaced=True)
    spec = r.mapping(obj.get("spec"), "spec")
    status = r.mapping(obj.get("status"), "status")
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        shown = {k: spec[k] for k in ("minAvailable", "maxUnavailable")}
        r.check([_v.invalid("spec", _v.AsJSON(shown),
                            "minAvailable and maxUnavailable cannot be both set")])
    min_available = _int_or_percent(r, spec.get("minAvailable"), "spec.minAvailable")
    max_unavailable = _int_or_percent(r, spec.get("maxUnavailable"), "spec.maxUnavailable")
    return PodDisruptionBudget(
        name=meta["name"],
        namespace=meta.get("namespace") or "default",
        selector=_label_selector(r, spec.get("selector"), "spec.selector"),
        min_available=min_available,
        max_unavailable=max_unavailable,
        disruptions_allowed=r.integer(status.get("disruptionsAllowed"),
                                      "status.disruptionsAllowed", bits=32),
        current_healthy=r.integer(status.get("currentHealthy"), "status.currentHealthy", bits=32),
        desired_healthy=r.integer(status.get("desiredHealthy"), "status.desiredHealthy", bits=32),
        expected_pods=r.integer(status.get("expectedPods"), "status.expectedPods", bits=32),
        disrupted_pods=frozenset(r.mapping(status.get("disruptedPods"), "status.disruptedPods")),
    )

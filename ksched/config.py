"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``) loading, as kube-scheduler
v1.35.4 does it.

:func:`load_config` runs the three steps of ``cmd/kube-scheduler`` and raises
:class:`ConfigLoadError` with upstream's exact message at the first one that fails:

1. **decode** (``scheme.Codecs.UniversalDecoder``): strict decoding (case-sensitive field names,
   unknown and duplicate fields are errors), plugin args decoded by kind
   (``PluginConfig.decodeNestedObjects``), then v1 defaulting: the default plugin set merged with
   the profile's plugins (``mergePlugins``) and default args for every plugin in use
   (``setDefaults_KubeSchedulerProfile``);
2. **validation** (``ValidateKubeSchedulerConfiguration`` and the plugin-args validators it
   calls);
3. **framework** (``profile.NewMap`` / ``frameworkruntime.NewFramework``): plugin constructors
   (only NodeResourcesFit's args are checked there alone: ``validatePluginConfig`` looks them up
   under the wrong key), per-extension-point lists, the MultiPoint expansion, score weights.

Feature gates are those of v1.35.4 defaults (DynamicResourceAllocation and
DRASchedulerFilterTimeout on; StorageCapacityScoring, DRADeviceBindingConditions,
GangScheduling and NodeDeclaredFeatures off). The Go sources are cited per function.
"""

from __future__ import annotations

import contextvars
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from ksched.api import FrozenDict, _node_affinity, ManifestReader, _spread_constraints
from ksched.constants import DEFAULT_SCHEDULER_NAME
from ksched.errors import ConfigError, InvalidObjectError, UnsupportedFeatureError
from ksched.framework.interfaces import implements
from ksched.framework.registry import Registry
from ksched.plugins import IN_TREE_REGISTRY
from ksched.plugins.balanced_allocation import BalancedAllocationArgs
from ksched.plugins.inter_pod_affinity import InterPodAffinityArgs
from ksched.plugins.node_affinity import NodeAffinityArgs
from ksched.plugins.node_resources_fit import NodeResourcesFitArgs
from ksched.plugins.pod_topology_spread import PodTopologySpreadArgs
from ksched.profile import Profile
from ksched.state import parse_go_int
from ksched.validation import AsJSON as _AsJSON
from ksched.validation import FieldError, go_duration, go_quote, parse_go_duration
from ksched.validation import aggregate as _aggregate
from ksched.validation import child as _child
from ksched.validation import duplicate as _duplicate
from ksched.validation import forbidden as _forbidden
from ksched.validation import invalid as _invalid
from ksched.validation import is_label_key as _is_label_key
from ksched.validation import is_label_value as _is_label_value
from ksched.validation import label_name_errors as _label_name_errors
from ksched.validation import not_supported as _not_supported
from ksched.validation import required as _required
from ksched.yamlio import (
    LoadError,
    is_json,
    load_json,
    load_yaml,
    plain_data,
    read_file,
)

__all__ = ["API_VERSION", "KIND", "ConfigLoadError", "SchedulerConfig", "load_config"]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
_GROUP, _VERSION = API_VERSION.split("/")
#: ``runtime.NewScheme``'s call site, as ``notRegisteredErr`` names the scheme.
_SCHEME_NAME = "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme/scheme.go:29"
_MAX_INT64 = 2**63 - 1
_SECOND = 10**9


class ConfigLoadError(ConfigError):
    """A configuration kube-scheduler rejects.

    ``stage`` is ``"read"`` (the file cannot be read: Go's ``os`` words), ``"decode"``,
    ``"validation"`` or ``"framework"``; ``str(error)`` is upstream's message.
    """

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message


class _FrameworkError(Exception):
    """An error ``NewFramework`` returns (wrapped by ``NewMap`` with the profile name)."""


@attrs.frozen
class SchedulerConfig:
    """A loaded ``KubeSchedulerConfiguration``.

    Examples
    --------
    >>> cfg = load_config({"apiVersion": API_VERSION, "kind": KIND})
    >>> cfg.profiles[0].scheduler_name, cfg.percentage_of_nodes_to_score, cfg.parallelism
    ('default-scheduler', 0, 16)
    >>> cfg.profile_for("default-scheduler").plugins["score"][:2]
    ('TaintToleration', 'NodeAffinity')
    """

    profiles: tuple[Profile, ...] = attrs.field(converter=tuple)
    #: The scheduler-wide ``percentageOfNodesToScore``; 0 is adaptive.
    percentage_of_nodes_to_score: int = 0
    parallelism: int = 16
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    #: Per profile (same order): every extension point's plugin names in run order, as the
    #: framework expands them (``preEnqueue`` ... ``postBind``). ``Profile.plugins`` holds the
    #: four points ksched runs.
    extension_points: tuple[FrozenDict, ...] = attrs.field(default=(), converter=tuple)
    #: The plugins the profiles may name (``None``: the in-tree ones).
    registry: Registry | None = attrs.field(default=None, eq=False)

    def profile_for(self, scheduler_name: str) -> Profile | None:
        """The profile whose ``schedulerName`` is ``scheduler_name`` (``Map[name]``)."""
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)


# =========================================================================== decoding


@attrs.frozen
class _Type:
    """A Go type of the v1 API, as strict JSON decoding sees it."""

    kind: str  # int, float, bool, str, duration, bytes, raw, list, map, struct
    go: str  # reflect.Type.String()
    bits: int = 64
    elem: _Type | None = None
    fields: tuple[tuple[str, _Type], ...] = ()

    @property
    def struct_name(self) -> str:
        return self.go.rsplit(".", 1)[-1]

    def field(self, name: str) -> _Type | None:
        return next((t for n, t in self.fields if n == name), None)


_I32, _I64 = _Type("int", "int32", 32), _Type("int", "int64", 64)
_F32 = _Type("float", "float32", 32)
_BOOL, _STR = _Type("bool", "bool"), _Type("str", "string")
_DURATION, _BYTES = _Type("duration", "v1.Duration"), _Type("bytes", "[]uint8")
_RAW = _Type("raw", "runtime.RawExtension")


def _named(go: str) -> _Type:
    return _Type("str", go)


def _list(elem: _Type) -> _Type:
    return _Type("list", "[]" + elem.go, elem=elem)


def _struct(go: str, *fields: tuple[str, _Type]) -> _Type:
    return _Type("struct", go, fields=tuple(fields))


#: The extension points of ``v1.Plugins`` (``multiPoint`` aside), in declaration order.
ALL_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
              "score", "reserve", "permit", "preBind", "bind", "postBind")
_TYPE_META = (("apiVersion", _STR), ("kind", _STR))
_PLUGIN = _struct("v1.Plugin", ("name", _STR), ("weight", _I32))
_PLUGIN_SET = _struct("v1.PluginSet", ("enabled", _list(_PLUGIN)), ("disabled", _list(_PLUGIN)))
_PROFILE = _struct(
    "v1.KubeSchedulerProfile", ("schedulerName", _STR), ("percentageOfNodesToScore", _I32),
    ("plugins", _struct("v1.Plugins", *((p, _PLUGIN_SET) for p in ALL_POINTS),
                        ("multiPoint", _PLUGIN_SET))),
    ("pluginConfig", _list(_struct("v1.PluginConfig", ("name", _STR), ("args", _RAW)))))
_EXTENDER = _struct(
    "v1.Extender", ("urlPrefix", _STR), ("filterVerb", _STR), ("preemptVerb", _STR),
    ("prioritizeVerb", _STR), ("weight", _I64), ("bindVerb", _STR), ("enableHTTPS", _BOOL),
    ("tlsConfig", _struct("v1.ExtenderTLSConfig", ("insecure", _BOOL), ("serverName", _STR),
                          ("certFile", _STR), ("keyFile", _STR), ("caFile", _STR),
                          ("certData", _BYTES), ("keyData", _BYTES), ("caData", _BYTES))),
    ("httpTimeout", _DURATION), ("nodeCacheCapable", _BOOL),
    ("managedResources", _list(_struct("v1.ExtenderManagedResource", ("name", _STR),
                                       ("ignoredByScheduler", _BOOL)))),
    ("ignorable", _BOOL))
_CONFIG = _struct(
    "v1.KubeSchedulerConfiguration", *_TYPE_META, ("parallelism", _I32),
    ("leaderElection", _struct(
        "v1alpha1.LeaderElectionConfiguration", ("leaderElect", _BOOL),
        ("leaseDuration", _DURATION), ("renewDeadline", _DURATION), ("retryPeriod", _DURATION),
        ("resourceLock", _STR), ("resourceName", _STR), ("resourceNamespace", _STR))),
    ("clientConnection", _struct(
        "v1alpha1.ClientConnectionConfiguration", ("kubeconfig", _STR),
        ("acceptContentTypes", _STR), ("contentType", _STR), ("qps", _F32), ("burst", _I32))),
    ("enableProfiling", _BOOL), ("enableContentionProfiling", _BOOL),
    ("percentageOfNodesToScore", _I32), ("podInitialBackoffSeconds", _I64),
    ("podMaxBackoffSeconds", _I64), ("profiles", _list(_PROFILE)),
    ("extenders", _list(_EXTENDER)), ("delayCacheUntilActive", _BOOL))

_NODE_SELECTOR_REQUIREMENT = _struct(
    "v1.NodeSelectorRequirement", ("key", _STR), ("operator", _named("v1.NodeSelectorOperator")),
    ("values", _list(_STR)))
_NODE_SELECTOR_TERM = _struct("v1.NodeSelectorTerm",
                              ("matchExpressions", _list(_NODE_SELECTOR_REQUIREMENT)),
                              ("matchFields", _list(_NODE_SELECTOR_REQUIREMENT)))
_LABEL_SELECTOR = _struct(
    "v1.LabelSelector", ("matchLabels", _Type("map", "map[string]string", elem=_STR)),
    ("matchExpressions", _list(_struct(
        "v1.LabelSelectorRequirement", ("key", _STR),
        ("operator", _named("v1.LabelSelectorOperator")), ("values", _list(_STR))))))
_RESOURCE_SPEC = _struct("v1.ResourceSpec", ("name", _STR), ("weight", _I64))
_SHAPE = _list(_struct("v1.UtilizationShapePoint", ("utilization", _I32), ("score", _I32)))
#: Plugin name -> its ``<Name>Args`` kind, for the plugins that have one.
_ARGS_TYPES = {
    "DefaultPreemption": _struct(
        "v1.DefaultPreemptionArgs", *_TYPE_META, ("minCandidateNodesPercentage", _I32),
        ("minCandidateNodesAbsolute", _I32)),
    "InterPodAffinity": _struct(
        "v1.InterPodAffinityArgs", *_TYPE_META, ("hardPodAffinityWeight", _I32),
        ("ignorePreferredTermsOfExistingPods", _BOOL)),
    "NodeResourcesBalancedAllocation": _struct(
        "v1.NodeResourcesBalancedAllocationArgs", *_TYPE_META,
        ("resources", _list(_RESOURCE_SPEC))),
    "NodeResourcesFit": _struct(
        "v1.NodeResourcesFitArgs", *_TYPE_META, ("ignoredResources", _list(_STR)),
        ("ignoredResourceGroups", _list(_STR)),
        ("scoringStrategy", _struct(
            "v1.ScoringStrategy", ("type", _named("v1.ScoringStrategyType")),
            ("resources", _list(_RESOURCE_SPEC)),
            ("requestedToCapacityRatio", _struct("v1.RequestedToCapacityRatioParam",
                                                 ("shape", _SHAPE)))))),
    "PodTopologySpread": _struct(
        "v1.PodTopologySpreadArgs", *_TYPE_META,
        ("defaultConstraints", _list(_struct(
            "v1.TopologySpreadConstraint", ("maxSkew", _I32), ("topologyKey", _STR),
            ("whenUnsatisfiable", _named("v1.UnsatisfiableConstraintAction")),
            ("labelSelector", _LABEL_SELECTOR), ("minDomains", _I32),
            ("nodeAffinityPolicy", _named("v1.NodeInclusionPolicy")),
            ("nodeTaintsPolicy", _named("v1.NodeInclusionPolicy")),
            ("matchLabelKeys", _list(_STR))))),
        ("defaultingType", _named("v1.PodTopologySpreadConstraintsDefaulting"))),
    "VolumeBinding": _struct("v1.VolumeBindingArgs", *_TYPE_META, ("bindTimeoutSeconds", _I64),
                             ("shape", _SHAPE)),
    "NodeAffinity": _struct(
        "v1.NodeAffinityArgs", *_TYPE_META,
        ("addedAffinity", _struct(
            "v1.NodeAffinity",
            ("requiredDuringSchedulingIgnoredDuringExecution", _struct(
                "v1.NodeSelector", ("nodeSelectorTerms", _list(_NODE_SELECTOR_TERM)))),
            ("preferredDuringSchedulingIgnoredDuringExecution", _list(_struct(
                "v1.PreferredSchedulingTerm", ("weight", _I32),
                ("preference", _NODE_SELECTOR_TERM))))))),
    "DynamicResources": _struct("v1.DynamicResourcesArgs", *_TYPE_META,
                                ("filterTimeout", _DURATION), ("bindingTimeout", _DURATION)),
}
_REGISTERED_KINDS = {KIND} | {name + "Args" for name in _ARGS_TYPES}


class _Pairs(dict):
    """A JSON object that remembers its key/value pairs in text order, duplicates included."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


class _Fatal(Exception):
    """A decoding error that stops ``json.Unmarshal`` at once (an ``UnmarshalJSON`` error)."""


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list | tuple) else "object"


def _number_text(value: int | float) -> str:
    return str(value) if isinstance(value, int) else repr(value)


class _Decoder:
    """``kjson.UnmarshalStrict`` into a v1 type (kubernetes-sigs/json ``decode.go``).

    Field names match case-sensitively; unknown and duplicate fields become strict errors
    (paths as ``newFieldError`` builds them); the first type error is kept (``saveError``, with
    ``addErrorContext``'s ``Struct.field.path``) and decoding goes on. The result mirrors the Go
    value: known fields only, and ``null`` or absent fields left out (a nil pointer).
    """

    def __init__(self) -> None:
        self.strict: list[str] = []
        self.type_error: str | None = None

    def decode(self, value: Any, t: _Type) -> Any:
        """The decoded value; raises ``_Fatal`` for an error that aborts the whole decode."""
        return self._value(value, t, "", (), "")

    def _value(self, value: Any, t: _Type, path: str, stack: tuple[str, ...], struct: str) -> Any:
        if value is None:
            return None
        return getattr(self, "_decode_" + t.kind)(value, t, path, stack, struct)

    def _mismatch(self, value: Any, t: _Type, stack: tuple[str, ...], struct: str,
                  literal: bool = False) -> None:
        what = _json_kind(value)
        if literal and what == "number":
            what += " " + _number_text(value)
        where = (f"Go struct field {struct}.{'.'.join(stack)}" if struct or stack
                 else "Go value")
        if self.type_error is None:
            self.type_error = f"json: cannot unmarshal {what} into {where} of type {t.go}"

    def _decode_int(self, value, t, path, stack, struct):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return self._mismatch(value, t, stack, struct)
        limit = 2 ** (t.bits - 1)
        if isinstance(value, float) or not -limit <= value < limit:
            return self._mismatch(value, t, stack, struct, literal=True)
        return value

    def _decode_float(self, value, t, path, stack, struct):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return self._mismatch(value, t, stack, struct)
        if abs(value) > 3.4028234663852886e38:
            return self._mismatch(value, t, stack, struct, literal=True)
        return float(value)

    def _decode_bool(self, value, t, path, stack, struct):
        return value if isinstance(value, bool) else self._mismatch(value, t, stack, struct)

    def _decode_str(self, value, t, path, stack, struct):
        return value if isinstance(value, str) else self._mismatch(value, t, stack, struct)

    def _decode_bytes(self, value, t, path, stack, struct):
        return value if isinstance(value, str) else self._mismatch(value, t, stack, struct)

    def _decode_raw(self, value, t, path, stack, struct):
        return value

    def _decode_duration(self, value, t, path, stack, struct):
        """``metav1.Duration.UnmarshalJSON``: a string for ``time.ParseDuration``."""
        if not isinstance(value, str):
            where = f"Go struct field {struct}.{'.'.join(stack)}"
            raise _Fatal(f"json: cannot unmarshal {_json_kind(value)} into {where} of type string")
        try:
            return parse_go_duration(value)
        except ValueError as exc:
            raise _Fatal(str(exc)) from None

    def _decode_list(self, value, t, path, stack, struct):
        if not isinstance(value, list | tuple):
            return self._mismatch(value, t, stack, struct)
        out = []
        for i, item in enumerate(value):
            decoded = self._value(item, t.elem, f"{path}[{i}]", stack, struct)
            out.append(_zero(t.elem) if decoded is None else decoded)
        return out

    def _decode_map(self, value, t, path, stack, struct):
        if not isinstance(value, Mapping):
            return self._mismatch(value, t, stack, struct)
        out = {}
        for key, item in self._pairs(value, path, lambda key: True):
            decoded = self._value(item, t.elem, _child(path, key), stack, struct)
            out[key] = _zero(t.elem) if decoded is None else decoded
        return out

    def _decode_struct(self, value, t, path, stack, struct):
        if not isinstance(value, Mapping):
            return self._mismatch(value, t, stack, struct)
        out: dict[str, Any] = {}
        for key, item in self._pairs(value, path, lambda key: t.field(key) is not None):
            ft = t.field(key)
            if ft is None:
                self._strict(f"unknown field {go_quote(_child(path, key))}")
                continue
            decoded = self._value(item, ft, _child(path, key), stack + (key,), t.struct_name)
            if decoded is None:
                out.pop(key, None)
            else:
                out[key] = decoded
        return out

    def _pairs(self, value: Mapping, path: str, known: Callable[[str], bool]
               ) -> Iterator[tuple[str, Any]]:
        """The object's key/value pairs in text order, reporting a known field's second
        occurrence when it is reached (``checkDuplicateField``)."""
        pairs = value.pairs if isinstance(value, _Pairs) else list(value.items())
        seen: set[str] = set()
        for key, item in pairs:
            if key in seen and known(key):
                self._strict(f"duplicate field {go_quote(_child(path, key))}")
            seen.add(key)
            yield key, item

    def _strict(self, message: str) -> None:
        if message not in self.strict:
            self.strict.append(message)


def _zero(t: _Type) -> Any:
    """The Go zero value of a list or map element decoded from ``null``."""
    return {"int": 0, "float": 0.0, "bool": False, "str": "", "bytes": "", "duration": 0,
            "list": [], "map": {}, "struct": {}}.get(t.kind)


@attrs.frozen
class _Unknown:
    """Args of a plugin without a registered ``<Name>Args`` kind (``runtime.Unknown``)."""

    raw: Any


def _decode_error(message: str) -> ConfigLoadError:
    return ConfigLoadError("decode", message)


def _interpret(data: Any, text: str) -> tuple[str, str, str]:
    """``SimpleMetaFactory.Interpret`` plus the serializer's kind checks: (group, version, kind)."""
    find = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
            'Kind string "json:\\"kind,omitempty\\"" }')
    if data is None:  # ``null`` (an empty YAML document) unmarshals into nothing
        data = {}
    if not isinstance(data, Mapping):
        raise _decode_error(f"couldn't get version/kind; json parse error: json: cannot unmarshal "
                            f"{_json_kind(data)} into Go value of type {find}")
    for name in ("apiVersion", "kind"):
        if data.get(name) is not None and not isinstance(data[name], str):
            raise _decode_error(
                f"couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{_json_kind(data[name])} into Go struct field .{name} of type string")
    api_version, kind = data.get("apiVersion") or "", data.get("kind") or ""
    if api_version.count("/") > 1:
        raise _decode_error(f"unexpected GroupVersion string: {api_version}")
    group, _, version = api_version.rpartition("/")
    if not kind:
        raise _decode_error(f"Object 'Kind' is missing in '{text}'")
    if not version:
        raise _decode_error(f"Object 'apiVersion' is missing in '{text}'")
    return group, version, kind


def _check_registered(group: str, version: str, kind: str) -> None:
    if (group, version) != (_GROUP, _VERSION) or kind not in _REGISTERED_KINDS:
        gv = f"{group}/{version}" if group else version
        raise _Fatal(f"no kind {go_quote(kind)} is registered for version {go_quote(gv)} in "
                     f"scheme {go_quote(_SCHEME_NAME)}")


def _decode_config(data: Any, text: str, yaml_errors: Sequence[str]) -> dict[str, Any]:
    """``UniversalDecoder().Decode`` up to defaulting: the v1 object, or a decode error."""
    group, version, kind = _interpret(data, text)
    try:
        _check_registered(group, version, kind)
    except _Fatal as exc:
        raise _decode_error(str(exc)) from None
    if kind != KIND:
        raise _decode_error(f"couldn't decode as {KIND}, got {group}/{version}, Kind={kind}: ")
    decoder = _Decoder()
    try:
        cfg = decoder.decode(data, _CONFIG)
    except _Fatal as exc:
        raise _decode_error(str(exc)) from None
    if decoder.type_error is not None:
        raise _decode_error(decoder.type_error)
    strict = list(yaml_errors) + decoder.strict + _decode_nested_objects(cfg)
    if strict:
        raise _decode_error("strict decoding error: " + ", ".join(strict))
    return cfg


def _decode_nested_objects(cfg: dict[str, Any]) -> list[str]:
    """``KubeSchedulerConfiguration.DecodeNestedObjects``: plugin args decoded by kind, in
    place; returns the strict errors (a non-strict error is raised at once)."""
    strict = []
    for i, prof in enumerate(cfg.get("profiles") or ()):
        for j, pc in enumerate(prof.get("pluginConfig") or ()):
            where = f"decoding .profiles[{i}].pluginConfig[{j}]: "
            name = pc.get("name", "")
            try:
                pc["args"], errs = _decode_args(name, pc.get("args"))
            except _Fatal as exc:
                raise _decode_error(where + str(exc)) from None
            if errs:
                strict.append(f"{where}strict decoding error: decoding args for plugin {name}: "
                              f"strict decoding error: " + ", ".join(errs))
    return strict


def _decode_args(name: str, raw: Any) -> tuple[Any, list[str]]:
    """``PluginConfig.decodeNestedObjects`` for one entry: (args, strict errors)."""
    t = _ARGS_TYPES.get(name)
    if t is None:
        return (None if raw is None else _Unknown(raw)), []
    if raw is None:
        return {}, []
    want = name + "Args"
    try:
        group, version, kind = _interpret_args(raw, want)
        _check_registered(group, version, kind)
    except (_Fatal, ConfigLoadError) as exc:
        raise _Fatal(f"decoding args for plugin {name}: {exc}") from None
    if kind != want:
        raise _Fatal(f"args for plugin {name} were not of type {want}.{_GROUP}, got "
                     f"{kind}{'.' + group if group else ''}")
    decoder = _Decoder()
    try:
        args = decoder.decode(raw, t)
    except _Fatal as exc:
        raise _Fatal(f"decoding args for plugin {name}: {exc}") from None
    if decoder.type_error is not None:
        raise _Fatal(f"decoding args for plugin {name}: {decoder.type_error}")
    return args, decoder.strict


def _interpret_args(raw: Any, want: str) -> tuple[str, str, str]:
    """The args' group/version/kind with the plugin's as defaults (``gvkWithDefaults``)."""
    group, version, kind = _GROUP, _VERSION, want
    try:
        group, version, kind = _interpret(raw, "")
    except ConfigLoadError as exc:
        if "is missing in" not in exc.message:
            raise _Fatal(exc.message) from None
        api_version = raw.get("apiVersion") or ""
        kind = raw.get("kind") or want
        if api_version:
            group, _, version = api_version.rpartition("/")
        else:
            group, version = _GROUP, _VERSION
    return group, version, kind


# --------------------------------------------------------------------------- reading


def _read_source(source: Any) -> tuple[Any, str, list[str]]:
    """(the object, the text Go would have been given, YAML strict-mode errors).

    A mapping is the object itself (checked by :func:`ksched.yamlio.plain_data`); a path is read
    as ``loadConfigFromFile`` reads it and decoded by the serializer its first byte picks
    (``recognizer.Decode``: JSON when it starts with ``{``, else YAML through ``YAMLToJSON``).
    """
    if isinstance(source, Mapping):
        try:
            data = plain_data(source)
        except LoadError as exc:
            raise _decode_error(f"{KIND}: {exc}") from None
        return data, json.dumps(data, separators=(",", ":")), []
    if not isinstance(source, str | os.PathLike) or isinstance(source, bytes):
        raise _decode_error(f"load_config: expected a {KIND} mapping or a file path, got "
                            f"{type(source).__name__}")
    try:
        raw = read_file(source)
    except LoadError as exc:
        raise ConfigLoadError("read", str(exc)) from None
    text = raw.decode("utf-8", "replace")
    try:
        if is_json(raw):
            return load_json(raw, object_pairs_hook=_Pairs), text, []
        (document,) = load_yaml(raw)
    except LoadError as exc:
        json_error = "couldn't get version/kind; json parse error: " if is_json(raw) else ""
        raise _decode_error(json_error + str(exc)) from None
    errors = []
    if document.duplicates:
        errors.append("yaml: unmarshal errors:\n  " + "\n  ".join(document.duplicates))
    return document.value, text, errors


# =========================================================================== defaulting

#: ``getDefaultPlugins`` with DynamicResourceAllocation on (``applyDynamicResources`` puts
#: DynamicResources before DefaultPreemption): (name, MultiPoint weight or None).
DEFAULT_MULTI_POINT = (
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None),
    ("NodeName", None), ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None),
    ("NodeResourcesFit", 1), ("VolumeRestrictions", None), ("NodeVolumeLimits", None),
    ("VolumeBinding", None), ("VolumeZone", None), ("PodTopologySpread", 2),
    ("InterPodAffinity", 2), ("DynamicResources", 2), ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", None),
)
_DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})
_DRA_FILTER_TIMEOUT = 10 * _SECOND


def _default_plugins() -> dict[str, dict[str, list]]:
    enabled = [{"name": n} if w is None else {"name": n, "weight": w}
               for n, w in DEFAULT_MULTI_POINT]
    return {"multiPoint": {"enabled": enabled}}


def _merge_plugin_set(default: Mapping, custom: Mapping) -> dict[str, list]:
    """``mergePluginSet``: defaults not disabled (custom entries replace them in place), then
    the custom entries that replaced nothing."""
    disabled = [{"name": p.get("name", "")}
                for p in list(custom.get("disabled") or ()) + list(default.get("disabled") or ())]
    disabled_names = {p["name"] for p in disabled}
    custom_enabled = list(custom.get("enabled") or ())
    index = {p.get("name", ""): i for i, p in enumerate(custom_enabled)}
    enabled, replaced = [], set()
    if "*" not in disabled_names:
        for plugin in default.get("enabled") or ():
            if plugin["name"] in disabled_names:
                continue
            if plugin["name"] in index:
                replaced.add(index[plugin["name"]])
                plugin = custom_enabled[index[plugin["name"]]]
            enabled.append(plugin)
    enabled += [p for i, p in enumerate(custom_enabled) if i not in replaced]
    return {"enabled": enabled, "disabled": disabled}


def _merge_plugins(custom: Mapping | None) -> dict[str, dict[str, list]]:
    """``mergePlugins`` with the default set."""
    defaults = _default_plugins()
    custom = custom or {}
    return {point: _merge_plugin_set(defaults.get(point, {}), custom.get(point) or {})
            for point in ("multiPoint",) + ALL_POINTS}


def _default_resources(resources: list | None) -> list[dict]:
    if not resources:
        return [dict(r) for r in _DEFAULT_RESOURCES]
    return [{**r, "weight": r.get("weight") or 1} for r in resources]


def _default_args(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The ``SetDefaults_<Name>Args`` functions of ``apis/config/v1/defaults.go``."""
    if name == "DefaultPreemption":
        args.setdefault("minCandidateNodesPercentage", 10)
        args.setdefault("minCandidateNodesAbsolute", 100)
    elif name == "InterPodAffinity":
        args.setdefault("hardPodAffinityWeight", 1)
    elif name == "VolumeBinding":
        args.setdefault("bindTimeoutSeconds", 600)
    elif name == "NodeResourcesBalancedAllocation":
        args["resources"] = _default_resources(args.get("resources"))
    elif name == "PodTopologySpread":
        args["defaultingType"] = args.get("defaultingType") or "System"
    elif name == "NodeResourcesFit":
        strategy = args.setdefault("scoringStrategy", {"type": "LeastAllocated"})
        strategy["resources"] = _default_resources(strategy.get("resources"))
    elif name == "DynamicResources":
        args.setdefault("filterTimeout", _DRA_FILTER_TIMEOUT)
    return args


def _default_profile(prof: dict[str, Any]) -> None:
    """``setDefaults_KubeSchedulerProfile``: merged plugins, defaulted args, and default args
    appended for every plugin in use that has none (in name order)."""
    prof["plugins"] = _merge_plugins(prof.get("plugins"))
    configs = prof.setdefault("pluginConfig", [])
    existing = set()
    for pc in configs:
        existing.add(pc.get("name", ""))
        if isinstance(pc.get("args"), dict):
            _default_args(pc.get("name", ""), pc["args"])
    used = {p.get("name", "") for s in prof["plugins"].values() for p in s["enabled"]}
    for name in sorted(used):
        if name not in existing and name in _ARGS_TYPES:
            configs.append({"name": name, "args": _default_args(name, {})})


def _set_defaults(cfg: dict[str, Any]) -> None:
    """``SetDefaults_KubeSchedulerConfiguration`` (and the leader-election defaults)."""
    cfg.setdefault("parallelism", 16)
    profiles = cfg.get("profiles") or [{}]
    cfg["profiles"] = profiles
    if len(profiles) == 1:
        profiles[0].setdefault("schedulerName", DEFAULT_SCHEDULER_NAME)
    for prof in profiles:
        _default_profile(prof)
    cfg.setdefault("percentageOfNodesToScore", 0)
    election = cfg.setdefault("leaderElection", {})
    for key, value in (("resourceLock", "leases"), ("resourceNamespace", "kube-system"),
                       ("resourceName", "kube-scheduler"), ("leaseDuration", 15 * _SECOND),
                       ("renewDeadline", 10 * _SECOND), ("retryPeriod", 2 * _SECOND)):
        if not election.get(key):
            election[key] = value
    election.setdefault("leaderElect", True)
    client = cfg.setdefault("clientConnection", {})
    client["contentType"] = client.get("contentType") or "application/vnd.kubernetes.protobuf"
    client["qps"] = client.get("qps") or 50.0
    client["burst"] = client.get("burst") or 100
    cfg.setdefault("podInitialBackoffSeconds", 1)
    cfg.setdefault("podMaxBackoffSeconds", 10)
    cfg.setdefault("enableProfiling", True)
    if cfg["enableProfiling"]:
        cfg.setdefault("enableContentionProfiling", True)


# --------------------------------------------------------------------------- internal form


@attrs.frozen
class _PluginSet:
    """An internal ``config.PluginSet``: weights are 0 where v1 had none."""

    enabled: tuple[tuple[str, int], ...] = ()
    disabled: tuple[str, ...] = ()

    @classmethod
    def from_v1(cls, value: Mapping) -> _PluginSet:
        return cls(tuple((p.get("name", ""), p.get("weight", 0)) for p in value["enabled"]),
                   tuple(p["name"] for p in value["disabled"]))

    def to_json(self) -> dict[str, Any]:
        """The internal struct as ``json.Marshal`` writes it (no json tags; nil slices null)."""
        return {"Enabled": [{"Name": n, "Weight": w} for n, w in self.enabled] or None,
                "Disabled": [{"Name": n, "Weight": 0} for n in self.disabled] or None}


@attrs.frozen
class _Profile:
    """An internal ``config.KubeSchedulerProfile`` after defaulting."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: Mapping[str, _PluginSet]
    #: (name, args): a dict for typed args, ``_Unknown`` or ``None`` otherwise.
    plugin_config: tuple[tuple[str, Any], ...]

    @classmethod
    def from_v1(cls, prof: Mapping[str, Any]) -> _Profile:
        return cls(prof.get("schedulerName", ""), prof.get("percentageOfNodesToScore"),
                   {k: _PluginSet.from_v1(v) for k, v in prof["plugins"].items()},
                   tuple((pc.get("name", ""), pc.get("args")) for pc in prof["pluginConfig"]))

    def args(self, name: str) -> Any:
        return next((a for n, a in self.plugin_config if n == name), None)


# =========================================================================== validation

_INVALID_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
_INVALID_DETAIL = (f"was invalid in version {go_quote(API_VERSION)} (KubeSchedulerConfiguration "
                   f"is version {go_quote(API_VERSION)})")
_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
_NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _validate_config(cfg: Mapping[str, Any], profiles: Sequence[_Profile]) -> list[FieldError]:
    """``ValidateKubeSchedulerConfiguration``, errors in upstream's order."""
    errs = _validate_client_connection(cfg["clientConnection"])
    election = cfg["leaderElection"]
    errs += _validate_leader_election(election)
    if election["leaderElect"] and election["resourceLock"] != "leases":
        errs.append(_invalid("leaderElection.resourceLock", election["resourceLock"],
                             'resourceLock value must be "leases"'))
    if cfg["parallelism"] <= 0:
        errs.append(_invalid("parallelism", cfg["parallelism"],
                             "should be an integer value greater than zero"))
    seen: dict[str, int] = {}
    for i, prof in enumerate(profiles):
        errs += _validate_profile(f"profiles[{i}]", prof)
        if prof.scheduler_name in seen:
            # The bad value is a *field.Path, whose unexported fields marshal as {}.
            errs.append(_duplicate(f"profiles[{i}].schedulerName", _AsJSON({})))
        seen[prof.scheduler_name] = i
    errs += _validate_common_queue_sort(profiles)
    errs += _validate_percentage("percentageOfNodesToScore", cfg["percentageOfNodesToScore"])
    if cfg["podInitialBackoffSeconds"] <= 0:
        errs.append(_invalid("podInitialBackoffSeconds", cfg["podInitialBackoffSeconds"],
                             "must be greater than 0"))
    if cfg["podMaxBackoffSeconds"] < cfg["podInitialBackoffSeconds"]:
        errs.append(_invalid("podMaxBackoffSeconds", cfg["podMaxBackoffSeconds"],
                             "must be greater than or equal to PodInitialBackoffSeconds"))
    return errs + _validate_extenders(cfg.get("extenders") or [])


def _validate_client_connection(client: Mapping[str, Any]) -> list[FieldError]:
    """``componentbasevalidation.ValidateClientConnectionConfiguration``."""
    burst = client.get("burst", 0)
    return [_invalid("clientConnection.burst", burst, "must be non-negative")] if burst < 0 else []


def _validate_leader_election(le: Mapping[str, Any]) -> list[FieldError]:
    """``componentbasevalidation.ValidateLeaderElectionConfiguration``."""
    if not le["leaderElect"]:
        return []
    errs = []
    for key in ("leaseDuration", "renewDeadline", "retryPeriod"):
        if le[key] <= 0:
            errs.append(_invalid(f"leaderElection.{key}", _AsJSON(go_duration(le[key])),
                                 "must be greater than zero"))
    if le["leaseDuration"] <= le["renewDeadline"]:
        errs.append(_invalid("leaderElection.leaseDuration",
                             _AsJSON(go_duration(le["renewDeadline"])),
                             "must be greater than `RenewDeadline`"))
    for key in ("resourceLock", "resourceNamespace", "resourceName"):
        if not le.get(key):
            errs.append(_required(f"leaderElection.{key}"))
    return errs


def _validate_percentage(path: str, value: int | None) -> list[FieldError]:
    """``validatePercentageOfNodesToScore``."""
    if value is not None and not 0 <= value <= 100:
        return [_invalid(path, value, "not in valid range [0-100]")]
    return []


def _validate_profile(path: str, prof: _Profile) -> list[FieldError]:
    """``validateKubeSchedulerProfile`` and ``validatePluginConfig``."""
    errs = []
    if not prof.scheduler_name:
        errs.append(_required(f"{path}.schedulerName"))
    errs += _validate_percentage(f"{path}.percentageOfNodesToScore",
                                 prof.percentage_of_nodes_to_score)
    for point in ALL_POINTS:  # upstream walks a map here, so its order is random
        for i, (name, _) in enumerate(prof.plugins[point].enabled):
            if name in _INVALID_PLUGINS:
                errs.append(_invalid(f"{path}.plugins.{point}.enabled[{i}]", name,
                                     _INVALID_DETAIL))
    seen = set()
    for i, (name, args) in enumerate(prof.plugin_config):
        pc_path = f"{path}.pluginConfig[{i}]"
        if name in seen:
            errs.append(_duplicate(pc_path, name))
        seen.add(name)
        if name in _INVALID_PLUGINS:
            errs.append(_invalid(pc_path, name, _INVALID_DETAIL))
        elif name in _ARGS_VALIDATORS and isinstance(args, dict):
            errs += _ARGS_VALIDATORS[name](f"{pc_path}.args", args)
    return errs


def _validate_common_queue_sort(profiles: Sequence[_Profile]) -> list[FieldError]:
    """``validateCommonQueueSort``: the same queueSort set (and its args) in every profile."""
    errs = []
    canon = profiles[0].plugins["queueSort"]
    name = canon.enabled[0][0] if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(_invalid("profiles[0].plugins.queueSort.Enabled", len(canon.enabled),
                             "only one queue sort plugin can be enabled"))
    canon_args = None
    for pc_name, args in profiles[0].plugin_config:
        if name and pc_name == name:
            canon_args = args
    for i, prof in enumerate(profiles[1:], start=1):
        current = prof.plugins["queueSort"]
        if current != canon:
            errs.append(_invalid(f"profiles[{i}].plugins.queueSort", _AsJSON(current.to_json()),
                                 "must be the same for all profiles"))
        for pc_name, args in prof.plugin_config:
            if pc_name == name and args != canon_args:
                errs.append(_invalid(f"profiles[{i}].pluginConfig.args", _AsJSON(_args_json(args)),
                                     "queueSort must be the same for all profiles"))
    return errs


def _args_json(args: Any) -> Any:
    return args.raw if isinstance(args, _Unknown) else args


def _validate_extenders(extenders: Sequence[Mapping[str, Any]]) -> list[FieldError]:
    """``validateExtenders``."""
    errs, binders, managed = [], 0, set()
    for i, ext in enumerate(extenders):
        path = f"extenders[{i}]"
        if ext.get("prioritizeVerb") and ext.get("weight", 0) <= 0:
            errs.append(_invalid(f"{path}.weight", ext.get("weight", 0),
                                 "must have a positive weight applied to it"))
        binders += bool(ext.get("bindVerb"))
        for j, res in enumerate(ext.get("managedResources") or ()):
            name, rpath = res.get("name", ""), f"{path}.managedResources[{j}].name"
            errs += _extended_resource_name_errors(rpath, name)
            if name in managed:
                errs.append(_invalid(rpath, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(_invalid("extenders", f"found {binders} extenders implementing bind",
                             "only one extender can implement bind"))
    return errs


def _extended_resource_name_errors(path: str, name: str) -> list[FieldError]:
    """``validateExtendedResourceName`` (``v1helper.IsExtendedResourceName``)."""
    errs = [_invalid(path, _AsJSON(name), msg) for msg in _is_label_key(name)]
    if errs:
        return errs
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests.") or _is_label_key("requests." + name):
        return [_invalid(path, name, "is an invalid extended resource name")]
    return []


# --------------------------------------------------------------------------- plugin args


def _validate_default_preemption(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateDefaultPreemptionArgs``."""
    pct, absolute = args.get("minCandidateNodesPercentage", 0), args.get(
        "minCandidateNodesAbsolute", 0)
    pct_path, abs_path = f"{path}.minCandidateNodesPercentage", f"{path}.minCandidateNodesAbsolute"
    errs = []
    if not 0 <= pct <= 100:
        errs.append(_invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(_invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs += [_invalid(pct_path, pct, "cannot be zero at the same time as "
                                         "minCandidateNodesAbsolute"),
                 _invalid(abs_path, absolute, "cannot be zero at the same time as "
                                              "minCandidateNodesPercentage")]
    return errs


def _validate_inter_pod_affinity(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateInterPodAffinityArgs``."""
    weight = args.get("hardPodAffinityWeight", 0)
    if not 0 <= weight <= 100:
        return [_invalid(f"{path}.hardPodAffinityWeight", weight, "not in valid range [0, 100]")]
    return []


def _validate_pod_topology_spread(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidatePodTopologySpreadArgs``."""
    errs = []
    constraints = args.get("defaultConstraints") or []
    kind = args.get("defaultingType", "")
    if kind not in ("System", "List"):
        errs.append(_not_supported(f"{path}.defaultingType", _AsJSON(kind), ("System", "List")))
    elif kind == "System" and constraints:
        errs.append(_invalid(f"{path}.defaultingType", _AsJSON(kind),
                             "when .defaultConstraints are not empty"))
    for i in range(len(constraints)):
        errs += _spread_constraint_errors(f"{path}.defaultConstraints", constraints, i)
    return errs


def _spread_constraint_errors(list_path: str, constraints: Sequence[Mapping], i: int
                              ) -> list[FieldError]:
    c, path = constraints[i], f"{list_path}[{i}]"
    errs = []
    if c.get("maxSkew", 0) <= 0:
        errs.append(_invalid(f"{path}.maxSkew", c.get("maxSkew", 0), "not in valid range (0, inf)"))
    key = c.get("topologyKey", "")
    if not key:
        errs.append(_required(f"{path}.topologyKey", "can not be empty"))
    else:
        errs += _label_name_errors(key, f"{path}.topologyKey")
    action = c.get("whenUnsatisfiable", "")
    if not action:
        errs.append(_required(f"{path}.whenUnsatisfiable", "can not be empty"))
    elif action not in ("DoNotSchedule", "ScheduleAnyway"):
        errs.append(_not_supported(f"{path}.whenUnsatisfiable", _AsJSON(action),
                                   ("DoNotSchedule", "ScheduleAnyway")))
    if c.get("labelSelector") is not None:
        errs.append(_forbidden(f"{path}.labelSelector",
                               "constraint must not define a selector, as they deduced for each "
                               "pod"))
    for other in constraints[:i]:
        if (other.get("topologyKey", ""), other.get("whenUnsatisfiable", "")) == (key, action):
            errs.append(_duplicate(path, f"{{{key}, {action}}}"))
            break
    return errs


def _validate_balanced_allocation(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateNodeResourcesBalancedAllocationArgs``."""
    errs, seen = [], set()
    for i, res in enumerate(args.get("resources") or ()):
        name, weight = res.get("name", ""), res.get("weight", 0)
        if name in seen:
            errs.append(_duplicate(f"{path}.resources[{i}].name", name))
        seen.add(name)
        if weight != 1:
            errs.append(_invalid(f"{path}.resources[{i}].weight", weight, "must be 1"))
    return errs


def _validate_node_affinity(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateNodeAffinityArgs``: the added affinity must parse
    (``nodeaffinity.NewNodeSelector`` / ``NewPreferredSchedulingTerms``)."""
    affinity = args.get("addedAffinity")
    if affinity is None:
        return []
    errs = []
    base = f"{path}.addedAffinity"
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        terms_path = f"{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        for i, term in enumerate(required.get("nodeSelectorTerms") or ()):
            if _term_is_empty(term):
                continue
            errs += _node_selector_term_errors(term, f"{terms_path}[{i}]")
    preferred_path = f"{base}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
                             or ()):
        preference = term.get("preference") or {}
        if term.get("weight", 0) == 0 or _term_is_empty(preference):
            continue
        # Upstream parses the preference under the term's own path (no ".preference").
        errs += _node_selector_term_errors(preference, f"{preferred_path}[{i}]")
    return errs


def _term_is_empty(term: Mapping[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def _node_selector_term_errors(term: Mapping[str, Any], path: str) -> list[FieldError]:
    """``newNodeSelectorTerm``'s parse errors."""
    errs = []
    for i, req in enumerate(term.get("matchExpressions") or ()):
        rpath, op = f"{path}.matchExpressions[{i}]", req.get("operator", "")
        if op not in _NODE_SELECTOR_OPERATORS:
            errs.append(_not_supported(f"{rpath}.operator", _AsJSON(op), _NODE_SELECTOR_OPERATORS))
            continue
        errs += _requirement_errors(req.get("key", ""), op, req.get("values"), rpath)
    for i, req in enumerate(term.get("matchFields") or ()):
        rpath, op, values = f"{path}.matchFields[{i}]", req.get("operator", ""), req.get("values")
        if op in ("In", "NotIn"):
            if len(values or ()) != 1:
                errs.append(_invalid(f"{rpath}.values", values, "must have one element"))
        else:
            errs.append(_not_supported(f"{rpath}.operator", _AsJSON(op), ("In", "NotIn")))
    return errs


def _requirement_errors(key: str, op: str, values: list[str] | None, path: str
                        ) -> list[FieldError]:
    """``labels.NewRequirement``'s errors for a node-selector requirement."""
    errs = []
    key_msgs = _is_label_key(key)
    if key_msgs:
        errs.append(_invalid(f"{path}.key", key, "; ".join(key_msgs)))
    vals, values_path = values or [], f"{path}.values"
    if op in ("In", "NotIn") and not vals:
        errs.append(_invalid(values_path, values, "for 'in', 'notin' operators, values set "
                                                  "can't be empty"))
    elif op in ("Exists", "DoesNotExist") and vals:
        errs.append(_invalid(values_path, values, "values set must be empty for exists and does "
                                                  "not exist"))
    elif op in ("Gt", "Lt"):
        if len(vals) != 1:
            errs.append(_invalid(values_path, values, "for 'Gt', 'Lt' operators, exactly one "
                                                      "value is required"))
        for i, value in enumerate(vals):
            if parse_go_int(value) is None:
                errs.append(_invalid(f"{values_path}[{i}]", value,
                                     "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, value in enumerate(vals):
        msgs = _is_label_value(value)
        if msgs:
            errs.append(_invalid(f"{values_path}[{i}][{key}]", value, "; ".join(msgs)))
    return errs


def _validate_volume_binding(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateVolumeBindingArgs`` with StorageCapacityScoring off."""
    errs = []
    if args.get("bindTimeoutSeconds", 0) < 0:
        errs.append(_invalid(f"{path}.bindTimeoutSeconds", args["bindTimeoutSeconds"],
                             "invalid BindTimeoutSeconds, should not be a negative value"))
    if args.get("shape") is not None:
        shape = [{"Utilization": p.get("utilization", 0), "Score": p.get("score", 0)}
                 for p in args["shape"]]
        errs.append(_invalid(f"{path}.shape", _AsJSON(shape),
                             "unexpected field `shape`, remove it or turn on the feature gate "
                             "StorageCapacityScoring"))
    return errs


def _validate_dynamic_resources(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateDynamicResourcesArgs`` (filter timeout gate on, binding conditions off)."""
    errs = []
    timeout = args.get("filterTimeout")
    if timeout is not None and timeout < 0:
        errs.append(_invalid(f"{path}.filterTimeout", _AsJSON(go_duration(timeout)),
                             "must be zero or positive"))
    if args.get("bindingTimeout") is not None:
        errs.append(_forbidden(f"{path}.bindingTimeout", "DRADeviceBindingConditions or "
                               "DRAResourceClaimDeviceStatus feature gate is disabled"))
    return errs


def _validate_fit(path: str, args: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateNodeResourcesFitArgs`` (run only by ``NewFit``, with a nil path)."""
    errs = []
    for i, name in enumerate(args.get("ignoredResources") or ()):
        errs += _label_name_errors(name, f"{_child(path, 'ignoredResources')}[{i}]")
    for i, group in enumerate(args.get("ignoredResourceGroups") or ()):
        gpath = f"{_child(path, 'ignoredResourceGroups')}[{i}]"
        if "/" in group:
            errs.append(_invalid(gpath, group, "resource group name can't contain '/'"))
        errs += _label_name_errors(group, gpath)
    strategy = args.get("scoringStrategy")
    if strategy is not None:
        spath = _child(path, "scoringStrategy")
        kind = strategy.get("type", "")
        if kind not in _STRATEGIES:
            errs.append(_not_supported(f"{spath}.type", _AsJSON(kind), _STRATEGIES))
        for i, res in enumerate(strategy.get("resources") or ()):
            weight = res.get("weight", 0)
            if not 0 < weight <= 100:
                errs.append(_invalid(f"{spath}.resources[{i}].weight", weight,
                                     f"resource weight of {res.get('name', '')} not in valid "
                                     "range (0, 100]"))
        ratio = strategy.get("requestedToCapacityRatio")
        if ratio is not None:
            errs += _function_shape_errors(ratio.get("shape") or [], f"{spath}.shape")
    return errs


def _function_shape_errors(shape: Sequence[Mapping[str, int]], path: str) -> list[FieldError]:
    """``validateFunctionShape``."""
    if not shape:
        return [_required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(_invalid(f"{path}[{i}].utilization", shape[i].get("utilization", 0),
                                 "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        utilization, score = point.get("utilization", 0), point.get("score", 0)
        if not 0 <= utilization <= 100:
            errs.append(_invalid(f"{path}[{i}].utilization", utilization,
                                 "not in valid range [0, 100]"))
        if not 0 <= score <= 10:
            errs.append(_invalid(f"{path}[{i}].score", score, "not in valid range [0, 10]"))
    return errs


#: ``validatePluginConfig``'s table. NodeResourcesFit is missing on purpose: upstream keys its
#: validator as "NodeResourcesFitArgs", so Fit's args are only checked by ``NewFit``.
_ARGS_VALIDATORS: dict[str, Callable[[str, Mapping[str, Any]], list[FieldError]]] = {
    "DefaultPreemption": _validate_default_preemption,
    "InterPodAffinity": _validate_inter_pod_affinity,
    "NodeAffinity": _validate_node_affinity,
    "NodeResourcesBalancedAllocation": _validate_balanced_allocation,
    "PodTopologySpread": _validate_pod_topology_spread,
    "VolumeBinding": _validate_volume_binding,
    "DynamicResources": _validate_dynamic_resources,
}


# =========================================================================== framework

#: ``frameworkImpl.getExtensionPoints`` order, with each point's Go interface name.
_FRAMEWORK_POINTS = (
    ("preFilter", "PreFilterPlugin"), ("filter", "FilterPlugin"),
    ("postFilter", "PostFilterPlugin"), ("reserve", "ReservePlugin"),
    ("preScore", "PreScorePlugin"), ("score", "ScorePlugin"), ("preBind", "PreBindPlugin"),
    ("bind", "BindPlugin"), ("postBind", "PostBindPlugin"), ("permit", "PermitPlugin"),
    ("preEnqueue", "PreEnqueuePlugin"), ("queueSort", "QueueSortPlugin"),
)
#: Upstream's extension points outside ksched's four, for the plugins ksched implements, and
#: all points of the in-tree plugins ksched does not run in the scheduling cycle
#: (``var _ fwk.XPlugin = &Y{}`` in each plugin package).
_OTHER_POINTS: dict[str, tuple[str, ...]] = {
    "SchedulingGates": ("preEnqueue",),
    "PrioritySort": ("queueSort",),
    "DefaultPreemption": ("preEnqueue", "postFilter"),
    "DefaultBinder": ("bind",),
    "GangScheduling": ("preEnqueue", "reserve", "permit"),
    "NodeDeclaredFeatures": ("preFilter", "filter"),
    "VolumeBinding": ("reserve", "preBind"),
    "DynamicResources": ("preEnqueue", "postFilter", "reserve", "preBind"),
}


def plugin_extension_points(name: str) -> frozenset[str] | None:
    """The extension points an in-tree plugin implements upstream; ``None`` when
    ``NewInTreeRegistry`` has no plugin of that name."""
    factory = _registry().get(name)
    if factory is None and name not in _OTHER_POINTS:
        return None
    points = set(_OTHER_POINTS.get(name, ()))
    if factory is not None:
        plugin = factory if name in IN_TREE_REGISTRY else _instance(name, factory)
        points.update(p for p in ALL_POINTS if implements(plugin, p))
    return frozenset(points)


#: The registry of the ``load_config`` call under way (out-of-tree plugins included).
_REGISTRY: contextvars.ContextVar[Registry] = contextvars.ContextVar("registry",
                                                                     default=IN_TREE_REGISTRY)


def _registry() -> Registry:
    return _REGISTRY.get()


def _instance(name: str, factory: Any) -> Any:
    """An out-of-tree plugin, built (with no args) to see which extension points it has."""
    return factory if isinstance(factory, type) else factory(None)


@attrs.frozen
class _Framework:
    """What ``NewFramework`` builds that ksched keeps: ordered plugin lists and weights."""

    points: Mapping[str, tuple[str, ...]]
    weights: Mapping[str, int]


def _new_framework(prof: _Profile) -> _Framework:
    """``frameworkruntime.NewFramework``; raises ``_FrameworkError``."""
    needed = {name for s in prof.plugins.values() for name, _ in s.enabled}
    seen_config = set()
    for name, _ in prof.plugin_config:
        if name in seen_config:
            raise _FrameworkError(f"repeated config for plugin {name}")
        seen_config.add(name)
    implemented = {}
    for name in sorted(needed):  # upstream walks the registry map: random order
        try:
            points = plugin_extension_points(name)
        except Exception as exc:  # an out-of-tree factory's own failure
            raise _FrameworkError(f"initializing plugin {go_quote(name)}: "
                                  f"{type(exc).__name__}: {exc}") from exc
        if points is None:
            continue
        error = _PLUGIN_CONSTRUCTOR_CHECKS.get(name, _no_check)(prof.args(name))
        if error:
            raise _FrameworkError(f"initializing plugin {go_quote(name)}: {error}")
        implemented[name] = points
    lists = {point: _update_plugin_list(prof.plugins[point], implemented, point, go_type)
             for point, go_type in _FRAMEWORK_POINTS}
    multi_point = prof.plugins["multiPoint"]
    if multi_point.enabled:
        for point, go_type in _FRAMEWORK_POINTS:
            lists[point] = _expand_multi_point(prof.plugins[point], multi_point, lists[point],
                                               implemented, point, go_type)
    quoted = go_quote(prof.scheduler_name)
    if len(lists["queueSort"]) != 1:
        raise _FrameworkError(f"only one queue sort plugin required for profile with scheduler "
                              f"name {quoted}, but got {len(lists['queueSort'])}")
    if not lists["bind"]:
        raise _FrameworkError(f"at least one bind plugin is needed for profile with scheduler "
                              f"name {quoted}")
    weights = _score_weights(prof.plugins["score"].enabled + multi_point.enabled, implemented)
    for name in lists["score"]:
        if not weights.get(name):
            raise _FrameworkError(f"score plugin {go_quote(name)} is not configured with weight")
    return _Framework({p: tuple(lists[p]) for p in ALL_POINTS},
                      {name: weights[name] for name in lists["score"]})


def _no_check(args: Any) -> str:
    return ""


def _check_fit_args(args: Any) -> str:
    """``NewFit``: ``ValidateNodeResourcesFitArgs`` with a nil path, then the strategy."""
    args = args if isinstance(args, dict) else {}
    errs = _validate_fit("", args)
    if errs:
        return _aggregate(str(e) for e in errs)
    strategy = args.get("scoringStrategy")
    if strategy is None:
        return "scoring strategy not specified"
    if strategy.get("type") == "RequestedToCapacityRatio" and (
            strategy.get("requestedToCapacityRatio") is None):
        # Upstream dereferences the nil shape parameter here and panics; report it instead.
        return ("scoringStrategy.requestedToCapacityRatio: Required value: kube-scheduler "
                "v1.35.4 panics on a RequestedToCapacityRatio strategy without this field")
    return ""


#: Plugin constructors whose argument checks the validation stage has not already made.
_PLUGIN_CONSTRUCTOR_CHECKS: dict[str, Callable[[Any], str]] = {"NodeResourcesFit": _check_fit_args}


def _update_plugin_list(pset: _PluginSet, implemented: Mapping[str, frozenset[str]],
                        point: str, go_type: str) -> list[str]:
    """``updatePluginList``: the point's own ``enabled`` list."""
    out: list[str] = []
    for name, _ in pset.enabled:
        if name not in implemented:
            raise _FrameworkError(f"{go_type} {go_quote(name)} does not exist")
        if point not in implemented[name]:
            raise _FrameworkError(f"plugin {go_quote(name)} does not extend {go_type} plugin")
        if name in out:
            raise _FrameworkError(f"plugin {go_quote(name)} already registered as "
                                  f"{go_quote(go_type)}")
        out.append(name)
    return out


def _expand_multi_point(pset: _PluginSet, multi_point: _PluginSet, current: list[str],
                        implemented: Mapping[str, frozenset[str]], point: str, go_type: str
                        ) -> list[str]:
    """``expandMultiPointPlugins`` for one point: plugins re-enabled at the point itself come
    first, then the MultiPoint ones, then the point's other plugins."""
    if "*" in pset.disabled:
        return current
    enabled = list(dict.fromkeys(name for name, _ in pset.enabled))
    overrides: list[str] = []
    expanded: list[str] = []
    for name, _ in multi_point.enabled:
        if name not in implemented:
            raise _FrameworkError(f"{go_type} {go_quote(name)} does not exist")
        if point not in implemented[name] or name in pset.disabled:
            continue
        if name in enabled:
            if name not in overrides:
                overrides.append(name)
            continue
        if name in expanded:
            raise _FrameworkError(f"plugin {go_quote(name)} already registered as "
                                  f"{go_quote(go_type)}")
        expanded.append(name)
    return ([n for n in enabled if n in overrides] + expanded
            + [n for n in enabled if n not in overrides])


def _score_weights(entries: Sequence[tuple[str, int]], implemented: Mapping[str, frozenset[str]]
                   ) -> dict[str, int]:
    """``getScoreWeights``: the first weight given wins, 0 means 1, and the int64 sum of
    ``weight * MaxNodeScore`` must not overflow (Go's wrapping subtraction included, so a
    negative weight trips it)."""
    weights: dict[str, int] = {}
    total = 0
    for name, weight in entries:
        if "score" not in implemented.get(name, ()) or name in weights:
            continue
        weight = weight or 1
        weights[name] = weight
        if weight * 100 > _wrap_int64(_MAX_INT64 - total):
            raise _FrameworkError("total score of Score plugins could overflow")
        total = _wrap_int64(total + weight * 100)
    return weights


def _wrap_int64(value: int) -> int:
    return (value + 2**63) % 2**64 - 2**63


def _new_map(profiles: Sequence[_Profile]) -> list[_Framework]:
    """``profile.NewMap``: one framework per profile, then ``cfgValidator.validate``."""
    frameworks, seen = [], set()
    first_queue_sort: tuple[str, Any] | None = None
    for prof in profiles:
        try:
            framework = _new_framework(prof)
        except _FrameworkError as exc:
            raise ConfigLoadError("framework", f"creating profile for scheduler name "
                                               f"{prof.scheduler_name}: {exc}") from None
        name = prof.scheduler_name
        if not name:
            raise ConfigLoadError("framework", "scheduler name is needed")
        if name in seen:
            raise ConfigLoadError("framework", f"duplicate profile with scheduler name "
                                               f"{go_quote(name)}")
        queue_sort = framework.points["queueSort"][0]
        current = (queue_sort, prof.args(queue_sort))
        if first_queue_sort is None:
            first_queue_sort = current
        elif queue_sort != first_queue_sort[0]:
            raise ConfigLoadError("framework", f"different queue sort plugins for profile "
                                               f"{go_quote(name)}: {go_quote(queue_sort)}, first: "
                                               f"{go_quote(first_queue_sort[0])}")
        elif current[1] != first_queue_sort[1]:
            raise ConfigLoadError("framework", f"different queue sort plugin args for profile "
                                               f"{go_quote(name)}")
        seen.add(name)
        frameworks.append(framework)
    return frameworks


# =========================================================================== ksched records


def _fit_args(args: Mapping[str, Any], reader: ManifestReader) -> NodeResourcesFitArgs:
    strategy = args["scoringStrategy"]
    ratio = strategy.get("requestedToCapacityRatio") or {}
    return NodeResourcesFitArgs(
        strategy=strategy.get("type", ""),
        resources=tuple((r.get("name", ""), r.get("weight", 0)) for r in strategy["resources"]),
        shape=tuple((p.get("utilization", 0), p.get("score", 0))
                    for p in ratio.get("shape") or ()),
        ignored_resources=frozenset(args.get("ignoredResources") or ()),
        ignored_resource_groups=frozenset(args.get("ignoredResourceGroups") or ()))


def _balanced_allocation_args(args: Mapping[str, Any],
                              reader: ManifestReader) -> BalancedAllocationArgs:
    return BalancedAllocationArgs(tuple((r.get("name", ""), r.get("weight", 0))
                                        for r in args["resources"]))


def _node_affinity_args(args: Mapping[str, Any], reader: ManifestReader) -> NodeAffinityArgs:
    return NodeAffinityArgs(_node_affinity(reader, args.get("addedAffinity"), "addedAffinity"))


def _inter_pod_affinity_args(args: Mapping[str, Any],
                             reader: ManifestReader) -> InterPodAffinityArgs:
    return InterPodAffinityArgs(
        hard_pod_affinity_weight=args["hardPodAffinityWeight"],
        ignore_preferred_terms_of_existing_pods=args.get("ignorePreferredTermsOfExistingPods",
                                                         False))


def _pod_topology_spread_args(args: Mapping[str, Any],
                              reader: ManifestReader) -> PodTopologySpreadArgs:
    return PodTopologySpreadArgs(
        default_constraints=_spread_constraints(reader, args.get("defaultConstraints"),
                                                "defaultConstraints"),
        defaulting_type=args["defaultingType"])


def _default_preemption_args(args: Mapping[str, Any], reader: ManifestReader) -> Any:
    from ksched.plugins.default_preemption import DefaultPreemptionArgs

    return DefaultPreemptionArgs(args["minCandidateNodesPercentage"],
                                 args["minCandidateNodesAbsolute"])


#: Plugin name -> builder of the ksched args record from the defaulted v1 args.
_KSCHED_ARGS: dict[str, Callable[[Mapping[str, Any], ManifestReader], Any]] = {
    "NodeResourcesFit": _fit_args,
    "NodeResourcesBalancedAllocation": _balanced_allocation_args,
    "NodeAffinity": _node_affinity_args,
    "InterPodAffinity": _inter_pod_affinity_args,
    "PodTopologySpread": _pod_topology_spread_args,
    "DefaultPreemption": _default_preemption_args,
}


def _ksched_profile(prof: _Profile, framework: _Framework) -> Profile:
    """The :class:`Profile` ksched runs: the plugins per point, weights and args records."""
    plugins = {point: framework.points[point] for point in ALL_POINTS}
    for name in dict.fromkeys(n for point in ALL_POINTS for n in plugins[point]):
        if name not in _registry():
            raise UnsupportedFeatureError(f"profile {prof.scheduler_name}: plugin {name} is not "
                                          "implemented by ksched")
    args = {}
    for name in dict.fromkeys(n for point in ALL_POINTS for n in plugins[point]):
        raw = prof.args(name)
        if isinstance(raw, _Unknown):  # an out-of-tree plugin's args reach it as decoded JSON
            args[name] = raw.raw
        elif name in _KSCHED_ARGS and isinstance(raw, dict):
            reader = ManifestReader(f"profile {prof.scheduler_name} pluginConfig {name} args")
            try:
                args[name] = _KSCHED_ARGS[name](raw, reader)
            except InvalidObjectError as exc:
                raise ConfigLoadError("framework", f"creating profile for scheduler name "
                                                   f"{prof.scheduler_name}: initializing plugin "
                                                   f"{go_quote(name)}: {exc}") from None
    return Profile(scheduler_name=prof.scheduler_name, plugins=plugins,
                   weights=FrozenDict(framework.weights), args=FrozenDict(args),
                   percentage_of_nodes_to_score=prof.percentage_of_nodes_to_score)


# =========================================================================== entry point


def load_config(source: Any, registry: Registry | None = None) -> SchedulerConfig:
    """Load a ``KubeSchedulerConfiguration`` as kube-scheduler v1.35.4 loads ``--config``.

    Parameters
    ----------
    source : a path to a YAML or JSON file (gzip-compressed when named ``*.gz``), read as
        ``sigs.k8s.io/yaml`` reads it (:mod:`ksched.yamlio`: YAML 1.1 scalars, aliases bounded
        as go-yaml bounds them); or the already-parsed object, a mapping of JSON data.
    registry : a :class:`~ksched.framework.registry.Registry` of the plugins profiles may
        enable, out-of-tree ones included (default: the in-tree registry); a plugin's
        extension points are the methods it has.

    Raises
    ------
    ConfigLoadError
        With ``stage`` "read" (the file), "decode", "validation" or "framework" and
        upstream's message; a Python object that is not JSON data (non-string keys, NaN, sets,
        cycles, nesting beyond :data:`ksched.yamlio.MAX_DEPTH`) fails at "decode".
    UnsupportedFeatureError
        For a valid configuration ksched cannot run (extenders, plugins it lacks).

    Examples
    --------
    >>> try:
    ...     load_config({"apiVersion": API_VERSION, "kind": KIND, "parallelism": 0})
    ... except ConfigLoadError as err:
    ...     print(err.stage, err)
    validation parallelism: Invalid value: 0: should be an integer value greater than zero
    """
    if registry is not None and not isinstance(registry, Registry):
        raise ConfigLoadError("framework", f"registry: expected a ksched Registry (e.g. "
                                           f"IN_TREE_REGISTRY.merged({{...}})), got "
                                           f"{type(registry).__name__}")
    token = _REGISTRY.set(registry if registry is not None else IN_TREE_REGISTRY)
    try:
        return _load(source, registry)
    finally:
        _REGISTRY.reset(token)


def _load(source: Any, registry: Registry | None) -> SchedulerConfig:
    data, text, yaml_errors = _read_source(source)
    cfg = _decode_config(data, text, yaml_errors)
    _set_defaults(cfg)
    profiles = [_Profile.from_v1(p) for p in cfg["profiles"]]
    errors = _validate_config(cfg, profiles)
    if errors:
        raise ConfigLoadError("validation", _aggregate(str(e) for e in errors))
    frameworks = _new_map(profiles)
    if cfg.get("extenders"):
        raise UnsupportedFeatureError("scheduler extenders are not supported")
    return SchedulerConfig(
        profiles=[_ksched_profile(p, f) for p, f in zip(profiles, frameworks)],
        percentage_of_nodes_to_score=cfg["percentageOfNodesToScore"],
        parallelism=cfg["parallelism"],
        pod_initial_backoff_seconds=cfg["podInitialBackoffSeconds"],
        pod_max_backoff_seconds=cfg["podMaxBackoffSeconds"],
        extension_points=[FrozenDict(f.points) for f in frameworks], registry=registry)

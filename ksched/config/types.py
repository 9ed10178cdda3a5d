"""The types of ``kubescheduler.config.k8s.io/v1`` as strict JSON decoding sees them
(``k8s.io/kube-scheduler/config/v1``: ``types.go``, ``types_pluginargs.go``), and the kinds the
scheduler's scheme registers (``pkg/scheduler/apis/config/scheme/scheme.go``).
"""

from __future__ import annotations

import attrs

from ksched.framework.interfaces import METHODS

__all__ = ["ALL_POINTS", "API_VERSION", "ARGS_TYPES", "CONFIG_TYPE", "GROUP", "KIND",
           "REGISTERED_KINDS", "SCHEME_NAME", "VERSION", "GoType"]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
GROUP, VERSION = API_VERSION.split("/")
#: ``runtime.NewScheme``'s call site, as ``notRegisteredErr`` names the scheme.
SCHEME_NAME = "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme/scheme.go:29"



@attrs.frozen
class GoType:
    """A Go type of the v1 API, as strict JSON decoding sees it."""

    kind: str  # int, float, bool, str, duration, bytes, raw, list, map, struct
    go: str  # reflect.Type.String()
    bits: int = 64
    elem: GoType | None = None
    fields: tuple[tuple[str, GoType], ...] = ()

    @property
    def struct_name(self) -> str:
        return self.go.rsplit(".", 1)[-1]

    def field(self, name: str) -> GoType | None:
        return next((t for n, t in self.fields if n == name), None)


_I32, _I64 = GoType("int", "int32", 32), GoType("int", "int64", 64)
_F32 = GoType("float", "float32", 32)
_BOOL, _STR = GoType("bool", "bool"), GoType("str", "string")
_DURATION, _BYTES = GoType("duration", "v1.Duration"), GoType("bytes", "[]uint8")
_RAW = GoType("raw", "runtime.RawExtension")


def _named(go: str) -> GoType:
    return GoType("str", go)


def _list(elem: GoType) -> GoType:
    return GoType("list", "[]" + elem.go, elem=elem)


def _struct(go: str, *fields: tuple[str, GoType]) -> GoType:
    return GoType("struct", go, fields=tuple(fields))


#: The extension points of ``v1.Plugins`` (``multiPoint`` aside), in declaration order: those
#: of the framework's table of extension-point methods.
ALL_POINTS = tuple(METHODS)
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
CONFIG_TYPE = _struct(
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
    "v1.LabelSelector", ("matchLabels", GoType("map", "map[string]string", elem=_STR)),
    ("matchExpressions", _list(_struct(
        "v1.LabelSelectorRequirement", ("key", _STR),
        ("operator", _named("v1.LabelSelectorOperator")), ("values", _list(_STR))))))
_RESOURCE_SPEC = _struct("v1.ResourceSpec", ("name", _STR), ("weight", _I64))
_SHAPE = _list(_struct("v1.UtilizationShapePoint", ("utilization", _I32), ("score", _I32)))
#: Plugin name -> its ``<Name>Args`` kind, for the plugins that have one.
ARGS_TYPES = {
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
REGISTERED_KINDS = {KIND} | {name + "Args" for name in ARGS_TYPES}

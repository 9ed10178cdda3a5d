"""v1 defaulting of a decoded configuration (``pkg/scheduler/apis/config/v1``: ``defaults.go``
and ``default_plugins.go``): the default plugin set merged with each profile's plugins
(``mergePlugins``), default args for every plugin in use (``setDefaults_KubeSchedulerProfile``)
and the scheduler-wide defaults. :data:`DEFAULT_MULTI_POINT` is the one table of the default
plugins and their weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ksched.config.types import ALL_POINTS, ARGS_TYPES
from ksched.constants import DEFAULT_SCHEDULER_NAME

__all__ = ["DEFAULT_MULTI_POINT", "set_defaults"]

_SECOND = 10**9

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
        if name not in existing and name in ARGS_TYPES:
            configs.append({"name": name, "args": _default_args(name, {})})


def set_defaults(cfg: dict[str, Any]) -> None:
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

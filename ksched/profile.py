"""Scheduling profiles: which plugins run at each extension point, their weights and args.

:func:`default_profile` is kube-scheduler v1.35.4's default profile as the framework expands it
(``apis/config/v1/default_plugins.go`` with DynamicResourceAllocation on).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Integral
from typing import Any

import attrs

from ksched.api import FrozenDict
from ksched.constants import DEFAULT_SCHEDULER_NAME
from ksched.errors import ConfigError
from ksched.kernels import select

#: The scheduling cycle's points the node search runs.
EXTENSION_POINTS = ("preFilter", "filter", "preScore", "score")
#: The points around it: the queue's, PostFilter (preemption) and the binding cycle's.
QUEUE_AND_BINDING_POINTS = ("preEnqueue", "queueSort", "postFilter", "reserve", "permit",
                            "preBind", "bind", "postBind")
ALL_POINTS = EXTENSION_POINTS + QUEUE_AND_BINDING_POINTS

_FILTER_ORDER = (
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
    "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
    "PodTopologySpread", "InterPodAffinity", "DynamicResources",
)
_DEFAULT_PLUGINS = {
    "preFilter": tuple(p for p in _FILTER_ORDER
                       if p not in ("NodeUnschedulable", "NodeName", "TaintToleration")),
    "filter": _FILTER_ORDER,
    "preScore": ("TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding",
                 "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation"),
    "score": ("TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding",
              "PodTopologySpread", "InterPodAffinity", "DynamicResources",
              "NodeResourcesBalancedAllocation", "ImageLocality"),
}
_DEFAULT_PLUGINS.update({
    "preEnqueue": ("SchedulingGates", "DynamicResources", "DefaultPreemption"),
    "queueSort": ("PrioritySort",),
    "postFilter": ("DynamicResources", "DefaultPreemption"),
    "reserve": ("VolumeBinding", "DynamicResources"),
    "permit": (),
    "preBind": ("VolumeBinding", "DynamicResources"),
    "bind": ("DefaultBinder",),
    "postBind": (),
})
_DEFAULT_WEIGHTS = {
    "TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
    "PodTopologySpread": 2, "InterPodAffinity": 2, "DynamicResources": 2,
    "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1,
}


def _plugin_lists(value: Mapping[str, Any]) -> FrozenDict:
    """Plugin names per point; a missing cycle point is empty, a missing queue or binding
    point takes the default profile's plugins (so a hand-made profile still binds)."""
    _check_mapping("plugins", value, "extension points to plugin names")
    given = {}
    for point, names in value.items():
        if point not in ALL_POINTS:
            raise ConfigError(f"profile: plugins: unknown extension point {point!r} (want one "
                              f"of {', '.join(ALL_POINTS)})")
        if isinstance(names, str | bytes) or not isinstance(names, Iterable):
            raise ConfigError(f"profile: plugins.{point}: expected a sequence of plugin names, "
                              f"got {type(names).__name__}")
        given[point] = tuple(names)
        bad = [n for n in given[point] if not isinstance(n, str) or not n]
        if bad:
            raise ConfigError(f"profile: plugins.{point}: plugin names must be non-empty "
                              f"strings, got {bad[0]!r}")
    lists = {point: given.get(point, ()) for point in EXTENSION_POINTS}
    lists.update({point: given.get(point, _DEFAULT_PLUGINS[point])
                  for point in QUEUE_AND_BINDING_POINTS})
    return FrozenDict(lists)


def _weights(value: Mapping[str, Any]) -> FrozenDict:
    """Score weights by plugin name: integers in int64 (a weight ``load_config`` produced,
    negative ones included, is always one of these)."""
    _check_mapping("weights", value, "plugin names to integers")
    for name, weight in value.items():
        if not isinstance(name, str) or isinstance(weight, bool) or not isinstance(
                weight, Integral) or not -(2**63) <= weight < 2**63:
            raise ConfigError(f"profile: weights[{name!r}]: expected an int64 weight, got "
                              f"{weight!r}")
    return FrozenDict({name: int(weight) for name, weight in value.items()})


def _args(value: Mapping[str, Any]) -> FrozenDict:
    _check_mapping("args", value, "plugin names to args")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"profile: args: plugin names must be strings, got {bad[0]!r}")
    return FrozenDict(value)


def _check_mapping(field: str, value: Any, what: str) -> None:
    if not isinstance(value, Mapping):
        raise ConfigError(f"profile: {field}: expected a mapping of {what}, got "
                          f"{type(value).__name__}")


def _check_name(profile: Profile, attribute: Any, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"profile: schedulerName: expected a non-empty string, got {value!r}")


def _check_percentage(profile: Profile, attribute: Any, value: Any) -> None:
    """``validatePercentageOfNodesToScore`` (``None``: the scheduler-wide value)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ConfigError(f"profile {profile.scheduler_name}: percentageOfNodesToScore: "
                          f"expected an integer, got {value!r}")
    if not 0 <= value <= 100:
        raise ConfigError(f"profile {profile.scheduler_name}: percentageOfNodesToScore: "
                          f"Invalid value: {value}: not in valid range [0-100]")


@attrs.frozen
class Profile:
    """One scheduler profile.

    Examples
    --------
    >>> p = default_profile()
    >>> p.plugins["score"][0], p.weights["TaintToleration"]
    ('TaintToleration', 3)
    """

    scheduler_name: str = attrs.field(default=DEFAULT_SCHEDULER_NAME, validator=_check_name)
    #: Plugin names per extension point, in run order.
    plugins: FrozenDict = attrs.field(factory=lambda: _plugin_lists(_DEFAULT_PLUGINS),
                                      converter=_plugin_lists)
    weights: FrozenDict = attrs.field(factory=lambda: FrozenDict(_DEFAULT_WEIGHTS),
                                      converter=_weights)
    #: Plugin args by plugin name; a missing entry means the plugin's defaults.
    args: FrozenDict = attrs.field(factory=FrozenDict, converter=_args)
    #: ``None``: use the scheduler-wide value.
    percentage_of_nodes_to_score: int | None = attrs.field(default=None,
                                                           validator=_check_percentage)

    def plugin_names(self) -> tuple[str, ...]:
        """Every plugin the profile uses, in first-use order."""
        names: dict[str, None] = {}
        for point in ALL_POINTS:
            names.update(dict.fromkeys(self.plugins[point]))
        return tuple(names)


def default_profile(percentage_of_nodes_to_score: int | None = None) -> Profile:
    """kube-scheduler v1.35.4's default profile."""
    return Profile(percentage_of_nodes_to_score=percentage_of_nodes_to_score)


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """``numFeasibleNodesToFind``: how many feasible nodes the filter walk looks for
    (:func:`ksched.kernels.select.num_feasible_nodes_to_find`, which the fused loop runs)."""
    return int(select.num_feasible_nodes_to_find(percentage, num_all_nodes))

"""What ``frameworkruntime.NewFramework`` and ``profile.NewMap`` check of a validated
configuration (``pkg/scheduler/framework/runtime/framework.go``, ``pkg/scheduler/profile/
profile.go``): every plugin exists and extends the points it is enabled at, the MultiPoint
expansion, one queue sort and at least one bind plugin per profile, score weights, and the
plugin constructors' own argument checks. Which points a plugin extends is asked of the
plugin (:func:`plugin_extension_points`).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import attrs

from ksched.config.conversion import InternalProfile, PluginSet
from ksched.config.errors import ConfigLoadError
from ksched.config.types import ALL_POINTS
from ksched.config.validation_pluginargs import validate_fit_args
from ksched.framework.interfaces import implements
from ksched.framework.registry import Registry
from ksched.plugins import IN_TREE_REGISTRY
from ksched.validation import aggregate, go_quote

__all__ = ["UNIMPLEMENTED_IN_TREE_PLUGINS", "FrameworkPlugins", "current_registry", "new_map",
           "plugin_extension_points", "using_registry"]

_MAX_INT64 = 2**63 - 1


class _FrameworkError(Exception):
    """An error ``NewFramework`` returns (wrapped by ``NewMap`` with the profile name)."""


#: ``frameworkImpl.getExtensionPoints`` order.
_FRAMEWORK_ORDER = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score",
                    "preBind", "bind", "postBind", "permit", "preEnqueue", "queueSort")
#: Each point with its Go interface name (``PreFilterPlugin``, ...), in that order.
_FRAMEWORK_POINTS = tuple((point, point[0].upper() + point[1:] + "Plugin")
                          for point in _FRAMEWORK_ORDER)
#: The in-tree plugins of v1.35.4 that ksched does not implement at all (their feature gates
#: are off by default), with the extension points they implement upstream (``var _
#: fwk.XPlugin = &Y{}`` in each plugin package). A plugin ksched implements shows its points
#: by its methods.
UNIMPLEMENTED_IN_TREE_PLUGINS: Mapping[str, tuple[str, ...]] = {
    "GangScheduling": ("preEnqueue", "reserve", "permit"),
    "NodeDeclaredFeatures": ("preFilter", "filter"),
}


def plugin_extension_points(name: str) -> frozenset[str] | None:
    """The extension points a plugin implements: its methods' for a plugin of the registry of
    the ``load_config`` call under way (the in-tree one by default), upstream's for an in-tree
    plugin ksched does not implement; ``None`` when there is no plugin of that name."""
    factory = current_registry().get(name)
    if factory is None:
        points = UNIMPLEMENTED_IN_TREE_PLUGINS.get(name)
        return None if points is None else frozenset(points)
    plugin = factory if name in IN_TREE_REGISTRY else _instance(name, factory)
    return frozenset(p for p in ALL_POINTS if implements(plugin, p))


#: The registry of the ``load_config`` call under way (out-of-tree plugins included).
_REGISTRY: contextvars.ContextVar[Registry] = contextvars.ContextVar(
    "registry", default=IN_TREE_REGISTRY)


def current_registry() -> Registry:
    """The registry of the ``load_config`` call under way."""
    return _REGISTRY.get()


@contextmanager
def using_registry(registry: Registry) -> Iterator[None]:
    """Make ``registry`` the :func:`current_registry` while the block runs."""
    token = _REGISTRY.set(registry)
    try:
        yield
    finally:
        _REGISTRY.reset(token)


def _instance(name: str, factory: Any) -> Any:
    """An out-of-tree plugin, built (with no args) to see which extension points it has."""
    return factory if isinstance(factory, type) else factory(None)


@attrs.frozen
class FrameworkPlugins:
    """What ``NewFramework`` builds that ksched keeps: ordered plugin lists and weights."""

    points: Mapping[str, tuple[str, ...]]
    weights: Mapping[str, int]


def _new_framework(prof: InternalProfile) -> FrameworkPlugins:
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
    return FrameworkPlugins({p: tuple(lists[p]) for p in ALL_POINTS},
                      {name: weights[name] for name in lists["score"]})


def _no_check(args: Any) -> str:
    return ""


def _check_fit_args(args: Any) -> str:
    """``NewFit``: ``ValidateNodeResourcesFitArgs`` with a nil path, then the strategy."""
    args = args if isinstance(args, dict) else {}
    errs = validate_fit_args("", args)
    if errs:
        return aggregate(str(e) for e in errs)
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


def _update_plugin_list(pset: PluginSet, implemented: Mapping[str, frozenset[str]],
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


def _expand_multi_point(pset: PluginSet, multi_point: PluginSet, current: list[str],
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


def new_map(profiles: Sequence[InternalProfile]) -> list[FrameworkPlugins]:
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

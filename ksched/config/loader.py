"""Loading a ``KubeSchedulerConfiguration`` as kube-scheduler v1.35.4 loads ``--config``
(``cmd/kube-scheduler/app/options``: ``loadConfigFromFile``, then ``Validate`` and
``profile.NewMap``), into the :class:`~ksched.profile.Profile` records ksched runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ksched.api import FrozenDict, ManifestReader
from ksched.api.affinity import read_node_affinity, read_spread_constraints
from ksched.config.conversion import InternalProfile
from ksched.config.decode import UnknownArgs, decode_config, read_source
from ksched.config.defaults import set_defaults
from ksched.config.errors import ConfigLoadError
from ksched.config.framework import FrameworkPlugins, current_registry, new_map, using_registry
from ksched.config.types import ALL_POINTS
from ksched.config.types import API_VERSION, KIND  # noqa: F401 (the examples use them)
from ksched.config.validation import validate_config
from ksched.errors import InvalidObjectError, UnsupportedFeatureError
from ksched.framework.registry import Registry
from ksched.plugins import IN_TREE_REGISTRY
from ksched.plugins.balanced_allocation import BalancedAllocationArgs
from ksched.plugins.default_preemption import DefaultPreemptionArgs
from ksched.plugins.inter_pod_affinity import InterPodAffinityArgs
from ksched.plugins.node_affinity import NodeAffinityArgs
from ksched.plugins.node_resources_fit import NodeResourcesFitArgs
from ksched.plugins.pod_topology_spread import PodTopologySpreadArgs
from ksched.profile import Profile
from ksched.validation import aggregate, go_quote

__all__ = ["SchedulerConfig", "load_config"]


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
    return NodeAffinityArgs(read_node_affinity(reader, args.get("addedAffinity"), "addedAffinity"))


def _inter_pod_affinity_args(args: Mapping[str, Any],
                             reader: ManifestReader) -> InterPodAffinityArgs:
    return InterPodAffinityArgs(
        hard_pod_affinity_weight=args["hardPodAffinityWeight"],
        ignore_preferred_terms_of_existing_pods=args.get("ignorePreferredTermsOfExistingPods",
                                                         False))


def _pod_topology_spread_args(args: Mapping[str, Any],
                              reader: ManifestReader) -> PodTopologySpreadArgs:
    return PodTopologySpreadArgs(
        default_constraints=read_spread_constraints(reader, args.get("defaultConstraints"),
                                                "defaultConstraints"),
        defaulting_type=args["defaultingType"])


def _default_preemption_args(args: Mapping[str, Any],
                             reader: ManifestReader) -> DefaultPreemptionArgs:
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


def _ksched_profile(prof: InternalProfile, framework: FrameworkPlugins) -> Profile:
    """The :class:`Profile` ksched runs: the plugins per point, weights and args records."""
    plugins = {point: framework.points[point] for point in ALL_POINTS}
    for name in dict.fromkeys(n for point in ALL_POINTS for n in plugins[point]):
        if name not in current_registry():
            raise UnsupportedFeatureError(f"profile {prof.scheduler_name}: plugin {name} is not "
                                          "implemented by ksched")
    args = {}
    for name in dict.fromkeys(n for point in ALL_POINTS for n in plugins[point]):
        raw = prof.args(name)
        if isinstance(raw, UnknownArgs):  # an out-of-tree plugin's args reach it as decoded JSON
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
    with using_registry(registry if registry is not None else IN_TREE_REGISTRY):
        return _load(source, registry)


def _load(source: Any, registry: Registry | None) -> SchedulerConfig:
    data, text, yaml_errors = read_source(source)
    cfg = decode_config(data, text, yaml_errors)
    set_defaults(cfg)
    profiles = [InternalProfile.from_v1(p) for p in cfg["profiles"]]
    errors = validate_config(cfg, profiles)
    if errors:
        raise ConfigLoadError("validation", aggregate(str(e) for e in errors))
    frameworks = new_map(profiles)
    if cfg.get("extenders"):
        raise UnsupportedFeatureError("scheduler extenders are not supported")
    return SchedulerConfig(
        profiles=[_ksched_profile(p, f) for p, f in zip(profiles, frameworks)],
        percentage_of_nodes_to_score=cfg["percentageOfNodesToScore"],
        parallelism=cfg["parallelism"],
        pod_initial_backoff_seconds=cfg["podInitialBackoffSeconds"],
        pod_max_backoff_seconds=cfg["podMaxBackoffSeconds"],
        extension_points=[FrozenDict(f.points) for f in frameworks], registry=registry)

"""A sweep's parameters: the grid of scenarios, each parameter's name and values checked, and
the scheduler configuration a scenario's parameters make.

Parameters
----------
percentage_of_nodes_to_score : int in [0, 100], the configuration's scheduler-wide value.
tie_break, seed : ``"round-robin"`` / ``"random"`` / ``"heap"``
    (:data:`~ksched.constants.TIE_BREAKS`) and the random mode's seed (schedule, simulate).
scale : a number > 0: the pending pods, workload replicas and created pods multiplied.
strategy : NodeResourcesFit's ``scoringStrategy.type`` in every profile.
    ``RequestedToCapacityRatio`` needs the base configuration to give its shape
    (``scoringStrategy.requestedToCapacityRatio.shape``): kube-scheduler has no default.
weights.<Plugin> : the score weight of a plugin in every profile (``plugins.score.enabled``).
node_count.<type> : how many nodes of a type the cluster has (added from the type's template,
    or the last ones of the type removed and their pods re-placed).
without : a node selector (``"key=value"``, ``"key in (a,b)"``) or node names: nodes removed,
    their pods re-placed (``None``: nothing removed).
config.<path> (or a path starting with a ``KubeSchedulerConfiguration`` field) : any field of
    the configuration, by dotted path; a list item is named by its index or by its ``name``
    (``schedulerName`` for profiles), e.g.
    ``profiles.default-scheduler.pluginConfig.NodeResourcesFit.args.scoringStrategy.type``.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from ksched.config import SchedulerConfig, load_config
from ksched.constants import DEFAULT_SCHEDULER_NAME, TIE_BREAKS
from ksched.errors import ArgumentError, InvalidObjectError, KschedError
from ksched.sweep.scenario import Scenario, is_sequence
from ksched.validation import go_quote

__all__ = ["OPTIONS", "check_grid", "configured", "grid", "kind_of"]

API_VERSION, KIND = "kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"
#: The parameters that are not a prefix: name -> what they vary (for messages).
OPTIONS = ("percentage_of_nodes_to_score", "tie_break", "seed", "scale", "strategy", "without")
#: The top-level fields of a v1 KubeSchedulerConfiguration a bare dotted path may start with.
CONFIG_FIELDS = ("parallelism", "percentageOfNodesToScore", "podInitialBackoffSeconds",
                 "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive",
                 "leaderElection", "clientConnection", "enableProfiling",
                 "enableContentionProfiling", "healthzBindAddress", "metricsBindAddress")
#: The configuration's lists whose items a path may name, and the field that names them.
NAMED_LISTS = {"profiles": "schedulerName", "pluginConfig": "name", "enabled": "name",
               "disabled": "name", "resources": "name", "extenders": "urlPrefix"}
STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
#: Parameter kinds each built-in study takes (a user's function takes them all).
_PLANNER = {"percentage_of_nodes_to_score", "strategy", "weights", "node_count", "without",
            "config"}
STUDY_KINDS = {"schedule": _PLANNER | {"tie_break", "seed", "scale"},
               "simulate": _PLANNER | {"tie_break", "seed", "scale"},
               "capacity": _PLANNER, "headroom": _PLANNER, "plan": _PLANNER | {"scale"}}
#: Kinds that change the scheduler configuration.
CONFIG_KINDS = {"percentage_of_nodes_to_score", "strategy", "weights", "config"}
_MAX_NODES, _MAX_SCALE, _MAX_SEED = 1_000_000, 100.0, 2**63 - 1
_HINT = ("expected one of " + ", ".join(OPTIONS) + ", weights.<Plugin>, node_count.<node "
         "type>, or a KubeSchedulerConfiguration field by dotted path (config.<path>)")


# ---------------------------------------------------------------------------- the grid


def grid(axes: Any) -> list[dict[str, Any]]:
    """The scenarios' parameters: the product of ``axes`` (a mapping parameter -> values; the
    last axis varies fastest) or ``axes`` itself (a list of parameter mappings).

    Examples
    --------
    >>> grid({"seed": [0, 1], "scale": [1, 2]})  # doctest: +NORMALIZE_WHITESPACE
    [{'seed': 0, 'scale': 1}, {'seed': 0, 'scale': 2},
     {'seed': 1, 'scale': 1}, {'seed': 1, 'scale': 2}]
    """
    if isinstance(axes, Mapping):
        names, values = [], []
        for name, given in axes.items():
            if not isinstance(name, str):
                raise ArgumentError(f"axes: parameter names are strings, got {name!r}")
            if hasattr(given, "tolist") and getattr(given, "ndim", 0) == 1:
                given = given.tolist()  # a numpy array of values
            if not is_sequence(given):
                raise ArgumentError(f"axes[{name!r}]: expected a list of values, got "
                                    f"{type(given).__name__}")
            items = [_plain(v) for v in given]
            if not items:
                raise ArgumentError(f"axes[{name!r}]: no values")
            names.append(name)
            values.append(items)
        return [dict(zip(names, combo)) for combo in itertools.product(*values)]
    if is_sequence(axes):
        scenarios = []
        for i, params in enumerate(axes):
            if not isinstance(params, Mapping) or not all(isinstance(k, str) for k in params):
                raise ArgumentError(f"axes[{i}]: expected a mapping of parameter -> value, got "
                                    f"{type(params).__name__}")
            scenarios.append({k: _plain(v) for k, v in params.items()})
        return scenarios
    raise ArgumentError(f"axes: expected a mapping of parameter -> values or a list of "
                        f"scenarios, got {type(axes).__name__}")


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers, tuples as lists (parameters are JSON data)."""
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if is_sequence(value):
        return [_plain(v) for v in value]
    return value


def kind_of(name: str) -> str:
    """``name``'s kind: one of :data:`OPTIONS`, ``"weights"``, ``"node_count"`` or
    ``"config"``; an unknown name is an :class:`~ksched.errors.ArgumentError`."""
    if name in OPTIONS:
        return name
    head, dot, rest = name.partition(".")
    if dot and rest and head in ("weights", "node_count", "config"):
        return head
    if head in CONFIG_FIELDS and "" not in name.split("."):
        return "config"
    raise ArgumentError(f"axes: unknown parameter {name!r}: {_HINT}")


# ---------------------------------------------------------------------------- checks


def check_grid(base: Scenario, study: str | None, scenarios: Sequence[Mapping[str, Any]]
               ) -> None:
    """Refuse, before anything runs, a parameter ``study`` does not take or a value it cannot
    have, naming the parameter (``study`` ``None``: a user's function, which takes all)."""
    users = scheduler_users(base)
    seen: dict[tuple[str, str], tuple[str, Any]] = {}
    for params in scenarios:
        for name, value in params.items():
            seen.setdefault((name, _text(value)), (name, value))
    failing = []
    for name, value in seen.values():
        kind = kind_of(name)
        if study is not None and kind not in STUDY_KINDS[study]:
            raise ArgumentError(f"{name}: not a parameter of the {study} study (it takes "
                                f"{', '.join(sorted(STUDY_KINDS[study]))})")
        _check_value(base, name, kind, value)
        if kind in CONFIG_KINDS:
            error = _config_error(base, {name: value}, users)
            if error is not None:
                failing.append((name, value, error))
    for name, value, error in failing:  # fine if some scenario's other parameters mend it
        with_it = (p for p in scenarios if name in p and _text(p[name]) == _text(value))
        if all(_config_error(base, p, users) is not None
               for p in itertools.islice(with_it, 50)):
            raise ArgumentError(f"{name}: {value!r}: {error}")


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def _check_value(base: Scenario, name: str, kind: str, value: Any) -> None:
    if kind == "percentage_of_nodes_to_score":
        _integer(name, value, 0, 100)
    elif kind == "seed":
        if value is not None:
            _integer(name, value, 0, _MAX_SEED)
    elif kind == "tie_break":
        _one_of(name, value, TIE_BREAKS)
    elif kind == "strategy":
        _one_of(name, value, STRATEGIES)
    elif kind == "scale":
        if not isinstance(value, numbers.Real) or isinstance(value, bool) \
                or not math.isfinite(value) or not 0 < value <= _MAX_SCALE:
            raise ArgumentError(f"{name}: expected a number > 0 and <= {_MAX_SCALE:g}, got "
                                f"{value!r}")
    elif kind == "weights":
        _integer(name, value, 0, None)
    elif kind == "node_count":
        _integer(name, value, 0, _MAX_NODES)
        base.template(name.partition(".")[2])
    elif kind == "without" and value is not None:
        from ksched.planning.headroom import selected_nodes

        selected_nodes(base.cluster, value, "without")
    if kind in CONFIG_KINDS and isinstance(base.config, SchedulerConfig):
        raise ArgumentError(f"{name}: the base configuration is a loaded SchedulerConfig; give "
                            f"Scenario(config=...) a file or a dict to vary its fields")


def _integer(name: str, value: Any, low: int, high: int | None) -> None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low \
            or (high is not None and value > high):
        bound = f"from {low} to {high:,}" if high is not None else f">= {low}"
        raise ArgumentError(f"{name}: expected an integer {bound}, got {value!r}")


def _one_of(name: str, value: Any, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ArgumentError(f"{name}: expected one of {', '.join(choices)}, got {value!r}")


def _config_error(base: Scenario, params: Mapping[str, Any], users: Mapping[str, str]
                  ) -> str | None:
    """The message loading the configuration of ``params`` fails with (or the first of
    ``users`` it has no profile for), or ``None``."""
    try:
        document = configured(base.config, params)
        if isinstance(document, Mapping):
            check_profiles(load_config(document), users)
    except KschedError as exc:
        return str(exc)
    return None


def check_profiles(config: SchedulerConfig, users: Mapping[str, str]) -> None:
    """Refuse ``config`` when it has no profile for a scheduler name in ``users`` (name ->
    the first pod naming it): kube-scheduler would leave that pod pending for ever."""
    for scheduler, pod in users.items():
        if config.profile_for(scheduler) is None:
            names = ", ".join(go_quote(p.scheduler_name) for p in config.profiles)
            raise InvalidObjectError(pod, "spec.schedulerName",
                                     f"no scheduler profile named {go_quote(scheduler)} "
                                     f"(profiles: {names})")


def scheduler_users(base: Scenario) -> dict[str, str]:
    """The ``spec.schedulerName`` of the base's pending pods (its pods, its workloads'
    templates, its timeline's created pods) -> the first pod naming it; kube-scheduler's
    default name when there is no pending pod."""
    users: dict[str, str] = {}
    pods = getattr(base.pods, "specs", base.pods)  # a PodTable: one pod per spec
    created = [e.pod for e in base.events or () if e.kind == "create" and e.pod is not None]
    for pod in (*pods, *created):
        users.setdefault(pod.scheduler_name, f"pod {pod.key}")
    for manifest in base.workloads:
        spec = _pod_spec(manifest)
        name = spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME
        users.setdefault(name if isinstance(name, str) else DEFAULT_SCHEDULER_NAME,
                         f"{manifest.get('kind')} {_name_of(manifest)}")
    return users or {DEFAULT_SCHEDULER_NAME: "the pods' default"}


def _pod_spec(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    """A manifest's pod spec: its own (a Pod) or its pod template's (``{}`` when none)."""
    spec = manifest.get("spec")
    if manifest.get("kind") != "Pod":
        template = spec.get("template") if isinstance(spec, Mapping) else None
        spec = template.get("spec") if isinstance(template, Mapping) else None
    return spec if isinstance(spec, Mapping) else {}


def _name_of(manifest: Mapping[str, Any]) -> str:
    meta = manifest.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


# ---------------------------------------------------------------------------- configuration


def configured(config: Any, params: Mapping[str, Any]) -> Any:
    """The configuration of a scenario: ``config`` (the base's: ``None``, a dict or a
    ``SchedulerConfig``) when ``params`` change none of it, else a new dict with their
    changes, ready for :func:`load_config`: fields by path first, then
    ``percentage_of_nodes_to_score``, ``weights.*`` and ``strategy`` (in every profile then
    there)."""
    changes = sorted(((name, value) for name, value in params.items()
                      if kind_of(name) in CONFIG_KINDS), key=lambda c: kind_of(c[0]) != "config")
    if not changes:
        return config
    document = copy.deepcopy(config) if config is not None else {}
    document.setdefault("apiVersion", API_VERSION)
    document.setdefault("kind", KIND)
    for name, value in changes:
        _change(document, name, value)
    return document


def _change(document: dict[str, Any], name: str, value: Any) -> None:
    kind = kind_of(name)
    if kind == "percentage_of_nodes_to_score":
        document["percentageOfNodesToScore"] = value
    elif kind == "weights":
        plugin = name.partition(".")[2]
        for profile in _profiles(document, name):
            score = _mapping(_mapping(profile, "plugins", name), "score", name)
            enabled = _items(score, "enabled", name)
            _named_item(enabled, plugin, "name")["weight"] = value
    elif kind == "strategy":
        for profile in _profiles(document, name):
            entry = _named_item(_items(profile, "pluginConfig", name), "NodeResourcesFit", "name")
            strategy = _mapping(_mapping(entry, "args", name), "scoringStrategy", name)
            strategy["type"] = value
            _check_shape(strategy, name, value)
    else:
        path = name.partition(".")[2].split(".") if name.startswith("config.") \
            else name.split(".")
        _set_path(document, path, copy.deepcopy(value), name)


def _check_shape(strategy: Mapping[str, Any], name: str, value: Any) -> None:
    """Refuse ``RequestedToCapacityRatio`` without a shape: kube-scheduler v1.35 has no
    default one (``SetDefaults_NodeResourcesFitArgs`` defaults the type and the resources
    only, and validation asks for at least one point)."""
    if value != "RequestedToCapacityRatio":
        return
    ratio = strategy.get("requestedToCapacityRatio")
    if not isinstance(ratio, Mapping) or not ratio.get("shape"):
        raise ArgumentError(
            f"{name}: RequestedToCapacityRatio needs a shape, and kube-scheduler has no "
            f"default one: give it in the base configuration's NodeResourcesFit args "
            f"(scoringStrategy: {{requestedToCapacityRatio: {{shape: [{{utilization: 0, "
            f"score: 0}}, {{utilization: 100, score: 10}}]}}}}), as upstream's "
            f"documentation's bin-packing example does")


def _profiles(document: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The configuration's profiles (one made when there is none), each an object."""
    profiles = _items(document, "profiles", name)
    if not profiles:
        profiles.append({})
    for i, profile in enumerate(profiles):
        if not isinstance(profile, dict):
            raise ArgumentError(f"{name}: profiles[{i}] of the configuration is not an object, "
                                f"got {profile!r}")
    return profiles


def _mapping(parent: dict[str, Any], key: str, name: str) -> dict[str, Any]:
    child = parent.setdefault(key, {})
    if child is None:
        child = parent[key] = {}
    if not isinstance(child, dict):
        raise ArgumentError(f"{name}: {key} of the configuration is not an object")
    return child


def _items(parent: dict[str, Any], key: str, name: str) -> list[Any]:
    child = parent.setdefault(key, [])
    if child is None:
        child = parent[key] = []
    if not isinstance(child, list):
        raise ArgumentError(f"{name}: {key} of the configuration is not a list")
    return child


def _named_item(items: list[Any], name: str, key: str) -> dict[str, Any]:
    """The item of ``items`` whose ``key`` is ``name``, appended when there is none."""
    for item in items:
        if isinstance(item, dict) and item.get(key) == name:
            return item
    items.append({key: name})
    return items[-1]


def _set_path(document: dict[str, Any], path: list[str], value: Any, name: str) -> None:
    """``document`` at ``path`` set to ``value``, objects and list items made on the way."""
    node: Any = document
    for depth, segment in enumerate(path):
        last = depth == len(path) - 1
        if isinstance(node, dict):
            if last:
                node[segment] = value
                return
            if not isinstance(node.get(segment), dict | list):
                listed = segment in NAMED_LISTS or path[depth + 1].isdigit()
                node[segment] = [] if listed else {}
            node = node[segment]
        elif isinstance(node, list):
            key = NAMED_LISTS.get(path[depth - 1], "name")
            index = _index(node, segment, key, name)
            if last:
                node[index] = value
                return
            node = node[index]
        else:
            raise ArgumentError(f"{name}: {'.'.join(path[:depth])} is not an object or list")


def _index(items: list[Any], segment: str, key: str, name: str) -> int:
    """The position ``segment`` names in ``items``: an index (one past the end appends), or
    the item whose ``key`` is ``segment`` (appended when missing)."""
    if segment.isdigit():
        index = int(segment)
        if index > len(items):
            raise ArgumentError(f"{name}: index {index} is past the end of a list of "
                                f"{len(items)}")
        if index == len(items):
            items.append({})
        return index
    for i, item in enumerate(items):
        if isinstance(item, dict) and item.get(key) == segment:
            return i
    items.append({key: segment})
    return len(items) - 1

"""One scenario made concrete: the base :class:`~ksched.sweep.scenario.Scenario` with the
scenario's parameters applied (:func:`prepare`), as the :class:`Variant` a study runs on.

In order: the configuration is built and loaded; nodes of ``node_count`` types are added
(copies of the type's template, named ``<type>-sweep-<k>``, with the kubelet's hostname label);
nodes removed (``without``, and the last nodes of a type above its ``node_count``) go, their
pods re-placed through the simulator as :func:`ksched.headroom`'s ``without`` does; then the
pending pods, workload replicas and created pods are scaled and the workloads expanded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.coerce import node_from_template
from ksched.config import load_config
from ksched.planning import expand_workloads
from ksched.state import ClusterState
from ksched.sweep.params import configured, kind_of
from ksched.sweep.scenario import INSTANCE_TYPE, Scenario, pending_pods

__all__ = ["Variant", "prepare", "scaled_count"]

#: Workload kinds whose replicas ``scale`` multiplies, and the fields (with their defaults).
SCALED_FIELDS = {"Deployment": (("replicas", 1),), "ReplicaSet": (("replicas", 1),),
                 "StatefulSet": (("replicas", 1),), "ReplicationController": (("replicas", 1),),
                 "Job": (("parallelism", 1), ("completions", None))}
_LOADED: dict[str, Any] = {}
#: (base, node parameters, configuration) -> (base, configuration, cluster, displacement).
_CHANGED: dict[tuple[int, str, int], tuple[Any, Any, Any, Any]] = {}


@attrs.frozen(eq=False)
class Variant:
    """The base with one scenario's parameters applied: what a study runs on.

    Attributes
    ----------
    params : the scenario's parameters.
    cluster : the cluster, nodes added and removed (the removed nodes' pods re-placed).
    pods : the pending pods: the base's (scaled), then (with ``expanded``) the Pods among
        the workload manifests and the workloads' pods, the cluster's
        ``objects["workloads"]`` holding their controllers.
    workloads : the workload manifests, replicas scaled.
    config : the loaded configuration (``None``: kube-scheduler's default profile).
    tie_break, seed : as ``schedule_batch`` takes them.
    events : the timeline, creations scaled (``None`` without one).
    node_types, prices : the base's.
    displaced : what removing nodes did (:class:`ksched.planning.headroom.Displacement`),
        or ``None`` when none was removed.
    """

    params: Mapping[str, Any]
    cluster: Any
    pods: tuple[Any, ...]
    workloads: tuple[Mapping[str, Any], ...]
    config: Any
    tie_break: str = "round-robin"
    seed: int | None = None
    events: tuple[Any, ...] | None = None
    node_types: tuple[Any, ...] = ()
    prices: Mapping[str, float] | None = None
    displaced: Any = None


def prepare(base: Scenario, params: Mapping[str, Any], expanded: bool = True) -> Variant:
    """The :class:`Variant` of ``params`` (checked before, by
    :func:`ksched.sweep.params.check_grid`); ``expanded``: expand the workloads into
    ``pods``."""
    config = loaded(configured(base.config, params))
    cluster, displaced = _nodes(base, params, config)
    factor = float(params.get("scale", 1))
    pods = scaled_pods(base.pods, factor)
    workloads = tuple(scaled_workload(m, factor) for m in base.workloads)
    if expanded and workloads:
        listed = [m for m in workloads if m.get("kind") == "Pod"]  # pods beside the workloads
        if listed:
            pods += scaled_pods(pending_pods(listed), factor)
        expansion = expand_workloads(list(workloads), cluster=cluster)
        pods += expansion.pods
        objects = dict(cluster.objects)
        objects["workloads"] = tuple(objects.get("workloads", ())) + expansion.workloads
        cluster = attrs.evolve(cluster, objects=type(cluster.objects)(objects))
    events = None if base.events is None else scaled_events(base.events, factor)
    return Variant(dict(params), cluster, pods, workloads, config,
                   params.get("tie_break", "round-robin"), params.get("seed"), events,
                   base.node_types, base.prices, displaced)


def loaded(config: Any) -> Any:
    """``config`` loaded (a dict through :func:`load_config`, remembered per content
    in this process); ``None`` and a ``SchedulerConfig`` as they are."""
    if not isinstance(config, Mapping):
        return config
    text = json.dumps(config, sort_keys=True)
    found = _LOADED.get(text)
    if found is None:
        if len(_LOADED) >= 256:
            _LOADED.clear()
        found = _LOADED[text] = load_config(config)
    return found


# ---------------------------------------------------------------------------- nodes


def _nodes(base: Scenario, params: Mapping[str, Any], config: Any) -> tuple[Any, Any]:
    """The cluster with ``node_count`` and ``without`` applied, and the displacement;
    remembered for the last few bases, node parameters and configurations (re-placing the
    pods of removed nodes is the slow part, and scenarios differing only in other
    parameters share it)."""
    changes = {name: value for name, value in params.items()
               if kind_of(name) in ("node_count", "without")}
    if not changes:
        return base.cluster, None
    key = (id(base), json.dumps(changes, sort_keys=True), id(config))
    found = _CHANGED.get(key)
    if found is None or found[0] is not base or found[1] is not config:
        if len(_CHANGED) >= 8:
            _CHANGED.pop(next(iter(_CHANGED)))
        found = _CHANGED[key] = (base, config, *_changed_nodes(base, changes, config))
    return found[2], found[3]


def _changed_nodes(base: Scenario, params: Mapping[str, Any], config: Any
                   ) -> tuple[Any, Any]:
    from ksched.planning.headroom import displace, selected_nodes

    cluster = base.cluster
    counts = {name.partition(".")[2]: count for name, count in params.items()
              if kind_of(name) == "node_count"}
    existing = {t: _rows_of_type(base, t) for t in counts}
    added = [_new_node(base.template(t), t, k) for t, count in counts.items()
             for k in range(max(count - len(existing[t]), 0))]
    if added:
        cluster = ClusterState.from_records(
            list(cluster.nodes) + added, tuple(cluster.pods), dict(cluster.namespaces),
            dict(cluster.objects))
    removed = [row for t, count in counts.items()
               for row in existing[t][count:]]  # the last ones of the type
    without = params.get("without")
    if without is not None:
        removed += [int(r) for r in selected_nodes(base.cluster, without, "without")]
    if not removed:
        return cluster, None
    names = {base.cluster.node_names[r] for r in removed}
    rows = np.array(sorted(cluster.node_index[n] for n in names), dtype=np.int64)
    displaced = displace(cluster, rows, config)
    return displaced.state, displaced


def _rows_of_type(base: Scenario, node_type: str) -> list[int]:
    """The rows of the base's nodes of ``node_type`` (its instance type label), in order."""
    label = base.template(node_type).labels.get(INSTANCE_TYPE, node_type)
    return base.nodes_of_types().get(label, [])


def _new_node(template: Any, node_type: str, k: int) -> Any:
    """A node made from ``template``, named ``<type>-sweep-<k>`` with that hostname label."""
    return node_from_template(template, f"{node_type}-sweep-{k}")


# ---------------------------------------------------------------------------- scale


def scaled_count(count: int, factor: float) -> int:
    """``count * factor`` rounded half up."""
    return int(count * factor + 0.5)


def _copy_name(name: str, round_: int) -> str:
    return name if round_ == 0 else f"{name}-x{round_}"


def scaled_pods(pods: Sequence[Any], factor: float) -> tuple[Any, ...]:
    """``pods`` multiplied: the first ``round(n * factor)`` of them when ``factor <= 1``, else
    all of them, then copies named ``<name>-x<k>`` round after round."""
    if factor == 1 or not pods:
        return tuple(pods)
    total, n = scaled_count(len(pods), factor), len(pods)
    return tuple(pods[i] if i < n else
                 pods[i % n].renamed(_copy_name(pods[i % n].name, i // n))
                 for i in range(total))


def scaled_workload(manifest: Mapping[str, Any], factor: float) -> Mapping[str, Any]:
    """A workload manifest with its replicas (a Job's parallelism and completions)
    multiplied; DaemonSets and other kinds as they are."""
    fields = SCALED_FIELDS.get(manifest.get("kind", ""))
    spec = manifest.get("spec")
    if factor == 1 or fields is None or not isinstance(spec, Mapping):
        return manifest
    spec = dict(spec)
    for field, default in fields:
        value = spec.get(field, default)
        if isinstance(value, int) and not isinstance(value, bool):
            spec[field] = scaled_count(value, factor)
    return {**manifest, "spec": spec}


def scaled_events(events: Sequence[Any], factor: float) -> tuple[Any, ...]:
    """The timeline with its pod creations multiplied as :func:`scaled_pods` multiplies
    pods: copies created at the same times, or the last creations left out (with the later
    events naming those pods)."""
    if factor == 1:
        return tuple(events)
    creates = [i for i, e in enumerate(events) if e.kind == "create"]
    total, n = scaled_count(len(creates), factor), len(creates)
    if total <= n:
        dropped = {events[i].pod.key for i in creates[total:]}
        return tuple(e for e in events if _names(e) not in dropped)
    extra = [(events[creates[i % n]], i // n) for i in range(n, total)]
    copies = [attrs.evolve(e, pod=e.pod.renamed(_copy_name(e.pod.name, k)))
              for e, k in extra]
    return tuple(sorted([*events, *copies], key=lambda e: e.time))


def _names(event: Any) -> str | None:
    """The pod key an event is about (``None`` for node events)."""
    if event.pod is not None:
        return event.pod.key
    return event.name if "/" in event.name else None

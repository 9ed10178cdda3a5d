"""The base of a sweep: :class:`Scenario`, one cluster snapshot with the pods, workloads,
scheduler configuration, timeline and node types its scenarios vary around.

Inputs are read once, when the scenario is made: files become records (pods, node types,
events) or plain data (workload manifests, the configuration as the dict a
``KubeSchedulerConfiguration`` file holds), so that a sweep's parameters can change them and the
base can be shipped to worker processes and hashed for resuming.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ksched.api import Node, Pod
from ksched.config import SchedulerConfig, load_config
from ksched.errors import ArgumentError, KschedError
from ksched.io import read_objects
from ksched.loading import load_cluster, load_pods
from ksched.planning import expand_workloads
from ksched.state import ClusterState

__all__ = ["Scenario", "pending_pods", "scenario_of"]

#: The label whose values name node types (``node_count.<type>``), besides node_types' names.
INSTANCE_TYPE = "node.kubernetes.io/instance-type"


def _is_path(value: Any) -> bool:
    return isinstance(value, str | os.PathLike)


def _cluster(value: Any) -> Any:
    if isinstance(value, ClusterState):
        return value
    if value is None:
        raise ArgumentError("Scenario.cluster: required (a ClusterState or a snapshot file)")
    return load_cluster(value)


#: The pending pods of a source, as ``ksched.load_pods`` reads them.
pending_pods = load_pods


def _pods(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, Pod):
        return (value,)
    if isinstance(value, list | tuple) and all(isinstance(p, Pod) for p in value):
        return tuple(value)
    if isinstance(value, Mapping) or _is_path(value) or isinstance(value, list | tuple):
        return pending_pods(value)
    raise ArgumentError(f"Scenario.pods: expected Pod records, manifests or a file, got "
                        f"{type(value).__name__}")


def _workloads(value: Any) -> tuple[Mapping[str, Any], ...]:
    """Workload manifests as plain dicts (files read as ``ksched plan`` reads them)."""
    from ksched.io import iter_manifests

    if value is None:
        return ()
    if not (_is_path(value) or isinstance(value, Mapping | list | tuple)):
        raise ArgumentError(f"Scenario.workloads: expected manifests or a file, got "
                            f"{type(value).__name__}")
    manifests = tuple(dict(m) for m in iter_manifests(value))
    expand_workloads([m for m in manifests if m.get("kind") != "DaemonSet"])
    return manifests


def _config(value: Any) -> Any:
    """``None``, a loaded ``SchedulerConfig``, or the configuration's dict (checked by
    loading it once, so that a file is refused as kube-scheduler refuses it)."""
    if value is None or isinstance(value, SchedulerConfig):
        return value
    if _is_path(value):
        load_config(value)
        import yaml

        with open(value, encoding="utf-8") as f:
            return yaml.safe_load(f)
    if isinstance(value, Mapping):
        load_config(value)
        return _plain(value)
    raise ArgumentError(f"Scenario.config: expected a KubeSchedulerConfiguration file, dict or "
                        f"SchedulerConfig, got {type(value).__name__}")


def _plain(value: Any) -> Any:
    """A deep copy of JSON data as dicts and lists."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _events(value: Any) -> tuple[Any, ...] | None:
    from ksched.timeline import as_events, load_events

    if value is None:
        return None
    if _is_path(value):
        return tuple(load_events(value))
    return tuple(as_events(value))


def _node_types(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, Node | Mapping) or _is_path(value) else value
    if not isinstance(items, list | tuple):
        raise ArgumentError(f"Scenario.node_types: expected Node records, manifests or files, "
                            f"got {type(value).__name__}")
    nodes: list[Any] = []
    for i, item in enumerate(items):
        if isinstance(item, Node):
            nodes.append(item)
            continue
        found = read_objects(item).nodes
        if not found:
            raise ArgumentError(f"Scenario.node_types[{i}]: no Node in {item!r}")
        nodes.append(found[0])
    names = [n.name for n in nodes]
    if len(set(names)) != len(names):
        raise ArgumentError(f"Scenario.node_types: two node types named {names!r}")
    return tuple(nodes)


def _prices(value: Any) -> Mapping[str, float] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ArgumentError(f"Scenario.prices: expected node type -> price, got "
                            f"{type(value).__name__}")
    return dict(value)


def _named(field: str, convert: Any) -> Any:
    """``convert``, its errors prefixed with ``Scenario.<field>`` when they do not say it."""
    def run(value: Any) -> Any:
        try:
            return convert(value)
        except KschedError as exc:
            if str(exc).startswith("Scenario."):
                raise
            raise ArgumentError(f"Scenario.{field}: {exc}") from None
    return run


@attrs.frozen(eq=False)
class Scenario:
    """What every scenario of a sweep starts from.

    Parameters
    ----------
    cluster : a :class:`~ClusterState` or anything :func:`ksched.load_cluster` reads.
    pods : the pending pods (records, manifests or a file of them): scheduled by the
        ``schedule`` study, the templates of ``capacity``, the reference shape of
        ``headroom``, created at time 0 by ``simulate`` when there is no timeline.
    workloads : workload manifests (Deployments, StatefulSets, Jobs, DaemonSets...) or a file
        of them, expanded into pending pods as their controllers would (``scale`` multiplies
        their replicas); ``plan`` makes room for them.
    config : a ``KubeSchedulerConfiguration`` file or dict (parameters may change any of its
        fields), or a loaded :class:`~SchedulerConfig` (then they may not); ``None``:
        kube-scheduler's defaults.
    events : a timeline (a file, or :class:`~ksched.Event` records or their dicts) for the
        ``simulate`` study.
    node_types : Node records, manifests or files: the types ``plan`` may buy and
        ``node_count.<name>`` may add.
    prices : node type name -> price per node, for ``plan``.

    Examples
    --------
    >>> from ksched import ClusterState, Container, Node, Pod
    >>> cluster = ClusterState.from_records([Node("n1", allocatable={"cpu": 4000,
    ...                                                              "pods": 110})])
    >>> base = Scenario(cluster, pods=[Pod("web", containers=[Container("c")])])
    >>> len(base.pods), base.config is None
    (1, True)
    """

    cluster: Any = attrs.field(converter=_named("cluster", _cluster))
    pods: tuple[Any, ...] = attrs.field(default=(), converter=_named("pods", _pods))
    workloads: tuple[Mapping[str, Any], ...] = attrs.field(
        default=(), converter=_named("workloads", _workloads))
    config: Any = attrs.field(default=None, converter=_named("config", _config))
    events: tuple[Any, ...] | None = attrs.field(default=None,
                                                 converter=_named("events", _events))
    node_types: tuple[Any, ...] = attrs.field(default=(),
                                              converter=_named("node_types", _node_types))
    prices: Mapping[str, float] | None = attrs.field(default=None,
                                                     converter=_named("prices", _prices))

    def __attrs_post_init__(self) -> None:
        """Each price a finite number >= 0 for one of the node types, as ``plan`` takes them
        (checked here: it needs ``node_types``)."""
        names = [t.name for t in self.node_types]
        for name, price in (self.prices or {}).items():
            if name not in names:
                raise ArgumentError(f"Scenario.prices[{name!r}]: no such node type (types: "
                                    f"{', '.join(names)})")
            if isinstance(price, bool) or not isinstance(price, numbers.Real) \
                    or not math.isfinite(price) or price < 0:
                raise ArgumentError(f"Scenario.prices[{name!r}]: expected a finite number "
                                    f">= 0, got {price!r}")

    def nodes_of_types(self) -> dict[str, list[int]]:
        """Instance type -> the rows of the cluster's nodes of that type, in cluster order."""
        rows: dict[str, list[int]] = {}
        for i, node in enumerate(self.cluster.nodes):
            kind = node.labels.get(INSTANCE_TYPE)
            if kind is not None:
                rows.setdefault(kind, []).append(i)
        return rows

    def template(self, node_type: str) -> Any:
        """The Node new nodes of ``node_type`` are copied from: the node type of that name,
        else the first cluster node with that instance type label."""
        for node in self.node_types:
            if node.name == node_type or node.labels.get(INSTANCE_TYPE) == node_type:
                return node
        rows = self.nodes_of_types().get(node_type)
        if not rows:
            raise ArgumentError(f"node_count.{node_type}: no node type {node_type!r} (neither "
                                f"a node_types name nor an {INSTANCE_TYPE} label value)")
        return self.cluster.nodes[rows[0]]


def scenario_of(value: Any) -> Scenario:
    """``value`` as a :class:`Scenario` (a ``ClusterState`` or snapshot is wrapped)."""
    if isinstance(value, Scenario):
        return value
    if isinstance(value, ClusterState | str | os.PathLike):
        return Scenario(value)
    raise ArgumentError(f"base: expected a ksched.Scenario, got {type(value).__name__}")


def is_sequence(value: Any) -> bool:
    """A list or tuple (not a string, not a mapping)."""
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)

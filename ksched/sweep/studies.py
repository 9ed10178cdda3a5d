"""What a sweep measures per scenario: the built-in studies and a user's function, each
turning a :class:`~ksched.sweep.apply.Variant` into a row of metrics (names to scalars).

* ``schedule``: :func:`schedule_batch` of the pending pods: ``placed``,
  ``unschedulable``, ``cpu_utilisation`` and ``memory_utilisation`` (requested / allocatable
  over the cluster afterwards, fractions) and ``balance`` (the mean over cpu and memory of the
  standard deviation of the nodes' utilisation: 0 is perfectly even).

The schedule, headroom and simulate studies add, per extended resource some node has (GPUs
...), ``extended.<resource>.utilisation`` (a fraction; the simulator gives its time average
``_mean`` and peak ``_max``), ``.allocatable``, ``.requested`` and ``.free`` (counts, at the
end). With DRA, the schedule, capacity, headroom and simulate studies add, per DeviceClass
matching some device, ``devices.<class>.utilisation`` (allocated / matching devices, a
fraction), ``.allocatable``, ``.allocated`` and ``.free`` (counts; at the end, after the copies
for capacity; see :mod:`ksched.planning.devices`).
* ``capacity``: :func:`ksched.capacity` with the pending pods as templates: ``replicas`` and
  ``replicas.<namespace/name>`` per template.
* ``headroom``: :func:`ksched.headroom` (the first pending pod, if any, as the reference):
  utilisation and balance per resource, and ``fits``.
* ``plan``: :func:`ksched.plan` for the workloads (or the pending pods) with the base's node
  types and prices: ``nodes`` added, ``nodes.<type>``, ``cost``, ``complete``.
* ``simulate``: the :class:`Simulator` over the timeline (or the pending pods created
  at time 0): its ``summary()`` (wall-clock figures left out).

A scenario that removes nodes adds ``displaced`` (pods of the removed nodes, DaemonSet and
mirror pods left out: they go with their nodes), ``displaced_pending`` (those no longer
placed), ``evicted`` (running pods preemption evicted to make room), ``evicted_pending``
(those that fit nowhere afterwards) and ``unplaced`` (every pod that ends unplaced: the two
pending counts together); see :class:`ksched.planning.headroom.Displacement`.
"""

from __future__ import annotations

import numbers
import pickle
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ksched.dra.state import dra_objects
from ksched.engine import schedule_batch
from ksched.errors import ArgumentError
from ksched.planning import capacity as capacity_report
from ksched.planning import headroom as headroom_report
from ksched.planning import plan as plan_report
from ksched.planning.devices import device_inventory, device_metrics
from ksched.resources import is_extended_resource
from ksched.simulator import Event, Simulator
from ksched.sweep.apply import Variant

__all__ = ["DISPLACEMENT", "METRICS", "STUDIES", "check_metric", "check_study", "metrics_of",
           "study_name"]

#: Summary fields of the simulator that are wall-clock timings, not outcomes.
_TIMINGS = ("wall_seconds", "queue_share")


def _utilisation(cluster: Any, resource: str) -> tuple[float, float]:
    """Requested / allocatable of ``resource`` over the cluster, and the standard deviation
    of it over the nodes that have some (0, 0 without the resource)."""
    column = cluster.resource_column(resource)
    if column < 0:
        return 0.0, 0.0
    alloc = np.asarray(cluster.allocatable[:, column], dtype=np.float64)
    used = np.asarray(cluster.requested[:, column], dtype=np.float64)
    has = alloc > 0
    if not has.any():
        return 0.0, 0.0
    return float(used[has].sum() / alloc[has].sum()), float((used[has] / alloc[has]).std())


def _extended(names: Sequence[str], allocatable: np.ndarray, requested: np.ndarray
              ) -> dict[str, Any]:
    """Per extended resource some node has: ``extended.<r>.utilisation`` (requested /
    allocatable over the cluster), ``.allocatable``, ``.requested`` and ``.free``.
    ``allocatable``, ``requested``: int64[N, R] over the resources ``names``."""
    row: dict[str, Any] = {}
    allocatable = np.asarray(allocatable, dtype=np.int64).sum(axis=0)
    requested = np.asarray(requested, dtype=np.int64).sum(axis=0)
    for j, r in enumerate(names):
        if is_extended_resource(r) and allocatable[j] > 0:
            a, q = int(allocatable[j]), int(requested[j])
            row.update({f"extended.{r}.utilisation": round(q / a, 6),
                        f"extended.{r}.allocatable": a, f"extended.{r}.requested": q,
                        f"extended.{r}.free": a - q})
    return row


def _devices(state: Any) -> dict[str, Any]:
    """``devices.<class>.*`` of a cluster state (none without DeviceClasses)."""
    if not dra_objects(state).device_classes:
        return {}
    return device_metrics(device_inventory(state))


def schedule(variant: Variant) -> dict[str, Any]:
    result = schedule_batch(variant.cluster, variant.pods, profile=variant.config,
                                   tie_break=variant.tie_break, seed=variant.seed)
    cpu, cpu_spread = _utilisation(result.state, "cpu")
    memory, memory_spread = _utilisation(result.state, "memory")
    placed = sum(1 for p in result.placements if p.node is not None)
    return {"placed": placed, "unschedulable": len(result.placements) - placed,
            "cpu_utilisation": round(cpu, 6), "memory_utilisation": round(memory, 6),
            "balance": round((cpu_spread + memory_spread) / 2, 6),
            **_extended(result.state.resource_names, result.state.allocatable,
                        result.state.requested), **_devices(result.state)}


def capacity(variant: Variant) -> dict[str, Any]:
    if not variant.pods:
        raise ArgumentError("capacity study: the scenario has no pods to use as templates")
    report = capacity_report(variant.cluster, list(variant.pods), profile=variant.config)
    row: dict[str, Any] = {"replicas": report.replicas}
    row.update({f"replicas.{r.template.key}": r.replicas for r in report.results})
    row.update(_devices(report.state))
    return row


def headroom(variant: Variant) -> dict[str, Any]:
    report = headroom_report(variant.cluster,
                             reference=variant.pods[0] if variant.pods else None)
    total = report.total
    row: dict[str, Any] = {}
    for resource in ("cpu", "memory", "pods"):
        if resource in total.percent:
            row[f"{resource}_utilisation"] = round(total.percent[resource] / 100, 6)
            row[f"{resource}_balance"] = round(report.balance[resource], 6)
    if report.fits is not None:
        row["fits"] = report.fits
    row.update(_extended(report.resources, report.allocatable, report.requested))
    if report.devices is not None:
        row.update(device_metrics(report.devices))
    return row


def plan(variant: Variant) -> dict[str, Any]:
    if variant.workloads and variant.pods:
        raise ArgumentError("plan study: give the scenario workloads or pods, not both")
    if not variant.node_types:
        raise ArgumentError("plan study: the scenario has no node_types to add")
    work = list(variant.workloads) if variant.workloads else list(variant.pods)
    report = plan_report(variant.cluster, work, list(variant.node_types),
                         prices=variant.prices, profile=variant.config)
    row: dict[str, Any] = {"nodes": sum(report.nodes.values())}
    row.update({f"nodes.{name}": count for name, count in report.nodes.items()})
    row.update(cost=report.cost, complete=report.complete)
    return row


def simulate(variant: Variant) -> dict[str, Any]:
    events = variant.events
    if events is None:
        events = tuple(Event(0.0, "create", pod=p) for p in variant.pods)
    simulator = Simulator(variant.cluster, profile=variant.config, seed=variant.seed,
                                 tie_break=variant.tie_break)
    result = simulator.run(events)
    row = {k: v for k, v in result.summary().items() if k not in _TIMINGS}
    return row | _devices(result.state)


#: The built-in studies by name.
STUDIES: dict[str, Callable[[Variant], Mapping[str, Any]]] = {
    "schedule": schedule, "capacity": capacity, "headroom": headroom, "plan": plan,
    "simulate": simulate}


#: The metrics of each built-in study: fixed names, and prefixes of per-item names.
METRICS: dict[str, tuple[str, ...]] = {
    "schedule": ("placed", "unschedulable", "cpu_utilisation", "memory_utilisation", "balance",
                 "extended.*", "devices.*"),
    "capacity": ("replicas", "replicas.*", "devices.*"),
    "headroom": (*(f"{r}_{m}" for r in ("cpu", "memory", "pods")
                   for m in ("utilisation", "balance")), "fits", "extended.*", "devices.*"),
    "plan": ("nodes", "nodes.*", "cost", "complete"),
    "simulate": ("pods_created", "pods_scheduled", "pods_pending_at_end",
                 "scheduling_attempts", "unschedulable_attempts", "preemptions", "victims",
                 "time_to_schedule_p50", "time_to_schedule_p99", "cpu_utilisation_mean",
                 "cpu_utilisation_max", "memory_utilisation_mean", "memory_utilisation_max",
                 "virtual_seconds", "extended.*", "devices.*")}
#: The metrics of a scenario that removes nodes.
DISPLACEMENT = ("displaced", "displaced_pending", "evicted", "evicted_pending", "unplaced")


def check_metric(study: str, metric: Any, removes_nodes: bool) -> None:
    """Refuse, before anything runs, a ``metric`` the built-in ``study`` never gives
    (``removes_nodes``: some scenario removes nodes, adding :data:`DISPLACEMENT`)."""
    names = METRICS[study] + (DISPLACEMENT if removes_nodes else ())
    if not isinstance(metric, str) or not any(
            metric == n or (n.endswith("*") and metric.startswith(n[:-1]) and metric != n[:-1])
            for n in names):
        raise ArgumentError(f"metric: the {study} study has no metric {metric!r} (metrics: "
                            f"{', '.join(names)})")


def check_study(study: Any, executor: str) -> None:
    """Refuse an unknown study name, and a function the process pool cannot ship."""
    if isinstance(study, str):
        if study not in STUDIES:
            raise ArgumentError(f"study: expected one of {', '.join(STUDIES)} or a function, "
                                f"got {study!r}")
        return
    if not callable(study):
        raise ArgumentError(f"study: expected a study name or a function, got "
                            f"{type(study).__name__}")
    if executor == "process":
        try:
            pickle.dumps(study)
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            raise ArgumentError(
                f"study: {getattr(study, '__qualname__', study)!r} cannot be pickled for the "
                f"process pool ({exc}): define it at the top level of a module, or use "
                f"executor='inline' (or 'ray', which pickles it by value)") from None


def study_name(study: Any) -> str:
    """The study's name: a built-in's, or ``module.qualname`` of a function."""
    if isinstance(study, str):
        return study
    module = getattr(study, "__module__", None) or "?"
    return f"{module}.{getattr(study, '__qualname__', type(study).__name__)}"


def metrics_of(study: Any, variant: Variant) -> dict[str, Any]:
    """Run ``study`` on ``variant``; its metrics, checked to be scalars."""
    run = STUDIES[study] if isinstance(study, str) else study
    found = run(variant)
    if not isinstance(found, Mapping):
        raise ArgumentError(f"study: {study_name(study)} returned {type(found).__name__}, "
                            f"expected a mapping of metric -> value")
    row = {str(name): _scalar(name, value) for name, value in found.items()}
    row.update(_displacement(variant))
    return row


def _displacement(variant: Variant) -> dict[str, int]:
    moved = variant.displaced
    if moved is None:
        return {}
    return {"displaced": len(moved.pods), "displaced_pending": len(moved.pending),
            "evicted": len(moved.evicted), "evicted_pending": len(moved.evicted_pending),
            "unplaced": len(moved.unplaced)}


def _scalar(name: Any, value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, numbers.Integral):
        if not -2**63 <= value < 2**63:
            raise ArgumentError(f"study: metric {name!r} is {value}, outside the 64-bit "
                                f"integers a table column holds")
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise ArgumentError(f"study: metric {name!r} is a {type(value).__name__}, expected a "
                        f"number, a string, a bool or None")

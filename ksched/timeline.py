"""Timelines for the :class:`~ksched.simulator.Simulator`: read from files, or generated.

A timeline file is JSON lines, a JSON list or a YAML list of events::

    {"time": 0,    "kind": "create", "pod": {<v1.Pod>}, "duration": 600}
    {"time": 20,   "kind": "update", "pod": {<v1.Pod, its scheduling gates removed>}}
    {"time": 30,   "kind": "delete", "pod": "default/web-1"}
    {"time": 60,   "kind": "node-add", "node": {<v1.Node>}}
    {"time": 90,   "kind": "cordon", "node": "node-7"}

``time`` is in virtual seconds; ``duration`` (optional) is how long a created pod runs once
bound. ``finish`` is ``delete`` for a pod that completed.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ksched.api import Container, Node, Pod
from ksched.errors import InvalidObjectError
from ksched.simulator import EVENT_KINDS, Event
from ksched.state import ClusterState


def load_events(path: str | Path) -> list[Event]:
    """The events of a timeline file (JSON lines, JSON or YAML; ``.gz`` allowed)."""
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read()
    stripped = text.lstrip()
    try:
        if stripped.startswith("["):
            records = json.loads(text)
        elif stripped.startswith("{"):
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            records = yaml.safe_load(text) or []
    except (ValueError, yaml.YAMLError) as exc:
        raise InvalidObjectError(f"timeline {path}", "", f"cannot parse: {exc}") from None
    if not isinstance(records, list):
        raise InvalidObjectError(f"timeline {path}", "", "expected a list of events")
    return [event_from_record(r, i) for i, r in enumerate(records)]


def event_from_record(record: Any, index: int = 0) -> Event:
    """One event from its dict form, with errors naming the event and the field."""
    where = f"event {index}"
    if not isinstance(record, Mapping):
        raise InvalidObjectError(where, "", "expected an object")
    kind = record.get("kind")
    if kind not in EVENT_KINDS:
        raise InvalidObjectError(where, "kind", f"must be one of {', '.join(EVENT_KINDS)}, "
                                                f"got {kind!r}")
    at = record.get("time")
    if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at) \
            or at < 0:
        raise InvalidObjectError(where, "time", f"must be a number of seconds >= 0, got {at!r}")
    duration = record.get("duration")
    if duration is not None and (isinstance(duration, bool)
                                 or not isinstance(duration, int | float) or duration < 0):
        raise InvalidObjectError(where, "duration", f"must be a number of seconds >= 0, got "
                                                    f"{duration!r}")
    if kind in ("create", "update"):
        return Event(at, kind, pod=Pod.from_manifest(_object(record, "pod", where)),
                     duration=duration)
    if kind == "node-add":
        return Event(at, kind, node=Node.from_manifest(_object(record, "node", where)))
    field = "pod" if kind in ("delete", "finish") else "node"
    name = record.get(field)
    if not isinstance(name, str) or not name:
        raise InvalidObjectError(where, field, "must name the " + (
            "pod as namespace/name" if field == "pod" else "node"))
    if field == "pod" and "/" not in name:
        name = f"default/{name}"
    return Event(at, kind, name=name)


def _object(record: Mapping[str, Any], field: str, where: str) -> Mapping[str, Any]:
    value = record.get(field)
    if not isinstance(value, Mapping):
        raise InvalidObjectError(where, field, "must be a Kubernetes object")
    return value


def arrivals_at_once(pods: Sequence[Pod]) -> list[Event]:
    """Every pod created at time 0, in order (a batch, as ``schedule`` sees it)."""
    return [Event(0.0, "create", pod=p) for p in pods]


def day_of_churn(nodes: int = 5000, arrivals: int = 100_000, seconds: float = 86_400.0,
                 seed: int = 0, median_duration: float = 3 * 3600.0
                 ) -> tuple[ClusterState, list[Event]]:
    """A capacity planner's day: ``nodes`` 4-cpu/32Gi nodes and ``arrivals`` pods created at
    random (Poisson) times, each running for a log-normal time (``median_duration``, 3 hours
    by default) and then finishing. Requests come from four sizes; one pod in ten has a
    higher priority."""
    rng = np.random.default_rng(seed)
    template = Node("node", allocatable={"cpu": 4000, "memory": 32 * 2**30, "pods": 110},
                    labels={"kubernetes.io/hostname": "node"})
    cluster = ClusterState.from_node_templates([(template, nodes)])
    times = np.sort(rng.uniform(0.0, seconds, arrivals))
    durations = rng.lognormal(np.log(median_duration), 0.8, arrivals)
    sizes = [{"cpu": 100, "memory": 256 * 2**20}, {"cpu": 250, "memory": 512 * 2**20},
             {"cpu": 500, "memory": 2**30}, {"cpu": 1000, "memory": 2 * 2**30}]
    shapes = [Pod("shape", containers=[Container("app", requests=size)], priority=priority)
              for size in sizes for priority in (0, 1000)]
    picks = rng.integers(len(sizes), size=arrivals) * 2 + (rng.random(arrivals) < 0.1)
    events = []
    for i, (at, runs, shape) in enumerate(zip(times, durations, picks)):
        pod = shapes[int(shape)]
        events.append(Event(float(at), "create", pod=Pod(
            f"pod-{i}", containers=pod.containers, priority=pod.priority, priority_set=True),
            duration=float(runs)))
    return cluster, events


__all__ = ["load_events", "event_from_record", "arrivals_at_once", "day_of_churn"]

"""Timelines for the :class:`~ksched.simulator.Simulator`: read from files, or generated.

A timeline file is JSON lines, a JSON list or a YAML list of events::

    {"time": 0,    "kind": "create", "pod": {<v1.Pod>}, "duration": 600}
    {"time": 20,   "kind": "update", "pod": {<v1.Pod, its scheduling gates removed>}}
    {"time": 30,   "kind": "delete", "pod": "default/web-1"}
    {"time": 60,   "kind": "node-add", "node": {<v1.Node>}}
    {"time": 90,   "kind": "cordon", "node": "node-7"}

``time`` is in virtual seconds (a finite number >= 0); ``duration`` (optional, create only)
is how long a created pod runs once bound. ``finish`` is ``delete`` for a pod that completed;
a pod named without a namespace is in ``default``. Any other field, a missing payload or a bad
value is refused, naming the file, the line (JSON lines) or the event's index, and the field.
"""

from __future__ import annotations

import gzip
import json
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ksched import simulator
from ksched.api import Container, Node, Pod
from ksched.errors import ArgumentError, InvalidObjectError, KschedError
from ksched.simulator import Event
from ksched.state import ClusterState

#: The fields of a timeline entry, and the one that holds each kind's payload: a v1 object
#: for create, update and node-add, a name (``Event.name``) for the others.
FIELDS = ("time", "kind", "pod", "node", "duration")
_PAYLOAD = {"create": "pod", "update": "pod", "delete": "pod", "finish": "pod",
            "node-add": "node", "node-remove": "node", "cordon": "node", "uncordon": "node"}
_NAMED = ("delete", "finish", "node-remove", "cordon", "uncordon")


def load_events(path: str | Path) -> list[Event]:
    """The events of a timeline file (JSON lines, JSON or YAML; ``.gz`` allowed). Errors name
    the file, the line (JSON lines) or the event's index, and the field."""
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            text = f.read()
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as exc:
        raise InvalidObjectError(f"timeline {path}", "", f"cannot read: {exc}") from None
    return parse_events(text, f"timeline {path}")


def parse_events(text: str, source: str = "timeline") -> list[Event]:
    """The events of a timeline's text; ``source`` names it in errors."""
    stripped = text.lstrip()
    if not stripped:
        raise InvalidObjectError(source, "", "no events")
    try:
        if stripped.startswith("{"):
            return _json_lines(text, source)
        records = json.loads(text) if stripped.startswith("[") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise InvalidObjectError(source, "", f"cannot parse: {_one_line(exc)}") from None
    except RecursionError:
        raise InvalidObjectError(source, "", "cannot parse: nested too deeply") from None
    if not isinstance(records, list):
        raise InvalidObjectError(source, "", f"expected a list of events, got "
                                             f"{type(records).__name__}")
    return [event_from_record(r, i, f"{source}: event {i}") for i, r in enumerate(records)]


def _json_lines(text: str, source: str) -> list[Event]:
    events = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            try:  # one JSON object over several lines: a one-event timeline
                record = json.loads(text)
            except json.JSONDecodeError:
                raise InvalidObjectError(f"{source}: line {number}", "",
                                         f"cannot parse: {exc}") from None
            return [event_from_record(record, 0, f"{source}: event 0")]
        events.append(event_from_record(record, len(events), f"{source}: line {number}"))
    return events


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def event_from_record(record: Any, index: int = 0, where: str | None = None) -> Event:
    """One event from its dict form (see the module's docstring); errors name ``where``
    (default: ``event INDEX``) and the field."""
    where = where or f"event {index}"
    if not isinstance(record, Mapping):
        raise InvalidObjectError(where, "", f"expected an object with time and kind, got "
                                            f"{type(record).__name__}")
    unknown = [k for k in record if k not in FIELDS]
    if unknown:
        raise InvalidObjectError(where, "", f'unknown field "{unknown[0]}" (an event has '
                                            f'{", ".join(FIELDS)})')
    kind = record.get("kind")
    field = _PAYLOAD.get(kind) if isinstance(kind, str) else None
    stray = next((k for k in ("pod", "node") if k in record and k != field), None)
    if stray is not None and field is not None:
        raise InvalidObjectError(where, stray, f"not taken by {kind} events, which take {field}")
    payload = {} if field is None else {field: record.get(field)}
    if kind in _NAMED:
        value = payload.pop(field)
        if value is not None and not isinstance(value, str):
            named = "pod as namespace/name" if field == "pod" else "node"
            raise InvalidObjectError(where, field, f"must name the {named}, got "
                                                   f"{type(value).__name__}")
        payload["name"] = value or ""
    try:
        return Event(record.get("time"), kind, duration=record.get("duration"), **payload)
    except KschedError as exc:
        if not isinstance(exc, InvalidObjectError) or exc.obj not in ("event", f"{kind} event"):
            raise InvalidObjectError(where, "", str(exc)) from None  # the pod's or the node's
        path = field if exc.path == "name" else exc.path  # the file's field for Event.name
        raise InvalidObjectError(where, path, exc.problem) from None


def arrivals_at_once(pods: Sequence[Pod]) -> list[Event]:
    """Every pod created at time 0, in order (a batch, as ``schedule`` sees it)."""
    return [Event(0.0, "create", pod=p) for p in pods]


def day_of_churn(nodes: int = 5000, arrivals: int = 100_000, seconds: float = 86_400.0,
                 seed: int = 0, median_duration: float = 3 * 3600.0
                 ) -> tuple[ClusterState, list[Event]]:
    """A capacity planner's day: ``nodes`` 4-cpu/32Gi nodes and ``arrivals`` pods created at
    random (Poisson) times, each running for a log-normal time (``median_duration``, 3 hours
    by default) and then finishing. Requests come from four sizes; one pod in ten has a
    higher priority. Arrivals fall in ``[0, seconds)``; run with ``until=seconds`` for the
    day itself (``ksched simulate day-of-churn`` does), or without for every pod to finish."""
    for name, value in (("nodes", nodes), ("arrivals", arrivals), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
                or value < (0 if name == "seed" else 1):
            raise ArgumentError(f"day_of_churn: {name}: must be an integer >= "
                                f"{0 if name == 'seed' else 1}, got {value!r}")
    seconds = simulator.as_seconds(seconds, "day_of_churn", "seconds", positive=True,
                                   argument=True)
    median_duration = simulator.as_seconds(median_duration, "day_of_churn", "median_duration",
                                           positive=True, argument=True)
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


__all__ = ["load_events", "parse_events", "event_from_record", "arrivals_at_once",
           "day_of_churn"]

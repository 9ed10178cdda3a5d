"""Timelines for the :class:`~ksched.simulator.Simulator`: their events, checked, read from
files, or generated.

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
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import yaml

from ksched.api import Container, Node, Pod
from ksched.errors import ArgumentError, InvalidObjectError, KschedError
from ksched.inputs import as_node, as_pod
from ksched.limits import MAX_NODES, MAX_PODS, check_count
from ksched.state import ClusterState

EVENT_KINDS = ("create", "update", "delete", "finish", "node-add", "node-remove", "cordon",
               "uncordon")
#: Event kinds by payload: a pod record, a pod key, a node record, a node name.
POD_KINDS, POD_KEY_KINDS = ("create", "update"), ("delete", "finish")
NODE_KINDS, NODE_NAME_KINDS = ("node-add",), ("node-remove", "cordon", "uncordon")


def _as_pod(value: Any) -> Pod | None:
    """``Event.pod``: whatever :func:`ksched.inputs.as_pod` takes (``None`` stays ``None``)."""
    return value if value is None or type(value) is Pod else as_pod(value)


def _as_node(value: Any) -> Node | None:
    """``Event.node``: a Node record, a v1 Node manifest or a kubernetes-client ``V1Node``."""
    return None if value is None else as_node(value, "event: node")


def as_seconds(value: Any, obj: str, field: str, *, positive: bool = False,
               argument: bool = False) -> float:
    """``value`` as a float of seconds: a finite number >= 0 (> 0 with ``positive``). Refused
    with an :class:`InvalidObjectError` naming ``obj`` and ``field``, or for a function's
    ``argument``, an :class:`ArgumentError`."""
    if type(value) is not float and (isinstance(value, bool)
                                     or not isinstance(value, numbers.Real)):
        problem = f"must be a number of seconds, got {value!r}"
    else:
        number = float(value)
        if (number > 0.0 if positive else number >= 0.0) and number != math.inf:
            return number
        problem = (f"must be a finite number of seconds {'> 0' if positive else '>= 0'}, "
                   f"got {value!r}")
    if argument:
        raise ArgumentError(f"{obj}: {field}: {problem}")
    raise InvalidObjectError(obj, field, problem)


@attrs.frozen
class Event:
    """One timeline entry.

    ``create`` takes ``pod`` (and optionally ``duration``: how long it runs once bound, after
    which it finishes and frees its node); ``update`` takes the new ``pod``: of a pending pod
    (removing its scheduling gates, say), or of a bound one, which keeps its node (new labels,
    or requests lowered in place); ``delete`` (the pod is deleted) and ``finish`` (it
    completed) take ``name``, a pod key ``namespace/name`` (a bare name is in ``default``);
    ``node-add`` takes ``node``; ``node-remove``, ``cordon`` and ``uncordon`` take ``name``, a
    node name. ``time`` and ``duration`` are finite seconds >= 0. Pods are anything
    :func:`ksched.inputs.as_pod` takes (records, v1 Pod manifests, kubernetes-client objects);
    nodes are records or v1 Node manifests. Any other payload is refused.
    """

    time: float
    kind: str
    pod: Pod | None = attrs.field(default=None, converter=_as_pod)
    node: Node | None = attrs.field(default=None, converter=_as_node)
    name: str = ""
    duration: float | None = None

    def __attrs_post_init__(self) -> None:
        kind, at = self.kind, self.time
        wants = _PAYLOAD_OF.get(kind) if type(kind) is str else None
        if wants is None:
            raise InvalidObjectError("event", "kind", f"must be one of {', '.join(EVENT_KINDS)}"
                                                      f", got {kind!r}")
        if type(at) is not float or not 0.0 <= at < math.inf:
            object.__setattr__(self, "time", as_seconds(at, f"{kind} event", "time"))
        if wants == "pod":
            ok = self.pod is not None and self.node is None and not self.name
        elif wants == "node":
            ok = self.node is not None and self.pod is None and not self.name
        else:
            name = self.name
            ok = type(name) is str and kind in POD_KEY_KINDS and name.count("/") == 1 \
                and name[0] != "/" and name[-1] != "/" and self.pod is None and self.node is None
        runs = self.duration
        if not ok or (runs is not None and (kind != "create" or type(runs) is not float
                                            or not 0.0 <= runs < math.inf)):
            self._check_payload(wants)

    def _check_payload(self, wants: str) -> None:
        """Refuse a missing or stray payload; default a pod key's namespace; float seconds."""
        kind = self.kind
        where = f"{kind} event"
        if self.duration is not None:
            if kind != "create":
                raise InvalidObjectError(where, "duration", "only create events take one")
            object.__setattr__(self, "duration", as_seconds(self.duration, where, "duration"))
        for field in ("pod", "node", "name"):
            given = getattr(self, field)
            if field != wants and given:
                raise InvalidObjectError(where, field, f"not taken by {kind} events, which take "
                                                       f"{wants}")
            if field == wants and not given:
                raise InvalidObjectError(where, field, "required: " + _PAYLOADS[field if field
                                         != "name" or kind in NODE_NAME_KINDS else "key"])
        if wants == "name":
            object.__setattr__(self, "name", _name(self.name, where, kind in POD_KEY_KINDS))


_PAYLOAD_OF = {kind: "pod" if kind in POD_KINDS else "node" if kind in NODE_KINDS else "name"
               for kind in EVENT_KINDS}
_PAYLOADS = {"pod": "a Pod, a v1 Pod manifest or a kubernetes-client V1Pod",
             "node": "a Node or a v1 Node manifest", "name": "the node's name",
             "key": "the pod as namespace/name"}


def _name(name: Any, where: str, pod_key: bool) -> str:
    """A node name, or a pod key with the namespace defaulted to ``default``."""
    if not isinstance(name, str):
        raise InvalidObjectError(where, "name", f"must be a string, got {type(name).__name__}")
    if not pod_key:
        return name
    parts = name.split("/")
    if len(parts) == 1:
        return "default/" + name
    if len(parts) != 2 or not all(parts):
        raise InvalidObjectError(where, "name", f"must be a pod as namespace/name, got "
                                                f"{name!r}")
    return name


def as_events(events: Iterable[Any]) -> list[Event]:
    """The timeline as Events: Event records as they are, dicts as a timeline file has them."""
    if isinstance(events, Event | Mapping | str | bytes) or not isinstance(events, Iterable):
        raise ArgumentError(f"Simulator.run: events: expected a sequence of events, got "
                            f"{type(events).__name__}")
    out = list(events)
    for i, event in enumerate(out):
        if type(event) is not Event:
            if not isinstance(event, Mapping):
                raise InvalidObjectError(f"event {i}", "", f"expected an Event or a dict, got "
                                                           f"{type(event).__name__}")
            out[i] = event_from_record(event, i)
    return out


def check_timeline(events: Sequence[Event], cluster: ClusterState) -> None:
    """Refuse what the API server would refuse for certain, in time order: creating a pod
    that exists (and cannot have finished), updating or deleting one that was never created
    or was deleted, adding a node that exists, removing or cordoning one that does not; and
    creating or updating a pod bound (``spec.nodeName``) to a node that does not exist then
    (``node "NAME" not found``, as :meth:`ClusterState.bind` says)."""
    #: Pod key -> whether it may be gone by then (it was created with a duration).
    pods = dict.fromkeys((p.key for p in cluster.pods), False)
    nodes = set(cluster.node_names)
    for i in sorted(range(len(events)), key=lambda i: events[i].time):
        event = events[i]
        kind = event.kind
        if kind in POD_KINDS:
            _check_bound_node(event.pod, nodes, i)
        if kind == "create":
            pod = event.pod
            key = pod.key
            known = pods.get(key)
            if known is False:
                raise InvalidObjectError(f"event {i}", "pod",
                                         f'pods "{pod.name}" already exists (pod {key})')
            pods[key] = known is not None or event.duration is not None  # gone by then?
        elif kind in POD_KEY_KINDS or kind == "update":
            key = event.pod.key if kind == "update" else event.name
            if key not in pods:
                raise InvalidObjectError(f"event {i}", "pod" if kind == "update" else "name",
                                         f'pods "{key.partition("/")[2]}" not found (pod {key})')
            if kind != "update":
                del pods[key]
        elif kind == "node-add":
            if event.node.name in nodes:
                raise InvalidObjectError(f"event {i}", "node",
                                         f'nodes "{event.node.name}" already exists')
            nodes.add(event.node.name)
        elif event.name not in nodes:
            raise InvalidObjectError(f"event {i}", "name", f'nodes "{event.name}" not found')
        elif kind == "node-remove":
            nodes.discard(event.name)


def _check_bound_node(pod: Pod, nodes: set[str], index: int) -> None:
    """Refuse a pod whose ``spec.nodeName`` names no node of the cluster at its time."""
    if pod.node_name and pod.node_name not in nodes:
        raise InvalidObjectError(f"event {index}", "pod.spec.nodeName",
                                 f'node "{pod.node_name}" not found (pod {pod.key})')


#: The fields of a timeline entry, and the one that holds each kind's payload: a v1 object
#: for create, update and node-add, a name (``Event.name``) for the others.
FIELDS = ("time", "kind", "pod", "node", "duration")
_FILE_FIELD = {kind: "pod" if kind in POD_KINDS + POD_KEY_KINDS else "node"
               for kind in EVENT_KINDS}
_NAMED = POD_KEY_KINDS + NODE_NAME_KINDS


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
    field = _FILE_FIELD.get(kind) if isinstance(kind, str) else None
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
    day itself (``ksched simulate day-of-churn`` does), or without for every pod to finish.
    ``nodes`` and ``arrivals`` are bounded by :mod:`ksched.limits` as on the command line."""
    nodes = check_count(nodes, "day_of_churn: nodes", MAX_NODES, low=1)
    arrivals = check_count(arrivals, "day_of_churn: arrivals", MAX_PODS, low=1)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ArgumentError(f"day_of_churn: seed: must be an integer >= 0, got {seed!r}")
    seconds = as_seconds(seconds, "day_of_churn", "seconds", positive=True,
                                   argument=True)
    median_duration = as_seconds(median_duration, "day_of_churn", "median_duration",
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


__all__ = ["Event", "EVENT_KINDS", "as_seconds", "as_events", "check_timeline", "load_events",
           "parse_events", "event_from_record", "arrivals_at_once", "day_of_churn"]

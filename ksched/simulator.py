"""A time-driven simulation of kube-scheduler over a timeline of cluster events.

The :class:`Simulator` feeds a :class:`~ksched.queue.SchedulingQueue` from a timeline (pods
created, finishing or deleted; nodes added, cordoned or removed) and runs kube-scheduler's loop
(``pkg/scheduler/schedule_one.go``) on a virtual clock: pop a pod, run the scheduling cycle,
on success assume it and run Reserve, Permit and the binding cycle (PreBind, Bind, PostBind),
on failure run PostFilter (DefaultPreemption) and hand the pod back to the queue. Cycles take
no virtual time; the clock jumps to the next event, backoff expiry or queue flush.

Pods whose cycle the compiled loop models exactly (no topology spreading or pod affinity
counted, no nominated pods in the way) are scheduled by it, one at a time, on the same arrays
the object-level framework uses for the others. Where only NodeResourcesFit of the filters
looks at pods, a pod that fits nowhere and preempts, and its retry on the nominated node, are
compiled too (:mod:`ksched.fast_preemption`).
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import itertools
import math
import numbers
import time as wallclock
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.api import Node, Pod
from ksched.constants import CPU, MEMORY
from ksched.disruption import pdb_status
from ksched.engine import Assumer, no_profile_reason
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.fast import FastPath, supports
from ksched.fast_preemption import Failure, FastPreemption
from ksched.framework.interfaces import Cycle, Handle
from ksched.framework.runtime import (
    Framework,
    NominatedPods,
    ScheduleResult,
    SchedulingError,
)
from ksched.framework.tiebreak import TieBreaker
from ksched.inputs import (
    as_cluster,
    as_node,
    as_pod,
    check_flag,
    check_percentage,
    check_profile,
    check_progress,
    check_seed,
    check_tie_break,
)
from ksched.io import admit_priorities
from ksched.profile import default_profile
from ksched.queue import QueuedPodInfo, SchedulingQueue
from ksched.state import ClusterState
from ksched.status import NO_NODES_AVAILABLE, Code, with_post_filter

EVENT_KINDS = ("create", "update", "delete", "finish", "node-add", "node-remove", "cordon",
               "uncordon")
#: Decision outcomes, in the event log's ``outcome`` field.
BOUND, UNSCHEDULABLE, PREEMPTING, PREEMPTED = "bound", "unschedulable", "preempting", "preempted"
FINISHED, DELETED, EVICTED, IGNORED = "finished", "deleted", "evicted", "ignored"
WAITING, REJECTED = "waiting", "rejected"
#: Cluster events handed to the queue (``framework.ClusterEvent`` labels).
ASSIGNED_POD_DELETE, NODE_ADD, NODE_UPDATE = "AssignedPodDelete", "NodeAdd", "NodeUpdate"


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
    which it finishes and frees its node); ``update`` takes the new ``pod`` of a pending pod
    (removing its scheduling gates, say); ``delete`` (the pod is deleted) and ``finish`` (it
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
        wants = _PAYLOAD_OF.get(kind)
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


@attrs.frozen
class Decision:
    """What happened to one pod at one virtual time."""

    time: float
    pod: str
    outcome: str
    node: str | None = None
    reason: str = ""
    victims: tuple[str, ...] = ()
    attempt: int = 0

    def to_record(self) -> dict[str, Any]:
        record = {"time": self.time, "pod": self.pod, "outcome": self.outcome}
        for name in ("node", "reason", "victims", "attempt"):
            value = getattr(self, name)
            if value:
                record[name] = list(value) if name == "victims" else value
        return record


@attrs.frozen
class Sample:
    """The queue and the cluster at one virtual time."""

    time: float
    active: int
    backoff: int
    unschedulable: int
    gated: int
    running: int
    cpu: float
    memory: float


@attrs.frozen(eq=False)
class SimulationResult:
    """The decisions in time order, the samples, the final cluster and where time went."""

    decisions: tuple[Decision, ...]
    samples: tuple[Sample, ...]
    state: ClusterState
    created: Mapping[str, float]
    pending: tuple[Pod, ...]
    wall_seconds: float
    queue_seconds: float

    def summary(self) -> dict[str, Any]:
        """Pods created and scheduled, p50/p99 virtual time to schedule, preemptions,
        utilisation and the wall time (with the queue's share)."""
        first_bound: dict[str, float] = {}
        for d in self.decisions:
            if d.outcome == BOUND and d.pod not in first_bound:
                first_bound[d.pod] = d.time - self.created.get(d.pod, d.time)
        waits = np.array(sorted(first_bound.values()), dtype=np.float64)
        count = lambda outcome: sum(d.outcome == outcome for d in self.decisions)  # noqa: E731
        quantile = (lambda q: float(np.quantile(waits, q, method="inverted_cdf"))  # noqa: E731
                    if len(waits) else None)
        return {
            "pods_created": len(self.created),
            "pods_scheduled": len(first_bound),
            "pods_pending_at_end": len(self.pending),
            "scheduling_attempts": count(BOUND) + count(UNSCHEDULABLE),
            "unschedulable_attempts": count(UNSCHEDULABLE),
            "preemptions": count(PREEMPTING),
            "victims": count(PREEMPTED),
            "time_to_schedule_p50": quantile(0.5),
            "time_to_schedule_p99": quantile(0.99),
            "cpu_utilisation_mean": _mean(s.cpu for s in self.samples),
            "cpu_utilisation_max": max((s.cpu for s in self.samples), default=None),
            "memory_utilisation_mean": _mean(s.memory for s in self.samples),
            "memory_utilisation_max": max((s.memory for s in self.samples), default=None),
            "virtual_seconds": self.samples[-1].time if self.samples else 0.0,
            "wall_seconds": round(self.wall_seconds, 3),
            "queue_share": round(self.queue_seconds / self.wall_seconds, 4)
            if self.wall_seconds else 0.0,
        }

    def event_log(self) -> Iterable[dict[str, Any]]:
        """The decisions as JSON-ready records, in time order."""
        return (d.to_record() for d in self.decisions)


class _Placed:
    """The pod as bound, made on first call (most preempting attempts bind nothing): started
    now, its nomination done with."""

    __slots__ = ("pod", "start_time", "_made")

    def __init__(self, pod: Pod, start_time: float) -> None:
        self.pod, self.start_time, self._made = pod, start_time, None

    def __call__(self) -> Pod:
        if self._made is None:
            self._made = self.pod.with_status(self.start_time, "")
        return self._made


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector during a run. A run allocates millions of
    short-lived objects that reference counting frees; the collector would only traverse them
    (and the cluster's) again and again. It resumes as soon as the run ends."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


class WaitingPods:
    """Pods held at Permit (``framework.WaitingPod``): plugins allow or reject them through
    ``cycle.data["waiting_pods"]``."""

    def __init__(self, simulator: Simulator) -> None:
        self._simulator = simulator

    def keys(self) -> list[str]:
        return list(self._simulator._waiting)

    def pod(self, key: str) -> Pod:
        return self._simulator._waiting[key].cycle.pod

    def allow(self, key: str) -> None:
        """``WaitingPod.Allow``: the pod goes on to bind (at the current virtual time)."""
        self._simulator._allowed.append(key)

    def reject(self, key: str, message: str, plugin: str = "") -> None:
        """``WaitingPod.Reject``: the pod is unreserved and goes back to the queue."""
        self._simulator._rejected.append((key, message, plugin))


@attrs.define
class _Waiting:
    info: QueuedPodInfo
    framework: Framework
    cycle: Cycle
    node: str
    #: Permit plugins still to allow the pod, each with its deadline.
    deadlines: dict[str, float] = attrs.field(factory=dict)

    @property
    def deadline(self) -> float:
        return min(self.deadlines.values(), default=float("inf"))


def _finite(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value):
        raise ArgumentError(f"Simulator: {field}: must be a finite number, got {value!r}")
    return float(value)


def _events(events: Iterable[Any]) -> list[Event]:
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
            from ksched.timeline import event_from_record

            out[i] = event_from_record(event, i)
    return out


def _check_timeline(events: Sequence[Event], cluster: ClusterState) -> None:
    """Refuse what the API server would refuse for certain, in time order: creating a pod
    that exists (and cannot have finished), updating or deleting one that was never created
    or was deleted, adding a node that exists, removing or cordoning one that does not."""
    #: Pod key -> whether it may be gone by then (it was created with a duration).
    pods = dict.fromkeys((p.key for p in cluster.pods), False)
    nodes = set(cluster.node_names)
    for i in sorted(range(len(events)), key=lambda i: events[i].time):
        event = events[i]
        kind = event.kind
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


class Simulator:
    """kube-scheduler's loop over a timeline, on a virtual clock.

    Parameters
    ----------
    cluster : the cluster at time 0 (never modified).
    profile : a :class:`Profile` or a :class:`~ksched.config.SchedulerConfig` (its backoff
        settings included); default: the default profile.
    pdbs : PodDisruptionBudgets (preemption respects them; their status is recomputed as
        pods go, with ``replicas`` giving each controller's ``spec.replicas``).
    priority_classes : PriorityClasses; created pods without ``spec.priority`` are admitted
        with them (the Priority admission plugin).
    seed : seeds the random tie-break (``tie_break="random"``) and preemption's offset.
    start_time : the POSIX time of virtual time 0 (pods' ``status.startTime``).
    sample_every : virtual seconds between queue-length and utilisation samples.
    """

    def __init__(self, cluster: ClusterState, *, profile: Any = None, pdbs: Sequence[Any] = (),
                 replicas: Mapping[tuple[str, str, str], int] | None = None,
                 priority_classes: Sequence[Any] = (),
                 seed: int | None = 0, tie_break: str = "round-robin",
                 percentage_of_nodes_to_score: int | None = None, fast_path: bool = True,
                 start_time: float = 0.0, sample_every: float = 60.0) -> None:
        profile, seed = check_profile(profile), check_seed(seed)
        tie_break = check_tie_break(tie_break)
        percentage_of_nodes_to_score = check_percentage(percentage_of_nodes_to_score)
        self.cluster = as_cluster(cluster)
        self.config = profile if hasattr(profile, "profiles") else None
        profiles = self.config.profiles if self.config else [profile or default_profile()]
        registry = self.config.registry if self.config else None
        self.frameworks = {p.scheduler_name: Framework(p, registry) for p in profiles}
        if percentage_of_nodes_to_score is None:
            percentage_of_nodes_to_score = (self.config.percentage_of_nodes_to_score
                                            if self.config else 0)
        self.percentage = percentage_of_nodes_to_score or 0
        self.pdbs = list(pdbs)
        self.priority_classes = tuple(priority_classes)
        self.replicas = dict(replicas or {})
        self.tie_breaker = TieBreaker(tie_break, seed)
        self.rng = np.random.default_rng(seed)
        self.use_fast_path = check_flag(fast_path, "fast_path")
        self.start_time = _finite(start_time, "start_time")
        self.sample_every = as_seconds(sample_every, "Simulator", "sample_every", positive=True,
                                       argument=True)

    # ------------------------------------------------------------------ running

    def run(self, events: Iterable[Event], *, until: float | None = None,
            progress: Callable[[int], None] | None = None) -> SimulationResult:
        """Play ``events`` (any order; equal times keep their order) until virtual time
        ``until`` (the clock then stands at ``until``), or until the timeline is over and no
        pod waits at Permit: after that nothing changes, so pods still pending would only fail
        again.

        ``events`` are :class:`Event` records or their dicts as a timeline file has them. A
        timeline the API server would certainly refuse part of is refused before the run:
        creating a pod that exists (and cannot have finished yet), updating or deleting one
        never created or already deleted, adding a node that exists, removing or cordoning one
        that does not. A create for a pod whose earlier incarnation may still run (it was
        created with a duration) is decided at its time: recorded as ``ignored`` with the API
        server's ``pods "NAME" already exists`` if the pod is still there."""
        if until is not None:
            until = as_seconds(until, "Simulator.run", "until", argument=True)
        events, progress = _events(events), check_progress(progress)
        _check_timeline(events, self.cluster)
        with _collector_paused():
            return self._run(events, until, progress)

    def _run(self, events: list[Event], until: float | None,
             progress: Callable[[int], None] | None) -> SimulationResult:
        started = wallclock.perf_counter()
        self._reset(events)
        while True:
            self._drain(progress)
            self._sample()
            if not self._timeline and not self._waiting:
                break  # nothing can change any more: retrying the pods left changes nothing
            upcoming = [t for t in (self._timeline[0][0] if self._timeline else None,
                                    self._timed(self.queue.next_event_time),
                                    min((w.deadline for w in self._waiting.values()),
                                        default=None)) if t is not None]
            next_time = max(min(upcoming), self.now)
            if until is not None and next_time > until:
                self.now = until  # the clock ran to ``until``; nothing happened meanwhile
                break
            self.now = next_time
            self._timed(self.queue.advance, self.now)
            while self._timeline and self._timeline[0][0] <= self.now:
                self._apply(heapq.heappop(self._timeline)[2])
            self._expire_permits()
        self._sample(force=True)
        self.assumer.sync()
        pending = tuple(pod for pod, _ in self.queue.pending_pods())
        return SimulationResult(tuple(self._decisions), tuple(self._samples),
                                self.assumer.frozen(), dict(self._created), pending,
                                wallclock.perf_counter() - started, self._queue_seconds)

    def _reset(self, events: list[Event]) -> None:
        less = None
        first = next(iter(self.frameworks.values()))
        sorts = first.points["queueSort"]
        if sorts and sorts[0][0] != "PrioritySort":
            less = sorts[0][1].less
        config = self.config
        self.queue = SchedulingQueue(
            initial_backoff=config.pod_initial_backoff_seconds if config else 1.0,
            max_backoff=config.pod_max_backoff_seconds if config else 10.0, less=less)
        self.now = 0.0
        self._seq = itertools.count()
        self._timeline: list[tuple[float, int, Event]] = []
        for event in events:
            self._push(event)
        self._pending_specs = [e.pod for e in events if e.pod is not None]
        self._nodes = list(self.cluster.nodes)
        self._new_assumer(self.cluster)
        self.counters = np.zeros(5, dtype=np.int64)
        self._pods: dict[str, Pod] = {}
        self._created: dict[str, float] = {}
        self._durations: dict[str, float] = {}
        #: When each bound pod with a duration finishes (a stale finish event is ignored).
        self._finish_at: dict[str, float] = {}
        self._waiting: dict[str, _Waiting] = {}
        self._allowed: list[str] = []
        self._rejected: list[tuple[str, str, str]] = []
        self._decisions: list[Decision] = []
        self._samples: list[Sample] = []
        self._next_sample = 0.0
        self._queue_seconds = 0.0
        self.waiting_pods = WaitingPods(self)

    def _new_assumer(self, state: ClusterState) -> None:
        self.assumer = Assumer(state, self._pending_specs)
        self.node_version = np.zeros(state.num_nodes, dtype=np.int64)
        self.fast_paths: dict[int, FastPath | None] = {}
        self._simple_classes: dict[tuple[int, int], bool] = {}
        #: Per framework, the compiled failing cycle and retry; per pod key, its class (a
        #: nominated pod's spec differs from its class's only by the nomination).
        self._fast_preemption: dict[int, FastPreemption] = {}
        self._pod_classes: dict[str, int | None] = {}
        self._nominated_index: NominatedPods | None = None

    def _push(self, event: Event) -> None:
        heapq.heappush(self._timeline, (float(event.time), next(self._seq), event))

    def _timed(self, call: Callable[..., Any], *args: Any) -> Any:
        began = wallclock.perf_counter()
        try:
            return call(*args)
        finally:
            self._queue_seconds += wallclock.perf_counter() - began

    def _record(self, pod: str, outcome: str, **fields: Any) -> None:
        self._decisions.append(Decision(self.now, pod, outcome, **fields))

    def _sample(self, force: bool = False) -> None:
        if not force and self.now < self._next_sample:
            return
        state = self.assumer.state
        lengths = self.queue.lengths()
        used = []
        for name in (CPU, MEMORY):
            column = state.resource_column(name)
            total = int(state.allocatable[:, column].sum()) if column >= 0 else 0
            used.append(float(state.requested[:, column].sum()) / total if total else 0.0)
        self._samples.append(Sample(self.now, lengths["active"], lengths["backoff"],
                                    lengths["unschedulable"], lengths["gated"],
                                    self.assumer.num_bound,
                                    used[0], used[1]))
        if self._next_sample <= self.now:  # the next multiple of sample_every after now
            every = self.sample_every
            self._next_sample += math.floor((self.now - self._next_sample) / every) * every
            while self._next_sample <= self.now:
                self._next_sample += every

    # ------------------------------------------------------------------ timeline events

    def _apply(self, event: Event) -> None:
        if event.kind == "create":
            self._create(event.pod, event.duration)
        elif event.kind == "update":
            self._update(event.pod)
        elif event.kind == "delete":
            self._delete(event.name, DELETED)
        elif event.kind == "finish":
            if self._finish_at.get(event.name, event.time) == event.time:
                self._delete(event.name, FINISHED)
        elif event.kind == "node-add":
            self._nodes.append(event.node)
            self._rebuild(NODE_ADD)
        else:
            self._change_node(event.kind, event.name)

    def _create(self, pod: Pod, duration: float | None) -> None:
        pod = admit_priorities([pod], self.priority_classes)[0]
        key = pod.key
        if key in self._pods:  # it was created with a duration that has not run out
            self._record(key, IGNORED, reason=f'pods "{pod.name}" already exists')
            return
        self._created.setdefault(key, self.now)
        if duration is not None:
            self._durations[key] = float(duration)
        elif key in self._durations:  # created again, without the runtime it had before
            del self._durations[key]
        if pod.scheduler_name not in self.frameworks:
            self._record(key, IGNORED, reason=no_profile_reason(pod))
            return
        self._pods[key] = pod
        self._timed(self.queue.add, pod)

    def _update(self, pod: Pod) -> None:
        """A pending pod changed (``Update``); changes to bound pods are not modelled."""
        pod = admit_priorities([pod], self.priority_classes)[0]
        old = self._pods.get(pod.key)
        if old is None or self.assumer.row_of(pod.key) is not None or pod.key in self._waiting:
            return
        if old.nominated_node_name and not pod.nominated_node_name:
            pod = attrs.evolve(pod, nominated_node_name=old.nominated_node_name)
        self._pods[pod.key] = pod
        self._pod_classes.pop(pod.key, None)
        self._timed(self.queue.update, old, pod)

    def _delete(self, key: str, outcome: str) -> None:
        """A pod goes away: off its node (freeing it), out of the queue, or out of Permit."""
        pod = self._pods.pop(key, None)
        if pod is None and self.assumer.row_of(key) is None:
            return  # gone already (preempted, evicted, finished)
        self._finish_at.pop(key, None)
        self._pod_classes.pop(key, None)
        if key in self._waiting:
            self._unreserve(self._waiting.pop(key), forget=True)
        if self.assumer.row_of(key) is not None:
            node = self._remove_bound([key])[0].node_name
            self._record(key, outcome, node=node)
            self._timed(self.queue.move_all_to_active_or_backoff, ASSIGNED_POD_DELETE)
        else:
            self._timed(self.queue.delete, pod)
            self._record(key, outcome)

    def _remove_bound(self, keys: Sequence[str]) -> list[Pod]:
        removed = self.assumer.remove(keys)
        for pod in removed:
            self.node_version[self.assumer.state.node_index[pod.node_name]] += 1
        for fast in filter(None, self.fast_paths.values()):
            fast.fail_epoch[:] = -1
        if removed and self.pdbs:
            self._update_pdbs()
        return removed

    def _update_pdbs(self) -> None:
        self.assumer.sync()
        pods = list(self.assumer.state.pods)
        self.pdbs = [pdb_status(pdb, pods, self.replicas) for pdb in self.pdbs]

    def _change_node(self, kind: str, name: str) -> None:
        index = next((i for i, n in enumerate(self._nodes) if n.name == name), None)
        if index is None:
            return
        if kind == "node-remove":
            self.assumer.sync()
            for pod in [p for p in self.assumer.state.pods if p.node_name == name]:
                self._delete(pod.key, EVICTED)
            del self._nodes[index]
            self._rebuild(None)
            return
        self._nodes[index] = attrs.evolve(self._nodes[index], unschedulable=kind == "cordon")
        self._rebuild(NODE_UPDATE)

    def _rebuild(self, event: str | None) -> None:
        """New columns for a changed node list; the bound pods stay where they are."""
        self.assumer.sync()
        old = self.assumer.state
        state = ClusterState.from_records(self._nodes, list(old.pods),
                                          namespaces=old.namespaces, objects=old.objects)
        self._new_assumer(state)
        if event is not None:
            self._timed(self.queue.move_all_to_active_or_backoff, event)

    # ------------------------------------------------------------------ the scheduling loop

    def _drain(self, progress: Callable[[int], None] | None) -> None:
        while True:
            self._settle_permits()
            info = self._timed(self.queue.pop)
            if info is None:
                return
            pod = self._pods.get(info.key)
            if pod is None or self.assumer.row_of(info.key) is not None:
                self._timed(self.queue.done, info.key)
                continue
            info.pod = pod
            self._schedule(info, pod)
            if progress is not None:
                progress(1)

    def _nominations(self) -> NominatedPods:
        """The queue's nominated pods per node row, as an index brought up to date with the
        nodes whose nominations changed since the last call."""
        queue, state = self.queue, self.assumer.state
        changed = queue.take_nomination_changes()
        index = self._nominated_index
        if index is None or not index.matches(state):
            index = self._nominated_index = NominatedPods(state)
            changed = set(queue.nominated_pods())
        for name in changed:
            row = state.node_index.get(name)
            if row is not None:
                index.set_node(row, queue.nominated_pods_for_node(name))
        return index

    def _schedule(self, info: QueuedPodInfo, pod: Pod) -> None:
        """``ScheduleOne``: find a node; assume and bind, or run PostFilter and requeue."""
        framework = self.frameworks[pod.scheduler_name]
        framework.vectorized = self.use_fast_path
        nominated = self._nominations()
        placed = _Placed(pod, self.start_time + self.now)
        node = self._fast(framework, info.key, pod, placed, nominated)
        if isinstance(node, Failure):
            self._requeue_failed(info, pod, node)
            return
        diagnosis = None
        if node is None:
            try:
                diagnosis = self._framework_cycle(framework, pod, placed, nominated)
            except SchedulingError as exc:
                self._record(info.key, UNSCHEDULABLE, reason=str(exc), attempt=info.attempts)
                self._timed(self.queue.add_unschedulable_if_not_present, info,
                            self.queue.scheduling_cycle)
                return
            node = diagnosis.node
        if node is None:
            self._fail(info, framework, pod, diagnosis)
            return
        self._timed(self.queue.delete_nominated, pod)
        self._pods[info.key] = placed()
        self._reserve_and_permit(info, framework, Cycle(self.assumer.state, placed()),
                                 self.assumer.state.node_names[node])

    def _fast(self, framework: Framework, key: str, pod: Pod, placed: Callable[[], Pod],
              nominated: NominatedPods) -> int | Failure | None:
        """The compiled cycle's outcome: the node (assumed), the failure (PostFilter run,
        nothing evicted yet), or ``None``: use the framework."""
        if not self.use_fast_path:
            return None
        fast = self._fast_path(framework)
        if fast is None:
            return None
        c = self._pod_classes.get(key, -1)
        if c == -1:
            c = self._pod_classes[key] = fast.class_of(pod, self.assumer.state)
        if c is None or not self._simple(fast, c):
            return None
        if pod.nominated_node_name:
            return self._retry(framework, c, pod, placed, nominated)
        if not nominated.any_before(pod):
            node = self._loop(framework, fast, c, placed)
            if node is not None:
                return node
        compiled = self._compiled_preemption(framework)
        plan = compiled.plan(c, pod, self.assumer.state)
        if plan is None or self.pdbs:  # the compiled dry run counts no PDB violations
            return None
        failure = compiled.fail(c, plan, pod, self.assumer, nominated, self.rng)
        if failure is not None:
            self.counters[4] += self.assumer.state.num_nodes
        return failure

    def _fast_path(self, framework: Framework) -> FastPath | None:
        key = id(framework)
        if key not in self.fast_paths:
            self.fast_paths[key] = (FastPath(framework, self.assumer.state, self.node_version)
                                    if supports(framework) else None)
        return self.fast_paths[key]

    def _compiled_preemption(self, framework: Framework) -> FastPreemption:
        """The framework's compiled failing cycle and retry, its plans made again whenever
        pods with pod affinity come or go (InterPodAffinity's PreFilter may skip no more)."""
        key = id(framework)
        version = self.assumer.affinity_version
        found = self._fast_preemption.get(key)
        if found is None or found.affinity_version != version:
            found = self._fast_preemption[key] = FastPreemption(framework, self.node_version,
                                                                version)
        return found

    def _loop(self, framework: Framework, fast: FastPath, c: int,
              placed: Callable[[], Pod]) -> int | None:
        """The compiled loop's placement of one pod (assumed), or ``None``: it fits nowhere
        (the start index is left where the walk began, as the framework's cycle will)."""
        classes = np.array([c], dtype=np.int64)
        out_node, out_start = np.zeros(1, np.int64), np.zeros(1, np.int64)
        percentage = framework.profile.percentage_of_nodes_to_score
        self.tie_breaker.reserve(1)
        self.tie_breaker.save(self.counters)
        fast.run(self.assumer.state, classes, 0, self.percentage if percentage is None
                 else percentage, self.tie_breaker.code, self.tie_breaker.draws, self.counters,
                 out_node, out_start)
        self.tie_breaker.load(self.counters)
        if out_node[0] < 0:
            self.counters[0] = out_start[0]
            return None
        self.assumer.record(placed(), int(out_node[0]))
        return int(out_node[0])

    def _retry(self, framework: Framework, c: int, pod: Pod, placed: Callable[[], Pod],
               nominated: NominatedPods) -> int | None:
        """``evaluateNominatedNode`` compiled: the nominated node (assumed) when the pod fits
        there, else ``None`` (the framework runs the whole cycle)."""
        state = self.assumer.state
        compiled = self._compiled_preemption(framework)
        plan = compiled.plan(c, pod, state)
        node = state.node_index.get(pod.nominated_node_name)
        if plan is None or node is None or \
                not compiled.fits_nominated_node(plan, pod, node, state, nominated):
            return None
        self.assumer.add(placed(), node)
        self.node_version[node] += 1
        self.counters[2] += 1
        self.counters[4] += 1
        return node

    def _simple(self, fast: FastPath, c: int) -> bool:
        """Whether a class's cycle counts no pods (no spreading, no pod affinity): then
        departures cannot leave the loop's counters stale."""
        key = (id(fast), c)
        if key not in self._simple_classes:
            t = fast.tables
            self._simple_classes[key] = not (t.spread[c] or t.soft_spread[c] or t.ipa_affinity[c]
                                             or t.ipa_anti[c] or t.ipa_existing[c]
                                             or t.ipa_score[c])
        return self._simple_classes[key]

    def _framework_cycle(self, framework: Framework, pod: Pod, placed: Callable[[], Pod],
                         nominated: Mapping[int, list[Pod]]) -> ScheduleResult:
        self.assumer.sync()
        outcome = framework.schedule_one(
            self.assumer.state, pod, next_start_index=int(self.counters[0]),
            percentage_of_nodes_to_score=self.percentage, tie_breaker=self.tie_breaker,
            nominated=nominated)
        if not outcome.nominated_fast_path:
            self.counters[0] = outcome.next_start_index
        self.counters[4] += len(outcome.evaluated)
        if outcome.node is not None:
            self.assumer.assume(placed(), outcome.node)
            self.counters[2] += 1
            self.node_version[outcome.node] += 1
        return outcome

    # ------------------------------------------------------------------ after the cycle

    def _fail(self, info: QueuedPodInfo, framework: Framework, pod: Pod,
              diagnosis: ScheduleResult) -> None:
        """``handleSchedulingFailure`` after PostFilter."""
        failure = Failure(diagnosis.message, diagnosis.unschedulable_plugins)
        if framework.points["postFilter"] and diagnosis.message != NO_NODES_AVAILABLE:
            handle = Handle(framework, nominated=self._nominations(), pdbs=tuple(self.pdbs),
                            node_pods=self.assumer.rows_on, rng=self.rng)
            cycle = diagnosis.cycle
            if cycle is None or cycle.state is not self.assumer.state or cycle.pod is not pod:
                cycle = Cycle(self.assumer.state, pod)
            result, status = framework.run_post_filter(cycle, diagnosis, handle)
            failure = Failure(with_post_filter(diagnosis.message, status), failure.plugins)
            if result is not None:
                failure = attrs.evolve(failure, nominated_node=result.nominated_node,
                                       victims=tuple(v.key for v in result.victims))
        self._requeue_failed(info, pod, failure)

    def _requeue_failed(self, info: QueuedPodInfo, pod: Pod, failure: Failure) -> None:
        """Evict the victims, nominate, record, and hand the pod back to the queue."""
        node = failure.nominated_node
        if node:
            self._preempt(pod, node, failure.victims, info.attempts)
        if node is not None:
            pod = pod.with_status(pod.start_time, node)
            self._pods[info.key] = info.pod = pod
            self._timed(self.queue.add_nominated, pod, node)
        self._record(info.key, UNSCHEDULABLE, reason=failure.message, attempt=info.attempts)
        info.unschedulable_plugins = failure.plugins
        self._timed(self.queue.add_unschedulable_if_not_present, info,
                    self.queue.scheduling_cycle)

    def _preempt(self, pod: Pod, node: str, victims: Sequence[str], attempt: int) -> None:
        """``prepareCandidate``: evict the victims, clear lower-priority nominations there."""
        self._record(pod.key, PREEMPTING, node=node, victims=tuple(victims), attempt=attempt)
        for key in victims:
            if key in self._waiting:
                self._reject_waiting(key, "preempted", "")
            self._pods.pop(key, None)
            self._finish_at.pop(key, None)
        for victim in self._remove_bound(victims):
            self._record(victim.key, PREEMPTED, node=victim.node_name,
                         reason=f"preempted by {pod.key}")
        self._timed(self.queue.move_all_to_active_or_backoff, ASSIGNED_POD_DELETE)
        for other in self.queue.nominated_pods_for_node(node):
            if other.priority < pod.priority:
                cleared = attrs.evolve(other, nominated_node_name="")
                self._timed(self.queue.delete_nominated, other)
                if other.key in self._pods:
                    self._pods[other.key] = cleared

    def _reserve_and_permit(self, info: QueuedPodInfo, framework: Framework, cycle: Cycle,
                            node: str) -> None:
        status = framework.run_reserve(cycle, node)
        if not status.is_success:
            self._unreserve(_Waiting(info, framework, cycle, node), forget=True,
                            reason=status.message, plugin=status.plugin)
            return
        cycle.data["waiting_pods"] = self.waiting_pods
        status, waits = framework.run_permit(cycle, node)
        if status.code == Code.WAIT:
            self._waiting[info.key] = _Waiting(info, framework, cycle, node, {
                plugin: self.now + timeout for plugin, timeout in waits.items()})
            self._record(info.key, WAITING, node=node, attempt=info.attempts)
        elif not status.is_success:
            self._unreserve(_Waiting(info, framework, cycle, node), forget=True,
                            reason=status.message, plugin=status.plugin)
        else:
            self._bind(info, framework, cycle, node)

    def _bind(self, info: QueuedPodInfo, framework: Framework, cycle: Cycle, node: str) -> None:
        """The binding cycle: PreBind, Bind, PostBind (``bindingCycle``)."""
        self._timed(self.queue.done, info.key)
        status = framework.run_pre_bind(cycle, node)
        if status.is_success:
            status = framework.run_bind(cycle, node)
        if not status.is_success:
            self._unreserve(_Waiting(info, framework, cycle, node), forget=True,
                            reason=status.message or "binding failed", plugin=status.plugin)
            self._timed(self.queue.move_all_to_active_or_backoff, ASSIGNED_POD_DELETE)
            return
        framework.run_post_bind(cycle, node)
        key = info.key
        self._record(key, BOUND, node=node, attempt=info.attempts)
        if key in self._durations:
            self._finish_at[key] = self.now + self._durations[key]
            self._push(Event(self._finish_at[key], "finish", name=key))

    def _unreserve(self, waiting: _Waiting, forget: bool, reason: str = "",
                   plugin: str = "") -> None:
        """Unreserve in reverse order, forget the assumed pod, and requeue it (with backoff,
        as after an error) unless it was deleted."""
        waiting.framework.run_unreserve(waiting.cycle, waiting.node)
        key = waiting.info.key
        if forget and self.assumer.row_of(key) is not None:
            self._remove_bound([key])
        if key not in self._pods:
            self._timed(self.queue.done, key)
            return
        self._pods[key] = waiting.info.pod
        self._record(key, REJECTED, node=waiting.node, reason=reason,
                     attempt=waiting.info.attempts)
        waiting.info.unschedulable_plugins = frozenset({plugin} if plugin else ())
        self._timed(self.queue.add_unschedulable_if_not_present, waiting.info,
                    self.queue.scheduling_cycle)

    # ------------------------------------------------------------------ Permit waits

    def _settle_permits(self) -> None:
        while self._allowed or self._rejected:
            if self._allowed:
                key = self._allowed.pop(0)
                waiting = self._waiting.pop(key, None)
                if waiting is not None:
                    self._bind(waiting.info, waiting.framework, waiting.cycle, waiting.node)
            else:
                self._reject_waiting(*self._rejected.pop(0))

    def _reject_waiting(self, key: str, message: str, plugin: str) -> None:
        waiting = self._waiting.pop(key, None)
        if waiting is not None:
            self._unreserve(waiting, forget=True, reason=message, plugin=plugin)

    def _expire_permits(self) -> None:
        """A waiting pod whose first Permit timeout passed is rejected by that plugin."""
        for key, waiting in list(self._waiting.items()):
            if waiting.deadline <= self.now:
                plugin = min(waiting.deadlines, key=waiting.deadlines.get)
                waited = waiting.deadlines[plugin] - (waiting.cycle.pod.start_time
                                                      - self.start_time)
                self._reject_waiting(key, f"rejected due to timeout after waiting {waited:g}s "
                                          f"at plugin {plugin}", plugin)


__all__ = ["Simulator", "SimulationResult", "Event", "Decision", "Sample", "WaitingPods",
           "EVENT_KINDS"]

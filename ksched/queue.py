"""The scheduling queue of kube-scheduler v1.35.4 on a virtual clock.

Mirrors ``PriorityQueue`` in ``pkg/scheduler/backend/queue/`` (``scheduling_queue.go``,
``active_queue.go``, ``backoff_queue.go``, ``unschedulable_pods.go``, ``nominator.go``) with the
v1.35 feature gates ``SchedulerQueueingHints`` (GA) and ``SchedulerPopFromBackoffQ`` (on by default,
``pop_from_backoff``):

- **activeQ**: a heap ordered by the QueueSort ``less`` (PrioritySort by default).
- **backoffQ**: two heaps ordered by backoff expiry, ``podBackoffQ`` for pods rejected by plugins
  and ``podErrorBackoffQ`` for pods that failed with an error (no rejecting plugin). With
  ``pop_from_backoff`` the expiry is truncated to a 1-second window and pods in the same window are
  ordered by ``less``; when activeQ is empty, :meth:`SchedulingQueue.pop` takes the head of
  ``podBackoffQ`` even though its backoff is not over.
- **unschedulablePods**: a dict; it also holds pods held back by PreEnqueue (here only
  SchedulingGates), flagged ``gated``.
- **in-flight events**: the cluster events received while pods are being scheduled, so that a pod
  that fails after such an event is retried after its backoff instead of parking in
  unschedulablePods.

There are no threads and no wall clock. :meth:`SchedulingQueue.advance` moves the virtual clock and
runs, in time order, the periodic flushes upstream's ``Run`` starts: ``flushBackoffQCompleted``
at every whole second and ``flushUnschedulablePodsLeftover`` every 30 s (both counted from time 0,
at which the queue is taken to start). Flush ticks at or before :attr:`SchedulingQueue.now` have
fired; a tick that would change nothing is skipped, which is invisible from outside.

Pods are identified by ``pod.key`` (``namespace/name``) everywhere. Upstream keys its heaps and
unschedulablePods that way but its in-flight map and nominator by UID; hand-built pods often have no
UID, and a pod's name and namespace cannot change, so one key serves all.

Queueing hints are reduced to one ``hint(info, event) -> bool`` callable per event in place of
the per-plugin ``QueueingHintFn``\\ s (see :meth:`SchedulingQueue.move_all_to_active_or_backoff`).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from ksched.api import Pod

__all__ = [
    "BACKOFF_FLUSH_PERIOD",
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS",
    "FORCE_ACTIVATE",
    "QueuedPodInfo",
    "SCHEDULING_GATES",
    "SchedulingQueue",
    "UNSCHEDULABLE_FLUSH_PERIOD",
    "UNSCHEDULABLE_TIMEOUT",
    "pod_update_events",
    "priority_sort_less",
]

#: ``DefaultPodInitialBackoffDuration`` / ``DefaultPodMaxBackoffDuration`` (seconds).
DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
#: ``DefaultPodMaxInUnschedulablePodsDuration`` (5 min).
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS = 300.0
#: ``backoffQOrderingWindowDuration``: the backoffQ window, also the backoff flush period.
BACKOFF_FLUSH_PERIOD = 1.0
#: The ``flushUnschedulablePodsLeftover`` period (``wait.Until(..., 30*time.Second, ...)``).
UNSCHEDULABLE_FLUSH_PERIOD = 30.0

#: The PreEnqueue plugin modelled here (``plugins/schedulinggates``).
SCHEDULING_GATES = "SchedulingGates"

# Event labels (``pkg/scheduler/framework/events.go``).
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
FORCE_ACTIVATE = "ForceActivate"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"
UNSCHEDULED_POD_ADD = "UnschedulablePodAdd"
UNSCHEDULED_POD_UPDATE = "UnschedulablePodUpdate"
#: Wildcard events (``ClusterEventIsWildCard``) requeue a pod whatever rejected it.
WILDCARD_EVENTS = frozenset({FORCE_ACTIVATE, UNSCHEDULABLE_TIMEOUT})

# Sub-queue names used by pending_pods().
ACTIVE_Q = "activeQ"
BACKOFF_Q = "backoffQ"
UNSCHEDULABLE = "unschedulable"
GATED = "gated"

# queueingStrategy.
_QUEUE_SKIP = 0
_QUEUE_AFTER_BACKOFF = 1
_QUEUE_IMMEDIATELY = 2


@attrs.define(eq=False, on_setattr=attrs.setters.NO_OP)
class QueuedPodInfo:
    """A pod in the queue (``framework.QueuedPodInfo``).

    ``timestamp`` is set when the pod is added (``newQueuedPodInfo``) and refreshed when it comes
    back after a failed attempt (``AddUnschedulableIfNotPresent``); moves between sub-queues keep
    it, as upstream does. PrioritySort breaks priority ties on it, and backoff counts from it.
    Assignments are plain (no converter runs): the queue updates these on every move.
    """

    pod: Pod
    timestamp: float
    initial_attempt_timestamp: float | None = None
    #: Incremented on each pop.
    attempts: int = 0
    #: Failed attempts with rejecting plugins (``UnschedulableCount``): the backoff exponent.
    unschedulable_count: int = 0
    #: Consecutive failures with an error (``ConsecutiveErrorsCount``); overrides the above if > 0.
    consecutive_errors_count: int = 0
    unschedulable_plugins: frozenset[str] = attrs.field(factory=frozenset, converter=frozenset)
    pending_plugins: frozenset[str] = attrs.field(factory=frozenset, converter=frozenset)
    #: Held back by PreEnqueue (``Gated()``: SchedulingGates while the pod has gates).
    gated: bool = False
    #: The pod's ``namespace/name`` (updates of the pod keep it).
    key: str = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self.key = self.pod.key


LessFunc = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
Hint = Callable[[QueuedPodInfo, str], bool]


def priority_sort_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """PrioritySort ``Less`` (``plugins/queuesort/priority_sort.go``)."""
    pa, pb = a.pod.priority or 0, b.pod.priority or 0
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def _priority_sort_key(info: QueuedPodInfo) -> tuple[int, float]:
    return (-(info.pod.priority or 0), info.timestamp)


class _LessKey:
    """Orders heap entries by an arbitrary ``less``; neither less than the other means equal."""

    __slots__ = ("info", "less")

    def __init__(self, info: QueuedPodInfo, less: LessFunc) -> None:
        self.info = info
        self.less = less

    def __lt__(self, other: _LessKey) -> bool:
        return self.less(self.info, other.info)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _LessKey):
            return NotImplemented
        return not self.less(self.info, other.info) and not self.less(other.info, self.info)

    __hash__ = None  # type: ignore[assignment]


class _Heap:
    """``backend/heap.Heap``: a heap of pods keyed by pod key, with lazy deletion.

    Entries are ``(sort_key, seq, pod_key, info)``; ``seq`` is a running counter, so ties pop in
    insertion order. ``_live`` holds the current entry per pod; any other entry is stale.
    """

    def __init__(self, sort_key: Callable[[QueuedPodInfo], Any]) -> None:
        self._sort_key = sort_key
        self._heap: list[tuple[Any, int, str, QueuedPodInfo]] = []
        self._live: dict[str, tuple[Any, int, str, QueuedPodInfo]] = {}
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, key: str) -> bool:
        return key in self._live

    def get(self, key: str) -> QueuedPodInfo | None:
        entry = self._live.get(key)
        return None if entry is None else entry[3]

    def add_or_update(self, info: QueuedPodInfo) -> None:
        entry = (self._sort_key(info), next(self._seq), info.key, info)
        self._live[info.key] = entry
        heapq.heappush(self._heap, entry)
        if len(self._heap) > 2 * len(self._live) + 64:
            self._heap = list(self._live.values())
            heapq.heapify(self._heap)

    def delete(self, key: str) -> QueuedPodInfo | None:
        entry = self._live.pop(key, None)
        return None if entry is None else entry[3]

    def _prune(self) -> None:
        heap, live = self._heap, self._live
        while heap and live.get(heap[0][2]) is not heap[0]:
            heapq.heappop(heap)

    def peek(self) -> QueuedPodInfo | None:
        self._prune()
        return self._heap[0][3] if self._heap else None

    def pop(self) -> QueuedPodInfo | None:
        self._prune()
        if not self._heap:
            return None
        entry = heapq.heappop(self._heap)
        del self._live[entry[2]]
        return entry[3]

    def infos(self) -> list[QueuedPodInfo]:
        """The live pods in pop order."""
        return [e[3] for e in sorted(self._live.values(), key=lambda e: (e[0], e[1]))]


@attrs.frozen
class _ClusterEvent:
    """An entry of ``inFlightEvents``: an event received while some pod was in flight."""

    mark: int
    event: str
    hint: Hint | None
    #: The pod the event is about (ForceActivate, the pod's own update), or None for all.
    target: str | None


def pod_update_events(old: Pod | None, new: Pod) -> list[str]:
    """Event labels of a pod update (``framework.PodSchedulingPropertiesChange``).

    Models the label, scheduling-gate and toleration extractors; a request scale-down and
    generated resource-claim changes fall under the general ``Update``.
    """
    resource = "UnschedulablePod" if not new.node_name else "AssignedPod"
    if old is None:
        return [resource + "Update"]
    actions = []
    if dict(old.labels) != dict(new.labels):
        actions.append("UpdatePodLabel")
    if not getattr(new, "scheduling_gates", ()) and getattr(old, "scheduling_gates", ()):
        actions.append("UpdatePodSchedulingGatesEliminated")
    if len(new.tolerations) != len(old.tolerations):
        actions.append("UpdatePodToleration")
    return [resource + a for a in actions] or [resource + "Update"]


class SchedulingQueue:
    """kube-scheduler's ``PriorityQueue`` on a virtual clock.

    Parameters
    ----------
    initial_backoff, max_backoff : float
        ``podInitialBackoffSeconds`` / ``podMaxBackoffSeconds``; ``max_backoff == 0`` disables
        backoff.
    max_in_unschedulable : float
        ``podMaxInUnschedulablePodsDuration``.
    less : callable, optional
        The QueueSort ``Less(a, b)`` on :class:`QueuedPodInfo`; PrioritySort by default.
    pop_from_backoff : bool
        The ``SchedulerPopFromBackoffQ`` feature gate (on in v1.35).

    Examples
    --------
    >>> from ksched.api import Pod
    >>> q = SchedulingQueue()
    >>> q.add(Pod(name="a"))
    >>> info = q.pop()
    >>> info.unschedulable_plugins = {"NodeResourcesFit"}
    >>> q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    >>> q.lengths()["unschedulable"], q.next_event_time()
    (1, 330.0)
    """

    def __init__(self, *, initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
                 max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
                 max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS,
                 less: LessFunc | None = None, pop_from_backoff: bool = True) -> None:
        if initial_backoff < 0 or max_backoff < 0 or max_in_unschedulable < 0:
            raise ValueError("backoff and unschedulable durations must be >= 0")
        self.initial_backoff = float(initial_backoff)
        self.max_backoff = float(max_backoff)
        self.max_in_unschedulable = float(max_in_unschedulable)
        self.pop_from_backoff = bool(pop_from_backoff)
        #: The virtual clock (seconds); flush ticks at or before it have fired.
        self.now = 0.0
        #: ``SchedulingCycle``: incremented on each pop.
        self.scheduling_cycle = 0

        if less is None or less is priority_sort_less:
            active_key: Callable[[QueuedPodInfo], Any] = _priority_sort_key
        else:
            def active_key(info: QueuedPodInfo) -> Any:
                return _LessKey(info, less)
        self._less = less or priority_sort_less

        def backoff_key(info: QueuedPodInfo) -> Any:
            # lessBackoffCompletedWithPriority / lessBackoffCompleted
            if self.pop_from_backoff:
                return (self.backoff_expiry(info), active_key(info))
            return (self.backoff_expiry(info),)

        self._active = _Heap(active_key)
        self._backoff = _Heap(backoff_key)
        self._error_backoff = _Heap(lambda info: (self.backoff_expiry(info),))
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._in_flight: dict[str, int] = {}
        self._events: deque[_ClusterEvent] = deque()
        self._marks = itertools.count()
        self._nominated_node: dict[str, str] = {}
        self._nominated: dict[str, list[Pod]] = {}
        #: Nodes whose nominated pods changed since :meth:`take_nomination_changes`.
        self._nomination_changes: set[str] = set()

    # ------------------------------------------------------------------ backoff

    def backoff_duration(self, attempts: int) -> float:
        """``calculateBackoffDuration``: ``initial * 2**(attempts-1)`` capped at max; 0 for 0.

        ``attempts`` is the pod's unschedulable (or consecutive error) count.
        """
        if attempts <= 0:
            return 0.0
        shift = attempts - 1
        if self.initial_backoff > math.ldexp(self.max_backoff, -shift):
            return self.max_backoff
        return math.ldexp(self.initial_backoff, shift)

    def _align(self, t: float) -> float:
        """``alignToWindow``: truncate to the 1 s window when ``pop_from_backoff``."""
        if not self.pop_from_backoff:
            return t
        return math.floor(t / BACKOFF_FLUSH_PERIOD) * BACKOFF_FLUSH_PERIOD

    def backoff_expiry(self, info: QueuedPodInfo) -> float:
        """``getBackoffTime``: ``align(timestamp + backoff_duration(count))``.

        ``-inf`` (Go's zero time) when backoff is disabled or the pod has not failed yet. The pod
        is backing off while ``expiry >= align(now)``: with the window, a pod whose expiry falls in
        the current second waits for the next one.
        """
        if self.max_backoff == 0:
            return -math.inf
        count = info.consecutive_errors_count or info.unschedulable_count
        if count == 0:
            return -math.inf
        return self._align(info.timestamp + self.backoff_duration(count))

    def _is_backing_off(self, info: QueuedPodInfo) -> bool:
        """``isPodBackingoff``."""
        return not self.backoff_expiry(info) < self._align(self.now)

    # ------------------------------------------------------------------ clock

    def advance(self, now: float) -> None:
        """Move the clock to ``now``, firing the flushes due on the way (``Run``'s loops).

        ``flushBackoffQCompleted`` runs at every whole second and ``flushUnschedulablePodsLeftover``
        at every multiple of 30 s; when both are due at once the backoff flush runs first.
        """
        if not now >= self.now or math.isinf(now):
            raise ValueError(f"cannot move the clock from {self.now} to {now}")
        while True:
            t_backoff = self._next_backoff_flush()
            t_leftover = self._next_leftover_flush(for_poppable=False)
            t = min(t_backoff, t_leftover)
            if t > now:
                break
            self.now = t
            if t_backoff == t:
                self._flush_backoff_completed()
            if t_leftover == t:
                self._flush_unschedulable_leftover()
        self.now = now

    def _next_tick(self, period: float) -> float:
        return (math.floor(self.now / period) + 1) * period

    def _next_backoff_flush(self) -> float:
        """The first backoff tick after ``now`` that moves a pod (inf if none)."""
        first = self._next_tick(BACKOFF_FLUSH_PERIOD)
        best = math.inf
        for heap in (self._backoff, self._error_backoff):
            info = heap.peek()
            if info is None:
                continue
            expiry = self.backoff_expiry(info)
            if expiry == -math.inf:
                return first
            # Done at the first tick t with expiry < align(t) = t: the tick after floor(expiry).
            t = (math.floor(expiry / BACKOFF_FLUSH_PERIOD) + 1) * BACKOFF_FLUSH_PERIOD
            best = min(best, max(first, t))
        return best

    def _next_leftover_flush(self, *, for_poppable: bool) -> float:
        """The first leftover tick after ``now`` that does something (inf if none).

        A gated pod over the age limit is never moved, but its presence makes the flush record an
        ``UnschedulableTimeout`` event for in-flight pods; that counts unless such an event is
        already recorded after the last pop (a second one would change nothing).
        """
        with_gated = (not for_poppable and bool(self._in_flight)
                      and not self._timeout_recorded_since_last_pop())
        stamps = [i.timestamp for i in self._unschedulable.values() if with_gated or not i.gated]
        if not stamps:
            return math.inf
        oldest = min(stamps)
        period = UNSCHEDULABLE_FLUSH_PERIOD
        first = self._next_tick(period)
        t = max(first, (math.floor((oldest + self.max_in_unschedulable) / period) + 1) * period)
        # Use the exact upstream predicate (now - timestamp > max) to settle float rounding.
        while not t - oldest > self.max_in_unschedulable:
            t += period
        while t - period >= first and t - period - oldest > self.max_in_unschedulable:
            t -= period
        return t

    def _timeout_recorded_since_last_pop(self) -> bool:
        if not self._events:
            return False
        last = self._events[-1]
        return (last.event == UNSCHEDULABLE_TIMEOUT and last.target is None
                and last.mark > max(self._in_flight.values()))

    def next_event_time(self) -> float | None:
        """The earliest time at which :meth:`pop` can return a pod.

        ``now`` if it can already; otherwise the first flush tick that moves a pod out of backoffQ
        or unschedulablePods; ``None`` when nothing waits (gated pods wait for an update).
        """
        if len(self._active) or (self.pop_from_backoff and len(self._backoff)):
            return self.now
        t = min(self._next_backoff_flush(), self._next_leftover_flush(for_poppable=True))
        return None if t == math.inf else t

    def _flush_backoff_completed(self) -> None:
        """``flushBackoffQCompleted``: pods whose backoff is over go to activeQ."""
        completed = []
        for heap in (self._backoff, self._error_backoff):  # popAllBackoffCompleted
            while (info := heap.peek()) is not None and not self._is_backing_off(info):
                heap.pop()
                completed.append(info)
        for info in completed:
            self._move_to_active(info, BACKOFF_COMPLETE, from_backoff=True)

    def _flush_unschedulable_leftover(self) -> None:
        """``flushUnschedulablePodsLeftover``: pods unschedulable for too long are requeued."""
        stale = [i for i in self._unschedulable.values()
                 if self.now - i.timestamp > self.max_in_unschedulable]
        if stale:
            self._move_pods(stale, UNSCHEDULABLE_TIMEOUT, None)

    # ------------------------------------------------------------------ moves

    def _run_pre_enqueue(self, info: QueuedPodInfo) -> None:
        """``runPreEnqueuePlugins`` with SchedulingGates as the only PreEnqueue plugin."""
        if getattr(info.pod, "scheduling_gates", ()):
            info.unschedulable_plugins = info.unschedulable_plugins | {SCHEDULING_GATES}
            info.gated = True
        else:
            info.gated = False

    def _in_any_queue(self, key: str) -> bool:
        return (key in self._active or key in self._backoff or key in self._error_backoff
                or key in self._unschedulable)

    def _move_to_active(self, info: QueuedPodInfo, event: str, from_backoff: bool) -> bool:
        """``moveToActiveQ``: PreEnqueue, then activeQ (or unschedulablePods if gated)."""
        if not (self.pop_from_backoff and from_backoff):
            self._run_pre_enqueue(info)
        key = info.key
        if info.gated:
            if not self._in_any_queue(key):
                self._unschedulable[key] = info
            return False
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self.now
        self._unschedulable.pop(key, None)
        self._backoff_delete(key)
        self._active.add_or_update(info)
        if event in (UNSCHEDULED_POD_ADD, UNSCHEDULED_POD_UPDATE):
            self._nominate(info.pod, None)
        return True

    def _move_to_backoff(self, info: QueuedPodInfo, event: str) -> bool:
        """``moveToBackoffQ``: PreEnqueue runs on entry when ``pop_from_backoff``."""
        key = info.key
        if self.pop_from_backoff:
            self._run_pre_enqueue(info)
            if info.gated:
                self._unschedulable.setdefault(key, info)
                return False
        self._unschedulable.pop(key, None)
        # backoffQueue.add: no rejecting plugin means an error -> podErrorBackoffQ.
        if not info.unschedulable_plugins and not info.pending_plugins:
            self._error_backoff.add_or_update(info)
            self._backoff.delete(key)
        else:
            self._backoff.add_or_update(info)
            self._error_backoff.delete(key)
        return True

    def _backoff_delete(self, key: str) -> QueuedPodInfo | None:
        info = self._backoff.delete(key)
        return info if info is not None else self._error_backoff.delete(key)

    def _requeue(self, info: QueuedPodInfo, strategy: int, event: str) -> str:
        """``requeuePodWithQueueingStrategy``; returns the sub-queue the pod went to."""
        if strategy == _QUEUE_SKIP:
            self._unschedulable[info.key] = info
            return UNSCHEDULABLE
        if strategy == _QUEUE_AFTER_BACKOFF and self._is_backing_off(info):
            return BACKOFF_Q if self._move_to_backoff(info, event) else UNSCHEDULABLE
        return ACTIVE_Q if self._move_to_active(info, event, False) else UNSCHEDULABLE

    def _worth_requeuing(self, info: QueuedPodInfo, event: str, hint: Hint | None,
                         target: str | None) -> int:
        """``isPodWorthRequeuing`` with one hint for all rejecting plugins.

        No rejecting plugin, or a wildcard event, requeues after backoff. An event about one pod
        (ForceActivate, a pod's own update) skips every other pod, as the in-tree hints for pod
        updates do. Otherwise ``hint(info, event)`` (default true) decides; a Queue for a pod with
        Pending plugins is taken as coming from them (queueImmediately).
        """
        if not info.unschedulable_plugins and not info.pending_plugins:
            return _QUEUE_AFTER_BACKOFF
        if target is not None and target != info.key:
            return _QUEUE_SKIP
        if event in WILDCARD_EVENTS:
            return _QUEUE_AFTER_BACKOFF
        if hint is not None and not hint(info, event):
            return _QUEUE_SKIP
        return _QUEUE_IMMEDIATELY if info.pending_plugins else _QUEUE_AFTER_BACKOFF

    def _move_pods(self, infos: Iterable[QueuedPodInfo], event: str, hint: Hint | None) -> None:
        """``movePodsToActiveOrBackoffQueue``; then records the event for in-flight pods."""
        for info in infos:
            if info.gated:
                # The gating plugin (SchedulingGates) registers only its pod-update event.
                continue
            strategy = self._worth_requeuing(info, event, hint, None)
            if strategy == _QUEUE_SKIP:
                continue
            self._unschedulable.pop(info.key, None)
            self._requeue(info, strategy, event)
        self._record_event(event, hint, None)

    # ------------------------------------------------------------------ in-flight bookkeeping

    def _record_event(self, event: str, hint: Hint | None, target: str | None) -> None:
        """``addEventIfAnyInFlight`` (``target`` None) / ``addEventsIfPodInFlight``."""
        if self._in_flight if target is None else target in self._in_flight:
            self._events.append(_ClusterEvent(next(self._marks), event, hint, target))

    def _hint_for_in_flight_pod(self, info: QueuedPodInfo) -> int:
        """``determineSchedulingHintForInFlightPod``: the events seen since the pod's pop."""
        if not info.unschedulable_plugins and not info.pending_plugins:
            return _QUEUE_AFTER_BACKOFF
        mark = self._in_flight.get(info.key)
        if mark is None:
            return _QUEUE_AFTER_BACKOFF  # upstream logs "in flight Pod isn't found"
        strategy = _QUEUE_SKIP
        for ev in self._events:
            if ev.mark < mark:
                continue
            s = self._worth_requeuing(info, ev.event, ev.hint, ev.target)
            if s == _QUEUE_IMMEDIATELY:
                return s
            if s == _QUEUE_AFTER_BACKOFF:
                strategy = s
                if not info.pending_plugins:
                    return s
        return strategy

    def done(self, pod: Pod | str) -> None:
        """``Done``: the pod's scheduling (and binding) is over; drop events nobody needs."""
        key = pod if isinstance(pod, str) else pod.key
        if self._in_flight.pop(key, None) is None:
            return
        oldest = min(self._in_flight.values(), default=math.inf)
        while self._events and self._events[0].mark < oldest:
            self._events.popleft()

    def in_flight_pods(self) -> list[str]:
        """``InFlightPods``: keys of the pods popped and not yet done, in pop order."""
        return sorted(self._in_flight, key=self._in_flight.__getitem__)

    # ------------------------------------------------------------------ public operations

    def add(self, pod: Pod) -> None:
        """``Add``: a new pending pod goes to activeQ, or is held if gated."""
        self._move_to_active(QueuedPodInfo(pod=pod, timestamp=self.now), UNSCHEDULED_POD_ADD,
                             False)

    def activate(self, pods: Iterable[Pod] | Mapping[str, Pod]) -> None:
        """``Activate``: move pods from backoffQ / unschedulablePods to activeQ.

        Gated pods stay gated and unknown pods are ignored; a pod in flight gets a ForceActivate
        event, so it is retried after backoff if its attempt fails.
        """
        if isinstance(pods, Mapping):
            pods = pods.values()
        for pod in pods:
            key = pod.key
            info = self._unschedulable.get(key)
            from_backoff = False
            if info is None:
                info = self._backoff_delete(key)
                from_backoff = True
            if info is not None and self._move_to_active(info, FORCE_ACTIVATE, from_backoff):
                continue
            self._record_event(FORCE_ACTIVATE, None, key)

    def update(self, old: Pod | None, new: Pod, hint: Hint | None = None) -> None:
        """``Update``: a pending pod changed.

        In flight: only the pod-update events are recorded. In activeQ/backoffQ: replaced in place
        (re-sorted, same timestamp). In unschedulablePods (gated included): each event of
        :func:`pod_update_events` is offered to ``hint`` (default: the pod changed, ``old !=
        new``) until the pod moves; a gated pod whose gates are gone goes to activeQ. Unknown pods
        are added.
        """
        key = new.key
        if hint is None:
            changed = old is None or old != new

            def hint(info: QueuedPodInfo, event: str) -> bool:
                return changed

        events = pod_update_events(old, new)
        if key in self._in_flight:
            for event in events:
                self._record_event(event, hint, key)
            return
        if old is not None:
            for heap in (self._active, self._backoff, self._error_backoff):
                info = heap.get(old.key)
                if info is not None:
                    info.pod = new
                    heap.add_or_update(info)
                    self._update_nominated(old, new)
                    return
        info = self._unschedulable.get(key)
        if info is not None:
            info.pod = new
            self._update_nominated(old, new)
            for event in events:
                strategy = self._worth_requeuing(info, event, hint, key)
                if self._requeue(info, strategy, event) != UNSCHEDULABLE:
                    break
            return
        self._move_to_active(QueuedPodInfo(pod=new, timestamp=self.now), UNSCHEDULED_POD_UPDATE,
                             False)

    def delete(self, pod: Pod) -> None:
        """``Delete``: remove the pod from whichever sub-queue holds it, and its nomination."""
        self.delete_nominated(pod)
        key = pod.key
        if self._active.delete(key) is None and self._backoff_delete(key) is None:
            self._unschedulable.pop(key, None)

    def pop(self) -> QueuedPodInfo | None:
        """``Pop``: the head of activeQ, else (``pop_from_backoff``) the head of podBackoffQ.

        Increments ``attempts`` and ``scheduling_cycle``, marks the pod in flight and clears its
        rejecting plugins. Returns None instead of blocking when nothing can be popped.
        """
        while True:
            info = self._active.pop()
            if info is None and self.pop_from_backoff:
                info = self._backoff.pop()
            if info is None:
                return None
            info.attempts += 1
            if info.key in self._in_flight:
                continue  # upstream discards a pod popped twice and pops the next one
            self._in_flight[info.key] = next(self._marks)
            self.scheduling_cycle += 1
            info.unschedulable_plugins = frozenset()
            info.pending_plugins = frozenset()
            info.gated = False
            return info

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo, cycle: int) -> None:
        """``AddUnschedulableIfNotPresent``: requeue a pod after a failed attempt.

        Set ``info.unschedulable_plugins`` / ``pending_plugins`` first. A pod with neither failed
        with an error and goes to backoffQ (activeQ if its backoff is over). Otherwise the events
        received since its pop decide: one worth requeuing sends it to backoffQ/activeQ, none
        leaves it in unschedulablePods. ``cycle`` is accepted for the upstream signature; with
        queueing hints upstream does not use it. Calls :meth:`done`. Raises ValueError if the pod
        is already queued.
        """
        key = info.key
        try:
            if self._in_any_queue(key):
                raise ValueError(f"pod {key} is already present in the scheduling queue")
            if not info.unschedulable_plugins and not info.pending_plugins:
                info.consecutive_errors_count += 1
            else:
                info.unschedulable_count += 1
                info.consecutive_errors_count = 0
            info.timestamp = self.now
            self._requeue(info, self._hint_for_in_flight_pod(info), SCHEDULE_ATTEMPT_FAILURE)
        finally:
            self.done(key)

    def move_all_to_active_or_backoff(self, event: str, hint: Hint | None = None) -> None:
        """``MoveAllToActiveOrBackoffQueue``: requeue the unschedulable pods ``event`` may help.

        For each unschedulable, non-gated pod, ``hint(info, event)`` (default: always true) stands
        for the rejecting plugins' QueueingHintFns; a pod it accepts goes to activeQ if its
        backoff is over, else backoffQ. Wildcard events (``UnschedulableTimeout``,
        ``ForceActivate``) skip the hint. The event (with its hint) is also recorded for the pods in
        flight.
        """
        self._move_pods(list(self._unschedulable.values()), event, hint)

    # ------------------------------------------------------------------ introspection

    def get_pod(self, name: str, namespace: str = "default") -> QueuedPodInfo | None:
        """``GetPod``: the queued info of a pod in any sub-queue."""
        key = f"{namespace}/{name}"
        for heap in (self._backoff, self._error_backoff, self._active):
            info = heap.get(key)
            if info is not None:
                return info
        return self._unschedulable.get(key)

    def pending_pods(self) -> list[tuple[Pod, str]]:
        """``PendingPods``: activeQ and backoffQ in pop order, then unschedulable, then gated."""
        out = [(i.pod, ACTIVE_Q) for i in self._active.infos()]
        out += [(i.pod, BACKOFF_Q) for i in self._backoff.infos() + self._error_backoff.infos()]
        unsched = self._unschedulable.values()
        out += [(i.pod, UNSCHEDULABLE) for i in unsched if not i.gated]
        out += [(i.pod, GATED) for i in unsched if i.gated]
        return out

    def lengths(self) -> dict[str, int]:
        """The number of pods in each sub-queue."""
        gated = sum(1 for i in self._unschedulable.values() if i.gated)
        return {
            "active": len(self._active),
            "backoff": len(self._backoff) + len(self._error_backoff),
            "unschedulable": len(self._unschedulable) - gated,
            "gated": gated,
        }

    # ------------------------------------------------------------------ nominator

    def add_nominated(self, pod: Pod, node: str) -> None:
        """``addNominatedPod`` (ModeOverride): nominate ``pod`` to ``node`` ("" clears)."""
        self._nominate(pod, node)

    def _nominate(self, pod: Pod, node: str | None) -> None:
        """``addNominatedPodUnlocked``; ``node`` None is ModeNoop (the pod's own status)."""
        self.delete_nominated(pod)
        if node is None:
            node = getattr(pod, "nominated_node_name", "")
        if not node:
            return
        self._nominated_node[pod.key] = node
        self._nominated.setdefault(node, []).append(pod)
        self._nomination_changes.add(node)

    def delete_nominated(self, pod: Pod) -> None:
        """``DeleteNominatedPodIfExists``."""
        key = pod.key
        node = self._nominated_node.pop(key, None)
        if node is None:
            return
        self._nomination_changes.add(node)
        pods = [p for p in self._nominated[node] if p.key != key]
        if pods:
            self._nominated[node] = pods
        else:
            del self._nominated[node]

    def _update_nominated(self, old: Pod | None, new: Pod) -> None:
        """``UpdateNominatedPod``: keep an in-memory nomination the update does not mention."""
        old = new if old is None else old
        node = None
        if (not getattr(old, "nominated_node_name", "")
                and not getattr(new, "nominated_node_name", "")):
            node = self._nominated_node.get(old.key)
        self._nominate(new, node)

    def take_nomination_changes(self) -> set[str]:
        """The nodes whose nominated pods changed since the last call (for incremental
        readers of the nominator)."""
        changes, self._nomination_changes = self._nomination_changes, set()
        return changes

    def nominated_pods(self) -> dict[str, list[Pod]]:
        """Every node with nominated pods, and those pods in nomination order."""
        return {node: list(pods) for node, pods in self._nominated.items()}

    def nominated_pods_for_node(self, node: str) -> list[Pod]:
        """``NominatedPodsForNode``: the pods nominated to ``node``, in nomination order."""
        return list(self._nominated.get(node, ()))

"""kube-scheduler's ``PriorityQueue`` on a virtual clock
(``pkg/scheduler/backend/queue/scheduling_queue.go``, ``active_queue.go``,
``unschedulable_pods.go``); see :mod:`ksched.queue` for the model.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ksched.api import Pod
from ksched.queue.backoff_queue import BACKOFF_FLUSH_PERIOD, BackoffQueue
from ksched.queue.events import (
    BACKOFF_COMPLETE,
    FORCE_ACTIVATE,
    SCHEDULE_ATTEMPT_FAILURE,
    SCHEDULING_GATES,
    UNSCHEDULABLE_TIMEOUT,
    UNSCHEDULED_POD_ADD,
    UNSCHEDULED_POD_UPDATE,
    WILDCARD_EVENTS,
    ClusterEvent,
    pod_update_events,
)
from ksched.queue.heap import Heap, LessKey
from ksched.queue.nominator import Nominator, NominatingQueue
from ksched.queue.parked_by_time import ParkedByTime
from ksched.queue.rejected_by import RejectedBy
from ksched.queue.queued_pod_info import (
    Hint,
    LessFunc,
    QueuedPodInfo,
    priority_sort_key,
    priority_sort_less,
)
from ksched.queue.ticks import UNSCHEDULABLE_FLUSH_PERIOD, leftover_tick, next_tick

__all__ = ["ACTIVE_Q", "BACKOFF_Q", "DEFAULT_POD_INITIAL_BACKOFF", "DEFAULT_POD_MAX_BACKOFF",
           "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS", "GATED", "UNSCHEDULABLE",
           "UNSCHEDULABLE_FLUSH_PERIOD", "SchedulingQueue"]

#: ``DefaultPodInitialBackoffDuration`` / ``DefaultPodMaxBackoffDuration`` (seconds).
DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
#: ``DefaultPodMaxInUnschedulablePodsDuration`` (5 min).
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS = 300.0

# Sub-queue names used by pending_pods().
ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE, GATED = "activeQ", "backoffQ", "unschedulable", "gated"

# queueingStrategy.
_QUEUE_SKIP, _QUEUE_AFTER_BACKOFF, _QUEUE_IMMEDIATELY = 0, 1, 2


class SchedulingQueue(NominatingQueue):
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
                 less: LessFunc | None = None, pop_from_backoff: bool = True,
                 pre_enqueue: Callable[[Pod], str | None] | None = None) -> None:
        if initial_backoff < 0 or max_backoff < 0 or max_in_unschedulable < 0:
            raise ValueError("backoff and unschedulable durations must be >= 0")
        self.max_in_unschedulable = float(max_in_unschedulable)
        #: The PreEnqueue plugins other than SchedulingGates (DynamicResources): the name of
        #: the plugin that holds a pod back, or None. Pods it holds are checked again on
        #: every cluster event.
        self.pre_enqueue = pre_enqueue
        #: The virtual clock (seconds); flush ticks at or before it have fired.
        self.now = 0.0
        #: ``SchedulingCycle``: incremented on each pop.
        self.scheduling_cycle = 0

        if less is None or less is priority_sort_less:
            active_key: Callable[[QueuedPodInfo], Any] = priority_sort_key
        else:
            def active_key(info: QueuedPodInfo) -> Any:
                return LessKey(info, less)
        self._less = less or priority_sort_less
        self._active = Heap(active_key)
        self._backoffq = BackoffQueue(float(initial_backoff), float(max_backoff),
                                      bool(pop_from_backoff), active_key)
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._by_time = ParkedByTime()
        self._rejected = RejectedBy()
        #: The keys of the pods PreEnqueue held at some time (those gated now among them).
        self._held: set[str] = set()
        self._in_flight: dict[str, int] = {}
        self._events: deque[ClusterEvent] = deque()
        self._marks = itertools.count()
        self._nominator = Nominator()
        #: ``(now, t)``: no flush fires before ``t``, as :meth:`next_event_time` found with no
        #: pod in flight; :meth:`advance` reuses it. Every operation on the pods clears it.
        self._quiet: tuple[float, float] | None = None

    @property
    def initial_backoff(self) -> float:
        return self._backoffq.initial_backoff

    @property
    def max_backoff(self) -> float:
        return self._backoffq.max_backoff

    @property
    def pop_from_backoff(self) -> bool:
        return self._backoffq.pop_from_backoff

    # ------------------------------------------------------------------ backoff

    def backoff_duration(self, attempts: int) -> float:
        """``calculateBackoffDuration``: ``initial * 2**(attempts-1)`` capped at max; 0 for 0
        (``attempts``: the pod's unschedulable, or consecutive error, count)."""
        return self._backoffq.backoff_duration(attempts)

    def backoff_expiry(self, info: QueuedPodInfo) -> float:
        """``getBackoffTime`` (see :meth:`BackoffQueue.backoff_expiry`): ``-inf`` when backoff
        is disabled or the pod has not failed yet."""
        return self._backoffq.backoff_expiry(info)

    def backing_off(self, timestamp: float, unschedulable: int, now: float) -> bool:
        """``isPodBackingoff`` at ``now`` of a pod requeued at ``timestamp``, ``unschedulable``
        times unschedulable (no error since)."""
        return self._backoffq.backing_off(timestamp, unschedulable, now)

    # ------------------------------------------------------------------ clock

    def advance(self, now: float) -> None:
        """Move the clock to ``now``, firing the flushes due on the way (``Run``'s loops).

        ``flushBackoffQCompleted`` runs at every whole second and ``flushUnschedulablePodsLeftover``
        at every multiple of 30 s; when both are due at once the backoff flush runs first.
        """
        if not now >= self.now or math.isinf(now):
            raise ValueError(f"cannot move the clock from {self.now} to {now}")
        quiet, self._quiet = self._quiet, None
        if quiet is not None and quiet[0] == self.now and now < quiet[1]:
            self.now = now
            return
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

    def _next_backoff_flush(self) -> float:
        """The first backoff tick after ``now`` that moves a pod (inf if none)."""
        if not len(self._backoffq):
            return math.inf
        return self._backoffq.next_flush(next_tick(self.now, BACKOFF_FLUSH_PERIOD))

    def _next_leftover_flush(self, *, for_poppable: bool) -> float:
        """The first leftover tick after ``now`` that does something (inf if none).

        A gated pod over the age limit is never moved, but its presence makes the flush record an
        ``UnschedulableTimeout`` event for in-flight pods; that counts unless such an event is
        already recorded after the last pop (a second one would change nothing).
        """
        if not self._unschedulable:
            return math.inf
        with_gated = (not for_poppable and bool(self._in_flight)
                      and not self._timeout_recorded_since_last_pop())
        oldest = self._oldest(with_gated)
        if oldest is None:
            return math.inf
        return leftover_tick(self.now, oldest, self.max_in_unschedulable,
                             UNSCHEDULABLE_FLUSH_PERIOD)

    def _park(self, info: QueuedPodInfo) -> None:
        """Put ``info`` in unschedulablePods (indexed by rejecting plugin and by timestamp)."""
        self._unschedulable[info.key] = info
        self._rejected.add(info)
        self._by_time.add(info, self._unschedulable)

    def _oldest(self, with_gated: bool) -> float | None:
        """The oldest timestamp in unschedulablePods (``with_gated``: gated pods too)."""
        return self._by_time.oldest(with_gated, self._unschedulable)

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
        if len(self._active) or (self.pop_from_backoff and self._backoffq.has_rejected()):
            return self.now
        t = min(self._next_backoff_flush(), self._next_leftover_flush(for_poppable=True))
        if not self._in_flight:  # then advance's first flush too: no gated pod's timeout counts
            self._quiet = (self.now, t)
        return None if t == math.inf else t

    def _flush_backoff_completed(self) -> None:
        """``flushBackoffQCompleted``: pods whose backoff is over go to activeQ."""
        for info in self._backoffq.pop_completed(self.now):
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
        held = SCHEDULING_GATES if getattr(info.pod, "scheduling_gates", ()) else None
        if held is None and self.pre_enqueue is not None:
            held = self.pre_enqueue(info.pod)
        if held is not None:
            info.unschedulable_plugins = info.unschedulable_plugins | {held}
            info.gated = True
            self._held.add(info.key)
        else:
            info.gated = False

    def _in_any_queue(self, key: str) -> bool:
        return key in self._active or key in self._backoffq or key in self._unschedulable

    def _move_to_active(self, info: QueuedPodInfo, event: str, from_backoff: bool) -> bool:
        """``moveToActiveQ``: PreEnqueue, then activeQ (or unschedulablePods if gated)."""
        if not (self.pop_from_backoff and from_backoff):
            self._run_pre_enqueue(info)
        key = info.key
        if info.gated:
            if not self._in_any_queue(key):
                self._park(info)
            return False
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self.now
        self._unschedulable.pop(key, None)
        self._backoffq.delete(key)
        self._active.add_or_update(info)
        if event in (UNSCHEDULED_POD_ADD, UNSCHEDULED_POD_UPDATE):
            self._nominator.nominate(info.pod, None)
        return True

    def _move_to_backoff(self, info: QueuedPodInfo, event: str) -> bool:
        """``moveToBackoffQ``: PreEnqueue runs on entry when ``pop_from_backoff``."""
        key = info.key
        if self.pop_from_backoff:
            self._run_pre_enqueue(info)
            if info.gated:
                if key not in self._unschedulable:
                    self._park(info)
                return False
        self._unschedulable.pop(key, None)
        self._backoffq.add(info)
        return True

    def _requeue(self, info: QueuedPodInfo, strategy: int, event: str) -> str:
        """``requeuePodWithQueueingStrategy``; returns the sub-queue the pod went to."""
        if strategy == _QUEUE_SKIP:
            self._park(info)
            return UNSCHEDULABLE
        if strategy == _QUEUE_AFTER_BACKOFF and self._backoffq.is_backing_off(info, self.now):
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
                # SchedulingGates registers only its pod-update event; a pod another
                # PreEnqueue plugin holds is checked again.
                if SCHEDULING_GATES not in info.unschedulable_plugins:
                    self._move_to_active(info, event, False)
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
            self._events.append(ClusterEvent(next(self._marks), event, hint, target))

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
        self._quiet = None
        self._move_to_active(QueuedPodInfo(pod=pod, timestamp=self.now), UNSCHEDULED_POD_ADD,
                             False)

    def activate(self, pods: Iterable[Pod] | Mapping[str, Pod]) -> None:
        """``Activate``: move pods from backoffQ / unschedulablePods to activeQ.

        Gated pods stay gated and unknown pods are ignored; a pod in flight gets a ForceActivate
        event, so it is retried after backoff if its attempt fails.
        """
        self._quiet = None
        if isinstance(pods, Mapping):
            pods = pods.values()
        for pod in pods:
            key = pod.key
            info = self._unschedulable.get(key)
            from_backoff = False
            if info is None:
                info = self._backoffq.delete(key)
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
        self._quiet = None
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
            for queue in (self._active, self._backoffq):
                info = queue.get(old.key)
                if info is not None:
                    info.pod = new
                    if queue is self._active:
                        self._active.add_or_update(info)
                    else:
                        self._backoffq.update(info)
                    self._nominator.update(old, new)
                    return
        info = self._unschedulable.get(key)
        if info is not None:
            info.pod = new
            self._nominator.update(old, new)
            for event in events:
                strategy = self._worth_requeuing(info, event, hint, key)
                if self._requeue(info, strategy, event) != UNSCHEDULABLE:
                    break
            return
        self._move_to_active(QueuedPodInfo(pod=new, timestamp=self.now), UNSCHEDULED_POD_UPDATE,
                             False)

    def delete(self, pod: Pod) -> None:
        """``Delete``: remove the pod from whichever sub-queue holds it, and its nomination."""
        self._quiet = None
        self.delete_nominated(pod)
        key = pod.key
        if self._active.delete(key) is None and self._backoffq.delete(key) is None:
            self._unschedulable.pop(key, None)

    def pop(self) -> QueuedPodInfo | None:
        """``Pop``: the head of activeQ, else (``pop_from_backoff``) the head of podBackoffQ.

        Increments ``attempts`` and ``scheduling_cycle``, marks the pod in flight and clears its
        rejecting plugins. Returns None instead of blocking when nothing can be popped.
        """
        self._quiet = None
        while True:
            info = self._active.pop()
            if info is None and self.pop_from_backoff:
                info = self._backoffq.pop()
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

    def parked(self) -> list[QueuedPodInfo] | None:
        """The pods in unschedulablePods, none of them gated, when no other pod is queued, in
        flight or nominated (``[]``: none at all); ``None`` otherwise."""
        if len(self._active) or len(self._backoffq) or self._in_flight or self._nominator:
            return None
        infos = list(self._unschedulable.values())
        return None if any(info.gated for info in infos) else infos

    def retried(self, key: str, times: Sequence[float], plugins: frozenset[str]) -> int:
        """The only :meth:`parked` pod, ``key``, moved at each of ``times`` (ascending: by a
        pod leaving, or a leftover flush due then), popped at once and parked again, rejected
        each time by ``plugins``: the queue as those moves, :meth:`pop` and requeues leave
        it, its clock at the last time. Returns the pod's attempts before the first."""
        parked, n = self.parked(), len(times)
        if parked is None or [i.key for i in parked] != [key] or not plugins \
                or parked[0].initial_attempt_timestamp is None \
                or getattr(parked[0].pod, "scheduling_gates", ()) \
                or self.pre_enqueue is not None and self.pre_enqueue(parked[0].pod):
            raise ValueError(f"pod {key} is not the one parked pod, free to move")
        info, self.now, self._quiet = parked[0], max(self.now, times[-1]), None
        attempts = info.attempts
        info.attempts += n
        info.unschedulable_count += n
        info.consecutive_errors_count = 0
        info.timestamp, info.unschedulable_plugins = times[-1], plugins
        info.pending_plugins = frozenset()
        self.scheduling_cycle += n
        self._marks = itertools.count(next(self._marks) + n)
        self._park(info)
        return attempts

    def passed_through(self, now: float, pods: int) -> None:
        """``pods`` pods were added, popped and done one after another while the queue held
        only :meth:`parked` pods, which they did not move, the clock moving to ``now``: the
        counters as those calls leave them (the queue itself as it was; a flush by ``now``
        that moves a parked pod is refused)."""
        if self.parked() is None:
            raise ValueError("the queue holds pods that are not parked")
        self.advance(now)
        if self.parked() is None:
            raise ValueError(f"a flush by {now} moved a parked pod")
        self._quiet = None
        self.scheduling_cycle += pods
        for _ in range(pods):
            next(self._marks)

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo, cycle: int) -> None:
        """``AddUnschedulableIfNotPresent``: requeue a pod after a failed attempt.

        Set ``info.unschedulable_plugins`` / ``pending_plugins`` first. A pod with neither failed
        with an error and goes to backoffQ (activeQ if its backoff is over). Otherwise the events
        received since its pop decide: one worth requeuing sends it to backoffQ/activeQ, none
        leaves it in unschedulablePods. ``cycle`` is accepted for the upstream signature; with
        queueing hints upstream does not use it. Calls :meth:`done`. Raises ValueError if the pod
        is already queued.
        """
        self._quiet = None
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

    def move_all_to_active_or_backoff(self, event: str, hint: Hint | None = None,
                                      plugins: Iterable[str] | None = None) -> None:
        """``MoveAllToActiveOrBackoffQueue``: requeue the unschedulable pods ``event`` may help.

        For each unschedulable, non-gated pod, ``hint(info, event)`` (default: always true) stands
        for the rejecting plugins' QueueingHintFns; a pod it accepts goes to activeQ if its
        backoff is over, else backoffQ. Wildcard events (``UnschedulableTimeout``,
        ``ForceActivate``) skip the hint. ``plugins``: the only ones registered for ``event``
        (a PreEnqueue plugin never among them); pods none of them rejected are skipped
        (``queueSkip``) unasked, gated pods too. The event (with its hint) is also recorded for
        the pods in flight.
        """
        self._quiet = None
        if plugins is None:
            infos = list(self._unschedulable.values())
        else:
            infos = [i for i in self._rejected.pods(plugins, self._unschedulable) if not i.gated]
        self._move_pods(infos, event, hint)

    # ------------------------------------------------------------------ introspection

    def get_pod(self, name: str, namespace: str = "default") -> QueuedPodInfo | None:
        """``GetPod``: the queued info of a pod in any sub-queue."""
        key = f"{namespace}/{name}"
        for queue in (self._backoffq, self._active):
            info = queue.get(key)
            if info is not None:
                return info
        return self._unschedulable.get(key)

    def pending_pods(self) -> list[tuple[Pod, str]]:
        """``PendingPods``: activeQ and backoffQ in pop order, then unschedulable, then gated."""
        out = [(i.pod, ACTIVE_Q) for i in self._active.infos()]
        out += [(i.pod, BACKOFF_Q) for i in self._backoffq.infos()]
        unsched = self._unschedulable.values()
        out += [(i.pod, UNSCHEDULABLE) for i in unsched if not i.gated]
        out += [(i.pod, GATED) for i in unsched if i.gated]
        return out

    def lengths(self) -> dict[str, int]:
        """The number of pods in each sub-queue."""
        parked = self._unschedulable
        if self._held:
            self._held = {k for k in self._held if k in parked and parked[k].gated}
        gated = len(self._held)
        return {"active": len(self._active), "backoff": len(self._backoffq),
                "unschedulable": len(self._unschedulable) - gated, "gated": gated}

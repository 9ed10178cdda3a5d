"""Tests of ksched.queue against the rules of kube-scheduler v1.35.4's PriorityQueue.

Every expected value follows from ``pkg/scheduler/backend/queue/{scheduling_queue,backoff_queue,
active_queue}.go``; the Go function each test pins is named in its docstring. Times are virtual
seconds; the queue starts at 0, ``flushBackoffQCompleted`` ticks at 1, 2, 3, ... and
``flushUnschedulablePodsLeftover`` at 30, 60, 90, ...
"""

from __future__ import annotations

import math

import pytest

from ksched.api import Pod
from ksched.queue import (
    SCHEDULING_GATES,
    QueuedPodInfo,
    SchedulingQueue,
    pod_update_events,
    priority_sort_less,
)

FIT = "NodeResourcesFit"


def mkpod(name: str, priority: int = 0, gates: tuple[str, ...] = (), **kw) -> Pod:
    return Pod(name=name, priority=priority, scheduling_gates=gates, **kw)


def names(infos) -> list[str]:
    return [i.pod.name for i in infos]


def drain(q: SchedulingQueue) -> list[str]:
    out = []
    while (info := q.pop()) is not None:
        out.append(info.pod.name)
    return out


def fail(q: SchedulingQueue, info: QueuedPodInfo, *plugins: str, pending=()) -> None:
    """The scheduler's failure handler: record the rejecting plugins and requeue."""
    info.unschedulable_plugins = set(plugins)
    info.pending_plugins = set(pending)
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)


def where(q: SchedulingQueue) -> dict[str, str]:
    return {pod.name: sub for pod, sub in q.pending_pods()}


def pop_one(q: SchedulingQueue, name: str) -> QueuedPodInfo:
    info = q.pop()
    assert info is not None and info.pod.name == name
    return info


def failed_at(q: SchedulingQueue, t: float, name: str = "p", *plugins: str) -> QueuedPodInfo:
    """Add a pod at the current time, pop it, move the clock to t and fail it there."""
    q.add(mkpod(name))
    info = pop_one(q, name)
    q.advance(t)
    fail(q, info, *(plugins or (FIT,)))
    return info


# --------------------------------------------------------------------------- PrioritySort


def test_priority_sort_higher_priority_then_earlier_timestamp():
    """PrioritySort Less: higher priority first, then the earlier queue timestamp."""
    q = SchedulingQueue()
    q.add(mkpod("low", 0))
    q.add(mkpod("high-early", 10))
    q.advance(0.5)
    q.add(mkpod("high-late", 10))
    q.add(mkpod("mid", 5))
    q.advance(0.7)
    q.add(mkpod("low-late", 0))
    assert drain(q) == ["high-early", "high-late", "mid", "low", "low-late"]


def test_priority_sort_ties_pop_in_insertion_order():
    """Equal priority and timestamp: our heap keeps insertion order (deterministic)."""
    q = SchedulingQueue()
    for n in ["c", "a", "b"]:
        q.add(mkpod(n))
    assert drain(q) == ["c", "a", "b"]


def test_priority_sort_less_function():
    a = QueuedPodInfo(pod=mkpod("a", 1), timestamp=5.0)
    b = QueuedPodInfo(pod=mkpod("b", 0), timestamp=1.0)
    c = QueuedPodInfo(pod=mkpod("c", 1), timestamp=4.0)
    assert priority_sort_less(a, b) and not priority_sort_less(b, a)
    assert priority_sort_less(c, a) and not priority_sort_less(a, c)
    assert not priority_sort_less(a, a)


def test_custom_less():
    """A custom QueueSort Less orders activeQ (convertLessFn)."""
    q = SchedulingQueue(less=lambda a, b: a.pod.name < b.pod.name)
    for n in ["m", "z", "a"]:
        q.add(mkpod(n, priority=ord(n)))
    assert drain(q) == ["a", "m", "z"]


def test_timestamp_is_refreshed_on_failure_not_on_moves():
    """newQueuedPodInfo / AddUnschedulableIfNotPresent set Timestamp; moveToActiveQ keeps it."""
    q = SchedulingQueue()
    q.add(mkpod("p"))
    info = pop_one(q, "p")
    assert (info.timestamp, info.initial_attempt_timestamp) == (0.0, 0.0)
    q.advance(2.5)
    fail(q, info, FIT)
    assert info.timestamp == 2.5
    q.advance(100.0)
    q.move_all_to_active_or_backoff("NodeAdd")
    assert where(q) == {"p": "activeQ"}
    assert (info.timestamp, info.initial_attempt_timestamp) == (2.5, 0.0)


# --------------------------------------------------------------------------- backoff


def test_backoff_durations_default():
    """calculateBackoffDuration: 1 s doubling per failed attempt, capped at 10 s; 0 for 0."""
    q = SchedulingQueue()
    assert [q.backoff_duration(n) for n in range(0, 7)] == [0, 1, 2, 4, 8, 10, 10]
    assert q.backoff_duration(200) == 10


def test_backoff_durations_custom():
    q = SchedulingQueue(initial_backoff=2, max_backoff=20)
    assert [q.backoff_duration(n) for n in range(1, 7)] == [2, 4, 8, 16, 20, 20]
    q = SchedulingQueue(initial_backoff=3, max_backoff=10)
    assert [q.backoff_duration(n) for n in range(1, 5)] == [3, 6, 10, 10]
    q = SchedulingQueue(initial_backoff=0.5, max_backoff=1)
    assert [q.backoff_duration(n) for n in range(1, 4)] == [0.5, 1, 1]


def test_backoff_expiry_is_aligned_to_the_window():
    """getBackoffTime: Timestamp + duration, truncated to the second with PopFromBackoffQ."""
    info = QueuedPodInfo(pod=mkpod("p"), timestamp=0.3, unschedulable_count=2)
    assert SchedulingQueue().backoff_expiry(info) == 2.0
    assert SchedulingQueue(pop_from_backoff=False).backoff_expiry(info) == 2.3
    # The error count, when non-zero, replaces the unschedulable count.
    info.consecutive_errors_count = 1
    assert SchedulingQueue(pop_from_backoff=False).backoff_expiry(info) == 1.3
    # No failure yet, or backoff disabled: Go's zero time.
    fresh = QueuedPodInfo(pod=mkpod("q"), timestamp=7.0)
    assert SchedulingQueue().backoff_expiry(fresh) == -math.inf
    assert SchedulingQueue(max_backoff=0).backoff_expiry(info) == -math.inf


def test_backoff_window_keeps_the_current_second_backing_off():
    """isPodBackingoff: !expiry.Before(alignToWindow(now)).

    Failed at 0.3 with count 1: expiry floor(1.3) = 1 with the window, so at 1.7 the pod is still
    backing off (window [1, 2)); without the window the expiry is 1.3 < 1.7 and it is not.
    """
    for pop_from_backoff, expected in [(True, "backoffQ"), (False, "activeQ")]:
        q = SchedulingQueue(pop_from_backoff=pop_from_backoff)
        failed_at(q, 0.3)
        assert where(q) == {"p": "unschedulable"}
        q.advance(1.7)
        q.move_all_to_active_or_backoff("NodeAdd")
        assert where(q) == {"p": expected}


# --------------------------------------------------------------------------- unschedulablePods


def test_failed_pod_without_event_waits_for_the_leftover_flush():
    """AddUnschedulableIfNotPresent with no in-flight event -> unschedulablePods; it leaves only
    through flushUnschedulablePodsLeftover (every 30 s, now - Timestamp > 5 min, strict).

    Failed at 0: at the tick 300 the age is exactly 300 (not > 300), so it moves at 330.
    """
    q = SchedulingQueue()
    info = failed_at(q, 0.0)
    assert q.lengths() == {"active": 0, "backoff": 0, "unschedulable": 1, "gated": 0}
    assert q.pop() is None
    assert q.next_event_time() == 330.0
    q.advance(329.999)
    assert q.pop() is None and where(q) == {"p": "unschedulable"}
    q.advance(330.0)
    assert where(q) == {"p": "activeQ"}
    assert q.pop() is info and info.attempts == 2


@pytest.mark.parametrize("t_fail, t_move", [(0.5, 330.0), (10.0, 330.0), (29.9, 330.0),
                                            (30.0, 360.0), (45.0, 360.0)])
def test_leftover_flush_time(t_fail, t_move):
    """flushUnschedulablePodsLeftover fires at multiples of 30 s; moves when age > 300 s."""
    q = SchedulingQueue()
    failed_at(q, t_fail)
    assert q.next_event_time() == t_move
    q.advance(t_move - 0.001)
    assert q.pop() is None
    q.advance(t_move)
    assert pop_one(q, "p").attempts == 2


def test_leftover_flush_age_is_strict_within_one_flush():
    """At the 330 s flush, x (age 330) moves but y (age exactly 300) stays until 360."""
    q = SchedulingQueue()
    failed_at(q, 0.0, "x")
    failed_at(q, 30.0, "y")
    q.advance(330.0)
    assert where(q) == {"x": "activeQ", "y": "unschedulable"}
    assert q.next_event_time() == 330.0
    assert drain(q) == ["x"]
    assert q.next_event_time() == 360.0
    q.advance(360.0)
    assert drain(q) == ["y"]


def test_leftover_flush_with_only_gated_pods_still_records_timeout():
    """flushUnschedulablePodsLeftover collects over-age pods, gated ones included; it moves none
    of the gated ones but still records UnschedulableTimeout for the pods in flight."""
    q = SchedulingQueue()
    q.add(mkpod("g", gates=("x",)))
    q.advance(329.0)
    q.add(mkpod("y"))
    y = pop_one(q, "y")
    q.advance(330.0)
    fail(q, y, FIT)
    assert where(q) == {"y": "backoffQ", "g": "gated"}


def test_long_advance_with_gated_pod_and_pod_in_flight_is_cheap():
    """Repeated UnschedulableTimeout events after the last pop change nothing; one is kept."""
    q = SchedulingQueue()
    q.add(mkpod("g", gates=("x",)))
    q.add(mkpod("y"))
    pop_one(q, "y")
    q.advance(1e9)
    assert len(q._events) == 1 and q.now == 1e9


def test_leftover_flush_custom_max():
    q = SchedulingQueue(max_in_unschedulable=60.0)
    failed_at(q, 0.0)
    assert q.next_event_time() == 90.0


def test_leftover_flush_moves_to_backoff_if_still_backing_off():
    """flushUnschedulablePodsLeftover -> movePodsToActiveOrBackoffQueue -> backoffQ when the
    backoff (here 400 s) is not over; flushBackoffQCompleted then moves it at the tick after 400.
    """
    q = SchedulingQueue(initial_backoff=400, max_backoff=400, pop_from_backoff=False)
    failed_at(q, 0.0)
    assert q.next_event_time() == 330.0
    q.advance(330.0)
    assert where(q) == {"p": "backoffQ"}
    assert q.pop() is None
    assert q.next_event_time() == 401.0
    q.advance(400.5)
    assert q.pop() is None
    q.advance(401.0)
    assert pop_one(q, "p").attempts == 2


# --------------------------------------------------------------------------- in-flight events


@pytest.mark.parametrize("t_fail, count, t_ready",
                         [(0.0, 1, 2.0), (0.3, 1, 2.0), (0.3, 2, 3.0), (5.5, 4, 14.0)])
def test_event_in_flight_sends_failed_pod_to_backoff(t_fail, count, t_ready):
    """determineSchedulingHintForInFlightPod: an event received after the pod's pop requeues it
    after backoff. Expiry floor(t_fail + 2**(count-1)) is still "backing off" during its own
    second, so flushBackoffQCompleted moves it at the next whole second.
    """
    q = SchedulingQueue(pop_from_backoff=False)
    q.add(mkpod("p"))
    for _ in range(count - 1):  # earlier failures raise the backoff exponent
        info = pop_one(q, "p")
        q.move_all_to_active_or_backoff("NodeAdd")
        fail(q, info, FIT)
        q.activate([info.pod])
    info = pop_one(q, "p")
    q.move_all_to_active_or_backoff("NodeAdd")
    q.advance(t_fail)
    fail(q, info, FIT)
    assert info.unschedulable_count == count
    assert where(q) == {"p": "backoffQ"}
    assert q.next_event_time() == t_ready
    q.advance(t_ready - 0.001)
    assert q.pop() is None
    q.advance(t_ready)
    assert where(q) == {"p": "activeQ"}
    assert pop_one(q, "p").attempts == count + 1


def test_event_before_pop_does_not_count():
    """clusterEventsForPod: only events after the pod's own pop count."""
    q = SchedulingQueue()
    q.add(mkpod("a", 1))
    q.add(mkpod("b", 0))
    a = pop_one(q, "a")
    q.move_all_to_active_or_backoff("NodeAdd")
    b = pop_one(q, "b")
    fail(q, a, FIT)
    fail(q, b, FIT)
    assert where(q) == {"a": "backoffQ", "b": "unschedulable"}
    assert q.in_flight_pods() == []


def test_in_flight_event_hint_false_leaves_pod_unschedulable():
    """isPodWorthRequeuing: QueueSkip for every event -> unschedulablePods."""
    q = SchedulingQueue()
    q.add(mkpod("p"))
    info = pop_one(q, "p")
    q.move_all_to_active_or_backoff("NodeAdd", hint=lambda i, e: False)
    q.move_all_to_active_or_backoff("NodeUpdate", hint=lambda i, e: FIT in i.unschedulable_plugins)
    fail(q, info, "TaintToleration")
    assert where(q) == {"p": "unschedulable"}


def test_events_are_dropped_after_done():
    """unlockedDone prunes events older than every remaining in-flight pod."""
    q = SchedulingQueue()
    q.add(mkpod("a"))
    a = pop_one(q, "a")
    q.move_all_to_active_or_backoff("NodeAdd")
    q.done(a.pod)
    assert q.in_flight_pods() == [] and len(q._events) == 0
    # An event with nobody in flight is not recorded (addEventIfAnyInFlight).
    q.move_all_to_active_or_backoff("NodeAdd")
    assert len(q._events) == 0


def test_error_goes_to_error_backoff():
    """AddUnschedulableIfNotPresent without rejecting plugins: ConsecutiveErrorsCount++ and
    queueAfterBackoff into podErrorBackoffQ, which Pop never takes early."""
    q = SchedulingQueue()
    q.add(mkpod("p"))
    info = pop_one(q, "p")
    q.advance(0.3)
    fail(q, info)
    assert (info.consecutive_errors_count, info.unschedulable_count) == (1, 0)
    assert where(q) == {"p": "backoffQ"}
    assert q.pop() is None
    assert q.next_event_time() == 2.0
    q.advance(2.0)
    info = pop_one(q, "p")
    # A later Unschedulable failure resets the error count.
    fail(q, info, FIT)
    assert (info.consecutive_errors_count, info.unschedulable_count) == (0, 1)


def test_leftover_flush_records_timeout_for_in_flight_pods():
    """flushUnschedulablePodsLeftover records the wildcard UnschedulableTimeout event for pods in
    flight (movePodsToActiveOrBackoffQueue -> addEventIfAnyInFlight)."""
    q = SchedulingQueue()
    failed_at(q, 0.0, "x")
    q.advance(329.0)
    q.add(mkpod("y"))
    y = pop_one(q, "y")
    q.advance(330.0)
    fail(q, y, FIT, "NodeAffinity")
    assert where(q) == {"x": "activeQ", "y": "backoffQ"}


def test_activate_of_in_flight_pod_records_force_activate():
    """Activate: a pod in flight gets EventForceActivate (wildcard, for that pod only)."""
    q = SchedulingQueue()
    q.add(mkpod("a", 1))
    q.add(mkpod("b"))
    a = pop_one(q, "a")
    b = pop_one(q, "b")
    q.activate([a.pod])
    fail(q, a, FIT)
    fail(q, b, FIT)
    assert where(q) == {"a": "backoffQ", "b": "unschedulable"}


def test_pending_plugin_queue_is_immediate():
    """isPodWorthRequeuing: Queue from a Pending plugin -> queueImmediately (skips backoff)."""
    q = SchedulingQueue()
    q.add(mkpod("p"))
    info = pop_one(q, "p")
    q.move_all_to_active_or_backoff("NodeAdd")
    fail(q, info, pending=["DynamicResources"])
    assert where(q) == {"p": "activeQ"}


def test_add_unschedulable_twice_raises_and_marks_done():
    q = SchedulingQueue()
    q.add(mkpod("p"))
    info = pop_one(q, "p")
    fail(q, info, FIT)
    with pytest.raises(ValueError, match="already present"):
        fail(q, info, FIT)
    assert q.in_flight_pods() == []


def test_no_backoff_when_max_backoff_is_zero():
    q = SchedulingQueue(max_backoff=0)
    q.add(mkpod("p"))
    info = pop_one(q, "p")
    q.move_all_to_active_or_backoff("NodeAdd")
    fail(q, info, FIT)
    assert where(q) == {"p": "activeQ"}


# ------------------------------------------------------------------- MoveAllToActiveOrBackoff


def test_move_all_on_node_event():
    """MoveAllToActiveOrBackoffQueue: accepted pods go to backoffQ while backing off, else
    activeQ; pods the hint rejects stay."""
    q = SchedulingQueue()
    q.add(mkpod("a"))
    q.add(mkpod("b"))
    q.add(mkpod("c"))
    infos = [q.pop(), q.pop(), q.pop()]
    for info in infos:  # failed at 0 -> expiry 1, backing off until align(now) > 1
        fail(q, info, FIT)
    q.advance(1.5)
    q.move_all_to_active_or_backoff("NodeAdd", hint=lambda i, e: i.pod.name == "a")
    assert where(q) == {"a": "backoffQ", "b": "unschedulable", "c": "unschedulable"}
    q.advance(2.0)  # flushBackoffQCompleted at 2
    assert where(q) == {"a": "activeQ", "b": "unschedulable", "c": "unschedulable"}
    q.advance(5.0)
    q.move_all_to_active_or_backoff("NodeUpdate", hint=lambda i, e: e == "NodeUpdate")
    assert where(q) == {"a": "activeQ", "b": "activeQ", "c": "activeQ"}
    assert drain(q) == ["a", "b", "c"]


def test_hint_sees_the_rejecting_plugins():
    q = SchedulingQueue()
    q.add(mkpod("fit"))
    q.add(mkpod("taint"))
    fail(q, pop_one(q, "fit"), FIT)
    fail(q, pop_one(q, "taint"), "TaintToleration")
    q.add(mkpod("gated", gates=("x",)))  # skipped: its gating plugin wants no such event
    q.advance(10.0)
    seen = []

    def hint(info, event):
        seen.append((info.pod.name, sorted(info.unschedulable_plugins), event))
        return FIT in info.unschedulable_plugins

    q.move_all_to_active_or_backoff("AssignedPodDelete", hint)
    assert seen == [("fit", [FIT], "AssignedPodDelete"),
                    ("taint", ["TaintToleration"], "AssignedPodDelete")]
    assert where(q) == {"fit": "activeQ", "taint": "unschedulable", "gated": "gated"}


# --------------------------------------------------------------------------- Pop from backoffQ


def test_pop_from_backoff_when_active_is_empty():
    """activeQueue.unlockedPop with SchedulerPopFromBackoffQ: activeQ first, then the head of
    podBackoffQ, even before its backoff is over."""
    q = SchedulingQueue()
    q.add(mkpod("p"))
    info = pop_one(q, "p")
    q.move_all_to_active_or_backoff("NodeAdd")
    fail(q, info, FIT)
    q.add(mkpod("new"))
    assert where(q) == {"new": "activeQ", "p": "backoffQ"}
    assert q.next_event_time() == 0.0
    assert drain(q) == ["new", "p"]
    assert info.attempts == 2 and q.scheduling_cycle == 3

    off = SchedulingQueue(pop_from_backoff=False)
    off.add(mkpod("p"))
    info = pop_one(off, "p")
    off.move_all_to_active_or_backoff("NodeAdd")
    fail(off, info, FIT)
    assert off.pop() is None and off.next_event_time() == 2.0


def test_backoff_queue_order_within_a_window_is_priority():
    """lessBackoffCompletedWithPriority: equal aligned expiry -> activeQ's Less; otherwise the
    earlier window first."""
    q = SchedulingQueue()
    q.add(mkpod("low", 0))
    q.add(mkpod("high", 9))
    q.add(mkpod("late", 99))
    late, high, low = pop_one(q, "late"), pop_one(q, "high"), pop_one(q, "low")
    q.move_all_to_active_or_backoff("NodeAdd")
    q.advance(0.2)
    fail(q, low, FIT)     # expiry floor(1.2) = 1
    q.advance(0.7)
    fail(q, high, FIT)    # expiry floor(1.7) = 1
    q.advance(1.1)
    fail(q, late, FIT)    # expiry floor(2.1) = 2
    assert [p.name for p, _ in q.pending_pods()] == ["high", "low", "late"]
    assert drain(q) == ["high", "low", "late"]


# --------------------------------------------------------------------------- gated pods


def test_gated_pod_is_held_until_gates_are_removed():
    """moveToActiveQ runs PreEnqueue (SchedulingGates); a gated pod waits in unschedulablePods,
    unaffected by cluster events, Activate and the leftover flush; Update removing all gates
    (UpdatePodSchedulingGatesEliminated) sends it to activeQ."""
    q = SchedulingQueue()
    gated = mkpod("g", gates=("example.com/a", "example.com/b"))
    q.add(gated)
    assert q.lengths() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    assert where(q) == {"g": "gated"}
    info = q.get_pod("g")
    assert info.gated and info.unschedulable_plugins == {SCHEDULING_GATES}
    assert info.initial_attempt_timestamp is None
    assert q.pop() is None and q.next_event_time() is None
    q.move_all_to_active_or_backoff("NodeAdd")
    q.activate([gated])
    q.advance(1000.0)
    assert where(q) == {"g": "gated"}

    one_gate = mkpod("g", gates=("example.com/b",))
    q.update(gated, one_gate)
    assert where(q) == {"g": "gated"} and q.get_pod("g").pod is one_gate

    q.advance(1001.0)
    ungated = mkpod("g")
    q.update(one_gate, ungated)
    assert where(q) == {"g": "activeQ"}
    info = pop_one(q, "g")
    assert (info.attempts, info.timestamp, info.initial_attempt_timestamp) == (1, 0.0, 1001.0)
    assert not info.gated and info.unschedulable_plugins == frozenset()


def test_pod_update_events():
    """PodSchedulingPropertiesChange."""
    a = mkpod("p", gates=("g",))
    assert pod_update_events(a, mkpod("p")) == [
        "UnschedulablePodUpdatePodSchedulingGatesEliminated"]
    assert pod_update_events(a, mkpod("p", gates=("g",), labels={"x": "1"})) == [
        "UnschedulablePodUpdatePodLabel"]
    assert pod_update_events(a, a) == ["UnschedulablePodUpdate"]
    assert pod_update_events(None, mkpod("p", node_name="n")) == ["AssignedPodUpdate"]


# --------------------------------------------------------------------------- Update


def test_update_in_active_queue_resorts():
    """Update: a pod in activeQ is replaced in place (AddOrUpdate re-sorts it)."""
    q = SchedulingQueue()
    a, b = mkpod("a", 5), mkpod("b", 1)
    q.add(a)
    q.add(b)
    b2 = mkpod("b", 10)
    q.update(b, b2)
    assert q.lengths()["active"] == 2
    info = q.pop()
    assert info.pod is b2 and info.timestamp == 0.0
    assert drain(q) == ["a"]


def test_update_of_unschedulable_pod():
    """Update of a pod in unschedulablePods: requeued if the update may help (default hint: the
    pod changed), after backoff if it is still backing off; unchanged -> stays."""
    q = SchedulingQueue()
    info = failed_at(q, 0.0)
    old = info.pod
    q.advance(0.5)
    q.update(old, old)
    assert where(q) == {"p": "unschedulable"}
    new = mkpod("p", labels={"app": "x"})
    q.update(old, new)
    assert where(q) == {"p": "backoffQ"} and q.get_pod("p").pod is new


def test_update_of_in_flight_pod_records_event():
    """Update of an in-flight pod only records its update events (addEventsIfPodInFlight)."""
    q = SchedulingQueue()
    q.add(mkpod("p"))
    q.add(mkpod("other"))
    info = pop_one(q, "p")
    other = pop_one(q, "other")
    q.update(info.pod, mkpod("p", labels={"app": "x"}))
    assert q.lengths()["active"] == 0
    fail(q, info, FIT)
    fail(q, other, FIT)  # the event is about p only
    assert where(q) == {"p": "backoffQ", "other": "unschedulable"}


def test_update_of_unknown_pod_adds_it():
    q = SchedulingQueue()
    q.update(None, mkpod("p"))
    assert where(q) == {"p": "activeQ"}


# --------------------------------------------------------------------------- Activate / Delete


def test_activate():
    """Activate: from unschedulablePods or backoffQ to activeQ; others are ignored."""
    q = SchedulingQueue(pop_from_backoff=False)
    q.add(mkpod("b", 1))
    q.add(mkpod("u", 0))
    b = pop_one(q, "b")
    q.move_all_to_active_or_backoff("NodeAdd")  # seen by b only: u is popped after it
    u = pop_one(q, "u")
    fail(q, u, FIT)
    fail(q, b, FIT)
    q.add(mkpod("a"))
    assert where(q) == {"a": "activeQ", "b": "backoffQ", "u": "unschedulable"}
    q.activate([u.pod, b.pod, mkpod("a"), mkpod("unknown")])
    assert where(q) == {"a": "activeQ", "b": "activeQ", "u": "activeQ"}
    assert q.lengths() == {"active": 3, "backoff": 0, "unschedulable": 0, "gated": 0}
    assert sorted(drain(q)) == ["a", "b", "u"]


@pytest.mark.parametrize("sub", ["activeQ", "backoffQ", "unschedulable", "gated"])
def test_delete_from_each_sub_queue(sub):
    q = SchedulingQueue()
    if sub == "gated":
        pod = mkpod("p", gates=("g",))
        q.add(pod)
    else:
        q.add(mkpod("p"))
        if sub != "activeQ":
            info = pop_one(q, "p")
            if sub == "backoffQ":
                q.move_all_to_active_or_backoff("NodeAdd")
            fail(q, info, FIT)
        pod = q.get_pod("p").pod
    q.add(mkpod("keep"))
    assert where(q)["p"] == sub
    q.delete(pod)
    assert where(q) == {"keep": "activeQ"}
    assert q.get_pod("p") is None
    q.delete(pod)  # deleting twice is harmless
    assert drain(q) == ["keep"] and q.next_event_time() is None


# --------------------------------------------------------------------------- introspection


def test_pop_bookkeeping():
    """unlockedPop: Attempts++, schedCycle++, in flight, rejecting plugins cleared."""
    q = SchedulingQueue()
    assert q.pop() is None and q.scheduling_cycle == 0
    q.add(mkpod("p"))
    info = pop_one(q, "p")
    assert (info.attempts, q.scheduling_cycle, q.in_flight_pods()) == (1, 1, ["default/p"])
    q.move_all_to_active_or_backoff("NodeAdd")
    fail(q, info, FIT)
    info = pop_one(q, "p")
    assert info.unschedulable_plugins == frozenset() and info.pending_plugins == frozenset()
    assert (info.attempts, q.scheduling_cycle) == (2, 2)
    q.done(info.pod)
    assert q.in_flight_pods() == []


def test_pending_pods_and_lengths():
    q = SchedulingQueue()
    for n, prio in [("b2", 1), ("b1", 2)]:
        q.add(mkpod(n, prio))
    b1, b2 = pop_one(q, "b1"), pop_one(q, "b2")
    q.move_all_to_active_or_backoff("NodeAdd")
    q.add(mkpod("u"))
    u = pop_one(q, "u")
    q.advance(0.5)
    fail(q, b2, FIT)  # both expire in the window [1, 2): ordered by priority
    fail(q, b1, FIT)
    fail(q, u, "NodeAffinity")
    q.add(mkpod("g", gates=("x",)))
    q.add(mkpod("a2", 1))
    q.add(mkpod("a1", 3))
    assert [(p.name, s) for p, s in q.pending_pods()] == [
        ("a1", "activeQ"), ("a2", "activeQ"),
        ("b1", "backoffQ"), ("b2", "backoffQ"),
        ("u", "unschedulable"), ("g", "gated"),
    ]
    assert q.lengths() == {"active": 2, "backoff": 2, "unschedulable": 1, "gated": 1}


def test_next_event_time():
    q = SchedulingQueue(pop_from_backoff=False)
    assert q.next_event_time() is None
    q.add(mkpod("g", gates=("x",)))
    assert q.next_event_time() is None
    failed_at(q, 0.0, "u")                 # unschedulable -> 330
    assert q.next_event_time() == 330.0
    q.add(mkpod("b"))
    assert q.next_event_time() == 0.0      # activeQ non-empty: now
    b = pop_one(q, "b")
    q.move_all_to_active_or_backoff("NodeAdd", hint=lambda i, e: i.pod.name == "b")
    assert where(q)["u"] == "unschedulable"
    q.advance(3.25)
    fail(q, b, FIT)                        # backoffQ, expiry 4.25 -> tick 5
    assert q.next_event_time() == 5.0
    q.advance(q.next_event_time())
    assert q.next_event_time() == 5.0 and drain(q) == ["b"]
    assert q.next_event_time() == 330.0


def test_advance_rejects_going_back():
    q = SchedulingQueue()
    q.advance(3.0)
    with pytest.raises(ValueError):
        q.advance(2.0)
    q.advance(3.0)
    assert q.now == 3.0


def test_simulation_loop_reaches_every_pod():
    """A driver that pops, fails everything, and jumps the clock with next_event_time()."""
    q = SchedulingQueue(pop_from_backoff=False)
    for n in "abc":
        q.add(mkpod(n))
    log = []
    while len(log) < 6:
        info = q.pop()
        if info is None:
            q.advance(q.next_event_time())
            continue
        log.append((q.now, info.pod.name, info.attempts))
        fail(q, info, FIT)
    assert log == [(0.0, "a", 1), (0.0, "b", 1), (0.0, "c", 1),
                   (330.0, "a", 2), (330.0, "b", 2), (330.0, "c", 2)]


# --------------------------------------------------------------------------- nominator


def test_nominator():
    """nominator.go: node -> nominated pods; Delete and Update keep it in step."""
    q = SchedulingQueue()
    a, b = mkpod("a"), mkpod("b")
    q.add(a)
    q.add(b)
    q.add_nominated(a, "n1")
    q.add_nominated(b, "n1")
    assert q.nominated_pods_for_node("n1") == [a, b]
    q.add_nominated(a, "n2")
    assert q.nominated_pods_for_node("n1") == [b] and q.nominated_pods_for_node("n2") == [a]
    # UpdateNominatedPod: neither version names a node -> the in-memory nomination is kept.
    a2 = mkpod("a", labels={"x": "y"})
    q.update(a, a2)
    assert q.nominated_pods_for_node("n2") == [a2]
    q.delete(b)
    assert q.nominated_pods_for_node("n1") == []
    q.delete_nominated(a2)
    assert q.nominated_pods_for_node("n2") == []
    # Add of a pod whose status names a node nominates it (ModeNoop).
    c = mkpod("c", nominated_node_name="n3")
    q.add(c)
    assert q.nominated_pods_for_node("n3") == [c]


@pytest.mark.parametrize("times", [[2.0], [2.0, 2.5, 40.0], [3.0, 400.0, 731.0]])
def test_retried_leaves_what_moves_pops_and_requeues_leave(times):
    """``retried``: the one parked pod moved (AssignedPodDelete), popped and parked again
    at each time, as the simulator's stretches record it, against those calls one by one."""
    def parked_queue() -> SchedulingQueue:
        q = SchedulingQueue()
        q.add(mkpod("big", priority=5))
        info = q.pop()
        info.unschedulable_plugins = frozenset({FIT})
        q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
        return q

    one_by_one, at_once = parked_queue(), parked_queue()
    plugins = frozenset({FIT, "NodeAffinity"})
    for t in times:
        one_by_one.advance(t)
        one_by_one.move_all_to_active_or_backoff("AssignedPodDelete")
        info = one_by_one.pop()
        info.unschedulable_plugins = plugins
        one_by_one.add_unschedulable_if_not_present(info, one_by_one.scheduling_cycle)
    assert at_once.retried("default/big", times, plugins) == 1

    def state(q: SchedulingQueue) -> tuple:
        [info] = q.parked()
        return (info.attempts, info.unschedulable_count, info.consecutive_errors_count,
                info.timestamp, info.unschedulable_plugins, q.scheduling_cycle, q.now,
                q.lengths(), q.next_event_time())

    assert state(at_once) == state(one_by_one)
    assert state(at_once)[:2] == (1 + len(times), 1 + len(times))
    for q in (one_by_one, at_once):  # the next move, a newcomer, and the pops after them
        q.advance(times[-1] + 1.0)
        q.add(mkpod("small", priority=5))
        q.move_all_to_active_or_backoff("AssignedPodDelete")
    assert drain(at_once) == drain(one_by_one)
    with pytest.raises(ValueError, match="not the one parked pod"):
        at_once.retried("default/big", [times[-1] + 2.0], plugins)  # it is in flight now

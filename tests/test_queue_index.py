"""The queue's running indexes and memo against plain work, on random operation sequences.

``SchedulingQueue`` keeps unschedulablePods by timestamp (the oldest one decides
``flushUnschedulablePodsLeftover``'s next tick) and the pods PreEnqueue holds (the gated
count), instead of looking at every parked pod per event. A queue whose oldest timestamp and
gated count come from that pass must behave the same: the same pops, event times and lengths.
``next_event_time`` remembers when the next flush fires and the ``advance`` right after reuses
it (every operation on the pods forgets it): a queue that never reuses it must behave the same.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ksched.api import Pod
from ksched.queue import SchedulingQueue

FIT = "NodeResourcesFit"


class ScanningQueue(SchedulingQueue):
    """The reference: the oldest parked timestamp by a pass over unschedulablePods."""

    def _oldest(self, with_gated: bool) -> float | None:
        stamps = [i.timestamp for i in self._unschedulable.values() if with_gated or not i.gated]
        return min(stamps) if stamps else None

    def lengths(self) -> dict[str, int]:
        gated = sum(1 for i in self._unschedulable.values() if i.gated)
        return {**super().lengths(), "unschedulable": len(self._unschedulable) - gated,
                "gated": gated}


class ForgetfulQueue(SchedulingQueue):
    """The reference for the memo: ``advance`` works every flush out afresh."""

    def advance(self, now: float) -> None:
        self._quiet = None
        super().advance(now)


OPS = st.lists(st.tuples(st.sampled_from(["add", "gated", "pop", "fail", "error", "move",
                                          "ungate", "delete", "advance", "advance_to_next",
                                          "activate"]),
                         st.integers(0, 7),
                         st.sampled_from([0.0, 0.4, 0.5, 1.0, 3.0, 29.0, 30.0, 200.0, 301.0])),
               max_size=80)


def _apply(q: SchedulingQueue, op: str, i: int, dt: float, popped: list) -> object:
    name = f"p{i}"
    if op in ("add", "gated"):
        if q.get_pod(name) is None and all(info.pod.name != name for info in popped):
            q.add(Pod(name=name, priority=i % 3, scheduling_gates=("g",) if op == "gated"
                      else ()))
        return None
    if op == "pop":
        info = q.pop()
        if info is not None:
            popped.append(info)
        return info and info.pod.name
    if op in ("fail", "error") and popped:
        info = popped.pop(0)
        info.unschedulable_plugins = frozenset({FIT}) if op == "fail" else frozenset()
        q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
        return None
    if op == "move":
        q.move_all_to_active_or_backoff("NodeAdd", (lambda info, event: i % 2 == 0)
                                        if i > 3 else None)
    elif op == "ungate":
        info = q.get_pod(name)
        if info is not None and info.pod.scheduling_gates:
            q.update(info.pod, Pod(name=name, priority=info.pod.priority))
    elif op == "delete":
        info = q.get_pod(name)
        if info is not None:
            q.delete(info.pod)
    elif op == "advance":
        q.advance(q.now + dt)
    elif op == "advance_to_next":  # next_event_time, then the advance that may reuse it
        t = q.next_event_time()
        q.advance(q.now + dt if t is None else max(q.now, min(t, q.now + dt)))
    elif op == "activate":
        q.activate([Pod(name=name)])
    return None


@pytest.mark.parametrize("reference", [ScanningQueue, ForgetfulQueue])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_the_queue_pops_and_times_as_its_reference_does(reference, ops):
    """Against the scan of every parked pod, and against the queue that forgets the next
    flush time."""
    fast, slow = SchedulingQueue(), reference()
    popped_fast: list = []
    popped_slow: list = []
    for op, i, dt in ops:
        assert _apply(fast, op, i, dt, popped_fast) == _apply(slow, op, i, dt, popped_slow)
        assert fast.now == slow.now
        assert fast.lengths() == slow.lengths()
        assert fast.next_event_time() == slow.next_event_time()
        assert [(p.name, where) for p, where in fast.pending_pods()] == \
            [(p.name, where) for p, where in slow.pending_pods()]


def test_the_oldest_parked_pod_decides_the_leftover_flush_after_others_leave():
    q = SchedulingQueue()
    for k, name in enumerate(["a", "b", "c"]):
        q.advance(float(k * 10))
        q.add(Pod(name=name))
        info = q.pop()
        info.unschedulable_plugins = frozenset({FIT})
        q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.next_event_time() == 330.0  # a, parked at 0, is over 300 s old at 330
    q.delete(Pod(name="a"))
    assert q.next_event_time() == 330.0  # b, parked at 10: 310 < 330
    q.delete(Pod(name="b"))
    assert q.next_event_time() == 330.0  # c, parked at 20: 320 < 330
    q.delete(Pod(name="c"))
    assert q.next_event_time() is None
    assert q.lengths() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}


def test_a_move_after_next_event_time_is_flushed_on_time():
    """The pool's leftover flush is 330 s away, then a move puts the pod in backoffQ: the
    backoff flush at 2 s must not be skipped."""
    q = SchedulingQueue()
    q.add(Pod(name="a"))
    info = q.pop()
    info.unschedulable_plugins = frozenset({FIT})
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert q.next_event_time() == 330.0
    q.move_all_to_active_or_backoff("NodeAdd")
    q.advance(3.0)
    assert q.lengths()["active"] == 1

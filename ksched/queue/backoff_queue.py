"""The backoff queue (``pkg/scheduler/backend/queue/backoff_queue.go``): ``podBackoffQ`` for pods
rejected by plugins and ``podErrorBackoffQ`` for pods that failed with an error, ordered by
backoff expiry; with ``SchedulerPopFromBackoffQ`` the expiry is truncated to a 1-second window
and pods in one window are ordered by the QueueSort ``less``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ksched.queue.heap import Heap
from ksched.queue.queued_pod_info import QueuedPodInfo

__all__ = ["BACKOFF_FLUSH_PERIOD", "BackoffQueue"]

#: ``backoffQOrderingWindowDuration``: the backoffQ window, also the backoff flush period.
BACKOFF_FLUSH_PERIOD = 1.0


class BackoffQueue:
    """``backoffQueue``: the two heaps, and each pod's backoff.

    Parameters
    ----------
    initial_backoff, max_backoff : float
        ``podInitialBackoffSeconds`` / ``podMaxBackoffSeconds``; ``max_backoff == 0`` disables
        backoff.
    pop_from_backoff : bool
        The ``SchedulerPopFromBackoffQ`` feature gate.
    active_key : callable
        activeQ's sort key, which orders the pods of one window.
    """

    def __init__(self, initial_backoff: float, max_backoff: float, pop_from_backoff: bool,
                 active_key: Callable[[QueuedPodInfo], Any]) -> None:
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.pop_from_backoff = pop_from_backoff

        def backoff_key(info: QueuedPodInfo) -> Any:
            # lessBackoffCompletedWithPriority / lessBackoffCompleted
            if self.pop_from_backoff:
                return (self.backoff_expiry(info), active_key(info))
            return (self.backoff_expiry(info),)

        self._rejected = Heap(backoff_key)
        self._errored = Heap(lambda info: (self.backoff_expiry(info),))

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

    def align(self, t: float) -> float:
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
        return self.expiry(info.timestamp, info.consecutive_errors_count
                           or info.unschedulable_count)

    def expiry(self, timestamp: float, count: int) -> float:
        """:meth:`backoff_expiry` of a pod requeued at ``timestamp`` after ``count``
        failures."""
        if self.max_backoff == 0 or count == 0:
            return -math.inf
        return self.align(timestamp + self.backoff_duration(count))

    def is_backing_off(self, info: QueuedPodInfo, now: float) -> bool:
        """``isPodBackingoff`` at time ``now``."""
        return self.backing_off(info.timestamp, info.consecutive_errors_count
                                or info.unschedulable_count, now)

    def backing_off(self, timestamp: float, count: int, now: float) -> bool:
        """:meth:`is_backing_off` of a pod requeued at ``timestamp`` after ``count``
        failures."""
        return not self.expiry(timestamp, count) < self.align(now)

    # ------------------------------------------------------------------ the heaps

    def __len__(self) -> int:
        return len(self._rejected) + len(self._errored)

    def __contains__(self, key: str) -> bool:
        return key in self._rejected or key in self._errored

    def has_rejected(self) -> bool:
        """Whether podBackoffQ holds a pod (the one :meth:`pop` can take)."""
        return len(self._rejected) > 0

    def get(self, key: str) -> QueuedPodInfo | None:
        info = self._rejected.get(key)
        return info if info is not None else self._errored.get(key)

    def add(self, info: QueuedPodInfo) -> None:
        """``backoffQueue.add``: no rejecting plugin means an error -> podErrorBackoffQ."""
        if not info.unschedulable_plugins and not info.pending_plugins:
            self._errored.add_or_update(info)
            self._rejected.delete(info.key)
        else:
            self._rejected.add_or_update(info)
            self._errored.delete(info.key)

    def update(self, info: QueuedPodInfo) -> None:
        """Re-sort a pod after its record changed, in the heap that holds it."""
        heap = self._rejected if info.key in self._rejected else self._errored
        heap.add_or_update(info)

    def delete(self, key: str) -> QueuedPodInfo | None:
        info = self._rejected.delete(key)
        return info if info is not None else self._errored.delete(key)

    def pop(self) -> QueuedPodInfo | None:
        """The head of podBackoffQ (``popBackoff``: its backoff need not be over)."""
        return self._rejected.pop()

    def pop_completed(self, now: float) -> list[QueuedPodInfo]:
        """``popAllBackoffCompleted``: the pods whose backoff is over at ``now``."""
        completed = []
        for heap in (self._rejected, self._errored):
            while (info := heap.peek()) is not None and not self.is_backing_off(info, now):
                heap.pop()
                completed.append(info)
        return completed

    def next_flush(self, first: float) -> float:
        """The first backoff flush tick at or after ``first`` that moves a pod (inf if none)."""
        best = math.inf
        for heap in (self._rejected, self._errored):
            key = heap.peek_key()
            if key is None:
                continue
            expiry = key[0]  # the head's backoff_expiry: a queued pod's does not change
            if expiry == -math.inf:
                return first
            # Done at the first tick t with expiry < align(t) = t: the tick after floor(expiry).
            t = (math.floor(expiry / BACKOFF_FLUSH_PERIOD) + 1) * BACKOFF_FLUSH_PERIOD
            best = min(best, max(first, t))
        return best

    def infos(self) -> list[QueuedPodInfo]:
        """The pods of podBackoffQ, then of podErrorBackoffQ, each in pop order."""
        return self._rejected.infos() + self._errored.infos()

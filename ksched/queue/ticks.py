"""The ticks of the queue's periodic flushes on the virtual clock: ``PriorityQueue.Run``'s
``wait.Until`` loops, counted from time 0 (``flushBackoffQCompleted`` every second,
``flushUnschedulablePodsLeftover`` every 30 s).
"""

from __future__ import annotations

import math

__all__ = ["UNSCHEDULABLE_FLUSH_PERIOD", "leftover_tick", "next_tick"]

#: The ``flushUnschedulablePodsLeftover`` period (``wait.Until(..., 30*time.Second, ...)``).
UNSCHEDULABLE_FLUSH_PERIOD = 30.0


def next_tick(now: float, period: float) -> float:
    """The first multiple of ``period`` after ``now``."""
    return (math.floor(now / period) + 1) * period


def leftover_tick(now: float, oldest: float, max_age: float, period: float) -> float:
    """The first tick (a multiple of ``period``) after ``now`` at which a pod parked at
    ``oldest`` is over ``max_age``, by upstream's exact predicate ``now - timestamp > max``
    (which settles float rounding)."""
    first = next_tick(now, period)
    t = max(first, (math.floor((oldest + max_age) / period) + 1) * period)
    while not t - oldest > max_age:
        t += period
    while t - period >= first and t - period - oldest > max_age:
        t -= period
    return t

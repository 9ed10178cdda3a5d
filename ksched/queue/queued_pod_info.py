"""A pod in the scheduling queue (``framework.QueuedPodInfo``, ``pkg/scheduler/framework/
types.go``) and the default queue order, PrioritySort (``plugins/queuesort/priority_sort.go``).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ksched.api import Pod

__all__ = ["Hint", "LessFunc", "QueuedPodInfo", "priority_sort_key", "priority_sort_less"]


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


def priority_sort_key(info: QueuedPodInfo) -> tuple[int, float]:
    """A sort key ordering pods as :func:`priority_sort_less` does (its fast form)."""
    return (-(info.pod.priority or 0), info.timestamp)

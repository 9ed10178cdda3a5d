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
the per-plugin ``QueueingHintFn``\\ s (see :meth:`SchedulingQueue.move_all_to_active_or_backoff`);
AssignedPodAdd's asks the rejecting plugins registered for it (:mod:`~ksched.queue.hints`).

Layout: :mod:`~ksched.queue.scheduling_queue` (:class:`SchedulingQueue`),
:mod:`~ksched.queue.backoff_queue`, :mod:`~ksched.queue.rejected_by` and
:mod:`~ksched.queue.parked_by_time` (unschedulablePods by plugin and by time),
:mod:`~ksched.queue.nominator`, :mod:`~ksched.queue.heap`, :mod:`~ksched.queue.ticks` (the
flushes' ticks), :mod:`~ksched.queue.events`, :mod:`~ksched.queue.queued_pod_info`, and
:mod:`~ksched.queue.hints` (the AssignedPodAdd hint, read by the Simulator).
"""

from __future__ import annotations

from ksched.queue.backoff_queue import BACKOFF_FLUSH_PERIOD, BackoffQueue
from ksched.queue.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    BACKOFF_COMPLETE,
    FORCE_ACTIVATE,
    NODE_ADD,
    NODE_UPDATE,
    SCHEDULE_ATTEMPT_FAILURE,
    SCHEDULING_GATES,
    UNSCHEDULABLE_TIMEOUT,
    UNSCHEDULED_POD_ADD,
    UNSCHEDULED_POD_UPDATE,
    WILDCARD_EVENTS,
    pod_update_events,
)
from ksched.queue.queued_pod_info import Hint, LessFunc, QueuedPodInfo, priority_sort_less
from ksched.queue.scheduling_queue import (
    ACTIVE_Q,
    BACKOFF_Q,
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS,
    GATED,
    UNSCHEDULABLE,
    UNSCHEDULABLE_FLUSH_PERIOD,
    SchedulingQueue,
)

__all__ = [
    "ACTIVE_Q", "ASSIGNED_POD_ADD", "ASSIGNED_POD_DELETE", "BACKOFF_COMPLETE",
    "BACKOFF_FLUSH_PERIOD", "BACKOFF_Q",
    "DEFAULT_POD_INITIAL_BACKOFF", "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS", "FORCE_ACTIVATE", "GATED", "NODE_ADD", "NODE_UPDATE",
    "SCHEDULE_ATTEMPT_FAILURE", "SCHEDULING_GATES", "UNSCHEDULABLE",
    "UNSCHEDULABLE_FLUSH_PERIOD", "UNSCHEDULABLE_TIMEOUT", "UNSCHEDULED_POD_ADD",
    "UNSCHEDULED_POD_UPDATE", "WILDCARD_EVENTS", "BackoffQueue", "Hint", "LessFunc",
    "QueuedPodInfo", "SchedulingQueue", "pod_update_events", "priority_sort_less",
]

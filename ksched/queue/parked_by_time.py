"""unschedulablePods by timestamp: the oldest parked pod decides when
``flushUnschedulablePodsLeftover`` (``pkg/scheduler/backend/queue/scheduling_queue.go``) next
moves a pod, found without a walk over the whole pool.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping

from ksched.queue.queued_pod_info import QueuedPodInfo

__all__ = ["ParkedByTime"]


class ParkedByTime:
    """Two heaps of the parked pods by timestamp, with lazy deletion: all of them, and those
    not gated. An entry is stale once its pod left the pool, was parked again or changed its
    timestamp (or, in the second heap, became gated)."""

    def __init__(self) -> None:
        self._heaps: tuple[list, list] = ([], [])
        self._seq = itertools.count()

    def add(self, info: QueuedPodInfo, parked: Mapping[str, QueuedPodInfo]) -> None:
        """Note ``info``, just put in ``parked`` (unschedulablePods by key)."""
        if len(self._heaps[0]) > 2 * len(parked) + 64:  # mostly stale: made again
            self._heaps = tuple([(i.timestamp, next(self._seq), i) for i in parked.values()
                                 if keep(i)] for keep in (bool, lambda i: not i.gated))
            for heap in self._heaps:
                heapq.heapify(heap)
            return
        entry = (info.timestamp, next(self._seq), info)
        heapq.heappush(self._heaps[0], entry)
        if not info.gated:
            heapq.heappush(self._heaps[1], entry)

    def oldest(self, with_gated: bool, parked: Mapping[str, QueuedPodInfo]) -> float | None:
        """The oldest timestamp in ``parked`` (``with_gated``: gated pods too): the first heap
        entry that is still a pod's own (parked, same timestamp, not gated where gated pods
        are left out)."""
        heap = self._heaps[0 if with_gated else 1]
        while heap:
            stamp, _, info = heap[0]
            if parked.get(info.key) is info and info.timestamp == stamp \
                    and (with_gated or not info.gated):
                return stamp
            heapq.heappop(heap)
        return None

"""The queue's heaps (``pkg/scheduler/backend/heap/heap.go``): pods keyed by pod key, ordered by a
sort key, with lazy deletion; :class:`LessKey` orders by an arbitrary QueueSort ``less``.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any

from ksched.queue.queued_pod_info import LessFunc, QueuedPodInfo

__all__ = ["Heap", "LessKey"]


class LessKey:
    """Orders heap entries by an arbitrary ``less``; neither less than the other means equal."""

    __slots__ = ("info", "less")

    def __init__(self, info: QueuedPodInfo, less: LessFunc) -> None:
        self.info = info
        self.less = less

    def __lt__(self, other: LessKey) -> bool:
        return self.less(self.info, other.info)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LessKey):
            return NotImplemented
        return not self.less(self.info, other.info) and not self.less(other.info, self.info)

    __hash__ = None  # type: ignore[assignment]


class Heap:
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

    def peek_key(self) -> Any:
        """The sort key of the head (as computed when it was added), or None."""
        self._prune()
        return self._heap[0][0] if self._heap else None

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

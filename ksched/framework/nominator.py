"""The pods nominated to each node, as the scheduling queue's nominator keeps them.

Mirrors ``pkg/scheduler/backend/queue/nominator.go`` and the part of
``RunFilterPluginsWithNominatedPods`` (``framework/runtime/framework.go``) that chooses the
nominated pods a cycle leaves room for (``addGENominatedPods``).
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ksched import resources
from ksched.api import Pod
from ksched.resources import pod_requests
from ksched.state import ClusterState

_MAX_PRIORITY, _MIN_PRIORITY = np.iinfo(np.int64).max, np.iinfo(np.int64).min


class NominatedPods(Mapping[int, Sequence[Pod]]):
    """Node row -> the pods nominated to it (the queue's nominator), with each node's summed
    request vector and priority range: a cycle finds the nodes whose nominated pods it must
    leave room for (``addGENominatedPods``) without visiting every nomination."""

    def __init__(self, state: ClusterState) -> None:
        n, r = state.num_nodes, len(state.resource_names)
        self.node_index, self.names = state.node_index, state.resource_names
        self.total = np.zeros((n, r), dtype=np.int64)
        self.low = np.full(n, _MAX_PRIORITY, dtype=np.int64)
        self.high = np.full(n, _MIN_PRIORITY, dtype=np.int64)
        self._pods: dict[int, tuple[Pod, ...]] = {}
        #: ("uid", uid) / ("key", key) -> rows where such a pod is nominated.
        self._who: dict[tuple[str, str], set[int]] = {}
        self._vectors: dict[int, tuple[Pod, npt.NDArray[np.int64]]] = {}
        self._spec_vectors: dict[tuple, tuple[tuple, npt.NDArray[np.int64]]] = {}
        #: How many nominated pods have each priority.
        self._priorities: Counter[int] = Counter()
        self._rows: npt.NDArray[np.int64] | None = None
        self._has = np.zeros(n, dtype=np.bool_)
        #: Bumped whenever a node's nominated pods are set.
        self.stamp = np.zeros(n, dtype=np.int64)
        self._relevant: tuple[Pod, tuple[Any, Any]] | None = None
        self._none: npt.NDArray[np.bool_] | None = None
        #: What the index follows (for its owner to tell).
        self.source: Any = None

    @classmethod
    def of(cls, state: ClusterState, nominated: Mapping[int, Sequence[Pod]]) -> NominatedPods:
        """``nominated`` itself when it is an index of ``state``'s layout, else an index of it."""
        if isinstance(nominated, NominatedPods) and nominated.matches(state):
            return nominated
        index = cls(state)
        for row, pods in nominated.items():
            index.set_node(row, pods)
        return index

    def matches(self, state: ClusterState) -> bool:
        return self.node_index is state.node_index and self.names == state.resource_names

    def __getitem__(self, row: int) -> Sequence[Pod]:
        return self._pods[row]

    def __iter__(self) -> Iterator[int]:
        return iter(self._pods)

    def __len__(self) -> int:
        return len(self._pods)

    def set_node(self, row: int, pods: Sequence[Pod]) -> None:
        """The pods now nominated to node ``row``."""
        pods = tuple(pods)
        staying = set(map(id, pods))
        for pod in self._pods.pop(row, ()):
            self._priorities[pod.priority] -= 1
            if not self._priorities[pod.priority]:
                del self._priorities[pod.priority]
            for who in _identities(pod):
                rows = self._who.get(who)
                if rows is not None:
                    rows.discard(row)
                    if not rows:
                        del self._who[who]
            if id(pod) not in staying:
                self._vectors.pop(id(pod), None)
        self.total[row] = 0
        self.low[row], self.high[row] = _MAX_PRIORITY, _MIN_PRIORITY
        if pods:
            self._pods[row] = pods
            for pod in pods:
                self.total[row] += self.vector(pod)
                self._priorities[pod.priority] += 1
                for who in _identities(pod):
                    self._who.setdefault(who, set()).add(row)
            self.low[row] = min(p.priority for p in pods)
            self.high[row] = max(p.priority for p in pods)
        self._has[row] = bool(pods)
        self.stamp[row] += 1
        self._rows, self._relevant = None, None

    def vector(self, pod: Pod) -> npt.NDArray[np.int64]:
        """:func:`request_vector` of a nominated pod (kept while it is nominated)."""
        found = self._vectors.get(id(pod))
        if found is None or found[0] is not pod:
            found = self._vectors[id(pod)] = (pod, self._spec_vector(pod))
        return found[1]

    def _spec_vector(self, pod: Pod) -> npt.NDArray[np.int64]:
        """:func:`request_vector` of a pod, shared by pods with the same spec objects
        (replicas)."""
        spec = (pod.containers, pod.init_containers, pod.overhead, pod.pod_requests)
        identity = tuple(map(id, spec))
        seen = self._spec_vectors.get(identity)
        if seen is None or not all(map(operator.is_, seen[0], spec)):
            vector = resources.request_vector(pod_requests(pod), self.names)
            if len(self._spec_vectors) >= 4096:
                self._spec_vectors.clear()
            seen = self._spec_vectors[identity] = (spec, vector)
        return seen[1]

    def own_rows(self, pod: Pod) -> list[int]:
        """The rows where a pod :func:`nominated_before` may leave out as ``pod`` itself."""
        found = [self._who[who] for who in _identities(pod) if who in self._who]
        return sorted(set().union(*found)) if found else []

    def rows(self) -> npt.NDArray[np.int64]:
        """The node rows with nominated pods, ascending."""
        if self._rows is None:
            self._rows = np.flatnonzero(self._has)
        return self._rows

    def relevant(self, pod: Pod) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
        """Per node row: whether it has pods :func:`nominated_before` ``pod``, and the sum of
        their request vectors (read-only; valid where marked). The last answer is kept until
        the index changes."""
        if self._relevant is not None and self._relevant[0] is pod:
            return self._relevant[1]
        if not self._pods:
            return self._nowhere(), self.total
        found = self._find_relevant(pod)
        self._relevant = (pod, found)
        return found

    def any_before(self, pod: Pod) -> bool:
        """Whether some node has pods :func:`nominated_before` ``pod``."""
        return bool(self._pods) and bool(self.relevant(pod)[0].any())

    def _nowhere(self) -> npt.NDArray[np.bool_]:
        """The mask of no node (shared: never written), :meth:`relevant`'s answer while no
        pod is nominated anywhere."""
        if self._none is None:
            self._none = np.zeros(len(self._has), dtype=np.bool_)
        return self._none

    def _find_relevant(self, pod: Pod) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
        p = pod.priority
        has, low = self._has, self.low
        mask = has & (low >= p)
        exact = set(self.own_rows(pod))
        priorities = self._priorities
        if any(q >= p for q in priorities) and any(q < p for q in priorities):
            # Some node's pods may straddle p: those nodes are summed pod by pod.
            exact.update(np.flatnonzero(has & (self.high >= p) & (low < p)).tolist())
        extra = self.total
        if exact:
            extra = self.total.copy()
            for row in sorted(exact):
                others = nominated_before(pod, self._pods.get(row, ()))
                mask[row] = bool(others)
                extra[row] = sum((self.vector(o) for o in others),
                                 np.zeros(len(self.names), dtype=np.int64))
        return mask, extra


def _identities(pod: Pod) -> list[tuple[str, str]]:
    """What :func:`nominated_before` tells a pod apart by."""
    return [("uid", pod.uid), ("key", pod.key)] if pod.uid else [("key", pod.key)]


def request_vector(state: ClusterState, pod: Pod) -> npt.NDArray[np.int64]:
    """What the pod adds to its node's ``requested`` row (the pod count included)."""
    return resources.request_vector(pod_requests(pod), state.resource_names)


def nominated_before(pod: Pod, nominated: Sequence[Pod]) -> list[Pod]:
    """The nominated pods a pod's filters must leave room for: other pods with at least its
    priority (``addGENominatedPods``)."""
    return [p for p in nominated if p.priority >= pod.priority
            and (p.uid != pod.uid if p.uid and pod.uid else p.key != pod.key)]

"""The running pods as InterPodAffinity's PreFilter and PreScore read them, kept per pod log.

Every cycle upstream walks the nodes' pods (``getExistingAntiAffinityCounts``,
``getIncomingAffinityAntiAffinityCounts``, ``PreScore``'s ``processExistingPod``). What a
term matches of a running pod is its namespace and labels; what a running pod's own terms are
depends on its namespace and affinity fields. So the running pods are grouped by those, once:
a :class:`RunningPods` index holds the groups of a state's bound pods and is extended with the
pods added since, as long as the state reads the same pod log (:meth:`BoundPods.extends
<ksched.bound_pods.BoundPods.extends>`), so that a cycle costs a pass over the groups, not
over the pods.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ksched.api import Pod
from ksched.state import ClusterState

__all__ = ["RunningPods", "running_pods"]


class _Group:
    """Rows of pods alike in what is read of them, and one of those pods."""

    __slots__ = ("pod", "rows", "_array")

    def __init__(self, pod: Pod) -> None:
        self.pod, self.rows, self._array = pod, [], np.zeros(0, dtype=np.int64)

    def array(self) -> npt.NDArray[np.int64]:
        if len(self._array) != len(self.rows):
            self._array = np.array(self.rows, dtype=np.int64)
        return self._array


class RunningPods:
    """The first ``count`` pods of a state, grouped by namespace and labels (the first
    ``labelled`` of them so far: grouped when a term is first matched against them), and
    those with affinity (the first ``with_affinity`` of ``state.affinity_pods``) by namespace
    and affinity fields (compared by value: pods made from one template share their terms)."""

    __slots__ = ("pods", "count", "labelled", "with_affinity", "by_labels", "by_terms")

    def __init__(self, pods: Sequence[Pod]) -> None:
        self.pods, self.count, self.labelled, self.with_affinity = pods, 0, 0, 0
        self.by_labels: dict[tuple, _Group] = {}
        self.by_terms: dict[tuple, _Group] = {}

    def extend(self, state: ClusterState) -> RunningPods:
        """Add the pods ``state`` holds beyond those indexed (it reads the same log)."""
        pods, by_terms = state.pods, self.by_terms
        for row in state.affinity_pods[self.with_affinity:]:
            pod = pods[row]
            key = (pod.namespace, pod.pod_affinity, pod.pod_anti_affinity)
            group = by_terms.get(key)
            if group is None:
                group = by_terms[key] = _Group(pod)
            group.rows.append(row)
        self.pods, self.count, self.with_affinity = pods, len(pods), len(state.affinity_pods)
        return self

    def _label_groups(self) -> dict[tuple, _Group]:
        """The pods grouped by namespace and labels, those not yet grouped added."""
        pods, by_labels = self.pods, self.by_labels
        for row in range(self.labelled, self.count):
            pod = pods[row]
            key = (pod.namespace, pod.labels)
            group = by_labels.get(key)
            if group is None:
                group = by_labels[key] = _Group(pod)
            group.rows.append(row)
        self.labelled = self.count
        return by_labels

    def match_mask(self, matches: Callable[[Pod], bool]) -> npt.NDArray[np.bool_]:
        """bool[count]: ``matches(pod)`` of each pod, asked once per namespace and labels."""
        out = np.zeros(self.count, dtype=np.bool_)
        for group in self._label_groups().values():
            if matches(group.pod):
                out[group.array()] = True
        return out

    def term_groups(self, keep: Callable[[Pod], bool]) -> list[tuple[Pod, np.ndarray]]:
        """The pods with affinity that ``keep`` keeps (it reads only a pod's namespace and
        affinity fields), grouped: (one of them, their rows)."""
        return [(g.pod, g.array()) for g in self.by_terms.values() if keep(g.pod)]


#: The index last made, extended while states read its log.
_LAST: list[Any] = [None]


def running_pods(state: ClusterState) -> RunningPods:
    """The index of ``state``'s bound pods (:class:`RunningPods`)."""
    index, pods = _LAST[0], state.pods
    extends = getattr(pods, "extends", None)
    if index is None or index.pods is not pods and not (
            extends is not None and extends(index.pods)
            and len(state.affinity_pods) >= index.with_affinity):
        index = _LAST[0] = RunningPods(pods)
    if index.count != len(pods) or index.with_affinity != len(state.affinity_pods) \
            or index.pods is not pods:
        index.extend(state)
    return index

"""The nominator (``pkg/scheduler/backend/queue/nominator.go``): the node each preempting pod is
nominated to, and the pods nominated to each node, in nomination order.
"""

from __future__ import annotations

from ksched.api import Pod

__all__ = ["Nominator", "NominatingQueue"]


class Nominator:
    """``nominator``: pods keyed by ``pod.key``; every change is remembered per node until
    :meth:`take_changes`."""

    def __init__(self) -> None:
        self._nominated_node: dict[str, str] = {}
        self._nominated: dict[str, list[Pod]] = {}
        #: Nodes whose nominated pods changed since :meth:`take_changes`.
        self._changes: set[str] = set()

    def nominate(self, pod: Pod, node: str | None) -> None:
        """``addNominatedPodUnlocked``; ``node`` None is ModeNoop (the pod's own status)."""
        self.delete(pod)
        if node is None:
            node = getattr(pod, "nominated_node_name", "")
        if not node:
            return
        self._nominated_node[pod.key] = node
        self._nominated.setdefault(node, []).append(pod)
        self._changes.add(node)

    def delete(self, pod: Pod) -> None:
        """``DeleteNominatedPodIfExists``."""
        key = pod.key
        node = self._nominated_node.pop(key, None)
        if node is None:
            return
        self._changes.add(node)
        pods = [p for p in self._nominated[node] if p.key != key]
        if pods:
            self._nominated[node] = pods
        else:
            del self._nominated[node]

    def update(self, old: Pod | None, new: Pod) -> None:
        """``UpdateNominatedPod``: keep an in-memory nomination the update does not mention."""
        old = new if old is None else old
        node = None
        if (not getattr(old, "nominated_node_name", "")
                and not getattr(new, "nominated_node_name", "")):
            node = self._nominated_node.get(old.key)
        self.nominate(new, node)

    def take_changes(self) -> set[str]:
        """The nodes whose nominated pods changed since the last call."""
        changes, self._changes = self._changes, set()
        return changes

    def __bool__(self) -> bool:
        """Whether some pod is nominated."""
        return bool(self._nominated)

    def nominated_pods(self) -> dict[str, list[Pod]]:
        """Every node with nominated pods, and those pods in nomination order."""
        return {node: list(pods) for node, pods in self._nominated.items()}

    def pods_for_node(self, node: str) -> list[Pod]:
        """``NominatedPodsForNode``: the pods nominated to ``node``, in nomination order."""
        return list(self._nominated.get(node, ()))


class NominatingQueue:
    """The scheduling queue's nominator operations (a mixin of
    :class:`~ksched.queue.scheduling_queue.SchedulingQueue`: its ``_nominator``)."""

    _nominator: Nominator

    def add_nominated(self, pod: Pod, node: str) -> None:
        """``addNominatedPod`` (ModeOverride): nominate ``pod`` to ``node`` ("" clears)."""
        self._nominator.nominate(pod, node)

    def delete_nominated(self, pod: Pod) -> None:
        """``DeleteNominatedPodIfExists``."""
        self._nominator.delete(pod)

    def take_nomination_changes(self) -> set[str]:
        """The nodes whose nominated pods changed since the last call (for incremental
        readers of the nominator)."""
        return self._nominator.take_changes()

    def nominated_pods(self) -> dict[str, list[Pod]]:
        """Every node with nominated pods, and those pods in nomination order."""
        return self._nominator.nominated_pods()

    def nominated_pods_for_node(self, node: str) -> list[Pod]:
        """``NominatedPodsForNode``: the pods nominated to ``node``, in nomination order."""
        return self._nominator.pods_for_node(node)

"""The bound pods of a :class:`~ksched.state.ClusterState`: an append-only log read through a
fixed-length view (:class:`BoundPods`), and the checks every bound pod list passes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ksched.api import Pod
from ksched.errors import InvalidObjectError
from ksched.node_table import EqualSequence
from ksched.validation import go_quote

__all__ = ["BoundPods", "check_unique", "checked_bound_pods", "log_key", "log_pod", "pod_specs"]


class BoundPods(EqualSequence):
    """The bound pods of a state: an append-only log, read through a fixed-length view.

    Pods placed during a batch are logged as ``(pod, node name)``; pods placed in bulk as the
    pending pod alone (no ``spec.nodeName``) or as ``(pod table, row)`` when the table has not
    made the pod yet (:func:`log_pod`), their node ``node_names[pod_node[row]]``. Each gets its
    bound record (``spec.nodeName`` set) the first time it is read, so placing a pod costs no
    copy.
    """

    __slots__ = ("_log", "_length", "_pod_node", "_node_names")

    def __init__(self, log: list, length: int | None = None, pod_node: Any = None,
                 node_names: Sequence[str] | None = None) -> None:
        self._log = log
        self._length = len(log) if length is None else length
        self._pod_node, self._node_names = pod_node, node_names

    def __len__(self) -> int:
        return self._length

    def _item(self, index: int) -> Pod:
        item = self._log[index]
        if type(item) is tuple:
            first, second = item
            if type(second) is str:
                item = self._log[index] = first.bound_to(second)
                return item
            item = first[second]
        elif item.node_name:
            return item
        item = self._log[index] = item.bound_to(self._node_names[int(self._pod_node[index])])
        return item

    def extends(self, other: Any) -> bool:
        """Whether ``other`` is a view of the same log, no longer: its pods are this one's
        first (a log's rows never change; a log pods left is a new one)."""
        return type(other) is BoundPods and other._log is self._log \
            and other._length <= self._length

    def entries(self) -> list:
        """The log's entries of this view, as they are (a new list)."""
        return self._log[:self._length]

    def __repr__(self) -> str:
        return f"BoundPods({self._length} pods)"

    def specs(self, start: int, stop: int) -> list[Pod]:
        """Pods ``start..stop`` as recorded, without making their bound copies (their labels,
        namespace and spec are those of the bound pods; only ``spec.nodeName`` may be unset)."""
        return [log_pod(item) for item in self._log[start:stop]]


def log_pod(item: Pod | tuple) -> Pod:
    """The pod of a log entry as recorded: a pod, ``(pod, node name)``, or ``(pod table,
    row)`` (the table makes the pod); ``spec.nodeName`` may be unset."""
    if type(item) is tuple:
        first, second = item
        return first if type(second) is str else first[second]
    return item


def log_key(item: Pod | tuple) -> str:
    """The ``namespace/name`` of a log entry's pod (a table's row without making it)."""
    if type(item) is tuple and type(item[1]) is not str:
        return item[0].key_of(item[1])
    return log_pod(item).key


def pod_specs(pods: Sequence[Pod], start: int, stop: int) -> Sequence[Pod]:
    """``pods[start:stop]``, cheaply when ``pods`` is a :class:`BoundPods` log."""
    return pods.specs(start, stop) if isinstance(pods, BoundPods) else pods[start:stop]


def check_unique(pods: Sequence[Pod]) -> None:
    """Refuse two pods with one namespace/name, in the API server's words
    (``pod default/web-1: metadata.name: Duplicate value: "web-1"``). Names are compared
    first (one set of strings); keys only when two names collide."""
    if len({p.name for p in pods}) == len(pods):
        return
    seen: set[tuple[str, str]] = set()
    for pod in pods:
        key = (pod.namespace, pod.name)
        if key in seen:
            raise InvalidObjectError(f"pod {pod.key}", "metadata.name",
                                     f"Duplicate value: {go_quote(pod.name)}")
        seen.add(key)


def checked_bound_pods(pods: Iterable[Pod], node_index: Mapping[str, int]) -> list[Pod]:
    """The pods that hold a node (``spec.nodeName`` set, not terminal), checked: each names a
    known node, and no two share a namespace/name."""
    bound = [p for p in pods if p.node_name and not p.terminal]
    for p in bound:
        if p.node_name not in node_index:
            raise InvalidObjectError(f"pod {p.key}", "spec.nodeName",
                                     f'node "{p.node_name}" not found')
    check_unique(bound)
    return bound

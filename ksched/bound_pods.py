"""The bound pods of a :class:`~ksched.state.ClusterState`: an append-only log read through a
fixed-length view (:class:`BoundPods`), and the checks every bound pod list passes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from ksched.api import Pod
from ksched.errors import InvalidObjectError
from ksched.node_table import LazySequence
from ksched.validation import go_quote

__all__ = ["BoundPods", "check_unique", "checked_bound_pods", "pod_specs"]


class BoundPods(LazySequence):
    """The bound pods of a state: an append-only log, read through a fixed-length view.

    Pods placed during a batch are logged as ``(pod, node name)`` and get their bound record
    (``spec.nodeName`` set) the first time they are read, so placing a pod costs no copy.
    """

    __slots__ = ("_log", "_length")

    def __init__(self, log: list, length: int | None = None) -> None:
        self._log = log
        self._length = len(log) if length is None else length

    def __len__(self) -> int:
        return self._length

    def _item(self, index: int) -> Pod:
        item = self._log[index]
        if type(item) is tuple:
            pod, node_name = item
            item = self._log[index] = attrs.evolve(pod, node_name=node_name)
        return item

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"BoundPods({self._length} pods)"

    def specs(self, start: int, stop: int) -> list[Pod]:
        """Pods ``start..stop`` as recorded, without making their bound copies (their labels,
        namespace and spec are those of the bound pods; only ``spec.nodeName`` may be unset)."""
        return [item[0] if type(item) is tuple else item for item in self._log[start:stop]]


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
